"""The production app server in tests: gunicorn, with workers, on a loopback port of its own.

The fault tests post to it over real sockets from many threads, kill its workers, and restart
its database under it. `Gunicorn` binds its socket first (port 0: the kernel picks a free
one) and hands it to gunicorn (`--bind fd://N`), so no other process can take the port in
between. `Http` is a small stdlib client (one connection per request, a timeout on each):
cookies, CSRF and bearer tokens set by hand, redirects not followed.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

PROJECT = Path(__file__).resolve().parent.parent
TIMEOUT = 20.0


def server_environment(database: Mapping[str, str]) -> dict[str, str]:
    """The environment of a server process on `database` (DATABASE_URL or SQLITE_PATH).

    The suite's settings (plain HTTP, no manifest of collected static files), the cache
    shared with this test process under its own key prefix: the workers see each other's
    entries and the test's clean-up removes theirs.
    """
    from django.conf import settings

    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SQLITE_PATH")}
    env.update(database)
    env["DJANGO_SETTINGS_MODULE"] = "tests.settings"
    env["TRIALDESK_TEST_CACHE_PREFIX"] = settings.CACHES["default"]["KEY_PREFIX"]
    return env


class Gunicorn:
    """`gunicorn config.wsgi` with `workers` sync workers on 127.0.0.1, in its own process
    group (stopped with everything it started)."""

    def __init__(self, database: Mapping[str, str], workers: int = 3, log: Path | None = None):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        fd = self.listener.fileno()
        self.log_path = log
        self._log = open(log, "wb") if log else None  # noqa: SIM115
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi:application",
                f"--bind=fd://{fd}",
                f"--workers={workers}",
                "--timeout=30",
                "--graceful-timeout=5",
            ],
            cwd=PROJECT,
            env=server_environment(database),
            pass_fds=(fd,),
            stdout=self._log or subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def http(self) -> Http:
        return Http(self.port)

    def workers(self) -> list[int]:
        """The worker processes' ids (the master's children)."""
        pid = self.process.pid
        children: list[int] = []
        for task in Path(f"/proc/{pid}/task").iterdir():
            text = (task / "children").read_text().split()
            children.extend(int(p) for p in text)
        return children

    def wait_ready(self, workers: int, seconds: float = 60) -> None:
        """Until `workers` workers answer /healthz (each started and imported the app)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"gunicorn exited: {self.output()}"
            if len(self.workers()) >= workers:
                try:
                    if all(self.http.get("/healthz").status == 200 for _ in range(workers * 2)):
                        return
                except OSError:
                    pass
            time.sleep(0.2)
        raise AssertionError(f"gunicorn not ready in {seconds} s: {self.output()}")

    def output(self) -> str:
        if self.log_path is None:
            return ""
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=15)
        self.listener.close()
        if self._log is not None:
            self._log.close()


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


# What a request cut off by a dying worker raises (a reset, a closed or half-sent answer).
CUT_OFF = (OSError, http.client.HTTPException)

CSRF_FIELD = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')


@dataclass
class Http:
    """A client for one server: cookies kept across requests, nothing else."""

    port: int
    cookies: dict[str, str] = field(default_factory=dict)

    def request(
        self, method: str, path: str, body: bytes = b"", headers: Mapping[str, str] = {}
    ) -> Response:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        try:
            sent = {"Host": f"127.0.0.1:{self.port}", **headers}
            if self.cookies:
                sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            connection.request(method, path, body=body, headers=sent)
            answer = connection.getresponse()
            data = answer.read()
            for header, value in answer.getheaders():
                if header.lower() == "set-cookie":
                    name, _, rest = value.partition("=")
                    self.cookies[name.strip()] = rest.split(";", 1)[0]
            return Response(answer.status, {k.lower(): v for k, v in answer.getheaders()}, data)
        finally:
            connection.close()

    def get(self, path: str) -> Response:
        return self.request("GET", path)

    def csrf_token(self, path: str) -> str:
        """The form's CSRF token on the page at `path` (its cookie kept)."""
        page = self.get(path)
        assert page.status == 200, page.status
        found = CSRF_FIELD.search(page.body)
        assert found, "no CSRF token on the page"
        return found.group(1).decode()

    def post_form(self, path: str, data: Mapping[str, str], token: str) -> Response:
        body = urlencode({**data, "csrfmiddlewaretoken": token}).encode()
        return self.request(
            "POST", path, body, {"Content-Type": "application/x-www-form-urlencoded"}
        )

    def post_json(self, path: str, data: Any, bearer: str) -> Response:
        return self.request(
            "POST",
            path,
            json.dumps(data).encode(),
            {"Content-Type": "application/json", "Authorization": f"Bearer {bearer}"},
        )
