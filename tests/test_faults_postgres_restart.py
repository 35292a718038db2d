"""PostgreSQL restarted under load: every acknowledged annotation survives, and the app recovers.

The database is a PostgreSQL server of this test's own (tests/private_postgres.py: `initdb` in
a temporary folder, its own port), whatever database the suite runs on; gunicorn serves the
application on it (tests/live_gunicorn.py). Reviewers post annotations through the API from
threads while the server is restarted (`pg_ctl restart -m fast`, which ends every session).
Requests in flight then may fail, but (issue 26) nothing acknowledged is lost, nothing is
stored twice, and once the database is back every request succeeds again: no worker keeps
handing out a connection that died with the old server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.live_gunicorn import CUT_OFF, Gunicorn
from tests.private_postgres import PrivatePostgres, binaries
from tests.task_worker import PROJECT

REVIEWERS = 6
WORKERS = 2


@pytest.fixture(scope="module")
def database() -> Iterator[PrivatePostgres]:
    bin_dir = binaries()
    if bin_dir is None:
        pytest.skip("PostgreSQL's initdb is not installed; this test needs a server of its own")
    server = PrivatePostgres(bin_dir)
    try:
        server.start()
        environment = {"DATABASE_URL": server.url, "DJANGO_SETTINGS_MODULE": "tests.settings"}
        done = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput"],
            cwd=PROJECT,
            env={**_clean_environment(), **environment},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        yield server
    finally:
        server.stop()


def _clean_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SQLITE_PATH")}


def seed(server: PrivatePostgres) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.private_postgres", "seed", str(REVIEWERS)],
        cwd=PROJECT,
        env={**_clean_environment(), "DATABASE_URL": server.url},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seeded = json.loads(done.stdout.splitlines()[-1])
    return seeded["trial"], seeded["tokens"]


@pytest.fixture
def gunicorn(database: PrivatePostgres, tmp_path: Path) -> Iterator[Gunicorn]:
    server = Gunicorn({"DATABASE_URL": database.url}, workers=WORKERS, log=tmp_path / "g.log")
    try:
        server.wait_ready(WORKERS)
        yield server
    finally:
        server.stop()


def stored_notes(server: PrivatePostgres) -> list[str]:
    with psycopg.connect(server.url, connect_timeout=10) as connection:
        rows = connection.execute("SELECT notes FROM review_annotation").fetchall()
    return [notes for (notes,) in rows]


def test_a_postgres_restart_under_load_loses_no_acknowledged_annotation(
    database: PrivatePostgres, gunicorn: Gunicorn
) -> None:
    trial, bearers = seed(database)
    sent: list[tuple[str, int | str, float]] = []
    lock = threading.Lock()
    stop = threading.Event()

    def post(bearer: str, note: str) -> int | str:
        started = time.monotonic()
        try:
            outcome: int | str = gunicorn.http.post_json(
                f"/api/trials/{trial}/annotations", {"judgment": "pass", "notes": note}, bearer
            ).status
        except CUT_OFF as exc:
            outcome = type(exc).__name__
        with lock:
            sent.append((note, outcome, started))
        return outcome

    def reviewer(n: int) -> None:
        i = 0
        while not stop.is_set() and i < 400:
            post(bearers[n], f"r{n}/{i}")
            i += 1

    threads = [threading.Thread(target=reviewer, args=(n,)) for n in range(REVIEWERS)]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 60
        while sum(o == 201 for _, o, _ in sent) < 4 * REVIEWERS and time.monotonic() < deadline:
            time.sleep(0.02)
        database.restart()
        back = time.monotonic()
        # The load goes on against the restarted server for a while.
        while time.monotonic() < back + 2:
            time.sleep(0.05)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)

    acknowledged = {note for note, outcome, _ in sent if outcome == 201}
    notes = stored_notes(database)
    assert acknowledged <= set(notes), gunicorn.output()
    assert len(notes) == len(set(notes))
    assert set(notes) <= {note for note, _, _ in sent}
    assert any(at < back for _, o, at in sent if o == 201), "writes were acknowledged before"
    # The app recovered: requests sent once the server was back all succeeded (those sent
    # before may have failed with it).
    late = [(note, outcome) for note, outcome, at in sent if at > back + 0.5]
    assert late, "the load went on after the restart"
    assert {outcome for _, outcome in late} == {201}, (late[:5], gunicorn.output())
    # Restarted again while nothing is in flight: the workers' pooled connections all died
    # idle, and the next requests still succeed.
    database.restart()
    after = [post(bearer, f"after/{n}/{k}") for n, bearer in enumerate(bearers) for k in range(3)]
    assert set(after) == {201}
    assert {f"after/{n}/{k}" for n in range(REVIEWERS) for k in range(3)} <= set(
        stored_notes(database)
    )
