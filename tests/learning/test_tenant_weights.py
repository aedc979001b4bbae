"""``training.scope: tenant`` (the default): each tenant's LoRA weights are trained on its own samples only, served
to it only (the base model for a tenant without any), and rolled back on their own. Two tenants with opposite
rewards on one prompt, the tiny model, the real trainer, served policy, CLI and sidecar route."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from click.testing import CliRunner  # noqa: E402
from openclaw_support import free_port  # noqa: E402
from policy_support import ServerThread  # noqa: E402
from training_support import ANSWER_A, ANSWER_B, PROMPT, a_and_b, capture  # noqa: E402
from waiting import wait_for  # noqa: E402

from metaclaw_plugin import MetaClawPlugin, Settings  # noqa: E402
from metaclaw_plugin.cli import main as cli_main  # noqa: E402
from metaclaw_plugin.serving import ServedPolicy  # noqa: E402
from metaclaw_plugin.sidecar import create_app, load_or_create_token  # noqa: E402
from metaclaw_plugin.store import Database  # noqa: E402
from metaclaw_plugin.training.runtime import build_trainer  # noqa: E402
from metaclaw_plugin.training.samples import tokenize_turn  # noqa: E402
from metaclaw_plugin.training.status import describe, training_status  # noqa: E402
from metaclaw_plugin.training.weights import latest, tenant_dir  # noqa: E402


def _config(home: Path, base: Path) -> tuple[Settings, dict[str, str]]:
    training = {"base_model": str(base), "device": "cpu", "off_policy": "reinforce", "learning_rate": 2e-3}
    (home / "config.yaml").write_text(json.dumps({"training": training}))
    return Settings(home=home, training=training), {"METACLAW_HOME": str(home)}


def _opposite(n: int) -> list[tuple[list[dict[str, Any]], str, float]]:
    """n batches of four with :func:`a_and_b`'s rewards reversed: B rewarded, A punished."""
    return [(m, a, -r) for m, a, r in a_and_b(n)]


def _margin(model: Any, tokenizer: Any) -> float:
    """log p(A | prompt) - log p(B | prompt) under a served model."""
    out = []
    for answer in (ANSWER_A, ANSWER_B):
        prompt, completion, _ = tokenize_turn(tokenizer, PROMPT, {"role": "assistant", "content": answer})
        ids = torch.tensor([prompt + completion])
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
        out.append(sum(float(logp[len(prompt) - 1 + i, t]) for i, t in enumerate(completion)))
    return out[0] - out[1]


