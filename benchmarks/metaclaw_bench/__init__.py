"""Benchmarks behind ``metaclaw-plugin bench``: proxy overhead, retrieval scaling, workday evaluation.

- :mod:`.overhead`: LiteLLM proxy with and without the plugin, and the reference proxy, on one upstream.
- :mod:`.retrieval`: ``on_request`` cost and memory from 100 to 100k skills; tokens per turn; hit rate.
- :mod:`.workday`: a runner for benchmarks in the MetaClaw-Bench format (days of scored rounds).
- :mod:`.synth`: deterministic synthetic skill libraries; :mod:`.common`: statistics, provenance, processes.

Nothing here is imported by the plugin itself, and heavy dependencies (LiteLLM, LangChain, aiohttp) are
imported only by the benchmark that needs them. See ``benchmarks/README.md``.
"""
