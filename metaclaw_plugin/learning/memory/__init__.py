"""Memory's learning half: what writes memories, off the request path. :mod:`.learner` (the extraction worker,
attached lazily by the plugin), :mod:`.rules` and :mod:`.modelx` (the extractors), :mod:`.guard` and
:mod:`.directives` (credentials refused, directives to the agent screened), :mod:`.writer` (filing, supersession,
forgetting) and :mod:`.ops` (what people do with memories: the CLI, ``/v1/memory``, the agents' memory tools). What the
request path reads is :mod:`metaclaw_plugin.memory`."""
