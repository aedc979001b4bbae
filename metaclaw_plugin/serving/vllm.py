"""Publishing each step's LoRA weights to a running vLLM server through its runtime LoRA endpoints.

vLLM serves LoRA weights by name (its "LoRA adapters"): a request with ``model: <lora_name>`` runs the base with them.
Started with ``--enable-lora`` (and ``--max-lora-rank`` at least ``training.lora_rank``) and the environment
variable ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``, it loads and unloads them while it runs:

    POST /v1/load_lora_adapter    {"lora_name": NAME, "lora_path": FOLDER}
    POST /v1/unload_lora_adapter  {"lora_name": NAME}

The publisher keeps one stable name (``serving.name``), so clients never change the model they ask for: on
each new :class:`WeightsRef` it unloads the name (a 404/400 for a name not loaded yet is fine) and loads the
new folder under it. A tenant's own weights (``training.scope: tenant``) are served under a name of their own,
:func:`lora_name_for`, ``<serving.name>.<tenant folder>`` (the folder name of
:func:`~metaclaw_plugin.training.weights.tenant_dir`): a request for tenant T asks vLLM for T's name, so one
tenant's weights never answer another's request. vLLM reads ``lora_path`` itself, so the folder must be on a file
system it sees.
Between the two calls the name is briefly unknown to vLLM; requests that arrive then get a 404 from vLLM.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections import Counter
from typing import Any

from ..training.weights import WeightsRef, tenant_dir

log = logging.getLogger("metaclaw_plugin.serving")


class VllmPublishError(RuntimeError):
    pass


def lora_name_for(lora_name: str, tenant: str | None) -> str:
    """The vLLM model name of a tenant's weights (``lora_name`` itself for weights of every tenant)."""
    return lora_name if tenant is None else f"{lora_name}.{tenant_dir(tenant)}"


class VllmPublisher:
    def __init__(self, url: str, *, lora_name: str, api_key: str | None = None, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/").removesuffix("/v1")
        self.lora_name = lora_name
        self.api_key = api_key
        self.timeout = timeout
        self.published: WeightsRef | None = None
        self.names: dict[str, int] = {}  # each vLLM name published -> the step it serves
        self.counters: Counter[str] = Counter()

    def _post(self, path: str, body: dict[str, Any]) -> tuple[int, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                return r.status, r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode("utf-8", "replace")

    def __call__(self, ref: WeightsRef) -> None:
        self.publish(ref)

    def publish(self, ref: WeightsRef) -> None:
        """Make ``lora_name`` on the vLLM server serve ``ref``'s LoRA weights. Raises :class:`VllmPublishError`."""
        try:
            self._publish(ref)
        except VllmPublishError:
            self.counters["errors"] += 1
            raise
        self.published = ref
        self.names[lora_name_for(self.lora_name, ref.tenant)] = ref.step
        self.counters["published"] += 1
        log.info("vLLM at %s serves step %d as %r", self.url, ref.step, lora_name_for(self.lora_name, ref.tenant))

    def _publish(self, ref: WeightsRef) -> None:
        if ref.backend != "local":
            raise VllmPublishError(f"{ref.backend!r} weights ({ref.path}) are not a PEFT folder vLLM can load")
        name = lora_name_for(self.lora_name, ref.tenant)
        try:
            status, text = self._post("/v1/unload_lora_adapter", {"lora_name": name})
            if status >= 300 and status not in (400, 404):  # 404/400: the name is not loaded yet
                raise VllmPublishError(f"vLLM refused to unload {name!r}: {status} {text[:300]}")
            status, text = self._post("/v1/load_lora_adapter", {"lora_name": name, "lora_path": ref.path})
        except OSError as e:
            raise VllmPublishError(f"vLLM at {self.url} is not reachable: {e}") from e
        if status >= 300:
            hint = (
                " (is vLLM started with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True?)"
                if status in (404, 405)
                else ""
            )
            raise VllmPublishError(f"vLLM refused to load {ref.path} as {name!r}: {status} {text[:300]}{hint}")

    def status(self) -> dict[str, Any]:
        p = self.published
        return {
            "url": self.url,
            "lora_name": self.lora_name,
            "step": p.step if p else None,
            "names": dict(self.names),
            **self.counters,
        }
