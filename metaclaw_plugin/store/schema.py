"""Every table of ``metaclaw.db`` in one place, and the forward migrations that reach it.

The database carries its schema version in ``PRAGMA user_version``. Opening runs the migrations
from that version to :data:`CURRENT` under a lock, so a home written by an older release opens
and upgrades, and two processes never migrate at once. Migration 1 is the schema of the release
before versions existed (every statement is ``IF NOT EXISTS``, so it also adopts such a home).
A migration is a list of statements and never edits an earlier one: a change is a new migration.

Owners (who writes the tables): the trajectory store (``messages``, ``msg_lists``, ``sessions``,
``turns``, ``rewards``); the learning jobs (``fl_*``: turn ledger, judge queue, reviews, evolution
queue, shadow trials, counters); the LLM budget (``llm_budget``); the judge's cache
(``reward_cache``); the sample buffer (``buffer_*``); the served policy (``policy_tokens``: token ids and
logprobs of the answers it sampled, keyed by a hash of the answer, read when samples are built); the trainer
(``train_steps``: metrics and weights per step); the scheduler (``sched_transitions``); run-time state that
outlives a process, such as the mode set with ``metaclaw-plugin mode``, and the elected learner (``runtime_state``);
the skill library shared by hosts on PostgreSQL (``skill_files``, see :mod:`.skill_library`); the memory of each
user (``memories``, ``memory_history``, ``memory_rev``, ``memory_pending``, see :mod:`metaclaw_plugin.memory.store`)
and what each user said (``passages``, see :mod:`.passages`; its changes take ``memory_rev`` numbers too, so the
request path's view follows both with one counter).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    version: int
    what: str
    statements: tuple[str, ...]


TRAJECTORIES = (
    "CREATE TABLE IF NOT EXISTS messages (hash TEXT PRIMARY KEY, content TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS msg_lists (hash TEXT PRIMARY KEY, prev TEXT NOT NULL, msg TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS sessions (
  tenant TEXT NOT NULL, session_id TEXT NOT NULL, host TEXT, started_at REAL, last_at REAL,
  ended_at REAL, outcome TEXT, end_reason TEXT, turn_count INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, session_id))""",
    """CREATE TABLE IF NOT EXISTS turns (
  turn_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, session_id TEXT NOT NULL, seq INTEGER NOT NULL,
  kind TEXT NOT NULL, host TEXT, user TEXT, model TEXT, list_hash TEXT NOT NULL, block_hash TEXT,
  response_hash TEXT, tool_calls TEXT, usage TEXT, latency_ms REAL, injected TEXT,
  generation INTEGER NOT NULL DEFAULT 0, error TEXT, created_at REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS turns_by_session ON turns (tenant, session_id, seq)",
    """CREATE TABLE IF NOT EXISTS rewards (
  id INTEGER PRIMARY KEY AUTOINCREMENT, turn_id TEXT NOT NULL, source TEXT NOT NULL, score REAL NOT NULL,
  detail TEXT, created_at REAL NOT NULL, UNIQUE (turn_id, source))""",
    "CREATE INDEX IF NOT EXISTS rewards_by_turn ON rewards (turn_id)",
)

LEARNING = (
    """CREATE TABLE IF NOT EXISTS fl_turns (
  turn_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, session_id TEXT NOT NULL, kind TEXT NOT NULL, seq INTEGER NOT NULL,
  generation INTEGER NOT NULL, task_type TEXT, created_at REAL NOT NULL, settled INTEGER NOT NULL DEFAULT 0,
  reviewed INTEGER NOT NULL DEFAULT 0, score REAL, source TEXT)""",
    "CREATE INDEX IF NOT EXISTS fl_turns_by_session ON fl_turns (tenant, session_id, seq)",
    """CREATE TABLE IF NOT EXISTS fl_rewards (
  turn_id TEXT NOT NULL, source TEXT NOT NULL, score REAL NOT NULL, created_at REAL NOT NULL,
  PRIMARY KEY (turn_id, source))""",
    """CREATE TABLE IF NOT EXISTS fl_judge_queue (
  turn_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, session_id TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
  next_at REAL NOT NULL, state TEXT NOT NULL DEFAULT 'pending', last_error TEXT, created_at REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS fl_judge_due ON fl_judge_queue (state, next_at)",
    """CREATE TABLE IF NOT EXISTS fl_sessions (
  tenant TEXT NOT NULL, session_id TEXT NOT NULL, main_turns INTEGER NOT NULL DEFAULT 0,
  since_review INTEGER NOT NULL DEFAULT 0, ended INTEGER NOT NULL DEFAULT 0, success INTEGER,
  review_due REAL, review_reason TEXT, review_since REAL, last_at REAL NOT NULL, PRIMARY KEY (tenant, session_id))""",
    "CREATE INDEX IF NOT EXISTS fl_sessions_review_due ON fl_sessions (review_due)",
    """CREATE TABLE IF NOT EXISTS fl_evolve_queue (
  id INTEGER PRIMARY KEY AUTOINCREMENT, tenant TEXT NOT NULL, reason TEXT NOT NULL, turn_ids TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0, next_at REAL NOT NULL, state TEXT NOT NULL DEFAULT 'pending',
  last_error TEXT, report TEXT, created_at REAL NOT NULL, done_at REAL)""",
    """CREATE TABLE IF NOT EXISTS fl_window (
  tenant TEXT NOT NULL, turn_id TEXT PRIMARY KEY, success INTEGER NOT NULL, batched INTEGER NOT NULL DEFAULT 0,
  created_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS fl_shadow (
  turn_id TEXT NOT NULL, skill TEXT NOT NULL, skill_generation INTEGER NOT NULL, arm TEXT NOT NULL, score REAL,
  created_at REAL NOT NULL, PRIMARY KEY (turn_id, skill))""",
    "CREATE TABLE IF NOT EXISTS fl_counters (key TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS llm_budget (
  day TEXT NOT NULL, purpose TEXT NOT NULL, calls INTEGER NOT NULL DEFAULT 0, tokens INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (day, purpose))""",
    """CREATE TABLE IF NOT EXISTS reward_cache (
  key TEXT PRIMARY KEY, score REAL NOT NULL, votes TEXT NOT NULL, model TEXT, created_at REAL NOT NULL)""",
)

BUFFER = (
    """CREATE TABLE IF NOT EXISTS buffer_samples (
  turn_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, tenant TEXT NOT NULL, generation INTEGER NOT NULL,
  reward REAL NOT NULL, source TEXT, state TEXT NOT NULL DEFAULT 'queued', batch_id TEXT,
  created_at REAL NOT NULL, updated_at REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS buffer_by_state ON buffer_samples (state, generation, created_at)",
    """CREATE TABLE IF NOT EXISTS buffer_support (
  turn_id TEXT PRIMARY KEY, session_id TEXT, tenant TEXT, generation INTEGER, reason TEXT, created_at REAL NOT NULL)""",
    "CREATE TABLE IF NOT EXISTS buffer_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)

SLOW_LOOP = (
    """CREATE TABLE IF NOT EXISTS policy_tokens (
  key TEXT PRIMARY KEY, model TEXT, prompt_ids TEXT NOT NULL, response_ids TEXT NOT NULL, logprobs TEXT,
  weights TEXT, created_at REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS policy_tokens_by_time ON policy_tokens (created_at)",
    """CREATE TABLE IF NOT EXISTS train_steps (
  step INTEGER PRIMARY KEY, backend TEXT NOT NULL, loss REAL, mean_reward REAL, success_rate REAL,
  samples_used INTEGER NOT NULL DEFAULT 0, samples_dropped INTEGER NOT NULL DEFAULT 0, step_seconds REAL,
  tokens_per_s REAL, weights TEXT, checkpoint TEXT, detail TEXT, created_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS sched_transitions (
  id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, from_state TEXT, to_state TEXT NOT NULL, reason TEXT)""",
    "CREATE INDEX IF NOT EXISTS sched_transitions_by_time ON sched_transitions (at)",
    "CREATE TABLE IF NOT EXISTS runtime_state (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at REAL NOT NULL)",
)

SHARED_SKILLS = (
    """CREATE TABLE IF NOT EXISTS skill_files (
  path TEXT PRIMARY KEY, content TEXT, digest TEXT NOT NULL, deleted INTEGER NOT NULL DEFAULT 0, rev INTEGER NOT NULL,
  origin TEXT, updated_at REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS skill_files_by_rev ON skill_files (rev)",
)

MEMORY = (
    """CREATE TABLE IF NOT EXISTS memories (
  id TEXT PRIMARY KEY, tenant TEXT NOT NULL, user_id TEXT NOT NULL, kind TEXT NOT NULL, subject TEXT NOT NULL,
  text TEXT NOT NULL, status TEXT NOT NULL, standing INTEGER NOT NULL DEFAULT 0, shared INTEGER NOT NULL DEFAULT 0,
  valid_from REAL NOT NULL, valid_to REAL, expires_at REAL, source TEXT, superseded_by TEXT, screen TEXT,
  created_at REAL NOT NULL, updated_at REAL NOT NULL, rev INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS memories_by_user ON memories (tenant, user_id, status)",
    "CREATE INDEX IF NOT EXISTS memories_by_rev ON memories (rev)",
    """CREATE TABLE IF NOT EXISTS memory_history (
  id INTEGER PRIMARY KEY AUTOINCREMENT, memory_id TEXT NOT NULL, tenant TEXT NOT NULL, user_id TEXT NOT NULL,
  action TEXT NOT NULL, text TEXT, detail TEXT, at REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS memory_history_by_memory ON memory_history (memory_id, at)",
    "CREATE TABLE IF NOT EXISTS memory_rev (id INTEGER PRIMARY KEY, rev INTEGER NOT NULL)",
)

PASSAGES = (
    """CREATE TABLE IF NOT EXISTS passages (
  id TEXT PRIMARY KEY, tenant TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL, turn_id TEXT,
  kind TEXT NOT NULL, text TEXT NOT NULL, at REAL NOT NULL, status TEXT NOT NULL, screen TEXT,
  created_at REAL NOT NULL, rev INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS passages_by_user ON passages (tenant, user_id, status, at)",
    "CREATE INDEX IF NOT EXISTS passages_by_rev ON passages (rev)",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "the schema of the release before schema versions", TRAJECTORIES + LEARNING + BUFFER),
    Migration(
        2,
        "indexes for trial evidence by skill and for today's rewards",
        (
            "CREATE INDEX IF NOT EXISTS fl_shadow_by_skill ON fl_shadow (skill, skill_generation)",
            "CREATE INDEX IF NOT EXISTS rewards_by_time ON rewards (created_at)",
        ),
    ),
    Migration(3, "the slow loop: policy tokens, training steps, scheduler transitions, run-time state", SLOW_LOOP),
    Migration(4, "the skill library shared through the database (used by the postgres backend)", SHARED_SKILLS),
    Migration(
        5,
        "turns name their request's tool definitions (stored once per distinct list, like messages)",
        ("ALTER TABLE turns ADD COLUMN tools_hash TEXT",),
    ),
    Migration(6, "memory of each user: memories with their validity and history (metaclaw_plugin.memory)", MEMORY),
    Migration(
        7,
        "memory batches a host hands to the elected learner for extraction (PostgreSQL shared by hosts)",
        (
            """CREATE TABLE IF NOT EXISTS memory_pending (
  id INTEGER PRIMARY KEY AUTOINCREMENT, tenant TEXT NOT NULL, batch TEXT NOT NULL, host TEXT, created_at REAL NOT NULL)""",
        ),
    ),
    Migration(
        8,
        "a turn queued for the evolver stays a query sample until an evolver call reads it (buffer_support.read_at)",
        (
            "ALTER TABLE buffer_support ADD COLUMN read_at REAL",
            "UPDATE buffer_support SET read_at = created_at",  # every earlier claim was taken out at once
        ),
    ),
    Migration(
        9,
        "what each user said, kept as recallable passages beside the distilled memories (metaclaw_plugin.store.passages)",
        PASSAGES,
    ),
    Migration(
        10,
        "a training step names whose weights it trained (training.scope: tenant); NULL: every tenant's",
        ("ALTER TABLE train_steps ADD COLUMN tenant TEXT",),
    ),
)
CURRENT = MIGRATIONS[-1].version
