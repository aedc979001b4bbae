"""``metaclaw-plugin proxy``: a real LiteLLM proxy with the metaclaw callback already wired."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import click
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .common import err_console, fail, load_settings

CONFIG_NAME = "litellm-proxy.yaml"


MODELS_ENV = "METACLAW_PROXY_MODELS"  # the names clients may ask for, read by metaclaw_litellm.models
MODEL_CHECK = "metaclaw_litellm.models.check"

HEADERS_HELP = """\b
Sessions and users: send X-User-Id (whose memories; each user's turns are sessions of their own), X-Session-Id if
the client names no session itself (X-Session-Done: true at the end), X-Turn-Type: side for a call that is not the
user's task. Clients that send no session id are grouped by their conversation (the user's first message, per
user). What each client can send:
  Claude Code   its own session id and metadata.user_id; ANTHROPIC_CUSTOM_HEADERS="X-User-Id: ..."
  Codex         http_headers / env_http_headers of its model provider in ~/.codex/config.toml
  qwen-code     model.generationConfig.customHeaders in settings.json; "${session_id}" is its own session id
                when outboundCorrelation.allowDynamicHeaderValues is true
  aider         extra_params: {extra_headers: {X-User-Id: ...}} in --model-settings-file (no fixed session id)
  OpenAI SDKs   default_headers / extra_headers, or the user field
