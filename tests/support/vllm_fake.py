"""A local stand-in for a vLLM OpenAI server's runtime LoRA endpoints (vLLM itself needs a GPU).

It answers as vLLM does (``vllm/entrypoints/openai/serving_models.py``): ``POST /v1/load_lora_adapter``
``{lora_name, lora_path}`` (400 when the name is already loaded or the path is not a PEFT adapter folder),
``POST /v1/unload_lora_adapter`` ``{lora_name}`` (404 for an unknown name), ``GET /v1/models`` listing the base
model and each adapter (``root`` is its path). Without runtime updating (``VLLM_ALLOW_RUNTIME_LORA_UPDATING``
unset) the two POST routes do not exist (404). An ``api_key`` makes every route need ``Authorization: Bearer``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class FakeVllm:
    def __init__(self, *, runtime_updating: bool = True, api_key: str | None = None, base: str = "base-model") -> None:
        self.runtime_updating = runtime_updating
        self.api_key = api_key
        self.base = base
        self.loras: dict[str, str] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _authorised(self) -> bool:
                if fake.api_key and self.headers.get("Authorization") != f"Bearer {fake.api_key}":
                    self._send(401, {"error": "Unauthorized"})
                    return False
                return True

            def do_GET(self) -> None:
                if not self._authorised():
                    return
                if self.path != "/v1/models":
                    return self._send(404, {"detail": "Not Found"})
                data = [{"id": fake.base, "object": "model", "root": fake.base, "parent": None}]
                data += [{"id": n, "object": "model", "root": p, "parent": fake.base} for n, p in fake.loras.items()]
                self._send(200, {"object": "list", "data": data})

            def do_POST(self) -> None:
                if not self._authorised():
                    return
                routes = {"/v1/load_lora_adapter": fake._load, "/v1/unload_lora_adapter": fake._unload}
                if self.path not in routes or not fake.runtime_updating:
                    return self._send(404, {"detail": "Not Found"})
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                fake.calls.append((self.path, body))
                status, text = routes[self.path](body)
                if status == 200:
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(text)))
                    self.end_headers()
                    self.wfile.write(text.encode())
                else:
                    self._send(status, {"object": "error", "message": text, "code": status})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def _load(self, body: dict[str, Any]) -> tuple[int, str]:
        name, path = body.get("lora_name"), body.get("lora_path")
        if not name or not path:
            return 400, "Both 'lora_name' and 'lora_path' must be provided."
        if name in self.loras:
            return 400, f"The lora adapter '{name}' has already been loaded."
        if not (Path(path) / "adapter_config.json").is_file():
            return 400, f"Loading lora {name} failed: No adapter found for {path}"
        self.loras[name] = path
        return 200, f"Success: LoRA adapter '{name}' added successfully."

    def _unload(self, body: dict[str, Any]) -> tuple[int, str]:
        name = body.get("lora_name")
        if name not in self.loras:
            return 404, f"The lora adapter '{name}' cannot be found."
        del self.loras[name]
        return 200, f"Success: LoRA adapter '{name}' removed successfully."

    def __enter__(self) -> FakeVllm:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
