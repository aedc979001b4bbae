"""``mcp``: the Model Context Protocol server (stdio by default, ``--http`` for streamable HTTP behind the token)."""

from __future__ import annotations

import sys

import click

from .common import fail, load_settings, log_level_option
from .serve import _host_url


@click.command("mcp")
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP at /mcp instead of stdio.")
@click.option("--host", default=None, help="--http: address to bind (default: server.host, 127.0.0.1).")
@click.option("--port", type=int, default=8766, show_default=True, help="--http: port (0: any free one).")
@click.option("--allow-remote", is_flag=True, help="--http: allow a non-loopback --host (the token is required).")
@click.option("--tenant", default=None, help="Whose skills and memories (default: the default tenant).")
@click.option("--user", default=None, help="Whose memories within the tenant (default: the tenant's default).")
@click.option("--session", default=None, help="Record the calls in this session (default: mcp-<random>, one per run).")
@log_level_option
@click.pass_context
def mcp_command(
    ctx: click.Context,
    http: bool,
    host: str | None,
    port: int,
    allow_remote: bool,
    tenant: str | None,
    user: str | None,
    session: str | None,
    log_level: str,
) -> None:
    """Serve skills_search, skill_get, memory_search, memory_store, memory_forget and feedback over MCP.

    stdio (the default) is for a client that launches this command itself (Claude Code, Cursor, Codex,
    qwen-code: see docs/clients/mcp.md); stdout then carries the protocol only. With --http, every request
    needs `Authorization: Bearer <token>` (the token in $METACLAW_HOME/server.token, as for `serve`).
    The tenant and user are fixed here, never by the model: a tool cannot reach another tenant's skills or
    another user's memories.
    """
    try:
        import mcp  # noqa: F401
    except ImportError:
        fail("the MCP server needs the mcp package: pip install 'metaclaw-plugin[mcp]'")
    import anyio

    from ..mcp_server.app import run_http, run_stdio
    from ..mcp_server.tools import McpTools, Scope
    from ..plugin import MetaClawPlugin
    from ..sidecar import RemoteBindRefused, bind_socket, check_bind, load_or_create_token

    settings = load_settings(ctx)
    sock = None
    if http:
        host = host or settings.server.host
        try:
            check_bind(host, allow_remote)
        except RemoteBindRefused as e:
            fail(str(e), code=2)
        try:
            sock = bind_socket(host, port)
        except OSError as e:
            fail(f"cannot serve on {host}:{port}: {e.strerror or e}")
    plugin = MetaClawPlugin(settings).start()
    try:
        tools = McpTools(plugin, Scope(tenant or "default", user, session))
        if sock is None:
            anyio.run(run_stdio, tools)
            return
        token = load_or_create_token(settings.home_dir)
        bound = _host_url(str(host), sock.getsockname()[1])
        click.echo(
            f"metaclaw-plugin MCP on {bound}/mcp (token in {settings.home_dir / 'server.token'})",
            err=True,
        )
        sys.stderr.flush()
        run_http(
            tools,
            token,
            sock,
            str(host),
            log_level,
            read_deadline=settings.server.read_deadline,
            per_client=settings.server.connections_per_client,
        )
    finally:
        plugin.stop()


def register(main: click.Group) -> None:
    for command in (mcp_command,):
        main.add_command(command)
