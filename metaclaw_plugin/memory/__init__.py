"""Memory of each user across sessions: preferences, facts, project state, dated events and session summaries.

Request path (no database, no network, no model): :mod:`.view`. Everything else runs in the background or for
people: :mod:`.store` (the tables), :mod:`.rules` and :mod:`.modelx` (extraction), :mod:`.guard` (redaction and
screening), :mod:`.writer` (filing, supersession, forgetting), :mod:`.learner` (the extraction worker, attached
lazily by the plugin), :mod:`.api` (``/v1/memory``). Skills say how to work; memories say what is true about
this user: they stay apart in code and in the prompt.
"""
