"""Recorded requests of agent clients (``tests/data/client_requests``), as the OpenAI-format messages the core reads.

Each file holds one request body as the client sent it (anonymised) with its route, the task typed on the command
line and whether it is a main or a side call. :func:`as_messages` gives the view of ``/v1/messages`` and
``/v1/responses`` bodies in chat-completions form (system fields become system messages; typed content blocks stay
typed parts, so tool results and tool calls stay what they are).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[1] / "data" / "client_requests"


@dataclass
class Recorded:
    client: str
    name: str
    route: str
    task: str
    kind: str
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return as_messages(self.route, self.body)


def load(client: str | None = None) -> list[Recorded]:
    out = []
    for f in sorted(ROOT.glob(f"{client or '*'}/*.json")):
        r = json.loads(f.read_text())
        out.append(Recorded(r["client"], f.stem, r["route"], r["task"], r["kind"], r["body"]))
    return out


def as_messages(route: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    if route.endswith("/messages"):
        system = body.get("system")
        msgs: list[dict[str, Any]] = []
        if system:
            msgs.append({"role": "system", "content": system})
        return msgs + [dict(m) for m in body.get("messages", [])]
    if route.endswith("/responses"):
        msgs = [{"role": "system", "content": body["instructions"]}] if body.get("instructions") else []
        for item in body.get("input", []):
            if "role" in item:
                msgs.append({"role": item["role"], "content": item.get("content")})
            elif item.get("type") == "function_call":
                msgs.append({"role": "assistant", "content": None, "tool_calls": [item]})
            elif item.get("type") == "function_call_output":
                msgs.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": item.get("output")})
        return msgs
    return [dict(m) for m in body.get("messages", [])]


def plain(task: str) -> list[dict[str, Any]]:
    """The same task with no client around it."""
    return [{"role": "user", "content": task}]
