"""One set of SQLite settings, whichever way SQLite is chosen (issue 26).

`SQLITE_PATH` and `DATABASE_URL=sqlite:///…` give the same database settings (WAL,
synchronous=NORMAL, IMMEDIATE transactions, a busy timeout), and reviewers posting at once
through either are all stored, none refused with "database is locked".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from config.settings import database_from_environment

PROJECT = Path(__file__).resolve().parent.parent
WRITERS = 32


def _settings_in_a_process(env: dict[str, str]) -> dict[str, Any]:
    """The default database as config/settings.py builds it in a fresh process under `env`."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE", "SQLITE_PATH"))}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, config.settings as s; print(json.dumps(s.DATABASES['default']))",
        ],
        cwd=PROJECT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    settings: dict[str, Any] = json.loads(result.stdout)
    return settings


def test_sqlite_path_and_a_sqlite_database_url_give_the_same_settings(tmp_path: Path) -> None:
    path = str(tmp_path / "desk.sqlite3")

    by_path = _settings_in_a_process({"SQLITE_PATH": path})
    by_url = _settings_in_a_process({"DATABASE_URL": f"sqlite:///{path}"})

    assert by_url == by_path
    assert by_path["NAME"] == path
    assert by_path["OPTIONS"] == {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }


def test_the_settings_are_built_by_one_function_from_the_environment(tmp_path: Path) -> None:
    path = str(tmp_path / "desk.sqlite3")
    assert database_from_environment({"DATABASE_URL": f"sqlite:///{path}"}) == (
        database_from_environment({"SQLITE_PATH": path})
    )
    postgres = database_from_environment({"DATABASE_URL": "postgres://u@db:5432/desk"})
    assert postgres["ENGINE"] == "django.db.backends.postgresql"
    assert "transaction_mode" not in postgres["OPTIONS"]


@pytest.mark.parametrize("chosen_by", ["DATABASE_URL", "SQLITE_PATH"])
def test_reviewers_posting_at_once_are_all_stored(tmp_path: Path, chosen_by: str) -> None:
    path = tmp_path / "desk.sqlite3"
    env = (
        {"DATABASE_URL": f"sqlite:///{path}"}
        if chosen_by == "DATABASE_URL"
        else {"SQLITE_PATH": str(path)}
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE", "SQLITE_PATH"))}
    result = subprocess.run(
        [sys.executable, "-m", "tests.sqlite_writers", str(WRITERS)],
        cwd=PROJECT,
        env={**clean, **env, "DJANGO_SETTINGS_MODULE": "tests.settings"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    ran = json.loads(result.stdout.splitlines()[-1])

    assert ran["options"]["transaction_mode"] == "IMMEDIATE"
    # Every plain post saved and redirected back to the card; none "database is locked".
    assert ran["statuses"] == [302] * WRITERS
    assert ran["stored"] == WRITERS
