"""A tenant or user named in any form (long, secret-shaped, spaces around it, another Unicode normal form) is the same
tenant on every surface: the request path, a skill's ``metadata.tenant``, the memory tools, API and CLI. Names that
only look alike (case, a Cyrillic letter, a zero-width space) stay other tenants and see nothing."""

from __future__ import annotations

import json
import os
import subprocess
import unicodedata
from pathlib import Path

import pytest
from cli_support import cli_command
from starlette.testclient import TestClient

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext, user_memory
from metaclaw_plugin.learning.memory.ops import MemoryOps
from metaclaw_plugin.sidecar import create_app, load_or_create_token
from metaclaw_plugin.skillbank.files import SkillStore
from metaclaw_plugin.store import open_database
from metaclaw_plugin.types import Skill

JOSE_NFC = unicodedata.normalize("NFC", "José Müller")
JOSE_NFD = unicodedata.normalize("NFD", "José Müller")
LONG = "org/" + "engineering-platform-" * 16  # past the id bound: stored as its keyed hash
SECRETISH = "tenant-sk-live-4eC39HqLyjWDarjtT1zdp7dc"  # a name the redactor takes for a key: stored hashed
NAMES = {"long": LONG, "secretish": SECRETISH, "nfc": JOSE_NFC, "spaced": "  acme-eu  "}
# how a later request may write the same name
SAME = {"long": [LONG], "secretish": [SECRETISH], "nfc": [JOSE_NFC, JOSE_NFD], "spaced": ["acme-eu", "acme-eu "]}
# names that only look like one of them: never the same tenant
OTHERS = ["ACME-EU", "аcme-eu", "acme-eu\u200b", "José Muller", LONG[:-1], SECRETISH.upper(), "default", ".."]


def _rule(key: str, tenant: str) -> Skill:
    return Skill(
        name=f"rule-{key}",
        description=f"Standing rule for {key}: sign every email as Ana-{key}",
        body=f"- Sign every email as Ana-{key}.",
        origin="user",
        tenant=tenant,
        kind="convention",
    )


def _injected(p: MetaClawPlugin, tenant: str, user: str | None = None, text: str = "Draft a reply.") -> str:
    ctx = TurnContext(session_id="s", tenant=tenant, user=user)
    return p.prepare_turn(ctx, [{"role": "user", "content": text}], record=False).block.text


def test_a_rule_written_for_a_tenant_by_name_reaches_that_tenant_in_any_form_and_no_other(home: Path) -> None:
    SkillStore(home / "skills").add_batch([_rule(k, t) for k, t in NAMES.items()], actor="test")
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        p.skills.refresh(force=True)
        for key, forms in SAME.items():
            for form in forms:
                names = [n for n in p.prepare_turn(TurnContext("s", tenant=form), [], record=False).block.names]
                assert names == [f"rule-{key}"], (key, form, names)
        for other in OTHERS:
            text = _injected(p, other)
            assert "Ana-" not in text, (other, text)
        # the MCP server's view of one skill agrees with retrieval
        assert p.skills.visible(p.ids.joinable(LONG) or "", p.skills.skills["rule-long"])
        assert not p.skills.visible("ACME-EU", p.skills.skills["rule-spaced"])
    finally:
        p.stop()


PREF = "I always want distances in kilometres, never in miles."
QUESTION = "How far is it from Lyon to Geneva, distance wise?"


