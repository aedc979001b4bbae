"""Redaction: real-looking secrets of many kinds disappear, placeholders stay readable, ordinary
identifiers survive, and local_only keeps plugin LLM calls on this machine."""

from __future__ import annotations

import pytest

from metaclaw_plugin.learning.llm import LLMClient, LLMUnavailable, is_local_endpoint
from metaclaw_plugin.privacy import Redactor

# (what, the text around it, the secret itself). Values are fake but shaped like the real thing.
SECRETS = [
    ("openai", "export OPENAI_API_KEY={}", "sk-proj-Zx81Qw72Lm63Np54Ok45Ij36Uh27Yg18Tf09Rd"),
    ("openai legacy", "key: {}", "sk-Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6Kl9No2Qr"),
    ("anthropic", "ANTHROPIC_API_KEY={}", "sk-ant-api03-Qm4Zr8Xt2Vy6Bn0Hc5Jd9Kf3Lg7Ph1Ws4Ea8Rt2Yu6Io0-AbCdEfGh"),
    ("openrouter", "use {} for routing", "sk-or-v1-9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a3928"),
    ("google", "maps key {}", "AIzaSyD4k9Xx7Qw2Er5Ty8Ui1Op4As7Df0GhJkL"),
    ("github classic", "git push with {}", "ghp_8fK2mN5qR9tV3wY6zB1cE4hJ7kL0pS3uX6aD"),
    (
        "github fine-grained",
        "token={}",
        "github_pat_11ABCDEFG0aBcDeFgHiJkL_MnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrSt",
    ),
    ("gitlab", "CI token {}", "glpat-Xy9Zk8Wv7Ut6Sr5Qp4On"),
    ("slack bot", "slack: {}", "xoxb-2048193847561-4829103847562-Zk9Yx8Wv7Ut6Sr5Qp4On3Ml2"),
    ("slack webhook", "post to {}", "https://hooks.slack.com/services/T024BE7LD/B01ABCDEF12/Zk9Yx8Wv7Ut6Sr5Qp4On3Ml2"),
    ("huggingface", "HF_TOKEN={}", "hf_Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVbNm"),
    ("aws access key", "aws_access_key_id = {}", "AKIAQ3EGRX7JN2PLVB4T"),
    ("aws secret key", "aws_secret_access_key = {}", "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"),
    ("stripe", "stripe.api_key = '{}'", "sk_live_51HqB2cK3dL4mN5pQ6rS7tU8vW9xY0zA"),
    ("sendgrid", "SENDGRID={}", "SG.Zk9Yx8Wv7Ut6Sr5Qp4On3M.l2Kj1Hg0Fe9Dc8Ba7Zy6Xw5Vu4Ts3Rq2Po1Nm0Lk9Ji8H"),
    ("npm", "//registry.npmjs.org/:_authToken={}", "npm_Zk9Yx8Wv7Ut6Sr5Qp4On3Ml2Kj1Hg0Fe9Dc8"),
    ("groq", "GROQ_API_KEY={}", "gsk_Zk9Yx8Wv7Ut6Sr5Qp4On3Ml2Kj1Hg0Fe9Dc8Ba7Zy6Xw5Vu4"),
    ("xai", "XAI key {}", "xai-Zk9Yx8Wv7Ut6Sr5Qp4On3Ml2Kj1Hg0Fe9Dc8Ba7Zy6Xw5Vu4Ts3Rq2Po1Nm0"),
    (
        "jwt",
        "Cookie: session={}",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFsaWNlIn0.Xk3Zr8Qp2Lm6Nw4Vt9Ys1Bh5Cj7Dg0Ef",
    ),
    ("bearer", "Authorization: Bearer {}", "9aZk8Yx7Wv6Ut5Sr4Qp3On2Ml1Kj0Hg"),
    ("basic auth", "Authorization: Basic {}", "YWRtaW46czNjcjN0LXBhc3N3MHJk"),
    ("url password", "DATABASE_URL=postgres://admin:{}@db.internal:5432/app", "Tr0ub4dor-and-3"),
    ("password assignment", 'password = "{}"', "correct-Horse-42!"),
    ("password prose", "my password is {}", "hunter2hunter2"),
    ("json password", '{{"db_password": "{}"}}', "p@ssW0rd!2024"),
    ("client secret", "CLIENT_SECRET: {}", "Zq7Xw3Ev9Rb1Tn5Ym8Uc2Io6Pa4Sd0Fg"),
    ("telegram", "bot {}", "7123456789:AAHk9Yx8Wv7Ut6Sr5Qp4On3Ml2Kj1Hg0Fe9D"),
    ("twilio", "TWILIO_SID {}", "AC0123456789abcdef0123456789abcdef"),
    (
        "private key",
        "here:\n{}\nthanks",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBcTJ0x9qPq1dKjXcVbNm1234567890abcdefghijklmnop\n-----END OPENSSH PRIVATE KEY-----",
    ),
    (
        "rsa key, unterminated",
        "oops {}",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9Zk8Yx7Wv6Ut5Sr4Qp3On2Ml1Kj0Hg",
    ),
    ("unknown provider", "NEWCO_KEY: {}", "nc_live_Q8w7E6r5T4y3U2i1O0pAsDfGhJkLzXcV"),
    ("high entropy", "the value {} was leaked", "Zk9Yx8Wv7Ut6Sr5Qp4On3Ml2Kj1Hg0Fe"),
]