"""


class ModelEntry(BaseModel):
    """One upstream in a ``--models-file``."""

    model_config = ConfigDict(extra="forbid")
    name: str | None = Field(None, min_length=1, description="what clients ask for; may be a wildcard: claude-*")
    model: str = Field(min_length=1, description="the LiteLLM model string")
    api_base: str | None = Field(None, min_length=1)
    api_key_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")


class ModelsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    models: list[ModelEntry] = Field(min_length=1)


def _read_models_file(path: Path) -> ModelsFile:
    import yaml

    try:
        return ModelsFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except OSError as e:
        fail(f"cannot read --models-file {path}: {e.strerror}", code=2)
    except yaml.YAMLError as e:
        fail(f"--models-file {path} is not YAML: {e}", code=2)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}" for err in e.errors())
        fail(f"--models-file {path}: {problems}", code=2)
    raise AssertionError("unreachable")


@click.command(context_settings={"show_default": True}, epilog=HEADERS_HELP)
@click.option(
    "--model",
    "models",
    multiple=True,
    metavar="[NAME=]MODEL[@BASE]",
    help="Any LiteLLM model string, e.g. openai/gpt-4o-mini or ollama/llama3; repeat for more. Clients ask "
    "for NAME (default: the model string). NAME may be a wildcard: 'claude-*=openai/claude-*' serves every "
    "name that starts with claude- (the * of MODEL takes what the * of NAME matched). @BASE: this model's "
    "upstream URL (default: --api-base), so one proxy serves several upstreams. A client that asks for a "
    "name no model maps gets an error that lists the mapped names.",
)
@click.option(
    "--models-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A YAML file of upstreams, beside any --model: models: [{name, model, api_base, api_key_env}].",
)
@click.option("--api-base", default=None, help="Base URL of the upstream API (vLLM, Ollama, a gateway...).")
@click.option(
    "--api-key-env",
    default=None,
    metavar="VAR",
    help="Environment variable holding the upstream API key (the key itself is never written to disk).",
)
@click.option("--host", default="127.0.0.1", help="Address to listen on. Use 0.0.0.0 only behind a firewall.")
@click.option("--port", type=click.IntRange(1, 65535), default=4000, help="Port to listen on.")
@click.option(
    "--master-key",
    default=None,
    metavar="KEY",
    help="The proxy's master key (default: $LITELLM_MASTER_KEY, else a random one printed once).",
)
@click.option(
    "--num-retries",
    type=click.IntRange(0, 20),
    default=None,
    help="Retries of a failed upstream call (default: LiteLLM's).",
)
@click.option("--dry-run", is_flag=True, help="Write the proxy config and print the command, without starting it.")
@click.pass_context
def proxy(
    ctx: click.Context,
    models: tuple[str, ...],
    models_file: Path | None,
    api_base: str | None,
    api_key_env: str | None,
    host: str,
    port: int,
    master_key: str | None,
    num_retries: int | None,
    dry_run: bool,
) -> None:
    """Start a LiteLLM proxy that injects skills and records every turn.

    Point any OpenAI-compatible client at http://HOST:PORT/v1 with the master key (Anthropic clients:
    http://HOST:PORT). Recipes for agent clients: docs/clients/.
    """
    from ..devtools.proxyrun import (
        CALLBACK,
        MASTER_KEY_ENV,
        ModelSpec,
        generate_master_key,
        litellm_command,
        proxy_config,
        proxy_env,
        unsafe_key_reason,
        write_config,
    )

    settings = load_settings(ctx)  # a broken plugin config is reported here, before the proxy starts
    try:
        import importlib.util

        if importlib.util.find_spec("litellm") is None:
            fail("LiteLLM is not installed: pip install 'metaclaw-plugin[litellm]'")
    except (ImportError, ValueError):
        fail("LiteLLM is not installed: pip install 'metaclaw-plugin[litellm]'")

    generated = False
    key = master_key if master_key is not None else os.environ.get(MASTER_KEY_ENV)
    if key:
        reason = unsafe_key_reason(key)
        if reason:
            fail(
                f"refusing to start: {reason}. Leave --master-key and ${MASTER_KEY_ENV} unset to get a random "
                "key, or pass one made with: echo sk-$(openssl rand -hex 32)",
                code=2,
            )
    else:
        key, generated = generate_master_key(), True

    if not models and models_file is None:
        fail("give at least one --model (or a --models-file)", code=2)

    def key_for(env: str | None, base: str | None, flag: str) -> str | None:
        if env:
            if not env.replace("_", "").isalnum():
                fail(f"{flag} {env!r} is not an environment variable name", code=2)
            if env not in os.environ:
                err_console.print(f"[yellow]warning:[/] ${env} is not set", highlight=False)
            return f"os.environ/{env}"
        if base and not os.environ.get("OPENAI_API_KEY"):
            return "not-needed"  # local OpenAI-compatible servers ignore it, but the client needs one
        return None

    specs: list[ModelSpec] = []
    try:
        for m in models:
            spec = ModelSpec.parse(m, api_base=api_base)
            spec.api_key = key_for(api_key_env, spec.api_base, "--api-key-env")
            specs.append(spec)
        for e in _read_models_file(models_file).models if models_file is not None else []:
            spec = ModelSpec.parse(e.model, api_base=e.api_base or api_base)
            spec.name = e.name
            spec.api_key = key_for(e.api_key_env or api_key_env, spec.api_base, "api_key_env")
            specs.append(spec)
    except ValueError as e:
        fail(str(e), code=2)
        return
    names = [s.client_name for s in specs]
    if len(set(names)) != len(names):
        fail(f"two models use the same name: {sorted(n for n in set(names) if names.count(n) > 1)}", code=2)

    home = settings.home_dir
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    ls: dict[str, object] = {"num_retries": num_retries} if num_retries is not None else {}
    if any(s.model.startswith("metaclaw/") for s in specs):  # the served policy, in the proxy's process
        ls["custom_provider_map"] = [{"provider": "metaclaw", "custom_handler": "metaclaw_litellm.policy.handler"}]
    cfg_path = write_config(
        home / CONFIG_NAME,
        proxy_config(specs, callbacks=(MODEL_CHECK, CALLBACK), litellm_settings=ls or None),
        header="# Generated by `metaclaw-plugin proxy`; rewritten at every start. The master key is read from\n"
        f"# ${MASTER_KEY_ENV} and is not stored here.",
    )
    cmd = litellm_command(cfg_path, host=host, port=port)
    extra: dict[str, str] = {"METACLAW_HOME": str(home), MODELS_ENV: json.dumps(names)}
    root_config = (ctx.find_root().obj or {}).get("config")
    if root_config:
        extra["METACLAW_CONFIG"] = str(Path(root_config).expanduser().resolve())
    env = proxy_env(key, None, **extra)

    click.echo(f"metaclaw-plugin proxy: http://{host}:{port}/v1  models: {', '.join(names)}")
    click.echo(f"config: {cfg_path}")
    if generated:
        click.echo(f"master key (shown once, not stored): {key}")
    if host not in ("127.0.0.1", "localhost", "::1"):
        err_console.print(f"[yellow]warning:[/] listening on {host}: reachable from other machines", highlight=False)
    if dry_run:
        click.echo("command: " + " ".join(cmd))
        return
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError as e:
            fail(f"cannot listen on {host}:{port}: {e.strerror}", code=2)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(cmd[0], cmd, env)  # the proxy replaces this process: signals and exit codes are its own
    except OSError as e:
        fail(f"cannot run {cmd[0]}: {e.strerror}")


def register(main: click.Group) -> None:
    for command in (proxy,):
        main.add_command(command)
