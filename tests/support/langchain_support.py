"""Helpers for the LangChain adapter tests and benchmark: a scripted tool-calling fake model and tools.

Nothing here mocks LangChain: the model is a real ``GenericFakeChatModel`` subclass run by the real
``create_agent`` loop. The fake models do not implement ``bind_tools``, hence the subclass, whose
``bind_tools`` returns the model itself.
"""

from __future__ import annotations

import itertools
import json
import shutil
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import ToolException, tool
from pydantic import Field

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.skillbank.bank import bundled_skills_dir

SYSTEM_PROMPT = "You are a careful operations assistant."
# Words chosen so that keyword retrieval picks the builtin skill `backup-before-modify`.
EDIT_TASK = "Edit the existing settings.ini config file and overwrite the port setting with 8080."
BLOCK_OPEN = "<metaclaw-skills>"

_ids = itertools.count(1)


class ScriptedChatModel(GenericFakeChatModel):
    """Answers from a script, one item per call: an ``AIMessage``, a string, or an exception to raise.

    Records every message list it received (``received``), so tests can read the system message the
    model really got. ``delay`` sleeps per call, to make concurrent runs interleave.
    """

    received: list[list[BaseMessage]] = Field(default_factory=list)
    delay: float = 0.0

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.received.append(list(messages))
        if self.delay:
            time.sleep(self.delay)
        item = next(self.messages)
        if isinstance(item, BaseException):
            raise item
        msg = AIMessage(content=item) if isinstance(item, str) else item
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def _stream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        """One chunk holding the whole scripted message (the base class drops tool calls when streaming)."""
        msg = self._generate(messages, stop=stop, **kwargs).generations[0].message
        chunk = AIMessageChunk(
            content=msg.content,
            tool_call_chunks=[
                {
                    "name": tc["name"],
                    "args": json.dumps(tc["args"]),
                    "id": tc["id"],
                    "index": i,
                    "type": "tool_call_chunk",
                }
                for i, tc in enumerate(getattr(msg, "tool_calls", None) or [])
            ],
        )
        if run_manager is not None and msg.content:
            run_manager.on_llm_new_token(str(msg.content), chunk=ChatGenerationChunk(message=chunk))
        yield ChatGenerationChunk(message=chunk)

    def system_texts(self) -> list[str]:
        """The system message text of each call ('' when the call had none)."""
        out = []
        for msgs in self.received:
            first = msgs[0] if msgs else None
            out.append(str(first.text) if isinstance(first, SystemMessage) else "")
        return out


def call(name: str, args: dict[str, Any], call_id: str | None = None) -> AIMessage:
    """An assistant message that calls one tool."""
    return AIMessage(
        content="",
        tool_calls=[{"name": name, "args": args, "id": call_id or f"call-{next(_ids)}", "type": "tool_call"}],
    )


def model(*script: Any, delay: float = 0.0) -> ScriptedChatModel:
    return ScriptedChatModel(messages=iter(list(script)), delay=delay)


def edit_script(
    path: str = "settings.ini", answer: str = "Done: port set to 8080, backup kept.", tag: str = ""
) -> list[Any]:
    """read_file → write_file → final answer (three model calls, two tool calls)."""
    return [
        call("read_file", {"path": path}, f"read{tag}"),
        call("write_file", {"path": path, "content": "port=8080"}, f"write{tag}"),
        answer,
    ]


class FakeFiles:
    """An in-memory file system behind the read_file / write_file tools."""

    def __init__(self, files: dict[str, str] | None = None):
        self.files = dict(files or {"settings.ini": "port=80\n"})
        self.lock = threading.Lock()

    def tools(self) -> list[Any]:
        files = self

        @tool
        def read_file(path: str) -> str:
            """Read a text file."""
            with files.lock:
                if path not in files.files:
                    raise ToolException(f"no such file: {path}")
                return files.files[path]

        @tool
        def write_file(path: str, content: str) -> str:
            """Overwrite a text file."""
            with files.lock:
                files.files[path] = content
            return f"wrote {len(content)} bytes to {path}"

        read_file.handle_tool_error = True
        return [read_file, write_file]


@tool
def explode(reason: str) -> str:
    """A tool that always fails with an unhandled exception."""
    raise RuntimeError(f"tool exploded: {reason}")


# A few builtin skills: the one the edit task needs plus unrelated ones. Seeding the whole library costs
# about a second per plugin (YAML parsing), which the tests need not pay.
SKILL_SUBSET = (
    "backup-before-modify",
    "json-schema-completeness",
    "read-file-before-editing",
    "confirm-before-destructive-operations",
    "csv-quoting",
    "never-echo-secrets",
    "retry-with-backoff",
    "timezone-conversions",
)


def seed_skills(home: Path, names: Iterable[str] = SKILL_SUBSET) -> Path:
    """Copy some builtin skills into ``home/skills`` (the plugin then skips seeding the full library)."""
    src = bundled_skills_dir()
    dst = home / "skills"
    for name in names:
        (dst / name).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / name / "SKILL.md", dst / name / "SKILL.md")
    return home


def make_plugin(home: Path, **overrides: Any) -> MetaClawPlugin:
    """A started plugin with its own home, holding a few builtin skills."""
    seed_skills(home)
    return MetaClawPlugin(Settings(home=home, **overrides)).start()


def roles(messages: Iterable[dict[str, Any]]) -> list[str]:
    return [m.get("role") for m in messages]


HOOK_ERRORS = ("on_request", "on_response", "on_session_end", "inject")


def hook_errors(plugin: MetaClawPlugin) -> dict[str, int]:
    """Failures counted on the request path (the adapter's and the hooks'), not the background loops'."""
    return {k: v for k, v in plugin.status()["errors"].items() if k.startswith("langchain.") or k in HOOK_ERRORS}