KEEP = [
    "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "the password is required and must be rotated",
    "token = $GITHUB_TOKEN",
    "api_key = os.environ['OPENAI_API_KEY']",
    "see src/metaclaw_plugin/skillbank/retrieve.py line 42",
    "https://docs.python.org/3/library/re.html",
    "Use sk-... style keys from the dashboard",
    "the secret was committed by mistake",
]


@pytest.fixture(scope="module")
def r() -> Redactor:
    return Redactor()


@pytest.mark.parametrize("what,template,secret", SECRETS, ids=[s[0] for s in SECRETS])
def test_every_secret_is_redacted(r: Redactor, what: str, template: str, secret: str):
    text = template.format(secret)
    out = r.redact(text)
    assert secret not in out, out
    # no long piece of the secret survives either
    for i in range(0, max(1, len(secret) - 12)):
        chunk = secret[i : i + 12]
        if chunk.strip() and "\n" not in chunk and "-----" not in chunk:
            assert chunk not in out, (chunk, out)
    assert "[REDACTED:" in out
    assert r.redact(out) == out  # idempotent


@pytest.mark.parametrize("text", KEEP)
def test_ordinary_text_survives(r: Redactor, text: str):
    assert r.redact(text) == text


def test_placeholders_are_readable_and_say_what_was_there(r: Redactor):
    out = r.redact("use ghp_8fK2mN5qR9tV3wY6zB1cE4hJ7kL0pS3uX6aD and AKIAQ3EGRX7JN2PLVB4T to deploy")
    assert out == "use [REDACTED:github_token] and [REDACTED:aws_access_key] to deploy"


def test_redact_obj_walks_messages_and_tool_calls(r: Redactor):
    msg = {
        "role": "assistant",
        "content": [{"type": "text", "text": "key sk-proj-Zx81Qw72Lm63Np54Ok45Ij36Uh27Yg18"}],
        "tool_calls": [
            {
                "function": {
                    "name": "sh",
                    "arguments": '{"cmd": "curl -H \\"Authorization: Bearer 9aZk8Yx7Wv6Ut5Sr4Qp3On2Ml1Kj0Hg\\""}',
                }
            }
        ],
    }
    out = r.redact_obj(msg)
    assert "Zx81Qw72" not in str(out) and "9aZk8Yx7" not in str(out) and out["role"] == "assistant"


@pytest.mark.parametrize(
    "obj",
    [
        {"metadata": {"sk-proj-Zx81Qw72Lm63Np54Ok45Ij36Uh27Yg18": "owner"}},
        {"usage": {"ghp_Zx81Qw72Lm63Np54Ok45Ij36Uh27Yg18aB": 3}},
        [{"parameters": {"properties": {"AKIAZX81QW72LM63NP54": {"type": "string"}}}}],
    ],
)
def test_redact_obj_reads_dict_keys_too(r: Redactor, obj: object):
    out = r.redact_obj(obj)
    assert "Zx81Qw72" not in str(out) and "ZX81QW72" not in str(out), out


def test_redact_obj_keeps_ordinary_keys(r: Redactor):
    msg = {"role": "user", "content": "hi", "tool_call_id": "call_1", "prompt_tokens": 3, "completion_tokens": 4}
    assert r.redact_obj(msg) == msg


def test_detect_secrets_library_adds_its_detectors():
    pytest.importorskip("detect_secrets")
    with_lib = Redactor()
    without = Redactor(detect_secrets=False)
    assert with_lib.rule_count > without.rule_count
    token = "SK" + "0123456789abcdef0123456789abcdef"  # Twilio API key: only the library knows it
    assert token not in with_lib.redact(f"twilio {token}")


