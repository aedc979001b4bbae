"""``metaclaw-plugin proxy``: a real LiteLLM proxy with the metaclaw callback already wired."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import click

from .common import err_console, fail, load_settings

CONFIG_NAME = "litellm-proxy.yaml"


def register(main: click.Group) -> None:
    @main.command(context_settings={"show_default": True})
    @click.option(
        "--model",
        "models",
        multiple=True,
        required=True,
        metavar="[NAME=]MODEL",
        help="Any LiteLLM model string, e.g. openai/gpt-4o-mini or ollama/llama3; repeat for more. "
        "Clients ask for NAME (default: the model string).",
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
        api_base: str | None,
        api_key_env: str | None,
        host: str,
        port: int,
        master_key: str | None,
        num_retries: int | None,
        dry_run: bool,
    ) -> None:
        """Start a LiteLLM proxy that injects skills and records every turn.

        Point any OpenAI-compatible client at http://HOST:PORT/v1 with the master key. Send
        X-Session-Id (and X-Session-Done: true at the end) to group turns into sessions.
        """
        from ..devtools.proxyrun import (
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

        api_key = None
        if api_key_env:
            if not api_key_env.replace("_", "").isalnum():
                fail(f"--api-key-env {api_key_env!r} is not an environment variable name", code=2)
            if api_key_env not in os.environ:
                err_console.print(f"[yellow]warning:[/] ${api_key_env} is not set", highlight=False)
            api_key = f"os.environ/{api_key_env}"
        elif api_base and not os.environ.get("OPENAI_API_KEY"):
            api_key = "not-needed"  # local OpenAI-compatible servers ignore it, but the client needs one
        try:
            specs = [ModelSpec.parse(m, api_base=api_base, api_key=api_key) for m in models]
        except ValueError as e:
            fail(str(e), code=2)
            return
        names = [s.name or s.model for s in specs]
        if len(set(names)) != len(names):
            fail(f"two --model options use the same name: {names}", code=2)

        home = settings.home_dir
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        ls: dict[str, object] = {"num_retries": num_retries} if num_retries is not None else {}
        if any(s.model.startswith("metaclaw/") for s in specs):  # the served policy, in the proxy's process
            ls["custom_provider_map"] = [{"provider": "metaclaw", "custom_handler": "metaclaw_litellm.policy.handler"}]
        cfg_path = write_config(
            home / CONFIG_NAME,
            proxy_config(specs, litellm_settings=ls or None),
            header="# Generated by `metaclaw-plugin proxy`; rewritten at every start. The master key is read from\n"
            f"# ${MASTER_KEY_ENV} and is not stored here.",
        )
        cmd = litellm_command(cfg_path, host=host, port=port)
        extra: dict[str, str] = {"METACLAW_HOME": str(home)}
        root_config = (ctx.find_root().obj or {}).get("config")
        if root_config:
            extra["METACLAW_CONFIG"] = str(Path(root_config).expanduser().resolve())
        env = proxy_env(key, None, **extra)

        click.echo(f"metaclaw-plugin proxy: http://{host}:{port}/v1  models: {', '.join(names)}")
        click.echo(f"config: {cfg_path}")
        if generated:
            click.echo(f"master key (shown once, not stored): {key}")
        if host not in ("127.0.0.1", "localhost", "::1"):
            err_console.print(
                f"[yellow]warning:[/] listening on {host}: reachable from other machines", highlight=False
            )
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
