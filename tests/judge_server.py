"""A chat-completions endpoint in the test process (127.0.0.1), answering as told."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from rewards.scoring import judge as judge_module
from rewards.scoring.judge import forget_formats

GOOD_ANSWER: dict[str, Any] = {
    "verdict": "FAIL",
    "task_completion": 2,
    "instruction_adherence": 4,
    "efficiency": 3,
    "failure_mode": "tests edited",
    "reasoning": "The agent changed the graded test instead of the code.",
    "fact_checks": [
        {"claim": "all tests pass", "status": "refuted", "evidence": "edited test", "citations": []}
    ],
}


@dataclass
class FakeJudge:
    """`reply` is what the next requests get: ("completion", content) wraps `content` in a
    chat completion; ("body", text) sends text as is; ("status", code); ("slow", seconds);
    ("busy", n): `busy_status` (429) with `Retry-After: retry_after` (none when None) to the
    first n requests; ("drip", seconds): the body one byte at a time. A request whose
    `response_format` type is in `refused_formats` gets a 400 naming it, as an endpoint
    without structured output answers. `max_in_flight` is the most requests it held at once."""

    url: str = ""
    reply: tuple[str, Any] = ("completion", json.dumps(GOOD_ANSWER))
    requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    # ("gate", None): every answer waits until the test opens the gate (then answers well).
    gate: threading.Event = field(default_factory=threading.Event)
    retry_after: str | None = "0.5"
    busy_status: int = 429
    refused_formats: set[str] = field(default_factory=set)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, content: Any) -> None:
        self.reply = ("completion", content if isinstance(content, str) else json.dumps(content))

    def open_gate_at(self, in_flight: int, seconds: float = 30) -> threading.Thread:
        """Hold every answer (the "gate" reply) until `in_flight` requests are held at once,
        then let them all go; after `seconds` anyway, so that a test fails rather than hangs."""

        def watch() -> None:
            deadline = time.monotonic() + seconds
            while self.in_flight < in_flight and time.monotonic() < deadline:
                time.sleep(0.005)
            self.gate.set()

        self.reply = ("gate", None)
        thread = threading.Thread(target=watch, daemon=True)
        thread.start()
        return thread


def _handler(judge: FakeJudge) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            judge.paths.append(self.path)
            self.send_response(404)
            self.end_headers()

        def do_POST(self) -> None:
            with judge.lock:
                judge.in_flight += 1
                judge.max_in_flight = max(judge.max_in_flight, judge.in_flight)
            try:
                self._answer()
            finally:
                with judge.lock:
                    judge.in_flight -= 1

        def _answer(self) -> None:
            judge.paths.append(self.path)
            judge.headers.append({k.lower(): v for k, v in self.headers.items()})
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length))
            with judge.lock:
                judge.requests.append(request)
                count = len(judge.requests)
            asked = (request.get("response_format") or {}).get("type")
            if asked in judge.refused_formats:
                message = f"Invalid parameter: 'response_format' of type '{asked}' is not supported"
                error = {"error": {"message": message, "param": "response_format"}}
                self._send(400, json.dumps(error).encode())
                return
            kind, value = judge.reply
            if kind == "gate":
                judge.gate.wait(timeout=60)
                kind, value = "completion", json.dumps(GOOD_ANSWER)
            if kind == "slow":
                time.sleep(value)
                kind, value = "completion", json.dumps(GOOD_ANSWER)
            if kind == "truncated":  # promises more than it sends, then hangs up
                self.send_response(200)
                self.send_header("Content-Length", "5000")
                self.end_headers()
                self.wfile.write(b'{"choices": [')
                self.close_connection = True
                return
            if kind == "status":
                self._send(value, b'{"error": {"message": "overloaded"}}')
                return
            if kind == "busy":  # 429 (or 503) with Retry-After for the first `value` requests
                if count <= value:
                    after = judge.retry_after
                    wait = {"Retry-After": after} if after is not None else {}
                    self._send(judge.busy_status, b'{"error": {"message": "slow down"}}', wait)
                    return
                kind, value = "completion", json.dumps(GOOD_ANSWER)
            if kind == "drip":  # headers at once, then one byte of the body every `value` s
                body = json.dumps(GOOD_ANSWER).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                for byte in body:
                    try:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return
                    time.sleep(value)
                return
            if kind == "completion":
                value = json.dumps(
                    {
                        "id": "c-1",
                        "object": "chat.completion",
                        "model": "judge-large-2026",
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": value}}
                        ],
                    }
                )
            self._send(200, value.encode())

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            try:
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

    return Handler


@pytest.fixture
def judge_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    judge = FakeJudge()
    forget_formats()  # what an earlier test's server (maybe on this port) taught the process
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(judge))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    judge.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    monkeypatch.setenv("TRIALDESK_JUDGE_BASE_URL", judge.url)
    monkeypatch.setenv("TRIALDESK_JUDGE_MODEL", "judge-large")
    monkeypatch.setenv("TRIALDESK_JUDGE_API_KEY", "sk-test-judge")
    monkeypatch.setenv("TRIALDESK_JUDGE_TIMEOUT_S", "5")
    # Backoff (without a Retry-After) in hundredths of a second, not halves: tests stay fast.
    monkeypatch.setattr(judge_module, "BACKOFF_S", 0.01)
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    try:
        yield judge
    finally:
        server.shutdown()
        server.server_close()
