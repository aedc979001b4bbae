"""The served policy's token records round-trip by answer key; a tool call changes the key."""

from metaclaw_plugin.store import Database
from metaclaw_plugin.training import tokens


def test_roundtrip(tmp_path):
    db = Database(tmp_path / "m.db")
    k = tokens.response_key("hello ", [{"function": {"name": "f", "arguments": "{}"}}])
    assert k != tokens.response_key("hello")
    assert tokens.lookup(db, k) is None
    tokens.record(db, k, tokens.TokenRecord([1, 2], [3], [-0.5]))
    tokens.record(db, k, tokens.TokenRecord([1, 2], [3, 4], None, model="m"))
    r = tokens.lookup(db, k)
    assert r == tokens.TokenRecord([1, 2], [3, 4], None, model="m")
