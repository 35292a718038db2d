"""A chat-completions endpoint for the judging benchmark, as a process of its own.

    python bench/judge_stub.py --latency 0.5 [--busy-every 10 --retry-after 1]

It prints its port, then answers every request after `--latency` seconds with a well-formed
rubric answer; with `--busy-every N`, every Nth request is answered at once with a 429 and
`Retry-After: --retry-after`. HTTP/1.1 with keep-alive, one thread per connection, as a
real endpoint's front end keeps the client's pooled connections open. Its own process, so
its work does not share the benchmarked worker's interpreter.
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = json.dumps(
    {
        "verdict": "PASS",
        "task_completion": 4,
        "instruction_adherence": 5,
        "efficiency": 4,
        "failure_mode": None,
        "reasoning": "The agent did what the task asked.",
        "fact_checks": [],
    }
)
COMPLETION = json.dumps(
    {
        "id": "bench",
        "object": "chat.completion",
        "model": "bench-judge-2026",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER}}],
    }
).encode()
BUSY = b'{"error": {"message": "rate limited"}}'


def handler(latency: float, busy_every: int, retry_after: str) -> type[BaseHTTPRequestHandler]:
    counter = itertools.count(1)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the client's pool reuses its connections
        # Headers and body go out in two writes: with Nagle's algorithm the body would wait
        # for the client's delayed ACK of the headers (about 40 ms) on every answer.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                n = next(counter)
            if busy_every and n % busy_every == 0:
                self._send(429, BUSY, {"Retry-After": retry_after})
                return
            time.sleep(latency)
            self._send(200, COMPLETION)

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds before each answer")
    parser.add_argument("--busy-every", type=int, default=0, help="a 429 to every Nth request")
    parser.add_argument("--retry-after", default="1", help="the 429's Retry-After")
    args = parser.parse_args()
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), handler(args.latency, args.busy_every, args.retry_after)
    )
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
