"""The second ranking stage (retrieval.rerank, issue 44): MiniLM reranks a conversation's candidates on its own
thread, and the conversation's next turn uses the result with a look-up. Real parts: the starter skills, the hybrid
first stage (wordllama) and the packaged MiniLM model (its weights ship in its package; nothing downloads)."""

from __future__ import annotations

import itertools
import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from metaclaw_bench.retrieval import load_long_requests
from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.cli import main as cli_main
from metaclaw_plugin.config import RERANK_MODEL, embeddings_missing
from metaclaw_plugin.skillbank import SkillBank, SkillStore, bundled_skills_dir, embedding, rerank
from metaclaw_plugin.skillbank.rerank import WEIGHT, Pool, Reranker, similarities
from metaclaw_plugin.skillbank.retrieve import task_parts
from metaclaw_plugin.types import Skill

pytestmark = pytest.mark.skipif(
    bool(embeddings_missing(RERANK_MODEL) or embeddings_missing("wordllama")),
    reason="needs the embeddings extra and wordllama",
)

CONTRACT = "Summarize this 40-page vendor contract for my boss, she only has two minutes to read it"
INVOICE = "Invoice totals are sometimes a cent off, e.g. 0.1 + 0.2 shows 0.30000000000000004"
# A long request the first stage's gate turns away without its centroid admission; its skill is meeting notes
TRANSCRIPT = next(r["request"] for r in load_long_requests()[0] if r["id"] == "planning-transcript")
EASTER = "What is the date of Easter next year?"  # chance words: the first stage gives it a block


def make_bank(home: Path, **retrieval: Any) -> SkillBank:
    settings = Settings(
        home=home,
        retrieval={"mode": "hybrid", "rerank": RERANK_MODEL, **retrieval},
        injection={"max_injected_tokens": 32_000},  # every selected skill renders: the order is the selection's
    )
    bank = SkillBank(settings)
    if not any(settings.skills_path.glob("*/SKILL.md")):
        bank.store.seed_from(bundled_skills_dir(), actor="test")
    bank.refresh(force=True)
    assert bank.index_error is None and bank.reranker is not None
    return bank


@pytest.fixture
def bank(home: Path):
    b = make_bank(home)
    assert b.reranker is not None
    b.reranker.start()
    yield b
    b.reranker.stop()


def said(*texts: str) -> list[dict[str, Any]]:
    """A conversation in which the user said ``texts`` in turn, a reply between (its own: a reply seen beside three
    different tasks would be learned as a client's constant framing, and leave the context)."""
    msgs: list[dict[str, Any]] = []
    for t in texts:
        if msgs:
            msgs.append({"role": "assistant", "content": f"Done: {msgs[-1]['content']}"})
        msgs.append({"role": "user", "content": t})
    return msgs


def block(bank: SkillBank, ctx: TurnContext, *texts: str) -> list[str]:
    return bank.injection(ctx, said(*texts)).names


FRESH = itertools.count()


def first_stage(bank: SkillBank, *texts: str, tenant: str = "default") -> list[str]:
    """The first stage's block for the same messages: a conversation the second stage has not ranked."""
    return block(bank, TurnContext(f"fresh-{next(FRESH)}", tenant=tenant), *texts)


def ranked(bank: SkillBank) -> Any:
    assert bank.reranker is not None and bank.reranker.wait_idle(300)
    return bank.reranker


def test_the_next_turn_uses_the_reranked_order(bank: SkillBank):
    ctx = TurnContext("c1")
    one = block(bank, ctx, CONTRACT)
    assert one == first_stage(bank, CONTRACT)
    ranked(bank)
    two = block(bank, ctx, CONTRACT, CONTRACT)
    # what the second stage computes: the first stage's candidates (not only what it serves: a short request is
    # served the ones near its best), each + WEIGHT x its MiniLM similarity
    query, context, _ = task_parts(said(CONTRACT, CONTRACT))
    pool = bank._snap.index.ranked(query, rerank.POOL, None, context).candidates
    sims = similarities(RERANK_MODEL, embedding.get_encoder(RERANK_MODEL), CONTRACT, [s for s, _ in pool])
    scored = sorted(((sc + WEIGHT * m, s.name) for (s, sc), m in zip(pool, sims)), key=lambda p: -p[0])
    expected = [name for _, name in scored[:6]]
    assert two == expected and two != one
    # a long request the gate turned away is let in on the next turn (its skill: meeting notes; the first stage lets
    # this one in by the library's centroid, embedding.DOMAIN_MIN, which is off here so that its gate turns it away)
    bank._snap.index.domain_min = None
    t = TurnContext("c2")
    assert block(bank, t, TRANSCRIPT) == []
    ranked(bank)
    assert "meeting-notes-with-owners-and-dates" in block(bank, t, TRANSCRIPT, TRANSCRIPT)
    # a block of chance words the model finds unrelated is dropped from the next turn
    e = TurnContext("c3")
    assert block(bank, e, EASTER)
    ranked(bank)
    assert block(bank, e, EASTER, EASTER) == []
    assert bank.reranker is not None and bank.reranker.applied == 3