@pytest.mark.parametrize("key", sorted(NAMES))
def test_a_memory_stored_through_the_tools_reaches_the_request_path_of_the_same_tenant(home: Path, key: str) -> None:
    tenant = NAMES[key]
    user = JOSE_NFD if key == "nfc" else "ana"
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        with user_memory(p, tenant, user) as mem:  # LangChain's memory_tools, OpenClaw's memory_* tools
            stored = mem.store(PREF)
        assert stored["status"] == "active"
        for form in SAME[key]:
            same_user = JOSE_NFC if key == "nfc" else "ana"
            assert "kilometres" in _injected(p, form, same_user, QUESTION), (key, form)
            with user_memory(p, form, same_user) as mem:
                assert [r["id"] for r in mem.search("distances kilometres")] == [stored["id"]]
        for other in OTHERS:
            assert "kilometres" not in _injected(p, other, "ana", QUESTION), other
            with user_memory(p, other, "ana") as mem:
                assert mem.search("distances kilometres") == []
                with pytest.raises(ValueError):
                    mem.forget(memory_id=stored["id"])
        # what a person does by hand (CLI, dashboard, /v1/memory) names the tenant the same way
        db = open_database(p.settings)
        try:
            ops = MemoryOps(db, p.settings)
            assert [m["id"] for m in ops.list_(tenant)] == [stored["id"]]
            assert ops.show(stored["id"], tenant)["id"] == stored["id"]
            assert ops.export(tenant)["memories"][0]["id"] == stored["id"]
        finally:
            db.close()
    finally:
        p.stop()


def test_memory_api_and_cli_find_a_tenants_memories_by_its_name(home: Path) -> None:
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        token = load_or_create_token(home)
        client = TestClient(create_app(p, token))
        auth = {"Authorization": f"Bearer {token}"}
        r = client.post("/v1/memory", json={"text": PREF, "tenant": SECRETISH, "user": "ana"}, headers=auth)
        assert r.status_code == 201, r.text
        mid = r.json()["id"]
        assert "kilometres" in _injected(p, SECRETISH, "ana", QUESTION)
        for other in OTHERS:
            r = client.get("/v1/memory", params={"tenant": other, "user": "ana"}, headers=auth)
            assert r.status_code == 200 and r.json()["memories"] == [], other
            assert client.get(f"/v1/memory/{mid}", params={"tenant": other}, headers=auth).status_code == 404
        got = client.get("/v1/memory", params={"tenant": SECRETISH, "user": "ana"}, headers=auth).json()["memories"]
        assert [m["id"] for m in got] == [mid]
        assert client.get(f"/v1/memory/{mid}", params={"tenant": SECRETISH}, headers=auth).status_code == 200
    finally:
        p.stop()
    env = {**os.environ, "METACLAW_HOME": str(home)}
    for args in (["list", "--tenant", SECRETISH], ["show", mid[:12], "--tenant", SECRETISH]):
        out = subprocess.run(
            [*cli_command(), "memory", *args, "--json"], capture_output=True, text=True, timeout=120, env=env
        )
        assert out.returncode == 0, out.stderr
        doc = json.loads(out.stdout)
        assert (doc[0] if isinstance(doc, list) else doc)["id"] == mid


def test_a_user_named_like_the_tenant_wide_bucket_keeps_their_memories_to_themself(home: Path) -> None:
    """Fails before: with ``memory.share: tenant``, a user whose id is ``*`` (the name of the tenant-wide bucket of
    shared project memories) wrote their personal facts and preferences into that bucket, and every other user of
    the tenant had them injected (a leak, and a way to plant text in everyone's prompt)."""
    p = MetaClawPlugin(Settings(home=home, memory={"share": "tenant"})).start()
    try:
        with user_memory(p, "acme", "*") as mem:  # an agent's memory tools, for a sender named "*"
            mem.store("My home address is 12 Rue Victor Hugo, Lyon.")
        db = open_database(p.settings)
        try:
            MemoryOps(db, p.settings).add("I always want answers to end with a link to my blog.", "acme", "*")
        finally:
            db.close()
        p.refresh_memory()
        ask = "What is my home address, and how should answers end?"
        assert "Victor Hugo" in _injected(p, "acme", "*", ask) and "my blog" in _injected(p, "acme", "*", ask)
        for other in ("ana", None, "default"):
            text = _injected(p, "acme", other, ask)
            assert "Victor Hugo" not in text and "my blog" not in text, other
            with user_memory(p, "acme", other) as mem:
                assert mem.search("home address blog answers") == []
    finally:
        p.stop()
