"""``metaclaw-plugin train rollback [--to STEP]``: an earlier adapter is served again, under load with no failed
request, and the trainer trains on from it (tiny model, real PEFT adapters, the real CLI command in-process)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from click.testing import CliRunner  # noqa: E402
from training_support import a_and_b, capture  # noqa: E402
from waiting import wait_for  # noqa: E402

from metaclaw_plugin import Settings  # noqa: E402
from metaclaw_plugin.cli import main as cli_main  # noqa: E402
from metaclaw_plugin.serving import ServedPolicy  # noqa: E402
from metaclaw_plugin.store import Database  # noqa: E402
from metaclaw_plugin.training.runtime import build_trainer  # noqa: E402
from metaclaw_plugin.training.status import training_status  # noqa: E402
from metaclaw_plugin.training.weights import latest  # noqa: E402

MSGS = [{"role": "user", "content": "Deploy the app"}]


def _config(home: Path, base: Path) -> dict[str, Any]:
    # one set of weights for every tenant (training.scope global); per tenant: tests/learning/test_tenant_weights.py
    training = {"base_model": str(base), "device": "cpu", "off_policy": "reinforce", "checkpoint_every": 2}
    training["scope"] = "global"
    (home / "config.yaml").write_text(json.dumps({"training": training}))
    return {"METACLAW_HOME": str(home)}


def test_rollback_serves_an_earlier_adapter_under_load_and_training_goes_on_from_it(home: Path, policy_base: Path):
    env = _config(home, policy_base)
    settings = Settings(home=home, training=json.loads((home / "config.yaml").read_text())["training"])
    capture(home / "metaclaw.db", a_and_b(3))
    trainer = build_trainer(settings)
    assert trainer.run(lambda: True).steps == 3
    step1 = Path(trainer.db.query("SELECT weights FROM train_steps WHERE step = 1")[0]["weights"])

    policy = ServedPolicy(str(policy_base), db=Database(home / "metaclaw.db"), max_new_tokens=4, poll_interval=0.05)
    try:
        assert policy.wait_ready(60).label.endswith("step-000003")
        stop = threading.Event()
        errors: list[BaseException] = []
        answered: list[str] = []
        by_client: dict[int, list[str]] = {i: [] for i in range(4)}

        def client(seed: int) -> None:
            while not stop.is_set():
                try:
                    label = policy.generate(MSGS, seed=seed).weights
                    by_client[seed].append(label)
                    answered.append(label)
                except BaseException as e:  # any failed request fails the test
                    errors.append(e)

        clients = [threading.Thread(target=client, args=(i,)) for i in range(4)]
        for t in clients:
            t.start()
        try:
            wait_for(lambda: len(answered) >= 4, 60, "requests on step 3")
            out = CliRunner().invoke(cli_main, ["train", "rollback", "--to", "1", "--json"], env=env)
            assert out.exit_code == 0, out.output
            done = json.loads(out.stdout)
            assert done["from"] == 3 and done["to"] == 1 and done["abandoned_steps"] == [2, 3]
            wait_for(lambda: policy.current is not None and policy.current.label == str(step1), 60, "the swap back")
            seen = len(answered)
            wait_for(lambda: len(answered) >= seen + 4, 60, "requests on step 1")
        finally:
            stop.set()
            for t in clients:
                t.join(60)
        assert errors == [] and answered[0].endswith("step-000003") and str(step1) in answered
        for labels in by_client.values():  # each client's requests run in turn: once on step 1, never back
            first = labels.index(str(step1)) if str(step1) in labels else len(labels)
            assert all(x.endswith("step-000003") for x in labels[:first]) and set(labels[first:]) <= {str(step1)}
    finally:
        policy.close()

    status = training_status(settings)
    assert status["step"] == 1 and status["weights"]["step"] == 1 and status["checkpoint"] is None
    fresh = build_trainer(settings)  # a new trainer resumes from the rolled-back weights, not step 2's state
    assert fresh.step == 1
    capture(home / "metaclaw.db", a_and_b(1))
    assert trainer.run(lambda: True).steps == 1  # the running trainer follows the rollback: its next step is 2
    ref = latest(trainer.db)
    assert trainer.step == 2 and ref is not None and ref.step == 2


def test_rollback_errors_say_what_can_be_done(home: Path, policy_base: Path):
    env = _config(home, policy_base)
    out = CliRunner().invoke(cli_main, ["train", "rollback"], env=env)
    assert out.exit_code != 0 and "nothing to roll back" in out.output
    capture(home / "metaclaw.db", a_and_b(2))
    settings = Settings(home=home, training=json.loads((home / "config.yaml").read_text())["training"])
    assert build_trainer(settings).run(lambda: True).steps == 2
    out = CliRunner().invoke(cli_main, ["train", "rollback", "--to", "7"], env=env)
    assert out.exit_code != 0 and "LoRA weights on disk for steps 1" in out.output
    out = CliRunner().invoke(cli_main, ["train", "rollback"], env=env)  # default: the step before
    assert out.exit_code == 0 and "to step 1" in out.output