def test_a_new_topic_gets_the_first_stages_choice(bank: SkillBank):
    ctx = TurnContext("c1")
    block(bank, ctx, CONTRACT)
    rr = ranked(bank)
    assert block(bank, ctx, CONTRACT, INVOICE) == first_stage(bank, CONTRACT, INVOICE)
    assert rr.new_topic == 1 and rr.applied == 0
    # a tool loop's later step of that turn: the same block, whatever was ranked meanwhile
    ranked(bank)
    steps = said(CONTRACT, INVOICE) + [{"role": "tool", "tool_call_id": "1", "content": "ok"}]
    assert bank.injection(ctx, steps).names == first_stage(bank, CONTRACT, INVOICE)


def test_the_request_path_never_waits_for_the_second_stage(home: Path, monkeypatch: pytest.MonkeyPatch):
    gate, entered = threading.Event(), threading.Event()
    rank = Reranker.rank

    def held(self: Reranker, *args: Any) -> Any:
        entered.set()
        gate.wait(60)
        return rank(self, *args)

    loads: list[str] = []
    get_encoder = embedding.get_encoder

    def load(name: str) -> Any:
        if name == RERANK_MODEL:
            loads.append(threading.current_thread().name)
        return get_encoder(name)

    monkeypatch.setattr(Reranker, "rank", held)
    monkeypatch.setattr(embedding, "get_encoder", load)
    bank = make_bank(home)
    rr = bank.reranker
    assert rr is not None
    rr.start()
    try:
        held_requests(bank, gate, entered)
    finally:
        gate.set()
        rr.stop()
    assert loads and set(loads) == {"metaclaw-rerank"}  # the model is loaded on the stage's thread only


def held_requests(bank: SkillBank, gate: threading.Event, entered: threading.Event) -> None:
    """Requests while the second stage holds a conversation's turn: none waits; the turn after it gets the picks."""
    ctx = TurnContext("c1")
    block(bank, ctx, CONTRACT)
    assert entered.wait(120)  # the second stage holds turn 1
    got: dict[str, Any] = {}

    def requests() -> None:
        got["two"] = block(bank, ctx, CONTRACT, CONTRACT)
        got["others"] = [block(bank, TurnContext(f"o{i}"), f"{INVOICE} ({i})") for i in range(20)]

    worker = threading.Thread(target=requests)
    worker.start()
    worker.join(30)
    held_meanwhile = not gate.is_set()
    gate.set()
    assert not worker.is_alive() and held_meanwhile, "a request waited for the second stage"
    assert got["two"] == first_stage(bank, CONTRACT, CONTRACT) and len(got["others"]) == 20
    rr = ranked(bank)
    assert block(bank, ctx, CONTRACT, CONTRACT, CONTRACT) != got["two"] and rr.applied == 1


def test_errors_fail_open_and_are_counted(bank: SkillBank, monkeypatch: pytest.MonkeyPatch, caplog):
    caplog.set_level(logging.WARNING, "metaclaw_plugin.skills")
    rr = bank.reranker
    assert rr is not None
    # on the request path: applying the picks fails, the first stage's block stands
    monkeypatch.setattr(rerank.Picks, "apply", lambda *a: 1 / 0)
    ctx = TurnContext("c1")
    block(bank, ctx, CONTRACT)
    ranked(bank)
    assert block(bank, ctx, CONTRACT, CONTRACT) == first_stage(bank, CONTRACT, CONTRACT)
    assert rr.failures == 1 and "ZeroDivisionError" in str(rr.last_failure) and "first stage" in caplog.text
    monkeypatch.undo()
    # on its thread: a ranking that fails is counted, the thread goes on, the conversation keeps the first stage
    monkeypatch.setattr(Reranker, "rank", lambda *a: 1 / 0)
    ctx = TurnContext("c2")
    failures = rr.failures
    block(bank, ctx, INVOICE)
    ranked(bank)
    assert rr.failures > failures and str(rr.last_failure).startswith("ranking") and rr.service.running
    assert block(bank, ctx, INVOICE, INVOICE) == first_stage(bank, INVOICE, INVOICE)
    # a model that does not load turns the stage off, and says why
    broken = Reranker("no-such-model", 60)
    broken.start()
    try:
        skill = bank.skills["csv-quoting"]
        broken.offer(("default", "c"), (0, "csv"), Pool("csv", ((skill, 0.5),), True, 6))
        assert broken.ready.wait(60) and broken.wait_idle(60)
        status = broken.status()
        assert status["state"] == "off" and "no-such-model" in status["reason"] and broken.failures == 1
        broken.offer(("default", "c"), (2, "csv"), Pool("csv", ((skill, 0.5),), True, 6))
        assert broken.status()["queued"] == 0
    finally:
        broken.stop()


