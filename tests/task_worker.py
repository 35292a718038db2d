"""The task worker in tests: the real `db_worker`, in this process or as a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from django.core.management import call_command
from django.db import connection

PROJECT = Path(__file__).resolve().parent.parent


def run_queued_tasks() -> None:
    """Every queued task run by the worker command, here, until the queue is empty.

    The command closes and reopens its database connection between tasks, as a worker does:
    a test that calls it needs committed rows (`django_db(transaction=True)`)."""
    call_command(
        "db_worker", "--batch", "--no-startup-delay", "--no-reload", "--interval=0", verbosity=0
    )


def database_environment() -> dict[str, str]:
    """The environment that points a worker process at this test's database."""
    db = connection.settings_dict
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SQLITE_PATH")}
    if connection.vendor == "sqlite":
        env["SQLITE_PATH"] = str(db["NAME"])
    else:
        user = quote(db["USER"] or "") + (f":{quote(db['PASSWORD'])}" if db["PASSWORD"] else "")
        env["DATABASE_URL"] = f"postgres://{user}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"
    return env


def start_worker(**env: str) -> subprocess.Popen[str]:
    """`manage.py grading_worker` (db_worker and batch recovery) as a process of its own on
    the test database; `env` adds settings (`TRIALDESK_GRADING_LEASE_S`, …)."""
    return subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "grading_worker",
            "--no-reload",
            "--no-startup-delay",
            "--interval=0.1",
            "--recover-every=0.5",
        ],
        cwd=PROJECT,
        env={**database_environment(), "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def stop_worker(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture
def worker_process(transactional_db: None) -> Iterator[subprocess.Popen[str]]:
    """The worker production runs, as a separate process on the test database (committed rows)."""
    process = start_worker()
    try:
        yield process
    finally:
        stop_worker(process)
