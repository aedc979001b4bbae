"""Who is who through a real LiteLLM proxy, with keys that have teams and owners (LiteLLM's ``custom_auth`` hook).

A held-out red team's classes: two people's keys in one team that name no user; a key's owner whose next
conversation remembers; one session id sent by two keys; a user named like the bucket of the users nobody named;
names that differ only by case, spaces, Unicode form or a zero-width character; ids past the id bound that share a
prefix; path-like ids. Only the upstream model is faked (``tests/support``).
"""

from __future__ import annotations

import json
import unicodedata
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from litellm_support import (
    EXTRACT_AT_ONCE,
    chat,
    close_readers,
    random_key,
    reader,
    seed_home,
    started_proxy,
    write_proxy_dir,
)
from waiting import wait_for

from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.types import Session

pytestmark = pytest.mark.slow

ANA_KEY, BEN_KEY, BOT_KEY, CAROL_KEY = (random_key(n) for n in ("ana-", "ben-", "bot-", "carol-"))
KEYS = {
    ANA_KEY: {"team": "clinic", "user": "ana"},  # a person's key in a team
    BEN_KEY: {"team": "clinic", "user": "ben"},
    BOT_KEY: {"team": "clinic"},  # a key in the team that no person owns
    CAROL_KEY: {"team": "clinic"},
}
TEAM = "team:clinic"


class Stack:
    def __init__(self, upstream: Upstream, url: str, master: str, home: Path):
        self.upstream, self.url, self.master, self.home = upstream, url, master, home

    def ask(self, key: str, text: str, **kw: Any) -> str:
        """One request; returns what the upstream got for it (the request marks itself with a fresh tag)."""
        tag = f"q-{uuid.uuid4().hex[:8]}"
        r = chat(self.url, key, [{"role": "user", "content": f"{text} ({tag})"}], **kw)
        assert r.status_code == 200, r.text[:2000]
        with self.upstream._lock:
            seen = [json.dumps(b) for b in self.upstream.requests if tag in json.dumps(b)]
        assert len(seen) == 1, len(seen)
        return seen[0]

    def tell(self, key: str, text: str, **kw: Any) -> None:
        """Say something worth remembering, in a session of its own that ends with the request."""
        headers = {"X-Session-Id": f"tell-{uuid.uuid4().hex[:8]}", "X-Session-Done": "true", **kw.pop("headers", {})}
        self.ask(key, text, headers=headers, **kw)

    def sessions(self, tenant: str, given: str) -> list[Session]:
        store = reader(self.home)
        out = [store.get_session(r["session_id"], r["tenant"]) for r in store.sessions_named(given, tenant)]
        return [s for s in out if s is not None]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("isolation")
    up = Upstream(script=lambda body: "Noted.").start()
    home = seed_home(root / "home")
    cfg = write_proxy_dir(root / "proxy", up.url, custom_auth=True)
    keys = json.dumps(KEYS)
    try:
        with started_proxy(
            cfg, home, root / "proxy.log", root / "proxy", MC_TEST_KEYS=keys, **EXTRACT_AT_ONCE
        ) as proxy:
            yield Stack(up, proxy.base_url, proxy.master_key, home)
    finally:
        up.stop()
        close_readers()


def _remembered(stack: Stack, key: str, question: str, fact: str, **kw: Any) -> bool:
    return fact in stack.ask(key, question, **kw)


# Keys of one team -----------------------------------------------------------------------------------------------
def test_two_peoples_keys_in_one_team_never_share_personal_memories(stack: Stack) -> None:
    """Fails before: a request that names no user was "the user nobody named" of its tenant, the team, so what Ana
    said through her key reached Ben's requests through his."""
    stack.tell(ANA_KEY, "Please remember that my blood type is AB negative.")
    wait_for(lambda: _remembered(stack, ANA_KEY, "Which blood type do I have?", "AB negative"), 30, "Ana's memory")
    assert not _remembered(stack, BEN_KEY, "Which blood type do I have?", "AB negative")
    # a key that no person owns is a user of its own too
    stack.tell(BOT_KEY, "Please remember that my favourite colour is vermilion.")
    wait_for(lambda: _remembered(stack, BOT_KEY, "What is my favourite colour?", "vermilion"), 30, "the bot's memory")
    assert not _remembered(stack, CAROL_KEY, "What is my favourite colour?", "vermilion")
    assert not _remembered(stack, BEN_KEY, "What is my favourite colour?", "vermilion")


def test_one_session_id_sent_through_two_keys_of_a_team_is_two_sessions(stack: Stack) -> None:
    given = f"ward-{uuid.uuid4().hex[:8]}"
    for key in (ANA_KEY, BEN_KEY, BOT_KEY, CAROL_KEY):
        stack.ask(key, "Summarise the night shift notes.", headers={"X-Session-Id": given})
    found = wait_for(lambda: stack.sessions(TEAM, given) if len(stack.sessions(TEAM, given)) == 4 else None, 20, "4")
    assert all(len(s.turns) == 1 for s in found)
    assert len({s.turns[0].user for s in found}) == 4


def test_a_request_that_names_its_user_is_that_users_whatever_the_key(stack: Stack) -> None:
    """An app's key that speaks for its own end users (the OpenAI ``user`` field) keeps them apart."""
    tag = uuid.uuid4().hex[:6]
    stack.tell(BOT_KEY, "Please remember that my dog is called Biscuit.", body={"user": f"patient-{tag}-1"})
    ask = "What is my dog called?"
    wait_for(lambda: _remembered(stack, BOT_KEY, ask, "Biscuit", body={"user": f"patient-{tag}-1"}), 30, "memory")
    assert not _remembered(stack, BOT_KEY, ask, "Biscuit", body={"user": f"patient-{tag}-2"})
    assert not _remembered(stack, BOT_KEY, ask, "Biscuit")  # the key itself is not its end users


