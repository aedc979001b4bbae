"""Publishing adapters to a vLLM server (serving/vllm.py) against a local server with vLLM's runtime LoRA
endpoints (tests/support/vllm_fake.py): one stable adapter name that always serves the newest step, the errors a
misconfigured vLLM gives, and the sidecar's ``serving.vllm_url`` watcher."""

from __future__ import annotations

import json
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest
from openclaw_support import free_port
from policy_support import ServerThread, make_adapter
from vllm_fake import FakeVllm
from waiting import wait_for

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.serving import VllmPublisher, VllmPublishError, WeightsWatcher, lora_name_for
from metaclaw_plugin.sidecar import create_app, load_or_create_token
from metaclaw_plugin.store import Database
from metaclaw_plugin.training.weights import WeightsRef, store_latest, tenant_dir


@pytest.fixture(scope="module")
def refs(policy_base: Path, tmp_path_factory: pytest.TempPathFactory) -> list[WeightsRef]:
    root = tmp_path_factory.mktemp("adapters")
    return [make_adapter(policy_base, root / f"step{i}", seed=i, step=i) for i in (1, 2)]


def served(fake: FakeVllm, key: str | None = None) -> dict[str, str]:
    req = urllib.request.Request(fake.url + "/v1/models", headers={"Authorization": f"Bearer {key}"} if key else {})
    with urllib.request.urlopen(req) as r:
        return {m["id"]: m["root"] for m in json.loads(r.read())["data"] if m["parent"]}


def test_each_step_replaces_the_adapter_under_one_name(refs: list[WeightsRef]) -> None:
    with FakeVllm() as fake:
        pub = VllmPublisher(fake.url + "/v1", lora_name="policy")
        pub.publish(refs[0])
        assert served(fake) == {"policy": refs[0].path}
        pub.publish(refs[1])
        assert served(fake) == {"policy": refs[1].path}
        assert [p for p, _ in fake.calls] == ["/v1/unload_lora_adapter", "/v1/load_lora_adapter"] * 2
        assert pub.status()["step"] == 2 and pub.status()["published"] == 2


def test_misconfigured_servers_give_clear_errors(refs: list[WeightsRef], tmp_path: Path) -> None:
    with (
        FakeVllm(runtime_updating=False) as fake,
        pytest.raises(VllmPublishError, match="VLLM_ALLOW_RUNTIME_LORA_UPDATING"),
    ):
        VllmPublisher(fake.url, lora_name="policy").publish(refs[0])
    with FakeVllm(api_key="sk-vllm") as fake:
        with pytest.raises(VllmPublishError, match="401"):
            VllmPublisher(fake.url, lora_name="policy").publish(refs[0])
        VllmPublisher(fake.url, lora_name="policy", api_key="sk-vllm").publish(refs[0])
        assert served(fake, "sk-vllm") == {"policy": refs[0].path}
        with pytest.raises(VllmPublishError, match="No adapter found"):
            VllmPublisher(fake.url, lora_name="policy", api_key="sk-vllm").publish(
                WeightsRef(3, "local", refs[0].base_model, str(tmp_path))
            )
    with pytest.raises(VllmPublishError, match="not a PEFT folder"):
        VllmPublisher("http://127.0.0.1:9", lora_name="p").publish(WeightsRef(1, "tinker", "b", "tinker://x"))
    with pytest.raises(VllmPublishError, match="not reachable"):
        VllmPublisher(f"http://127.0.0.1:{free_port()}", lora_name="p", timeout=2).publish(refs[0])


def test_a_watcher_publishes_what_the_trainer_stores(refs: list[WeightsRef], tmp_path: Path) -> None:
    db = Database(tmp_path / "m.db")
    with FakeVllm() as fake:
        w = WeightsWatcher(db, [VllmPublisher(fake.url, lora_name="policy").publish], interval=0.05)
        w.start()
        try:
            store_latest(db, refs[0])
            wait_for(lambda: served(fake) == {"policy": refs[0].path})
            store_latest(db, refs[1])
            wait_for(lambda: served(fake) == {"policy": refs[1].path})
        finally:
            w.stop()
        assert w.counters["refs"] == 2 and w.counters["subscriber_errors"] == 0


def test_the_sidecar_publishes_when_serving_vllm_url_is_set(refs: list[WeightsRef], home: Path) -> None:
    with FakeVllm() as fake:
        settings = Settings(home=home, serving={"vllm_url": fake.url, "name": "mine", "poll_interval": 0.05})
        token = load_or_create_token(home)
        with ServerThread(create_app(MetaClawPlugin(settings), token, manage_plugin=True), free_port()):
            store_latest(Database(settings.db_file), refs[1])
            wait_for(lambda: served(fake) == {"mine": refs[1].path})


def test_a_failed_publish_is_retried_not_taken_for_done(refs: list[WeightsRef], tmp_path: Path) -> None:
    """vLLM without runtime updating refuses the first publish; once it accepts, the next poll publishes the same
    ref. A ref that keeps failing is given up after ``retries`` polls."""
    db = Database(tmp_path / "m.db")
    with FakeVllm(runtime_updating=False) as fake:
        w = WeightsWatcher(db, [VllmPublisher(fake.url, lora_name="policy").publish], interval=60, retries=2)
        store_latest(db, refs[0])
        assert w.check() == refs[0] and w.counters["subscriber_errors"] == 1 and served(fake) == {}
        fake.runtime_updating = True
        w.check()
        assert served(fake) == {"policy": refs[0].path} and w.counters["subscriber_errors"] == 1
        fake.runtime_updating = False
        store_latest(db, refs[1])
        for _ in range(4):
            w.check()
        assert w.counters["subscriber_errors"] == 1 + 3 and w.counters["given_up"] == 1  # tried, retried twice, dropped
        w.check()
        assert w.counters["subscriber_errors"] == 4


def test_each_tenants_weights_are_published_under_a_name_of_their_own(refs: list[WeightsRef], tmp_path: Path) -> None:
    """training.scope tenant: a tenant's weights load under ``<name>.<tenant folder>``, so a request for tenant T asks
    vLLM for T's name; publishing one tenant's weights never replaces another's (or the name for every tenant)."""
    db = Database(tmp_path / "m.db")
    alpha, beta = (replace(refs[i], tenant=t) for i, t in ((0, "alpha"), (1, "team:beta")))
    names = {t: lora_name_for("policy", t) for t in ("alpha", "team:beta")}
    assert names == {"alpha": f"policy.{tenant_dir('alpha')}", "team:beta": f"policy.{tenant_dir('team:beta')}"}
    assert len(set(names.values())) == 2 and ":" not in names["team:beta"]
    with FakeVllm() as fake:
        pub = VllmPublisher(fake.url, lora_name="policy")
        w = WeightsWatcher(db, [pub.publish], interval=60)
        store_latest(db, alpha)
        store_latest(db, beta)
        w.check()
        assert served(fake) == {names["alpha"]: alpha.path, names["team:beta"]: beta.path}
        store_latest(db, replace(alpha, step=3, path=beta.path))  # alpha's next version: only alpha's name moves
        w.check()
        assert served(fake) == {names["alpha"]: beta.path, names["team:beta"]: beta.path}
        assert pub.status()["names"] == {names["alpha"]: 3, names["team:beta"]: 2}
        assert w.counters["refs"] == 3 and w.counters["subscriber_errors"] == 0
