"""``serve`` (the local HTTP API) and ``openclaw install`` (the OpenClaw config entry)."""

from __future__ import annotations

import copy
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from .common import emit_json, fail, load_settings, log_level_option

PLUGIN_ID = "metaclaw"
TOKEN_SECRET = "metaclaw-token"  # an OpenClaw file secret provider that reads $METACLAW_HOME/server.token


# ------------------------------------------------------------------------------------------------
# Helpers for `openclaw install`
# ------------------------------------------------------------------------------------------------
def openclaw_plugin_dir() -> Path | None:
    """The folder holding the OpenClaw plugin (openclaw.plugin.json), in a source checkout or a wheel."""
    here = Path(__file__).resolve()
    candidates = [here.parent.parent.parent / "adapters" / "openclaw"]
    try:
        import importlib.util

        spec = importlib.util.find_spec("metaclaw_plugin.openclaw_plugin")
        if spec and spec.submodule_search_locations:
            candidates.extend(Path(p) for p in spec.submodule_search_locations)
    except (ImportError, ValueError):
        pass
    for c in candidates:
        if (c / "openclaw.plugin.json").is_file():
            return c
    return None


def default_openclaw_config() -> Path:
    if os.environ.get("OPENCLAW_CONFIG_PATH"):
        return Path(os.environ["OPENCLAW_CONFIG_PATH"]).expanduser()
    state = os.environ.get("OPENCLAW_STATE_DIR")
    if state:
        return Path(state).expanduser() / "openclaw.json"
    return Path("~/.openclaw/openclaw.json").expanduser()


def _host_url(host: str, port: int) -> str:
    h = f"[{host}]" if ":" in host and not host.startswith("[") else host
    if h in ("0.0.0.0", "[::]"):
        h = "127.0.0.1"
    return f"http://{h}:{port}"


def sidecar_command() -> list[str]:
    """The CLI of the environment this command runs in (a venv's ``bin/metaclaw-plugin``)."""
    exe = Path(sys.executable).with_name("metaclaw-plugin")
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "metaclaw_plugin"]


def plugin_entry(
    settings: Any, plugin_dir: Path | None, *, url: str | None = None, mode: str | None = None, auto_start: bool = True
) -> dict[str, Any]:
    """The ``plugins`` part of openclaw.json that enables the metaclaw plugin."""
    cfg: dict[str, Any] = {
        "url": url or _host_url(settings.server.host, settings.server.port),
        "tokenFile": str(settings.home_dir / "server.token"),
        "home": str(settings.home_dir),
        "inject": True,
        "capture": True,
        "autoStart": auto_start,
        # autoStart runs this interpreter's CLI, not whatever `metaclaw-plugin` is first on the gateway's PATH
        "command": sidecar_command(),
    }
    if mode:
        cfg["mode"] = mode
    entry: dict[str, Any] = {
        "plugins": {
            "entries": {
                PLUGIN_ID: {
                    "enabled": True,
                    "hooks": {"allowConversationAccess": True},
                    "config": cfg,
                }
            },
            # The plugin is a memory plugin (manifest kind "memory"): OpenClaw enables the one this slot names, and
            # its memory_search / memory_store / memory_forget tools replace memory-core's.
            "slots": {"memory": PLUGIN_ID},
        }
    }
    if plugin_dir is not None:
        entry["plugins"]["load"] = {"paths": [str(plugin_dir)]}
    return entry


def provider_entry(
    base_url: str, model: str, api_key: str | dict[str, str], context_window: int, max_tokens: int
) -> dict[str, Any]:
    """The rl/auto provider: OpenClaw's model calls go to ``base_url``, which serves ``model`` (metaclaw/<name>)."""
    return {
        "models": {
            "mode": "merge",
            "providers": {
                PLUGIN_ID: {
                    "baseUrl": base_url,
                    "apiKey": api_key,
                    "api": "openai-completions",
                    "models": [
                        {
                            "id": model,
                            "name": f"MetaClaw policy ({model})",
                            "reasoning": False,
                            "input": ["text"],
                            "contextWindow": context_window,
                            "maxTokens": max_tokens,
                        }
                    ],
                }
            },
        }
    }


