"""OPD: a scripted teacher on a local OpenAI-compatible /v1/completions (echo + logprobs) scores the student's
tokens; its reverse-KL term lands in the token advantages, and a failing teacher leaves them as they were."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from metaclaw_plugin.config import OPDSettings
from metaclaw_plugin.training.opd import Teacher
from metaclaw_plugin.training.samples import TrainSample


class _Teacher(BaseHTTPRequestHandler):
    """Scores token id t with logprob -t/10 (the first prompt token: null), as vLLM's echo does."""

    seen: list[dict[str, Any]] = []
    auth: list[str | None] = []
    fail = False

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        type(self).auth.append(self.headers.get("Authorization"))
        if self.path != "/v1/completions" or type(self).fail:
            self.send_response(500)
            self.end_headers()
            return
        ids = body["prompt"]
        scores = [None] + [-t / 10 for t in ids[1:]]
        data = json.dumps({"choices": [{"text": "", "logprobs": {"token_logprobs": scores}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def teacher_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Teacher)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Teacher.seen, _Teacher.auth, _Teacher.fail = [], [], False
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def _sample(logprobs: list[float] | None) -> TrainSample:
    return TrainSample("t", [5, 6], [10, 20, 30], [1, 0, 1], logprobs, 1.0, 0, advantage=0.5)


def test_reverse_kl_term_from_a_scripted_teacher(teacher_url: str):
    teacher = Teacher(OPDSettings(teacher_model="teacher", api_base=teacher_url, api_key="sk-t", kl_coef=0.5))
    served, unknown = _sample([-0.5, -3.0, -2.0]), _sample(None)
    teacher([served, unknown])
    # teacher logprobs of 10, 20, 30: -1, -2, -3; A_t = (0.5 - 0.5 * (student - teacher)) * mask
    # token 1: 0.5 - 0.5 * (-0.5 + 1) = 0.25; token 2 masked: 0; token 3: 0.5 - 0.5 * (-2 + 3) = 0.0
    assert served.token_advantages == pytest.approx([0.25, 0.0, 0.0])
    assert unknown.token_advantages is None and unknown.advantages() == [0.5, 0.5, 0.5]  # no student logprobs
    (req,) = _Teacher.seen
    assert req["prompt"] == [5, 6, 10, 20, 30] and req["echo"] and req["max_tokens"] == 0 and req["model"] == "teacher"
    assert _Teacher.auth == ["Bearer sk-t"]


def test_a_failing_teacher_leaves_advantages_alone(teacher_url: str):
    _Teacher.fail = True
    teacher = Teacher(OPDSettings(teacher_model="teacher", api_base=teacher_url, timeout=5))
    s = _sample([-0.5, -3.0, -2.0])
    teacher([s])
    assert s.token_advantages is None and teacher.failures == 1
    with pytest.raises(ValueError, match="teacher_model and api_base"):
        Teacher(OPDSettings(teacher_model="teacher"))
