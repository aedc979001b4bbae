"""A statement holding a credential is never stored, injected or searchable (issue 41, item 4): the refusal names the
kind and never the value, in the agents' tools, the API and the CLI; ``guard.is_credential`` is the redactor's own
detection (one definition), not a list of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from home_files import home_files
from starlette.testclient import TestClient
from test_memory import end, memory_part, run_cli, say

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.learning.memory.guard import is_credential
from metaclaw_plugin.learning.memory.ops import MemoryError_, MemoryOps, UserMemory
from metaclaw_plugin.privacy import Redactor
from metaclaw_plugin.sidecar import create_app, load_or_create_token


@pytest.fixture
def plugin(home: Path):
    p = MetaClawPlugin(Settings(home=home)).start()
    yield p
    p.stop()


# The held-out kinds (a login pair, a passphrase, a national id, a wifi key, "my password is"), and more, in the
# extractor's languages and German. Each is (statement, value).
CREDENTIALS = [
    ("Remember that I log in to the NAS with admin / Falcon-Rise-77.", "Falcon-Rise-77"),
    ("Note that the passphrase for my backup disk is violet canyon hammock drift.", "violet canyon hammock"),
    ("My SSN is 078-05-1120.", "078-05-1120"),
    ("Remember the wifi key is sunflower88.", "sunflower88"),
    ("My password is swordfish.", "swordfish"),
    ("The door code at the office is 4821.", "4821"),
    ("My passport number is X1234567.", "X1234567"),
    ("Retiens que mon mot de passe est soleilvert.", "soleilvert"),
    ("Recuerda que mi contraseña es girasol42.", "girasol42"),
    ("Lembre que minha senha é jabuticaba9.", "jabuticaba9"),
    ("记住我的密码是 woaini2024。", "woaini2024"),
    ("Merk dir, mein Passwort ist Sonnenblume7.", "Sonnenblume7"),
    ("Retiens que mon mot de passe VPN est Soleil!Vert-2031.", "Soleil!Vert-2031"),  # a noun after the noun
    ("Mein Passwort WLAN ist Kiefernzapfen5.", "Kiefernzapfen5"),
]


def test_credentials_in_prose_are_never_stored_injected_or_searchable(plugin: MetaClawPlugin) -> None:
    for text, _ in CREDENTIALS:
        say(plugin, "c1", text)
    end(plugin, "c1")
    store = plugin.memory_store
    assert store is not None
    rows = store.find(statuses=None)
    dump = json.dumps([m.as_dict() for m in rows], ensure_ascii=False)
    dump += json.dumps([store.history(m.id) for m in rows], ensure_ascii=False)
    for text, value in CREDENTIALS:
        assert value not in dump, text
        assert "[REDACTED:" not in dump  # not kept redacted either: nothing of them is
    for text, value in CREDENTIALS:
        assert value not in memory_part(say(plugin, "c2", f"What did I tell you? {text.split()[-2]}"))
    mem = UserMemory(MemoryOps(store.db, plugin.settings), "acme", "ana")
    for q in ("password", "passphrase backup disk", "wifi key", "ssn", "door code", "passport", "contraseña", "密码"):
        assert all(v not in json.dumps(mem.search(q), ensure_ascii=False) for _, v in CREDENTIALS)


# Issue 41's third round: languages and forms the scan did not read (a Czech or Danish noun with its preposition, a
# PIN with a Polish or Italian copula, a secret noun with a long modifier, "p/w", a login after a URL, a CJK noun
# after a Latin word, an Indonesian and a Ukrainian sentence)
PROSE_FORMS = [
    ("Pamatuj si, že heslo k notebooku je Brambora#31.", "Brambora#31"),
    ("Zapamiętaj: PIN do karty to 6642.", "6642"),
    ("Husk at adgangskoden til serveren er Fjord#Hest8.", "Fjord#Hest8"),
    ("Ricorda che il PIN della carta è 7391.", "7391"),
    ("Remember the shared secret between the ingest and export jobs is 3hT8-pp4Q-zz19.", "3hT8-pp4Q-zz19"),
    ("Note my p/w for the forum is Toucan#66.", "Toucan#66"),
    ("Remember: log in at https://wiki.example.com: editor / Puffin#42", "Puffin#42"),
    ("记住 WLAN密码是 Qingdao2025。", "Qingdao2025"),
    ("Ingat, kata sandi email saya adalah Sate#Ayam7.", "Sate#Ayam7"),
    ("Запам'ятай: пароль від ноутбука — Lviv#Kava3.", "Lviv#Kava3"),
    # the fourth round: an API key or a token named in other languages, a login pair, a connection string, a shell
    # command
    ("Zapamiętaj, klucz API do mapy to Mazury-Key-61.", "Mazury-Key-61"),
    ("Recuerda que el token de acceso del CRM es Rioja-Tok-38.", "Rioja-Tok-38"),
    ("覚えて: 本番のAPIキーは Nara-Key-5150 です。", "Nara-Key-5150"),
    ("Note the auth header for the staging API: Bearer Lemming42Tok", "Lemming42Tok"),
    ("Запомни: логин ops, пароль Taiga#2029.", "Taiga#2029"),
    ("Remember the reports DB is postgresql://bi:Sorrel77x@10.0.0.9/bi", "Sorrel77x"),
    ("I deploy with sshpass -p 'Tern#Gale5' ssh deploy@10.0.0.12", "Tern#Gale5"),
]


def test_prose_in_more_languages_and_forms_leaves_no_value_on_disk(plugin: MetaClawPlugin, home: Path) -> None:
    """Turns recorded through the hooks: no file under the home (the journal, the store, SQLite's WAL read while the
    process lives, the memory database) and no memory passage holds a value."""
    for text, _ in PROSE_FORMS:
        say(plugin, "c3", text)
    end(plugin, "c3")
    files = home_files(home)
    assert any(b"Pamatuj" in data and b"[REDACTED:" in data for data in files.values())  # recorded, redacted
    store = plugin.memory_store
    assert store is not None
    rows = json.dumps([m.as_dict() for m in store.find(statuses=None)], ensure_ascii=False)
    for _, value in PROSE_FORMS:
        raw = value.encode()
        escaped = json.dumps(value)[1:-1].encode()  # JSON escapes non-ASCII text
        assert not [str(p) for p, data in files.items() if raw in data or escaped in data], value
        assert value not in rows


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("log in to the NAS with admin / Falcon-Rise-77", "password"),
        ("the passphrase is correct horse battery staple", "passphrase"),
        ("my SSN is 078-05-1120", "national id"),
        ("the wifi key is sunflower88", "key"),
        ("my password is swordfish", "password"),
        ("the door code is 4821", "pin"),
        ("Mein Passwort ist Sonnenblume", "password"),
    ],
)
def test_memory_store_refuses_a_credential_naming_its_kind_never_its_value(
    plugin: MetaClawPlugin, text: str, kind: str
) -> None:
    from metaclaw_plugin.mcp_server.tools import McpTools, Scope, ToolRefused

    tools = McpTools(plugin, Scope("acme", "ana"))
    with pytest.raises(ToolRefused) as e:
        tools.memory_store(text)
    msg = str(e.value)
    value = text.split()[-1]
    assert "credential" in msg and kind in msg and value not in msg, msg
    with pytest.raises(MemoryError_) as e2:
        MemoryOps(plugin.memory_store.db, plugin.settings).add(text, "acme", "ana")  # type: ignore[union-attr]
    assert kind in str(e2.value) and value not in str(e2.value)
    assert plugin.memory_store.find(statuses=None) == []  # type: ignore[union-attr]


def test_the_api_and_the_cli_refuse_a_credential_naming_its_kind(plugin: MetaClawPlugin, home: Path) -> None:
    token = load_or_create_token(home)
    with TestClient(create_app(plugin, token)) as tc:
        r = tc.post(
            "/v1/memory",
            json={"text": "my passport number is X1234567", "tenant": "acme"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert r.status_code == 422 and "national id" in r.text and "X1234567" not in r.text
    cli = run_cli(home, "add", "the passphrase is violet canyon hammock drift", "--tenant", "acme")
    assert cli.returncode == 1 and "passphrase" in cli.stderr and "hammock" not in cli.stderr + cli.stdout


def test_is_credential_is_the_redactors_detection() -> None:
    """One definition: a statement holds a credential exactly when the redactor finds one (contact details aside)."""
    r = Redactor()
    holds = [t for t, _ in CREDENTIALS] + ["our deploy token is ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"]
    mentions = [
        "the password field is required",  # the list before this change called this a credential
        "reset your password to regain access",
        "we keep secrets in Vault",
        "my PIN code expired yesterday",
        "the API key lives in the team's password manager",
    ]
    for t in holds:
        assert is_credential(t) and r.find(t), t
    for t in mentions:
        assert not is_credential(t) and not [k for k in r.find(t) if k not in ("email", "phone")], t