def token_secret_entry(token_file: Path) -> dict[str, Any]:
    """An OpenClaw secret provider for the sidecar's token file, so openclaw.json never holds the token."""
    return {
        "secrets": {"providers": {TOKEN_SECRET: {"source": "file", "path": str(token_file), "mode": "singleValue"}}}
    }


TOKEN_REF = {"source": "file", "provider": TOKEN_SECRET, "id": "value"}


def merge_entry(current: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """``current`` with ``entry`` merged in. Keeps every user key; adds the plugin path once."""
    out = copy.deepcopy(current)

    keep_user = {("models", "mode")}  # never change the user's models.mode

    def merge(dst: dict[str, Any], src: dict[str, Any], path: tuple[str, ...]) -> None:
        for k, v in src.items():
            here = (*path, k)
            if here == ("plugins", "load", "paths"):
                paths: list[Any] = dst[k] if isinstance(dst.get(k), list) else []
                dst[k] = paths + [p for p in v if p not in paths]
            elif isinstance(v, dict) and isinstance(dst.get(k), dict):
                merge(dst[k], v, here)
            elif k in dst and (here in keep_user or path == ("plugins", "entries", PLUGIN_ID, "config")):
                continue  # the user's own value wins (their plugin settings, their models.mode)
            else:
                dst[k] = copy.deepcopy(v)

    merge(out, entry, ())
    return out


def write_with_backup(path: Path, data: dict[str, Any]) -> Path | None:
    """Back up ``path`` (if it exists) next to it, then replace it atomically. Returns the backup path."""
    backup = None
    mode = 0o600
    if path.exists():
        mode = path.stat().st_mode & 0o777
        backup = path.with_name(f"{path.name}.bak-{time.strftime('%Y%m%d-%H%M%S')}")
        n = 1
        while backup.exists():
            backup = path.with_name(f"{path.name}.bak-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
            n += 1
        shutil.copy2(path, backup)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, ensure_ascii=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return backup


def read_openclaw_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise click.ClickException(
            f"{path} is not plain JSON ({e.msg}, line {e.lineno}); it may be JSON5 with comments. "
            "Add the entry printed by `metaclaw-plugin openclaw install` by hand, or with `openclaw config set`."
        ) from None
    if not isinstance(data, dict):
        raise click.ClickException(f"{path}: the top level is not an object")
    return data


def openclaw_config_state(path: Path) -> tuple[bool, str] | None:
    """What `doctor` says about an openclaw.json: None when it does not enable metaclaw; else whether metaclaw will
    load and why. OpenClaw loads only the memory plugin that plugins.slots.memory names, and metaclaw is one
    (manifest kind "memory"), so an entry left with memory-core (or nothing: memory-core is the default) in that
    slot is silently not loaded: no skills, no capture."""
    try:
        data = read_openclaw_json(path)
    except (click.ClickException, OSError, UnicodeDecodeError) as e:
        msg = e.message if isinstance(e, click.ClickException) else str(e)
        return False, f"{path}: cannot read it ({msg})"
    plugins = data.get("plugins")
    entry = plugins.get("entries", {}).get(PLUGIN_ID) if isinstance(plugins, dict) else None
    if not isinstance(entry, dict) or entry.get("enabled") is False:
        return None
    slots = plugins.get("slots") if isinstance(plugins, dict) else None
    holder = slots.get("memory") if isinstance(slots, dict) else None
    if holder != PLUGIN_ID:
        return False, (
            f"{path} enables metaclaw but gives the memory slot to {holder or 'memory-core (the default)'}: "
            "OpenClaw will not load metaclaw (no skills, no capture). Set plugins.slots.memory to metaclaw, "
            "or run `metaclaw-plugin openclaw install --apply --yes`"
        )
    return True, f"{path}: metaclaw enabled and holds the memory slot"


# ------------------------------------------------------------------------------------------------
# Commands
# ------------------------------------------------------------------------------------------------
@click.command()
@click.option("--host", default=None, help="Address to bind (default: server.host, 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Port (default: server.port, 8765).")
@click.option("--allow-remote", is_flag=True, help="Allow a non-loopback --host. The token is still required.")
@click.option("--config", "config", type=click.Path(dir_okay=False), default=None, help="Config file.")
@log_level_option
@click.pass_context
def serve(
    ctx: click.Context, host: str | None, port: int | None, allow_remote: bool, config: str | None, log_level: str
) -> None:
    """Run the local HTTP API (for the OpenClaw plugin) and the dashboard at `/`.

    Every API endpoint needs `Authorization: Bearer <token>`; the token is in $METACLAW_HOME/server.token
    (created with mode 0600 on first start). The dashboard takes the same token: open the link printed at
    start-up (it becomes an HttpOnly cookie), or paste the token into its login form.
    """
    from ..sidecar import RemoteBindRefused, bind_socket, check_bind, load_or_create_token
    from ..sidecar import serve as run

    if config:
        ctx.find_root().obj["config"] = config
    settings = load_settings(ctx)
    host = host or settings.server.host
    port = port if port is not None else settings.server.port
    try:
        check_bind(host, allow_remote)
    except RemoteBindRefused as e:
        fail(str(e), code=2)
    token = load_or_create_token(settings.home_dir)
    try:
        sock = bind_socket(host, port)
    except OSError as e:
        fail(f"cannot serve on {host}:{port}: {e.strerror or e} (is another `metaclaw-plugin serve` running?)")
    port = sock.getsockname()[1]
    # the sign-in link holds the token: only on a terminal, never into a log file (OpenClaw's autoStart logs this)
    link = f"/?token={token}" if sys.stderr.isatty() else "/ (sign in with the token from the token file)"
    click.echo(
        f"metaclaw-plugin API on {_host_url(host, port)} (token in {settings.home_dir / 'server.token'})\n"
        f"dashboard: {_host_url(host, port)}{link}",
        err=True,
    )
    run(settings, host=host, port=port, allow_remote=allow_remote, log_level=log_level, sock=sock)


@click.group()
def openclaw() -> None:
    """OpenClaw integration."""


@openclaw.command("install")
@click.option("--apply", is_flag=True, help="Write the entry into openclaw.json (needs --yes).")
@click.option("--yes", is_flag=True, help="Consent to changing openclaw.json (a backup is written first).")
@click.option(
    "--openclaw-config",
    type=click.Path(dir_okay=False),
    default=None,
    help="openclaw.json to change (default: $OPENCLAW_CONFIG_PATH, $OPENCLAW_STATE_DIR/openclaw.json, "
    "~/.openclaw/openclaw.json).",
)
@click.option(
    "--plugin-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="The OpenClaw plugin folder (default: the one shipped with metaclaw-plugin).",
)
@click.option("--url", default=None, help="URL of `metaclaw-plugin serve` (default from server.host/port).")
@click.option("--no-auto-start", is_flag=True, help="Do not let the plugin start `metaclaw-plugin serve` itself.")
@click.option(
    "--mode",
    type=click.Choice(["skills_only", "rl", "auto"]),
    default=None,
    help="Mode (default: the config's). rl/auto also add the served policy as an OpenClaw provider.",
)
@click.option(
    "--proxy-url",
    default=None,
    help="rl/auto: send the model calls to a LiteLLM proxy serving metaclaw/<name> at this base URL "
    "(`metaclaw-plugin proxy --model metaclaw/policy`) instead of straight to `metaclaw-plugin serve`.",
)
@click.option(
    "--model",
    "policy_model",
    default=None,
    help="rl/auto: the served policy, metaclaw/<name> (default: metaclaw/<serving.name>).",
)
@click.option(
    "--proxy-key",
    default="${LITELLM_MASTER_KEY}",
    show_default=True,
    help="rl/auto with --proxy-url: API key OpenClaw sends to the proxy.",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON entry.")
@click.pass_context
def install(
    ctx: click.Context,
    apply: bool,
    yes: bool,
    openclaw_config: str | None,
    plugin_dir: str | None,
    url: str | None,
    no_auto_start: bool,
    mode: str | None,
    proxy_url: str | None,
    policy_model: str | None,
    proxy_key: str,
    as_json: bool,
) -> None:
    """Print (or, with --apply --yes, write) the openclaw.json entry for the metaclaw plugin.

    Nothing is written without --apply and --yes. The entry enables plugins.entries.metaclaw with
    hooks.allowConversationAccess: true, loads the plugin from plugins.load.paths and gives it the memory slot
    (plugins.slots.memory: metaclaw, in place of memory-core or any other memory plugin: OpenClaw loads only
    the memory plugin that slot names, so metaclaw must hold it). Your model and
    sandbox settings are left alone; in rl/auto mode the metaclaw provider is added (the served policy at
    `metaclaw-plugin serve`'s /v1/chat/completions, its token read from the token file through an OpenClaw
    file secret) but your primary model is not switched (the command prints how).
    """
    settings = load_settings(ctx)
    pdir = Path(plugin_dir).expanduser().resolve() if plugin_dir else openclaw_plugin_dir()
    if pdir is None:
        fail("cannot find the OpenClaw plugin folder (openclaw.plugin.json); pass --plugin-dir")
    elif not (pdir / "openclaw.plugin.json").is_file():
        fail(f"{pdir} has no openclaw.plugin.json")
    mode = mode or settings.mode
    entry = plugin_entry(
        settings, pdir, url=url, mode=mode if mode != "skills_only" else None, auto_start=not no_auto_start
    )
    primary = None
    if mode in ("rl", "auto"):
        served = f"metaclaw/{settings.serving.name}"
        name = policy_model or served
        if proxy_url:
            entry = merge_entry(entry, provider_entry(proxy_url, name, proxy_key, 32768, 4096))
        else:
            if name != served:
                fail(f"metaclaw-plugin serve answers as {served} (serving.name), not {name}", code=2)
            from ..sidecar import load_or_create_token

            token_file = settings.home_dir / "server.token"
            load_or_create_token(settings.home_dir)  # the secret must exist before the gateway resolves it
            base = (url or _host_url(settings.server.host, settings.server.port)).rstrip("/") + "/v1"
            entry = merge_entry(entry, provider_entry(base, name, dict(TOKEN_REF), 32768, 4096))
            entry = merge_entry(entry, token_secret_entry(token_file))
        primary = f"{PLUGIN_ID}/{name}"
    target = Path(openclaw_config).expanduser() if openclaw_config else default_openclaw_config()

    if as_json and not apply:
        emit_json(entry)
        return
    if not apply:
        click.echo(f"# Add this to {target} (merge with what is there):")
        click.echo(json.dumps(entry, indent=2))
        if primary:
            click.echo(f'# Then point your agent at the trainable policy: agents.defaults.model.primary = "{primary}"')
        click.echo("# Or let this command do it (a backup is written first):")
        click.echo("#   metaclaw-plugin openclaw install --apply --yes")
        return
    if not yes:
        if sys.stdin.isatty():
            yes = click.confirm(f"Change {target} (a backup is written first)?", default=False)
        if not yes:
            fail(f"not changing {target} without consent: add --yes", code=2)
    current = read_openclaw_json(target)
    new = merge_entry(current, entry)
    if new == current:
        click.echo(f"{target} already has the metaclaw entry; nothing to do.")
        return
    backup = write_with_backup(target, new)
    if as_json:
        emit_json({"config": str(target), "backup": str(backup) if backup else None, "entry": entry})
        return
    click.echo(f"Wrote the metaclaw entry to {target}" + (f" (backup: {backup})" if backup else ""))
    if primary:
        click.echo(f'To train on your own use, set agents.defaults.model.primary = "{primary}" (not changed for you).')
    click.echo("OpenClaw applies plugin config changes on its own (hybrid reload); otherwise restart the gateway.")


def register(main: click.Group) -> None:
    for command in (serve, openclaw):
        main.add_command(command)
