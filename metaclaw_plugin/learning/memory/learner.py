"""Extraction, off the request path: the learning side of memory.

It subscribes to the plugin's events (it never sees the plugin object): each main turn's new user message is noted
per session; every ``memory.extract_every`` main turns, and when the session ends, the notes go to a thread of
its own, which extracts (the model when one is configured and reachable, else the rules), files the result through
:class:`~.writer.MemoryWriter` and tells the view to refresh. At session end a one-line summary of the session is
kept too. A failure is logged and counted; the host never sees it. Notes not yet extracted live in memory: a crash
loses at most ``extract_every - 1`` turns of one session.

Hosts sharing PostgreSQL: only the elected learner (:class:`~...store.election.LearnerElection`, the same one the
learning loop uses) extracts. Every other host hands its batches over through the ``memory_pending`` table
(redacted first), which the learner drains every second; the memories it files reach every host's view within about
a second after that.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from types import SimpleNamespace
from typing import Any, Protocol

from ...hostmodel import HostModels
from ...infra.service import Service, yield_to_host
from ...memory.model import DEFAULT_USER, Candidate, Memory
from ...memory.store import MemoryStore
from ...memory.text import term_set
from ...privacy import Redactor, redactor_for
from ...requestpath.events import Events, SessionEnd, TurnRecorded
from ...store import AnyDatabase, open_database
from ...store.election import host_id
from ...store.passages import Passage, PassageStore
from ...tasktext import task_text
from ...text import message_text
from ..llm import HOST, Budget, LLMClient, LLMError, client_for, model_source
from . import modelx, rules
from .rules import Forget
from .writer import SENTENCES, MemoryWriter

log = logging.getLogger("metaclaw_plugin.memory")

MAX_NOTE_CHARS = 4000
PASSAGE_CHARS = 4000  # of a user's turn kept as a passage
BOUND_EVERY = 500  # passages written for a user between two looks at the per-user bound (memory.passages_max)
DIGEST_CHARS = 600  # of a compacted session
NEAREST = 15  # existing memories shown to the model with a batch
DRAIN_EVERY = 1.0  # seconds between the elected learner's looks at batches other hosts handed over
EXPIRE_EVERY = 60.0  # seconds between looks for dated memories whose date passed, when batches file nothing (a
# query on every batch cost more than the rest of a chat batch; the view already skips a passed date)


@dataclass
class Note:
    turn_id: str
    text: str
    reply: str
    at: float


@dataclass
class _Session:
    user: str | None
    notes: list[Note] = field(default_factory=list)
    main_turns: int = 0
    last_text: str = ""


@dataclass
class Said:
    """One main user turn, to keep as a passage of its user."""

    tenant: str
    user: str | None
    session_id: str
    turn_id: str
    text: str
    at: float


@dataclass
class Batch:
    tenant: str
    user: str | None
    session_id: str
    notes: list[Note]
    end: bool = False
    main_turns: int = 0

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Batch:
        """A batch another host handed over (an older release's fields that are gone, such as ``firsts``, are
        left out)."""
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        return cls(**{**known, "notes": [Note(**n) for n in d.get("notes") or []]})


class Leader(Protocol):
    """The election's one question (:class:`~...store.election.LearnerElection`); None means a single host."""

    def is_leader(self) -> bool: ...


def extractor_choice(
    settings: Any, redactor: Redactor | None, budget: Budget | None, host: HostModels | None = None
) -> tuple[Any, str, str]:
    """(client or None, "model" | "rules", why): the model of ``memory.model``, else ``evolution.model``, else
    ``learning.model`` (the host's own model by default) when it is callable here, else the rules."""
    m, e = settings.memory, settings.evolution
    if m.extractor == "rules":
        return None, "rules", "memory.extractor is rules: the rule extractor reads explicit statements"
    cfg = m if m.model else e
    source, model = model_source(cfg, settings.learning)
    if source == "none":
        return (
            None,
            "rules",
            "no memory.model or evolution.model configured and learning.model is none: the rule extractor reads "
            "explicit statements",
        )
    # the endpoint of the chosen section, the call policy (timeout, retries, backoff) of the memory section
    endpoint = SimpleNamespace(
        model=cfg.model,
        api_base=cfg.api_base,
        api_key=cfg.api_key,
        timeout=m.timeout,
        retries=m.retries,
        backoff=m.backoff,
    )
    client = client_for(
        "memory",
        endpoint,
        budget=budget,
        local_only=settings.privacy.local_only,
        redactor=redactor,
        learning=settings.learning,
        host=host,
    )
    if source == "host":
        if host is None:  # a report from outside the host's process (the CLI)
            return None, "host", "the host's own model (learning.model: host), in the host's process; rules until "
            "its adapter offers it"
        return client, "model", HOST_WHY
    reason = client.unavailable_reason()
    if reason:
        return None, "rules", f"{reason}: the rule extractor reads explicit statements"
    where = {"own": "memory" if m.model else "evolution", "learning": "learning"}[source]
    return client, "model", f"{where}.model {model} (rules as the fallback)"