def test_detectors_without_a_literal_wait_for_a_long_run(monkeypatch: pytest.MonkeyPatch):
    """Bot-token detectors have no literal to wait for, only a long run of token characters; they and the
    entropy pass are skipped for text without 20 non-space characters in a row, and nothing else changes."""
    pytest.importorskip("detect_secrets")
    import re

    from metaclaw_plugin import privacy

    gated = Redactor()
    woken = [gated._rules[i].label for i in gated._by_literal.get(privacy._RUN, ())]
    assert {"discord_bot_token", "telegram_bot_token"} <= set(woken) and not gated._always
    assert privacy._required_literals(re.compile(r"[^ ]{40}")) is None  # a negated class: not a token run
    assert privacy._required_literals(re.compile(r"[a-z]{8}")) is None  # too short to gate on
    monkeypatch.setattr(privacy, "_RUN_MIN", 0)  # every rule and the entropy pass on every text, as before
    ungated = Redactor()
    texts = [
        "discord MTIzNDU2Nzg5MDEyMzQ1Njc4.ABCDEF.abcdefghijklmnopqrstuvwxyz1 bot",
        "telegram 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw5 bot",
        "entropy Zq8xK2mN9pL4vR7tY1wB3cF6hJ0gD5sA here",
        "a sentence of ordinary words, none of them twenty characters long, about a release",
        " " * 30,
        "x" * 19,
        "naïve — ünïcödé wörds and a path /usr/local/lib/python3.12/site-packages",
    ]
    for text in texts:
        assert gated.redact(text) == ungated.redact(text), text
    assert "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw5" not in gated.redact(texts[1])
    assert "abcdefghijklmnopqrstuvwxyz1" not in gated.redact(texts[0])


def test_find_lists_kinds_for_screening(r: Redactor):
    assert r.find("nothing secret here") == []
    assert r.find("AKIAQ3EGRX7JN2PLVB4T") == ["aws_access_key"]


def test_emails_and_phones_are_optional():
    text = "mail ada@example.com or call +1 415 555 0100"
    assert Redactor().redact(text) == text
    out = Redactor(emails=True, phones=True).redact(text)
    assert "ada@example.com" not in out and "555 0100" not in out


@pytest.mark.parametrize(
    "model,base,local",
    [
        ("openai/x", "http://127.0.0.1:8000/v1", True),
        ("openai/x", "http://localhost:11434", True),
        ("openai/x", "http://[::1]:8000/v1", True),
        ("ollama/llama3", None, True),
        ("openai/gpt-4o", None, False),
        ("openai/x", "https://api.openai.com/v1", False),
        ("openai/x", "http://10.0.0.5:8000/v1", False),
        ("openai/x", "http://localhost.evil.com/v1", False),
    ],
)
def test_local_endpoint_detection(model, base, local):
    assert is_local_endpoint(model, base) is local


def test_local_only_refuses_remote_calls_before_any_network():
    client = LLMClient("judge", model="openai/gpt-4o", api_base="https://api.openai.com/v1", local_only=True)
    assert "local_only" in (client.unavailable_reason() or "")
    with pytest.raises(LLMUnavailable):
        client.complete([{"role": "user", "content": "hi"}])
    assert client.calls == 0


@pytest.mark.perf
def test_redaction_throughput_is_reasonable(r: Redactor):
    import time

    chunk = (
        "def handler(event):\n    # parse the payload and call the API\n    return requests.post(url, json=event, "
        "timeout=10)\nThe user asked to refactor the module and keep the tests green. "
    ) * 200
    t0 = time.perf_counter()
    for _ in range(5):
        r.redact(chunk)
    mb_s = 5 * len(chunk) / (time.perf_counter() - t0) / 1e6
    assert mb_s > 1.0, mb_s  # measured ~10-30 MB/s; this only catches a pathological regex


# -- redaction by class: the corpus of tests/support/secret_corpus.py (values generated at run time) -------------
from secret_corpus import BENIGN, build, leaked  # noqa: E402

CORPUS = build()


def test_corpus_covers_forty_kinds_and_every_class():
    assert len({c.kind for c in CORPUS}) >= 40
    assert {c.cls for c in CORPUS} >= {
        "provider",
        "private_key",
        "assignment",
        "connection_string",
        "url_credentials",
        "http_header",
        "cli_flag",
        "prose",
    }


@pytest.mark.parametrize("case", CORPUS, ids=[c.kind for c in CORPUS])
def test_corpus_secret_is_redacted_by_class(r: Redactor, case):
    out = r.redact(case.text)
    for s in case.secrets:
        assert not leaked(s, out), out
    assert "[REDACTED:" in out and r.redact(out) == out


@pytest.mark.parametrize("text", BENIGN)
def test_corpus_look_alikes_survive(r: Redactor, text: str):
    assert r.redact(text) == text