# Names ------------------------------------------------------------------------------------------------------------
def test_a_user_named_default_is_not_the_users_nobody_named(stack: Stack) -> None:
    """Fails before: ``default`` is the name of the bucket of the users a host did not name; a client that called
    itself that read what they said."""
    stack.tell(stack.master, "Please remember that my office is on the third floor in the east wing.")
    ask = "Where is my office?"
    wait_for(lambda: _remembered(stack, stack.master, ask, "east wing"), 30, "the unnamed user's memory")
    for who in ("default", " default ", "*"):
        assert not _remembered(stack, stack.master, ask, "east wing", body={"user": who}), who
        assert not _remembered(stack, stack.master, ask, "east wing", headers={"X-User-Id": who.strip()}), who


@pytest.mark.parametrize(
    ("said", "same", "others"),
    [
        (
            "José Müller",
            [unicodedata.normalize("NFD", "José Müller"), " José Müller  "],
            ["jose müller", "José Muller"],
        ),
        ("nadia", ["nadia ", "\tnadia"], ["Nadia", "nadia\u200b", "nаdia", "ｎａｄｉａ"]),
    ],
    ids=["unicode", "ascii"],
)
def test_a_user_name_in_another_form_is_the_same_user_and_a_lookalike_is_not(
    stack: Stack, said: str, same: list[str], others: list[str]
) -> None:
    tag = uuid.uuid4().hex[:6]
    fact = f"ferret-{tag}"
    stack.tell(stack.master, f"Please remember that my pet ferret is named {fact}.", body={"user": said})
    ask = "What is my pet ferret named?"
    wait_for(lambda: _remembered(stack, stack.master, ask, fact, body={"user": said}), 30, "the memory")
    for form in same:
        assert _remembered(stack, stack.master, ask, fact, body={"user": form}), repr(form)
    for other in others:
        assert not _remembered(stack, stack.master, ask, fact, body={"user": other}), repr(other)


def test_long_user_ids_that_share_a_prefix_are_two_users(stack: Stack) -> None:
    prefix = "org/" + "engineering-platform-" * 16  # past the id bound
    tag = uuid.uuid4().hex[:6]
    one, two = prefix + f"ana-{tag}", prefix + f"ben-{tag}"
    stack.tell(stack.master, f"Please remember that my parking spot is P-{tag}.", body={"user": one})
    ask = "Which parking spot is mine?"
    wait_for(lambda: _remembered(stack, stack.master, ask, f"P-{tag}", body={"user": one}), 30, "the memory")
    assert not _remembered(stack, stack.master, ask, f"P-{tag}", body={"user": two})


def test_path_like_ids_are_names_like_any_other(stack: Stack) -> None:
    tag = uuid.uuid4().hex[:6]
    for given in (f"../{tag}", f"..\\..\\{tag}", f"/etc/{tag}"):
        stack.ask(stack.master, "Plan the rota.", headers={"X-Session-Id": given, "X-User-Id": "../root"})
        [s] = wait_for(lambda g=given: stack.sessions("default", g) or None, 20, given)
        assert s.session_id.startswith(given + "~u"), s.session_id
    assert not list(stack.home.parent.glob(f"*{tag}*")) and not list(stack.home.glob(f"**/*{tag}*"))


def test_concurrent_first_requests_of_several_users_never_share_a_session(stack: Stack) -> None:
    """Eight users at once, with one session id, and eight more at once with none and one opening."""
    tag = uuid.uuid4().hex[:6]
    given = f"standup-{tag}"
    named = [f"named-{tag}-{i}" for i in range(8)]
    anonymous = [f"anon-{tag}-{i}" for i in range(8)]

    def named_request(u: str) -> None:
        stack.ask(stack.master, "Good morning, what is on today?", headers={"X-Session-Id": given, "X-User-Id": u})

    def fingerprinted_request(u: str) -> None:
        r = chat(stack.url, stack.master, [{"role": "user", "content": f"Good morning team {tag}"}], body={"user": u})
        assert r.status_code == 200, r.text[:500]

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(named_request, named))
        list(pool.map(fingerprinted_request, anonymous))
    found = wait_for(lambda: s if len(s := stack.sessions("default", given)) == 8 else None, 20, "eight sessions")
    assert sorted(t.user for s in found for t in s.turns) == sorted(named)

    def fingerprinted() -> list[Session] | None:
        store = reader(stack.home)
        rows = [store.get_session(r["session_id"], r["tenant"]) for r in store.list_sessions(5000)]
        mine = [s for s in rows if s is not None and any(t.user in anonymous for t in s.turns)]
        return mine if sum(len(s.turns) for s in mine) == 8 else None

    mine = wait_for(fingerprinted, 20, "the eight fingerprinted turns")
    assert len(mine) == 8 and all(len({t.user for t in s.turns}) == 1 for s in mine)


def test_user_ids_sent_as_bytes_that_are_not_utf8_are_names_like_any_other(stack: Stack) -> None:
    tag = uuid.uuid4().hex[:6]
    one, two = f"\xff\xfeana-{tag}".encode("latin-1"), f"\xfe\xffana-{tag}".encode("latin-1")
    stack.tell(stack.master, f"Please remember that my desk is D-{tag}.", headers={"X-User-Id": one})
    ask = "Which desk is mine?"
    wait_for(lambda: _remembered(stack, stack.master, ask, f"D-{tag}", headers={"X-User-Id": one}), 30, "memory")
    assert not _remembered(stack, stack.master, ask, f"D-{tag}", headers={"X-User-Id": two})
    assert not _remembered(stack, stack.master, ask, f"D-{tag}")