HOST_WHY = "the host's own model (learning.model: host; rules as the fallback)"
NO_HOST_YET = (
    "learning.model is host and the host's model is not known yet (its adapter offers it with the first request): "
    "the rule extractor reads explicit statements"
)


class MemoryLearner:
    def __init__(
        self,
        settings: Any,
        events: Events,
        redactor: Redactor | None,
        on_change: Callable[[], Any] = lambda: None,
        *,
        client: Any = None,
        db: AnyDatabase | None = None,
        election: Leader | None = None,
        host_models: HostModels | None = None,
    ):
        self.settings = settings
        self.events = events
        self.redactor = redactor or redactor_for(settings.privacy)  # outbound and stored: always redacted
        self._own_db = db is None  # the plugin passes the view's database: one connection (pool) for both
        self.db = open_database(settings) if db is None else db
        self.store = MemoryStore(self.db)
        self.writer = MemoryWriter(self.store, settings, self.redactor)
        m = settings.memory
        self.budget = Budget(
            self.db,
            {
                "memory": (m.daily_calls, m.daily_tokens),
                HOST: (settings.learning.daily_calls, settings.learning.daily_tokens),
            },
        )
        if client is not None:
            self.client, self.extractor, self.why = client, "model", "a client given by the caller"
        else:
            self.client, self.extractor, self.why = extractor_choice(settings, self.redactor, self.budget, host_models)
        self.on_change = on_change
        self.election = election
        self.host = host_id()
        self.counts: Counter[str] = Counter()
        self.last_error: str | None = None
        self._sessions: dict[tuple[str, str], _Session] = {}
        self._lock = threading.Lock()
        self.passages = PassageStore(self.db)
        self._written: Counter[tuple[str, str]] = Counter()  # passages written per user since the last bound check
        self._q: queue.Queue[Batch | Said | None] = queue.Queue()
        self._busy = 0
        self._expire_at = 0.0  # the next time a batch that filed nothing looks for dated memories that passed
        self._idle = threading.Condition()
        self.service = Service("metaclaw-memory", self._run, wake=lambda: self._q.put(None))

    # Lifecycle -------------------------------------------------------------------------------------------------
    def start(self) -> None:
        if self.service.running:
            return
        self.events.subscribe(TurnRecorded, self.on_turn)
        self.events.subscribe(SessionEnd, self.on_end)
        self.service.start()

    def stop(self, timeout: float = 10.0) -> None:
        self.events.unsubscribe(TurnRecorded, self.on_turn)
        self.events.unsubscribe(SessionEnd, self.on_end)
        with self._lock:
            pending = [(k, s) for k, s in self._sessions.items() if s.notes]
            self._sessions.clear()
        for (tenant, sid), s in pending:  # what was said since the last extraction is not lost at shutdown
            self._enqueue(Batch(tenant, s.user, sid, s.notes))
        self.service.stop(timeout)
        if self._own_db:
            self.db.close()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    # Events (in the plugin's worker) ------------------------------------------------------------------------------
    def on_turn(self, ev: TurnRecorded) -> None:
        t = ev.turn
        if t.kind != "main":
            return
        text = task_text(t.messages, max_chars=1 << 20)[0]  # the user's words, not the client's wrappers
        reply = message_text(t.response) if isinstance(t.response, dict) else ""
        key = (t.tenant, t.session_id)
        batch = None
        new = False
        with self._lock:
            s = self._sessions.get(key)
            if s is None:
                s = self._sessions[key] = _Session(t.user)
            s.user = s.user or t.user
            s.main_turns += 1
            if text and text != s.last_text:  # each step of an agent's tool loop repeats the request: kept once
                new = True
                s.last_text = text
                s.notes.append(Note(t.turn_id, text[:MAX_NOTE_CHARS], reply[:MAX_NOTE_CHARS], t.created_at))
            due = s.main_turns % self.settings.memory.extract_every == 0 or (new and rules.holds_directive(text))
            if due and s.notes:
                batch = Batch(t.tenant, s.user, t.session_id, s.notes)
                s.notes = []
        if new:  # what the user said, kept whole (off the request path: the learner's thread writes it)
            at = ev.ctx.started_at if ev.ctx is not None else t.created_at
            self._enqueue(Said(t.tenant, t.user, t.session_id, t.turn_id, text[:PASSAGE_CHARS], at))
        if batch is not None:
            self._enqueue(batch)

    def on_end(self, ev: SessionEnd) -> None:
        with self._lock:
            s = self._sessions.pop((ev.tenant, ev.session_id), None)
        if s is None and ev.stored_turns:
            s = self._from_stored(ev.stored_turns)
        if s is not None:
            self._enqueue(Batch(ev.tenant, s.user, ev.session_id, s.notes, True, s.main_turns))

    def _from_stored(self, turns: list[Any]) -> _Session | None:
        """A session an earlier process left open (the idle sweep): its main turns as this learner would have noted
        them; only the ones after its last extraction (every ``extract_every`` main turns) are notes still to
        extract, the rest were extracted by that process. Each is kept as a passage too (once: a passage is its
        turn's; one that process wrote already is not written again)."""
        main = [t for t in turns if t.kind == "main"]
        if not main:
            return None
        s = _Session(next((t.user for t in main if t.user), None))
        pending = len(main) % self.settings.memory.extract_every
        for i, t in enumerate(main):
            text = task_text(t.messages, max_chars=1 << 20)[0]
            s.main_turns += 1
            if not text or text == s.last_text:
                continue
            s.last_text = text
            self._enqueue(Said(t.tenant, t.user, t.session_id, t.turn_id, text[:PASSAGE_CHARS], t.created_at))
            if i >= len(main) - pending:
                reply = message_text(t.response) if isinstance(t.response, dict) else ""
                s.notes.append(Note(t.turn_id, text[:MAX_NOTE_CHARS], reply[:MAX_NOTE_CHARS], t.created_at))
        return s

    def _enqueue(self, batch: Batch | Said) -> None:
        with self._idle:
            self._busy += 1
        self._q.put(batch)

    # The extraction thread ------------------------------------------------------------------------------------------
    def is_leader(self) -> bool:
        return self.election is None or self.election.is_leader()

    def services(self) -> list[Service]:
        return [self.service]

    def _run(self, _stop: threading.Event) -> None:
        self._guarded(_load_screens, "loading the memory screens")
        next_drain = 0.0
        while True:
            if self.election is not None and time.monotonic() >= next_drain:
                next_drain = time.monotonic() + DRAIN_EVERY
                self._guarded(self.drain, "the batches other hosts handed over")
            try:
                batch = self._q.get(timeout=DRAIN_EVERY if self.election is not None else None)
            except queue.Empty:
                continue
            if isinstance(batch, Said):
                ended, batch = self._keep_waiting(batch)
                if not ended:
                    continue
            if batch is None:
                return
            try:
                what = f"session {batch.session_id}"
                self._guarded(partial(self.process if self.is_leader() else self.hand_off, batch), what)
            finally:
                with self._idle:
                    self._busy -= 1
                    self._idle.notify_all()

    def _keep_waiting(self, first: Said) -> tuple[bool, Batch | None]:
        """Keep the turns waiting now as passages, in one transaction. Returns whether another item ended the run,
        and that item (handled next, so that the queue's order holds: a batch never goes behind later turns)."""
        said: list[Said] = [first]
        ended, after = False, None
        while len(said) < 256:
            try:
                nxt = self._q.get_nowait()
            except queue.Empty:
                break
            if not isinstance(nxt, Said):
                ended, after = True, nxt
                break
            said.append(nxt)
        try:
            self._guarded(partial(self.keep_said, said), f"keeping {len(said)} turns as passages")
        finally:
            with self._idle:
                self._busy -= len(said)
                self._idle.notify_all()
        return ended, after

    def keep_said(self, said: list[Said]) -> list[Passage]:
        """Keep each turn as a passage of its user: its credential statements removed, redacted, screened (one
        that directs the agent is kept quarantined: never recalled). Any host writes its own (no election: a turn
        is one passage, by its id, whoever writes it)."""
        rows = []
        for s in said:
            yield_to_host()  # each passage is screened: ~1 ms of Python
            p = self.writer.passage(f"p-{s.turn_id}", s.tenant, s.user, s.session_id, s.text, s.at, s.turn_id)
            if p is not None:
                rows.append(p)
        added = self.passages.add(rows)
        self.counts["passages"] += len(added)
        self.counts["passages_quarantined"] += sum(p.status == "quarantined" for p in added)
        for p in added:
            self._written[(p.tenant, p.user)] += 1
        for key, n in list(self._written.items()):
            if n >= BOUND_EVERY:  # the per-user bound, looked at every so many passages
                del self._written[key]
                self.counts["passages_folded"] += self.passages.compact(
                    *key, self.settings.memory.passages_max, digest_of
                )
        if added:
            self.on_change()
        return added

    def hand_off(self, batch: Batch) -> None:
        """Not the elected learner: queue the batch (redacted) for the host that is."""
        for n in batch.notes:
            n.text, n.reply = self.redactor.redact(n.text), self.redactor.redact(n.reply)
        self.store.hand_off(batch.tenant, asdict(batch), self.host)
        self.counts["handed_off"] += 1

    def drain(self) -> int:
        """The elected learner: extract the batches other hosts handed over."""
        if not self.is_leader():
            return 0
        taken = self.store.take_pending()
        for d in taken:
            self.counts["taken_over"] += 1
            self._guarded(partial(self.process, Batch.from_dict(d)), "a batch another host handed over")
        return len(taken)

    def _guarded(self, fn: Callable[[], Any], what: str) -> None:
        try:
            fn()
        except Exception as e:
            self.counts["errors"] += 1
            self.last_error = f"{type(e).__name__}: {e}"
            log.exception("memory: %s failed (dropped; the host is unaffected)", what)

    def _model_ready(self) -> bool:
        """A model extractor to call now: a client the caller gave, always; the plugin's own once its model is
        known (the host's is offered with the first request; until then the rules read)."""
        c = self.client
        return c is not None and (not isinstance(c, LLMClient) or c.unavailable_reason() is None)

    def process(self, batch: Batch) -> dict[str, Any]:
        """Extract from one batch and file the result. Returns the writer's report."""
        now = time.time()
        items: list[Candidate | Forget] = []
        summary: str | None = None
        used = "rules"
        if batch.notes and self._model_ready():
            try:
                items, summary = self._model(batch, now)
                used = "model"
                self.counts["model_batches"] += 1
            except (LLMError, ValueError) as e:
                self.counts["model_failures"] += 1
                self.last_error = f"{type(e).__name__}: {e}"
                log.warning("memory: the model extractor failed (%s); the rules read this batch", self.last_error)
        tainted: list[tuple[frozenset[str], dict[str, Any]]] = []  # turns that direct the agent: their words, verdict
        for n in batch.notes:
            verdict = self.writer.screen_turn(n.text)
            if verdict is not None:
                tainted.append((frozenset(term_set(n.text)), verdict))
        if used == "rules":
            for n in batch.notes:
                yield_to_host()
                items += rules.extract(n.text, now, self.settings.memory.event_days)
            self.counts["rule_batches"] += 1 if batch.notes else 0
        source = {
            "session_id": batch.session_id,
            "turn_ids": [n.turn_id for n in batch.notes],
            "extractor": used,
            "at": min((n.at for n in batch.notes), default=now),  # when it was said: the memory is dated by it
        }
        clean, held = _split_tainted(items, tainted)
        report = self.writer.apply(batch.tenant, batch.user, clean, source)
        for c, verdict in held:  # drawn from a turn that directs the agent: kept for a person to see, never injected
            rep = self.writer.apply(batch.tenant, batch.user, [c], source, quarantine=verdict)
            report.counts.update(rep.counts)
            report.ids += rep.ids
        if batch.end and batch.main_turns:
            if summary:  # the model's account of what was done and decided (the rules keep the passages only)
                c = Candidate("summary", summary, f"session:{batch.session_id}")
                rep = self.writer.apply(batch.tenant, batch.user, [c], {**source, "summary": True})
                report.counts.update(rep.counts)
                report.ids += rep.ids
        self.counts.update({f"filed_{k}": v for k, v in report.counts.items()})
        changed = bool(report.ids or report.counts["forgotten"])  # a refused duplicate changes nothing
        expired = 0
        if report.ids or now >= self._expire_at:  # what was just filed may be dated in the past already
            self._expire_at = now + EXPIRE_EVERY
            expired = self.store.expire(now)
        self.counts["expired"] += expired
        if changed or expired:
            self.on_change()
        return report.as_dict()

    def _model(self, batch: Batch, now: float) -> tuple[list[Candidate | Forget], str | None]:
        turns = [{"user": n.text, "assistant": n.reply[:1000]} for n in batch.notes]
        words = term_set(" ".join(n.text for n in batch.notes))
        mine = self.store.find(batch.tenant, batch.user or DEFAULT_USER, statuses=("active",))
        mine.sort(key=lambda m: -len(words & term_set(m.text)))
        existing: list[Memory] = [m for m in mine if m.kind != "summary"][:NEAREST]
        text = modelx.call(self.client, turns, existing, self.settings.memory.max_tokens)
        return modelx.parse(text, now, self.settings.memory.event_days)

    def status(self) -> dict[str, Any]:
        extractor, why = self.extractor, self.why
        own = self.client if isinstance(self.client, LLMClient) else None  # a caller's client has no host
        if own is not None and own.host is not None:
            hm = own.host.get()
            extractor, why = ("model", f"{hm.describe()}: {HOST_WHY}") if hm is not None else ("rules", NO_HOST_YET)
        return {
            "extractor": extractor,
            "extractor_model": own.model if own is not None else None,
            "extractor_reason": why,
            "extract_every": self.settings.memory.extract_every,
            "open_sessions": len(self._sessions),
            "queued": self._busy,
            "extraction": dict(self.counts),
            "extracts_here": self.is_leader(),
            "last_error": self.last_error,
        }


