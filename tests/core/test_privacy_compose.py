"""Redaction rules compose: whatever rule takes a secret word's key, the value after it goes too; a long
random run next to a secret word never survives; ordinary identifiers far from secret words stay.

The rule for identifiers (decided here, documented in ``metaclaw_plugin/privacy.py``): a git SHA, a UUID or a
digest is kept when no secret word is near it, or when it is labelled as an identifier ("commit <sha>",
"sha256:<hex>", "request id <uuid>"); right after a secret word ("the token <hex>", "api key <uuid>") it is
taken for the secret, because hex and UUID-shaped API keys are common.
"""

from __future__ import annotations

import base64
import string
import time

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from secret_corpus import leaked

from metaclaw_plugin.privacy import Redactor, shannon_entropy

R = Redactor()
SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

SECRET_WORDS = [
    "token",
    "password",
    "secret",
    "api key",
    "access token",
    "auth",
    "credential",
    "passphrase",
    "client secret",
    "pwd",
    "Passwort",
    "contraseña",
]
PROSE = ["{w}: ", "the {w} is ", "{w} = ", "Use the mail {w}: ", "my {w} -> {w}: ", "{w}:\n  "]
INNER_KEYS = ["SMTP_PASS", "auth_key", "API_KEY", "db_password", "clientSecret", "FOO", "value", "X_1"]
FLAGS = ["api-key", "password", "token", "output", "auth"]
QUOTES = ["", "'", '"']
ALNUM = string.ascii_letters + string.digits
PASSWORD = ALNUM + "!%*+-.?^_~"


def _mixed(v: str, alphabet: str) -> str:
    """At least one upper, lower and digit where the alphabet has them (a password, not a word)."""
    need = "".join(c[0] for c in ("Qq", "kk", "77") if c[0] in alphabet)
    return need + v


