"""Memory of each user across sessions: preferences, facts, project state, dated events and session summaries.

What the request path reads (no database, no network, no model): :mod:`.view`, kept up to date in the background
from :mod:`.store` (the tables) and ranked by :mod:`.index`, on :mod:`.model`, :mod:`.text` and :mod:`.dates`. What
writes memories (extraction, screening, filing, people's edits) is the learning side's:
:mod:`metaclaw_plugin.learning.memory`. Skills say how to work; memories say what is true about this user: they stay
apart in code and in the prompt.
"""
