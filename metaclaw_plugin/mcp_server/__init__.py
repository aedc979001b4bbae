"""``metaclaw-plugin mcp``: the plugin's skills, memory and feedback as a Model Context Protocol server.

For agents that are not behind a proxy (Claude Code, Cursor, Codex, IDE agents): they pull the skills and memories
that fit their task and report how it went. :mod:`.tools` holds what each tool does (plain Python on the plugin, no
MCP); :mod:`.app` wires it into the ``mcp`` SDK's server over stdio and streamable HTTP (the sidecar's bearer token).
The request path never imports this package (import-linter contracts in pyproject.toml).
"""

from __future__ import annotations

from .tools import McpTools, Scope, ToolRefused

__all__ = ["McpTools", "Scope", "ToolRefused"]
