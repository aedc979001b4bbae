"""Running the sidecar: ``metaclaw-plugin serve``. Binds 127.0.0.1 unless told otherwise; a non-loopback host needs
``allow_remote=True`` (``--allow-remote``)."""

from __future__ import annotations

import socket
from typing import Any

from ..protocols import PluginLike
from .app import create_app
from .conn import guarded_protocol
from .gate import is_loopback, load_or_create_token


class RemoteBindRefused(ValueError):
    pass


def check_bind(host: str, allow_remote: bool) -> None:
    if not is_loopback(host) and not allow_remote:
        raise RemoteBindRefused(
            f"refusing to bind {host}: it is not a loopback address. The API gives access to your sessions; "
            "pass --allow-remote to bind it anyway (the bearer token is still required)."
        )


def bind_socket(host: str, port: int) -> socket.socket:
    """Bind (and listen) before anything says the server is up, so that a busy port fails with one line."""
    info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(info[0], socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(info[4])
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def serve(
    settings: Any = None,
    *,
    host: str | None = None,
    port: int | None = None,
    allow_remote: bool = False,
    plugin: PluginLike | None = None,
    log_level: str = "warning",
    sock: socket.socket | None = None,
) -> None:
    """Run the API until interrupted (``metaclaw-plugin serve``); on ``sock`` when given (see :func:`bind_socket`)."""
    import uvicorn

    from ..plugin import MetaClawPlugin

    if plugin is None:
        plugin = MetaClawPlugin(settings)
    settings = plugin.settings
    host = host or settings.server.host
    port = int(port if port is not None else settings.server.port)
    check_bind(host, allow_remote)
    token = load_or_create_token(settings.home_dir)
    app = create_app(
        plugin,
        token,
        max_body_bytes=settings.server.max_body_bytes,
        manage_plugin=True,
        info={"host": host, "port": port},
    )
    # httptools when installed, with a read deadline and a cap per client (conn.py)
    kw: dict[str, Any] = {
        "http": guarded_protocol(
            deadline=settings.server.read_deadline, per_client=settings.server.connections_per_client
        )
    }
    try:
        import uvloop  # noqa: F401

        kw["loop"] = "uvloop"
    except ImportError:
        pass
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        server_header=False,
        date_header=False,
        **kw,
    )
    uvicorn.Server(config).run(sockets=[sock] if sock is not None else None)