def test_a_tenants_picks_come_from_what_it_may_see_and_stay_its_own(home: Path):
    SkillStore(home / "skills").seed_from(bundled_skills_dir(), actor="test")
    SkillStore(home / "skills").add_batch(
        [
            Skill(
                name="team-a-contract-digest",
                description="When a manager needs the gist of a long vendor contract in two minutes: lead with the "
                "obligations, the costs and the dates.",
                body="1. Read the whole contract.\n2. Summarize obligations, costs, renewal and exit dates first.",
                origin="evolved",
                tenant="team-a",
            )
        ],
        actor="test",
    )
    bank = make_bank(home)
    rr = bank.reranker
    assert rr is not None
    rr.start()
    try:
        a, b = TurnContext("s1", tenant="team-a"), TurnContext("s1", tenant="team-b")  # one session id, two tenants
        assert "team-a-contract-digest" in block(bank, a, CONTRACT)
        assert "team-a-contract-digest" not in block(bank, b, CONTRACT)
        ranked(bank)
        picks_a = rr.picks(("team-a", "s1"), (2, CONTRACT))
        picks_b = rr.picks(("team-b", "s1"), (2, CONTRACT))
        assert picks_a is not None and "team-a-contract-digest" in picks_a.sims
        assert picks_b is not None and "team-a-contract-digest" not in picks_b.sims  # ranked from what b may see
        assert "team-a-contract-digest" not in block(bank, b, CONTRACT, CONTRACT)
        assert "team-a-contract-digest" in block(bank, a, CONTRACT, CONTRACT) and rr.applied == 2
    finally:
        rr.stop()


def test_status_and_doctor_say_whether_it_is_on_and_why(home: Path, monkeypatch: pytest.MonkeyPatch):
    plugin = MetaClawPlugin(Settings(home=home, retrieval={"rerank": "auto"})).start()
    try:
        st = plugin.status()
        assert st["rerank"]["state"] == "on" and st["rerank"]["model"] == RERANK_MODEL
        assert st["rerank"]["reason"] == f"auto: on, {RERANK_MODEL} is installed"
        assert st["services"]["metaclaw-rerank"]["running"] is True
    finally:
        plugin.stop()
    plugin = MetaClawPlugin(Settings(home=home)).start()  # off by default, and status says how to turn it on
    try:
        reason = "off: the default (retrieval.rerank: auto turns it on; docs/request-path.md has its cost)"
        assert plugin.status()["rerank"] == {"state": "off", "reason": reason}
        assert "metaclaw-rerank" not in plugin.status()["services"]
    finally:
        plugin.stop()
    env = {"METACLAW_HOME": str(home), "METACLAW_RETRIEVAL__RERANK": "auto"}
    doctor = json.loads(CliRunner().invoke(cli_main, ["doctor", "--json"], env=env).output)
    (check,) = [c for c in doctor["checks"] if c["check"] == "second-stage rerank"]
    assert check["ok"] and check["detail"] == f"on, {RERANK_MODEL} (auto: on, {RERANK_MODEL} is installed)"
    status = json.loads(CliRunner().invoke(cli_main, ["status", "--json"], env=env).output)
    assert status["rerank"] == {
        "state": "on",
        "model": RERANK_MODEL,
        "reason": f"auto: on, {RERANK_MODEL} is installed",
    }
    # a model that is set but cannot run: off, and a problem to fix
    env["METACLAW_RETRIEVAL__RERANK"] = "no-such-model"
    doctor = json.loads(CliRunner().invoke(cli_main, ["doctor", "--json"], env=env).output)
    (check,) = [c for c in doctor["checks"] if c["check"] == "second-stage rerank"]
    assert not check["ok"] and check["required"] and "no-such-model" in check["detail"]
    # auto without the embeddings extra: off, and the reason says what to install
    monkeypatch.setattr(
        "metaclaw_plugin.config.embeddings_missing", lambda model: "sentence_transformers is not installed"
    )
    settings = Settings(home=home, retrieval={"rerank": "auto"})
    assert settings.retrieval.rerank_model is None
    plugin = MetaClawPlugin(settings).start()
    try:
        reason = plugin.status()["rerank"]["reason"]
        assert reason == "auto: off, sentence_transformers is not installed (pip install 'metaclaw-plugin[embeddings]')"
        assert plugin.skills.reranker is None
    finally:
        plugin.stop()