def test_each_tenant_is_trained_served_and_rolled_back_on_its_own(home: Path, policy_base: Path):
    settings, env = _config(home, policy_base)
    db_file = home / "metaclaw.db"
    capture(db_file, a_and_b(3), tenant="alpha")  # alpha rewards A; three batches
    capture(db_file, _opposite(1), tenant="beta")  # beta rewards B; one batch
    trainer = build_trainer(settings)
    report = trainer.run(lambda: True)
    db = trainer.db
    rows = db.query("SELECT step, tenant FROM train_steps ORDER BY step")
    # each step trains one tenant's weights; the quiet tenant gets its turn before the busy one's second batch
    assert [(r["step"], r["tenant"]) for r in rows] == [(1, "alpha"), (2, "beta"), (3, "alpha"), (4, "alpha")]
    assert report.steps == 4
    by_state = db.query("SELECT tenant, state, COUNT(*) AS n FROM buffer_samples GROUP BY tenant, state")
    assert {(r["tenant"], r["state"], r["n"]) for r in by_state} == {("alpha", "trained", 12), ("beta", "trained", 4)}
    alpha, beta = latest(db, "alpha"), latest(db, "beta")
    assert alpha is not None and beta is not None and (alpha.step, beta.step) == (4, 2)
    assert Path(alpha.path).parent.name == tenant_dir("alpha") and Path(beta.path).parent.name == tenant_dir("beta")

    policy = ServedPolicy(str(policy_base), db=Database(db_file), max_new_tokens=4, poll_interval=0.05, scope="tenant")
    try:
        base = policy.wait_ready(60)
        assert policy.generate(PROMPT, seed=1, tenant="alpha").weights == alpha.path
        assert policy.generate(PROMPT, seed=1, tenant="beta").weights == beta.path
        assert policy.generate(PROMPT, seed=1, tenant="gamma").weights == "base"  # none of its own: the base
        assert policy.generate(PROMPT, seed=1).weights == "base"  # no tenant named: the default tenant's (none)
        served = {t: policy.weights_for(t) for t in ("alpha", "beta", "gamma")}
        margins = {t: _margin(w.model, trainer.tokenizer) for t, w in served.items() if w is not None}
        # each tenant's weights moved towards its own rewarded answer; the base model did not move
        assert margins["alpha"] > margins["gamma"] > margins["beta"]
        assert served["gamma"] is base

        status = training_status(settings)
        assert status["scope"] == "tenant"
        assert [(r["tenant"], r["step"], r["steps"]) for r in status["tenants"]] == [("alpha", 4, 3), ("beta", 2, 1)]
        assert "alpha at step 4, beta at step 2" in describe(status)

        out = CliRunner().invoke(cli_main, ["train", "rollback"], env=env)  # two tenants have weights: say whose
        assert out.exit_code != 0 and "--tenant" in out.output and "alpha, beta" in out.output
        out = CliRunner().invoke(cli_main, ["train", "rollback", "--tenant", "alpha", "--to", "1", "--json"], env=env)
        assert out.exit_code == 0, out.output
        done = json.loads(out.stdout)
        assert (done["from"], done["to"], done["tenant"], done["abandoned_steps"]) == (4, 1, "alpha", [3, 4])
        step1 = done["weights"]["path"]
        wait_for(lambda: policy.generate(PROMPT, seed=1, tenant="alpha").weights == step1, 60, "alpha's swap back")
        assert policy.generate(PROMPT, seed=1, tenant="beta").weights == beta.path  # beta's weights stay
        assert latest(db, "beta") == beta
        assert [(r["tenant"], r["step"]) for r in training_status(settings)["tenants"]] == [("alpha", 1), ("beta", 2)]

        capture(db_file, a_and_b(1), tenant="alpha")
        fresh = build_trainer(settings)  # a new trainer resumes alpha from its rolled-back weights
        assert fresh.run(lambda: True).steps == 1
        now = latest(db, "alpha")
        assert now is not None and now.step == 3 and now.tenant == "alpha" and latest(db, "beta") == beta
        wait_for(lambda: policy.generate(PROMPT, seed=1, tenant="alpha").weights == now.path, 60, "alpha's new step")
    finally:
        policy.close()


def test_the_policy_route_answers_each_tenant_with_its_own_weights(home: Path, policy_base: Path):
    """``POST /v1/chat/completions`` on the sidecar: the tenant comes from ``X-Metaclaw-Tenant`` (or the body's
    ``metadata.tenant``); the answer names the weights that gave it."""
    settings, _ = _config(home, policy_base)
    capture(home / "metaclaw.db", a_and_b(1), tenant="alpha")
    assert build_trainer(settings).run(lambda: True).steps == 1
    alpha = latest(Database(home / "metaclaw.db"), "alpha")
    assert alpha is not None
    token = load_or_create_token(home)
    app = create_app(MetaClawPlugin(settings), token, manage_plugin=True)
    port = free_port()

    def ask(headers: dict[str, str], body: dict[str, Any]) -> str:
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/chat/completions",
            data=json.dumps({"model": "metaclaw/policy", "messages": PROMPT, "max_tokens": 2, **body}).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json", **headers},
        )
        with urllib.request.urlopen(req, timeout=120) as r:
            return str(json.loads(r.read())["metaclaw"]["weights"])

    with ServerThread(app, port):
        assert ask({"X-Metaclaw-Tenant": "alpha"}, {}) == alpha.path
        assert ask({}, {"metadata": {"tenant": "alpha"}}) == alpha.path
        assert ask({"X-Metaclaw-Tenant": "beta"}, {}) == "base"
        assert ask({}, {}) == "base"
