"""Project-level promises: health check, production settings, security headers, set-up."""

import os
import subprocess
import sys
from collections.abc import Callable

import pytest
from django.test import Client

from tests.conftest import ROOT

PRODUCTION_ENV = {
    "SECRET_KEY": "a-production-secret-that-is-long-and-random-0123456789-abcdefghij",
    "ALLOWED_HOSTS": "trialdesk.example.com",
    "DJANGO_DEBUG": "0",
    # The check only reads the setting: no Redis needs to answer.
    "CACHE_URL": "redis://127.0.0.1:6379/0",
}


def _python(
    *args: str, env: dict[str, str], unset: Callable[[str], bool]
) -> subprocess.CompletedProcess[str]:
    """This Python run in the project's root, the variables `unset` names removed, `env` set."""
    clean = {k: v for k, v in os.environ.items() if not unset(k)}
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    skip = {"SECRET_KEY", "DJANGO_DEBUG", "DJANGO_SETTINGS_MODULE"}
    return _python("manage.py", *args, env=env, unset=skip.__contains__)


@pytest.mark.django_db
def test_healthz_reports_database_ok_without_login(client: Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}


@pytest.mark.django_db
def test_healthz_only_answers_get(client: Client) -> None:
    assert client.post("/healthz").status_code == 405


@pytest.mark.django_db
def test_healthz_reports_unreachable_database(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db import DatabaseError

    def broken_cursor(*args: object, **kwargs: object) -> None:
        raise DatabaseError("connection refused")

    monkeypatch.setattr("rewards.views.connection.cursor", broken_cursor)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["database"] == "unreachable"


def test_deploy_check_is_clean_under_production_settings() -> None:
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_deploy_check_flags_a_cache_each_process_keeps_alone() -> None:
    env = {**PRODUCTION_ENV, "CACHE_URL": ""}
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode != 0
    assert "trialdesk.W001" in result.stdout + result.stderr
    assert "CACHE_URL=redis://" in result.stdout + result.stderr


def test_deploy_check_flags_a_missing_secret_key() -> None:
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "SECRET_KEY"}
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode != 0
    assert "security.W009" in result.stdout + result.stderr


@pytest.mark.django_db
def test_every_response_carries_an_enforced_csp_without_inline_script(client: Client) -> None:
    response = client.get("/healthz")
    policy = response.headers["Content-Security-Policy"]
    directives = dict(
        [*part.strip().split(" ", 1), ""][:2] for part in policy.split(";") if part.strip()
    )
    assert "'unsafe-inline'" not in directives["script-src"]
    assert directives["script-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    assert "Content-Security-Policy-Report-Only" not in response.headers
    assert response.headers["X-Frame-Options"] == "DENY"


def test_makefile_refuses_a_python_older_than_3_12(tmp_path: object) -> None:
    old = tmp_path / "python3"  # type: ignore[operator]
    old.write_text("#!/bin/sh\necho 'Python 3.11.7'\nexit 1\n")
    old.chmod(0o755)
    result = subprocess.run(
        ["make", "-s", f"PYTHON={old}", "check-python"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert "needs Python 3.12 or newer" in result.stdout + result.stderr


def _database_options(env: dict[str, str]) -> str:
    """The default database's OPTIONS as the project's settings build them under `env`."""
    result = _python(
        "-c",
        "import config.settings as s; print(sorted(s.DATABASES['default']['OPTIONS'].items()))",
        env=env,
        unset=lambda name: name.startswith("DATABASE"),
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_postgresql_binds_parameters_on_the_server_and_keeps_repeated_plans() -> None:
    url = {"DATABASE_URL": "postgres://someone@db.example.com:5432/trialdesk"}
    options = _database_options(url)
    assert "('server_side_binding', True)" in options
    assert "('prepare_threshold', 2)" in options
    # Behind a transaction-pooling proxy (PgBouncer) both stay off, as Django leaves them.
    options = _database_options({**url, "DATABASE_PREPARE": "0"})
    assert "server_side_binding" not in options
    assert "prepare_threshold" not in options
    # SQLite has neither.
    assert "server_side_binding" not in _database_options({})


@pytest.mark.django_db
def test_a_repeated_query_runs_as_a_prepared_statement_on_postgresql() -> None:
    from django.db import connection

    from rewards.models import Trial

    if connection.vendor != "postgresql":
        assert "prepare_threshold" not in connection.settings_dict["OPTIONS"]
        return
    for _ in range(3):
        list(Trial.objects.filter(job_id=1).order_by("-id")[:5])
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert any('FROM "rewards_trial"' in sql and "$1" in sql for sql in prepared), prepared
