"""The sidecar: the one local HTTP host (``metaclaw-plugin serve``) for the OpenClaw plugin, the served policy, the
scheduler, memory and the dashboard. One Starlette app with one route table (:mod:`.app`), behind one token gate
(:mod:`.gate`), served by uvicorn (:mod:`.run`).

- Binds 127.0.0.1 unless told otherwise; a non-loopback host needs ``allow_remote=True`` (``--allow-remote``).
- Every endpoint needs ``Authorization: Bearer <token>`` (the dashboard: that header or its sign-in cookie). The
  token lives in ``$METACLAW_HOME/server.token`` (mode 0600), is generated on first start and reused afterwards.
  It is compared in constant time.
- Bodies are read with a cap, parsed and validated the same way on every route (:mod:`.http`); every error is JSON.

Endpoints::

    GET  /v1/health (and /health)        liveness (cheap)
    GET  /v1/status                      plugin + server status
    POST /v1/skills, /v1/turns/input|output, /v1/sessions/{id}/end, /v1/feedback;
    GET  /v1/sessions[/{id}]             the OpenClaw plugin's API (.openclaw)
    POST /v1/chat/completions, GET /v1/models
                                         the served policy, OpenAI-compatible (.policy)
    GET|PUT /v1/mode, GET /v1/scheduler  the mode in effect and the scheduler (.scheduler)
    /v1/memory...                        each user's memories (.memory)
    GET  /  (and every path outside /v1) the dashboard (metaclaw_plugin.dashboard; the same token, as a cookie)
"""

from .app import create_app
from .gate import TOKEN_FILE, is_loopback, load_or_create_token, token_path
from .run import RemoteBindRefused, bind_socket, check_bind, serve

__all__ = [
    "TOKEN_FILE",
    "RemoteBindRefused",
    "bind_socket",
    "check_bind",
    "create_app",
    "is_loopback",
    "load_or_create_token",
    "serve",
    "token_path",
]
