"""One bounded memo for the caches of things computed again and again (a system prompt's head judged, a word's
term, a skill's entry, an id as stored): a dict that never grows past its bound."""

from __future__ import annotations

import threading
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Memo(dict[K, V]):
    """A dict of at most ``maxsize`` entries: :meth:`put` drops the oldest first (no cliff where a full cache
    forgets everything). Reads are a dict's own (``get``, ``in``: no lock and no cost per hit, for the request
    path); writes go through :meth:`put` under a lock, so threads never evict the same entry twice."""

    def __init__(self, maxsize: int) -> None:
        super().__init__()
        self.maxsize = maxsize
        self._lock = threading.Lock()

    def put(self, key: K, value: V) -> V:
        """Remember ``value`` for ``key`` and return it."""
        with self._lock:
            if key not in self:
                while len(self) >= self.maxsize:
                    del self[next(iter(self))]
            self[key] = value
        return value
