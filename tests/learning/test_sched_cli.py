"""The mode in effect (stored vs config) and whether training can run, in `mode`, `status`, `doctor` and
`scheduler status|next-window`."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from metaclaw_plugin.cli import main


def js(*args: str, env: dict[str, str] | None = None, codes: tuple[int, ...] = (0,)) -> dict:
    res = CliRunner().invoke(main, [*args, "--json"], env=env, catch_exceptions=False)
    assert res.exit_code in codes, res.output
    return json.loads(res.stdout)


def test_stored_mode_wins_over_config_and_status_and_doctor_say_whether_it_trains(home: Path) -> None:
    (home / "config.yaml").write_text("mode: skills_only\n")
    assert js("mode") == {
        "mode": "skills_only",
        "source": "config",
        "set_at": None,
        "configured": "skills_only",
        "training_ready": False,
        "training_blocker": js("mode")["training_blocker"],
        "changed": False,
    }
    assert js("mode", "auto")["changed"]
    env = {"METACLAW_MODE": "rl"}
    st = js("status", env=env)
    assert st["mode"] == "rl"  # the config's
    assert st["mode_in_effect"]["mode"] == "auto" and st["mode_in_effect"]["source"] == "stored"
    assert st["mode_in_effect"]["configured"] == "rl"
    blocker = st["mode_in_effect"]["training_blocker"]
    assert st["mode_in_effect"]["training_ready"] is (blocker is None) and blocker == st["training"]["off"]
    doctor = js("doctor", env=env, codes=(0, 1))  # 1: a required check of this machine failed (not ours)
    (check,) = [c for c in doctor["checks"] if c["check"] == "mode in effect"]
    assert check["detail"].startswith("auto (set at run time; config says rl)")
    if blocker:  # this build has no trainer yet: nothing pretends to train
        assert not check["ok"] and f"does not train: {blocker}" in check["detail"]
    (signals,) = [c for c in doctor["checks"] if c["check"] == "scheduler signals"]
    assert "sleep: " in signals["detail"] and "host: " in signals["detail"]
    text = CliRunner().invoke(main, ["status"], env=env).output
    assert "mode in effect" in text and "auto (set at run time" in text


def test_bad_mode_is_refused(home: Path) -> None:
    res = CliRunner().invoke(main, ["mode", "turbo"])
    assert res.exit_code == 2 and "'turbo' is not one of 'skills_only', 'rl', 'auto'" in res.output


def test_scheduler_status_and_next_window(home: Path) -> None:
    (home / "config.yaml").write_text(
        "scheduler:\n  timezone: Europe/Berlin\n  sleep_start: '01:00'\n  sleep_end: '05:00'\n  idle_sources: [host]\n"
    )
    st = js("scheduler", "status")
    assert st["state"] is None and st["transitions"] == [] and st["lock"] is None
    assert set(st["signals"]) == {"sleep", "host"}
    assert st["signals"]["host"]["present"] is True  # no host request on record: unknown, so present
    nw = js("scheduler", "next-window")
    nxt = nw["next"]
    assert nxt["signal"] == "sleep" and nxt["end"] - nxt["start"] == 4 * 3600
    text = CliRunner().invoke(main, ["scheduler", "next-window"]).output
    assert "next" in text and "(sleep)" in text
