"""The request path's parts, under :class:`~metaclaw_plugin.MetaClawPlugin`: what crosses its boundary
(:mod:`.bounds`), a turn between its two host events (:mod:`.turns`), side calls told from main turns
(:mod:`.sideturns`), whose session a turn is (:mod:`.sessions`), explicit feedback (:mod:`.feedback`) and the events
the plugin publishes to the learning side (:mod:`.events`). Light and synchronous: no network, no model, no
learning side."""