@st.composite
def values(draw) -> str:
    kind = draw(st.sampled_from(["hex", "b64", "b64url", "alnum", "password"]))
    if kind in ("hex", "b64", "b64url"):
        raw = draw(st.binary(min_size=10, max_size=40))
        assume(len(set(raw)) >= len(raw) * 2 // 3)  # random bytes, not a run of zeros
        if kind == "hex":
            v = raw.hex()
        elif kind == "b64":
            v = base64.b64encode(raw).decode()
        else:
            v = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        assume(any(c.isdigit() for c in v) and any(c.isalpha() for c in v))
        return v
    alphabet = ALNUM if kind == "alnum" else PASSWORD
    return _mixed(draw(st.text(alphabet, min_size=6, max_size=30)), alphabet)


@st.composite
def assignments(draw, value: str) -> str:
    k = draw(st.sampled_from(INNER_KEYS))
    q = draw(st.sampled_from(QUOTES))
    form = draw(
        st.sampled_from(
            [
                f"{k}={q}{value}{q}",
                f"{k}: {q}{value}{q}",
                f"{k} = {q}{value}{q}",
                f'{{"{k}": "{value}"}}',
                f"export {k}={q}{value}{q}",
                f"set {k}={q}{value}{q}",
                f"--{draw(st.sampled_from(FLAGS))} {q}{value}{q}",
                f"--{draw(st.sampled_from(FLAGS))}={q}{value}{q}",
                f"{k}: {k}: {q}{value}{q}",
            ]
        )
    )
    return form


@SETTINGS
@given(st.data())
@example(None)
def test_the_value_after_a_keyed_assignment_never_survives(data):
    if data is None:  # the held-out case, verbatim
        text, value = "Use the mail token: SMTP_PASS='Xy7#kq2Lm9pQ' when sending.", "Xy7#kq2Lm9pQ"
    else:
        value = data.draw(values())
        w = data.draw(st.sampled_from(SECRET_WORDS))
        prose = data.draw(st.sampled_from(PROSE)).format(w=w)
        text = "Note. " + prose + data.draw(assignments(value)) + " and then continue."
    out = R.redact(text)
    assert not leaked(value, out), (text, out)
    assert R.redact(out) == out


URL_ALNUM = string.ascii_letters + string.digits


@SETTINGS
@given(
    w=st.sampled_from(SECRET_WORDS),
    value=st.text(URL_ALNUM, min_size=8, max_size=30).map(lambda v: _mixed(v, URL_ALNUM)),
    form=st.sampled_from(["https://app:{v}@db.example.com/x", "postgres://u:{v}@h:5432/d", "?user=a&{k}={v}&ssl=1"]),
    k=st.sampled_from(["password", "auth_key", "token", "FOO"]),
)
def test_url_forms_after_a_secret_word(w: str, value: str, form: str, k: str):
    text = f"the {w}: " + form.format(v=value, k=k)
    if k == "FOO" and form.startswith("?"):
        text = f"the {w} is {k}={value}"
    out = R.redact(text)
    assert not leaked(value, out), (text, out)


@SETTINGS
@given(
    w=st.sampled_from(SECRET_WORDS),
    raw=st.binary(min_size=12, max_size=48),
    enc=st.sampled_from(["hex", "b64", "b64url", "uuid"]),
    gap=st.sampled_from([" ", " value ", " for the staging server is ", ' (do not share): "', " was set to `"]),
)
def test_a_long_random_run_next_to_a_secret_word_never_survives(w: str, raw: bytes, enc: str, gap: str):
    assume(len(set(raw)) >= len(raw) * 2 // 3)
    if enc == "hex":
        v = raw.hex()
    elif enc == "b64":
        v = base64.b64encode(raw).decode()
    elif enc == "b64url":
        v = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    else:
        h = raw[:16].ljust(16, b"\x7f").hex()
        v = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
    assume(any(c.isdigit() for c in v) and any(c.isalpha() for c in v) and len(v.strip("=")) >= 20)
    assume(shannon_entropy(v) >= (3.0 if enc in ("hex", "uuid") else 3.5))  # random, not a run of zero bytes
    text = f"Here is the {w}{gap}{v} for the deploy."
    out = R.redact(text)
    assert not leaked(v, out), (text, out)


# Ordinary prose: no secret word, identifiers stay.
WORDS = ["the", "build", "fixed", "merged", "branch", "deploy", "release", "test", "bug", "in", "on", "after", "report"]


@SETTINGS
@given(
    before=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
    after=st.lists(st.sampled_from(WORDS), min_size=0, max_size=6),
    raw=st.binary(min_size=20, max_size=20),
    form=st.sampled_from(["commit {sha}", "{sha}", "request id {uuid}", "{uuid}", "image@sha256:{hex64}"]),
)
def test_identifiers_in_ordinary_prose_are_kept(before: list[str], after: list[str], raw: bytes, form: str):
    sha = raw.hex()
    h = raw[:16].hex()
    uuid = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
    text = " ".join([*before, form.format(sha=sha, uuid=uuid, hex64=(sha * 2)[:64]), *after]) + "."
    assert R.redact(text) == text


def test_a_labelled_hash_next_to_a_secret_word_is_kept_an_unlabelled_one_is_not():
    sha = "3f786850e387550fdab836ed7e6dc881de23001b"
    assert R.redact(f"fixed the token refresh bug in commit {sha}") == f"fixed the token refresh bug in commit {sha}"
    assert R.redact(f"Merged {sha}; the token refresh works") == f"Merged {sha}; the token refresh works"
    assert sha not in R.redact(f"the token {sha}")
    assert sha not in R.redact(f"secret value {sha}")


def test_identifiers_that_hold_the_secret_word_are_names_not_values():
    for text in [
        "the auth service test test_auth_token_refresh_flow_2024 passed",
        "password reset flow in src/auth/password_reset_controller.py",
        "The keyboard layout file keymap_de_latin1_nodeadkeys_v2 is loaded",
    ]:
        assert R.redact(text) == text


@pytest.mark.perf
def test_composed_redaction_stays_fast_on_a_big_body():
    """1 MB of prose full of secret words (none a secret) and hashes: the near-keyword check walks runs,
    not keywords, so it costs one pass more, not a pass per keyword."""
    chunk = (
        "The auth middleware reads the session token from the cookie; the password hash uses bcrypt and the "
        "api key is loaded from the environment. Commit 3f786850e387550fdab836ed7e6dc881de23001b fixed the "
        "token refresh. max_tokens=512, tokens: 4096. "
    )
    body = (chunk * (1_000_000 // len(chunk) + 1))[:1_000_000]
    t0 = time.perf_counter()
    out = R.redact(body)
    elapsed = time.perf_counter() - t0
    assert out == body
    assert elapsed < 10.0, elapsed  # measured ~0.6 s on a loaded 2-core machine; catches a quadratic pass


@pytest.mark.perf
def test_a_line_of_many_curls_is_redacted_in_linear_time():
    """The curl-with-a-user rule looked for "-u" to the end of the line from every "curl": 64 KB of "curl the page
    and ..." on one line took a second in the skills' screen; 256 KB took 15.6 s, now 0.07 s."""
    body = ("curl the page and " * 20_000)[:256_000]
    t0 = time.perf_counter()
    assert R.redact(body) == body
    elapsed = time.perf_counter() - t0
    assert elapsed < 10.0, elapsed  # 0.07 s measured; 15.6 s before the bound