TAINT_COVER = 0.5  # share of a memory's words found in a turn that directs the agent for the memory to be its


def _split_tainted(
    items: list[Candidate | Forget], tainted: list[tuple[frozenset[str], dict[str, Any]]]
) -> tuple[list[Candidate | Forget], list[tuple[Candidate, dict[str, Any]]]]:
    """The candidates drawn from a turn that directs the agent (most of their words are that turn's), each with the
    turn's verdict; the rest as they are. A forget request is never held back (it only takes memories away)."""
    if not tainted:
        return items, []
    clean: list[Candidate | Forget] = []
    held: list[tuple[Candidate, dict[str, Any]]] = []
    for c in items:
        words = term_set(c.text) if isinstance(c, Candidate) else set()
        hit = next((v for turn, v in tainted if words and len(words & turn) / len(words) >= TAINT_COVER), None)
        if hit is None or not isinstance(c, Candidate):
            clean.append(c)
        else:
            held.append((c, hit))
    return clean, held


def digest_of(session_id: str, passages: list[Passage]) -> str:
    """A compacted session: its first sentences, in order, within a few hundred characters."""
    firsts = [SENTENCES.split(p.text.strip(), maxsplit=1)[0][:160] for p in passages if p.text.strip()]
    text = " | ".join(firsts)
    more = f" (and {len(passages) - len(firsts)} more)" if len(firsts) < len(passages) else ""
    return (text[:DIGEST_CHARS] + more) or f"a session of {len(passages)} turns"


def _load_screens() -> None:
    """Import the screens a memory passes (their patterns take seconds to build) when the thread starts, not with the
    first statement nor with every import of the package."""
    from ..screening import scans  # noqa: F401
    from . import directives, standing  # noqa: F401