@pytest.mark.parametrize(
    "text,expected",
    [
        ("DB_PASSWORD=%bSHQ~qvWfj4u", "DB_PASSWORD=[REDACTED:password]"),
        ('"apiKey": "Qm4Zr8Xt2Vy6Bn0Hc5Jd"', '"apiKey": "[REDACTED:key]"'),
        ("api-key: 0a1b2c3d4e5f60718293a4b5c6d7e8f9", "api-key: [REDACTED:key]"),
        ("export X_TOKEN=0a1b2c3d4e5f60718293", "export X_TOKEN=[REDACTED:token]"),
        (
            "Server=db;User ID=app;Password=Xy7-qq2!;Encrypt=True",
            "Server=db;User ID=app;Password=[REDACTED:password];Encrypt=True",
        ),
        (
            "AccountName=a;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFy;Suffix=x",
            "AccountName=a;AccountKey=[REDACTED:key];Suffix=x",
        ),
        ('ADMIN_PASSWORD="tulip Orbit 42 lamp"', 'ADMIN_PASSWORD="[REDACTED:password]"'),
        ("?user=app&password=Kq7-vv2x&ssl=true", "?user=app&password=[REDACTED:password]&ssl=true"),
        ("redis://:Kq7vv2xZp0@cache:6379/0", "redis://:[REDACTED:url_password]@cache:6379/0"),
        ("psql --password Kq7-vv2x db", "psql --password [REDACTED:password] db"),
        ("mysql -u root -pKq7-vv2x db", "mysql -u root -p[REDACTED:password] db"),
        ('<add name="db.password" value="Kq7-vv2x"/>', '<add name="db.password" value="[REDACTED:password]"/>'),
        ("<clientSecret>Kq7vv2xZp0Lm</clientSecret>", "<clientSecret>[REDACTED:secret]</clientSecret>"),
        ("Das Passwort lautet: Kq7-vv2x", "Das Passwort lautet: [REDACTED:password]"),
    ],
)
def test_assignments_keep_the_key_and_replace_only_the_value(r: Redactor, text: str, expected: str):
    assert r.redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        'password_help = "Enter your password"',
        "the password for the account is required",
        "Passwort vergessen? Das Passwort ist falsch",
        "token_type: bearer",
        "auth: required",
    ],
)
def test_sentences_about_secrets_are_not_values(r: Redactor, text: str):
    assert r.redact(text) == text


def test_every_keyword_of_detect_secrets_is_covered(r: Redactor):
    """Our keyword rule is a superset of detect-secrets' KeywordDetector list (a maintained list; its own
    regexes are line- and file-type-oriented and take the rest of the line as the value, so we do not run
    them): when the library adds a keyword, this test says so."""
    keyword = pytest.importorskip("detect_secrets.plugins.keyword")
    value = "Kq7" + "vv2xZp0Lm9"
    for kw in keyword.DENYLIST:
        for name in {kw.replace("_?", "_"), kw.replace("_?", "")}:
            out = r.redact(f"{name} = '{value}'")
            assert value not in out, (kw, out)


# Issue 42: agents' session ids are identifiers, not secrets; a browser's session cookie still is one.
@pytest.mark.parametrize(
    "text",
    [
        '{"session_id": "mcp-3f2a9c1d4b5e6f708192a3b4c5d6e7f8", "skills": []}',  # the MCP server's own reply
        "session_id=ses_01JH8ZK3QWNAB4XT7R2CDE5FGH",  # opencode (a ULID)
        "session_id: ses_5c3d1f2e9a0bXyZ12abCDefGh3",  # opencode (time, then random)
        "Mcp-Session-Id: 6f1c2e0b9a8d4c7e8f1a2b3c4d5e6f7a",
        "Your session is ses_01JH8ZK3QWNAB4XT7R2CDE5FGH.",
    ],
)
def test_agent_session_ids_are_not_redacted(r: Redactor, text: str):
    assert r.redact(text) == text


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Cookie: theme=dark; sessionid=aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY; csrftoken=abc", "token"),
        ("_session_id=6f1c2e0b9a8d4c7e8f1a2b3c4d5e6f7a", "token"),  # a bare hex session cookie
        ("session_token=mcp-3f2a9c1d4b5e6f708192a3b4c5d6e7f8", "token"),  # a token, whatever its shape
        ("my password is ses_01JH8ZK3QWNAB4XT7R2CDE5FGH", "password"),
    ],
)
def test_session_secrets_stay_redacted(r: Redactor, text: str, label: str):
    assert f"[REDACTED:{label}]" in r.redact(text)
