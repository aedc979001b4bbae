"""The plugin leaves the host's logging as the host set it. wordllama calls ``logging.basicConfig(level=INFO)``
when imported; in a LiteLLM proxy (no root handler) that turned on every library's info lines on stderr: LiteLLM's
two a request, 12,216 lines in a benchmark run where the proxy without the plugin wrote 25."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from metaclaw_plugin.config import embeddings_missing

pytestmark = pytest.mark.skipif(embeddings_missing("wordllama") is not None, reason="needs wordllama")


def test_loading_the_request_path_embedder_keeps_the_root_logger_as_the_host_set_it():
    code = textwrap.dedent(
        """
        import json, logging
        from metaclaw_plugin.skillbank.embedding import get_encoder
        root = logging.getLogger()
        before = (len(root.handlers), root.level)
        vector = get_encoder("wordllama").encode_query("rename the files by date")
        import wordllama  # already imported: no second configuration either
        print(json.dumps({"before": before, "after": (len(root.handlers), root.level),
                          "info_on": logging.getLogger("LiteLLM Proxy").isEnabledFor(logging.INFO),
                          "dims": int(vector.shape[0])}))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["before"] == [0, 30] and got["after"] == [0, 30]  # no handler added, still WARNING
    assert got["info_on"] is False
    assert got["dims"] == 256  # the encoder still works


def test_the_plugins_records_reach_the_hosts_handlers_throttled():
    """A record like one shown in the last minute is held back and counted; the next one shown says how many were;
    other kinds pass; a host with no handler still sees warnings (Python's last resort), once."""
    code = textwrap.dedent(
        """
        import io, json, logging, sys
        from metaclaw_plugin.infra import logfile
        clock = [1000.0]
        logfile.time.monotonic = lambda: clock[0]
        stream = io.StringIO()
        logfile.quiet_logging()
        log = logging.getLogger("metaclaw_plugin.store")
        for _ in range(50):
            log.error("journal write failed: %s", "ENOSPC")  # no host handler yet: the last resort, once
        logging.basicConfig(stream=stream, level=logging.INFO)
        for i in range(500):
            log.error("journal write failed: %s", "ENOSPC")
            logging.getLogger("metaclaw_litellm").warning("another kind")
        clock[0] += 61
        log.error("journal write failed: %s", "ENOSPC")
        print(json.dumps({"lines": stream.getvalue().splitlines(), "held": logfile.THROTTLE.held}))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert out.stderr.count("journal write failed") == 1  # Python's last resort, before the host set logging up
    assert got["lines"] == [
        "WARNING:metaclaw_litellm:another kind",
        "ERROR:metaclaw_plugin.store:journal write failed: ENOSPC [549 more like this in the last 60 s not shown]",
    ]
    assert got["held"] == 549 + 499
