"""Backup and restore (issue 26): `manage.py backup` of a live database, `manage.py restore`
into a fresh one, and the restored database gives the same exports, byte for byte, the
same people-made rows, and kept tallies equal to a recount. On the database the suite runs
on: a new SQLite file, or a new PostgreSQL database made and dropped by the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from review import adjudication, tokens
from review.models import SavedView, add_annotation
from review.science import recount
from rewards.models import Trial
from rewards.scoring import scenarios, tasks
from rewards.scoring.grading import store_verdict
from tests import review_factories as f
from tests.conftest import purge_review_data

PROJECT = Path(__file__).resolve().parent.parent
EXPORTS = {"csv": "trials.csv", "jsonl": "trials.jsonl", "annotations": "annotations.csv"}
# An export without a sort comes in the database's order, which a restore may change.
ORDER = "sort=id"
# Everything people made, with the users who made it.
PEOPLE_MADE = (
    "auth.user",
    "review.reviewerprofile",
    "review.annotation",
    "review.adjudication",
    "review.savedview",
    "review.apitoken",
    "rewards.judgeverdict",
    "rewards.gradingbatch",
    "rewards.gradingitem",
    "rewards.scenario",
    "rewards.scenarioversion",
)


@pytest.fixture(autouse=True)
def _purged() -> Iterator[None]:
    """These tests commit annotations, which are append-only: emptied for the next test."""
    yield
    purge_review_data()


def make_people_made_data() -> None:
    rita = f.make_user("rita", "expert", discipline="electrical")
    sam = f.make_user("sam", "reviewer")
    eve = f.make_user("eve", "expert")
    admin = f.make_user("admin", staff=True)
    t1, t2, t3, _ = f.write(
        f.bundle(name="t1", reward=0.9),
        f.bundle(name="t2", reward=1 / 3, judges=[f.judge("FAIL", failure_mode="units")]),
        f.bundle(name="t3", reward=0.1, job="other", agent="beta"),
        f.bundle(name="t4", reward=0.7),
    )
    add_annotation(trial_id=t1.pk, reviewer=rita, judgment="pass", notes="<b>fine</b>")
    add_annotation(trial_id=t1.pk, reviewer=sam, judgment="fail", blind=True)
    add_annotation(trial_id=t2.pk, reviewer=sam, judgment="defer", categories=["units"])
    add_annotation(trial_id=t3.pk, reviewer=rita, judgment="fail")
    adjudication.adjudicate(trial_id=t1.pk, adjudicator=eve, verdict="pass", rationale="ok")
    SavedView.objects.create(name="failures", owner=rita, query_string="judge_verdict=FAIL")
    token, _ = tokens.create_token(admin, "ci")
    assert tokens.revoke_token(token.prefix) is not None
    tokens.create_token(admin, "pipeline")
    later = f.judge("PASS", judge_model="judge-9", scored_at=f.START + timedelta(days=2))
    store_verdict(Trial.objects.get(pk=t2.pk), later)
    scenarios.create_scenario("python-fix", [{"name": "tests", "type": "no_new_skips"}])
    tasks.start_batch([t1.pk, t3.pk], user=admin, query="job=1")


def environment(database: str) -> dict[str, str]:
    """The environment that points a `manage.py` process at `database` (a SQLite file, or a
    database on this test's PostgreSQL server)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SQLITE_PATH")}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    if connection.vendor == "sqlite":
        env["SQLITE_PATH"] = database
        return env
    db = connection.settings_dict
    user = quote(db["USER"] or "") + (f":{quote(db['PASSWORD'])}" if db["PASSWORD"] else "")
    env["DATABASE_URL"] = f"postgres://{user}@{db['HOST']}:{db['PORT'] or 5432}/{database}"
    return env


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def fresh_database(tmp_path: Path) -> Iterator[str]:
    """An empty database beside the test's: a new SQLite file, or a PostgreSQL database
    made for the test and dropped after it."""
    if connection.vendor == "sqlite":
        yield str(tmp_path / "restored.sqlite3")
        return
    if shutil.which("pg_dump") is None or shutil.which("pg_restore") is None:
        pytest.skip("pg_dump and pg_restore (the PostgreSQL client) are not installed")
    name = f"{connection.settings_dict['NAME']}_restore"
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.django_db(transaction=True)
def test_a_restored_backup_gives_the_same_exports_rows_and_tallies(
    tmp_path: Path, fresh_database: str
) -> None:
    make_people_made_data()
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir()
    after.mkdir()
    for name, file in EXPORTS.items():
        call_command(
            "export", format=name, filter=ORDER, output=str(before / file), no_progress=True
        )
    call_command("dumpdata", *PEOPLE_MADE, output=str(before / "people.json"), verbosity=0)
    backup = tmp_path / "trialdesk.backup"

    call_command("backup", str(backup), verbosity=0)

    env = environment(fresh_database)
    restored = manage(env, "restore", str(backup))
    assert restored.returncode == 0, restored.stderr
    assert "retally --check" in restored.stdout
    # The rest in one process on the restored database (each process start costs seconds).
    new = tmp_path / "new.jsonl"
    new.write_text(f.bundle(name="t9", job="other", reward=0.3).model_dump_json() + "\n")
    script = AFTER_RESTORE.format(
        after=str(after), new=str(new), exports=EXPORTS, people=PEOPLE_MADE, order=ORDER
    )
    ran = manage(env, "shell", "-c", script)
    assert ran.returncode == 0, ran.stderr
    for name, file in EXPORTS.items():
        assert (after / file).read_bytes() == (before / file).read_bytes(), name
    people = (after / "people.json").read_bytes()
    assert people == (before / "people.json").read_bytes()
    assert b'"revoked_at": null' in people
    assert b'"revoked_at": "20' in people
    # Kept tallies equal a recount as restored, and after the restored triggers counted a
    # new trial.
    assert "ingested 1," in ran.stdout + ran.stderr
    assert ran.stdout.count("Every kept tally equals a recount.") == 2, ran.stdout


AFTER_RESTORE = """
from pathlib import Path
from django.core.management import call_command
after = Path({after!r})
for name, file in {exports!r}.items():
    call_command("export", format=name, filter={order!r}, output=str(after / file),
                 no_progress=True)
call_command("dumpdata", *{people!r}, output=str(after / "people.json"), verbosity=0)
call_command("retally", "--check")
call_command("ingest", {new!r}, no_progress=True)
call_command("retally", "--check")
"""


@pytest.mark.django_db(transaction=True)
def test_retally_check_names_a_kept_tally_that_drifted() -> None:
    make_people_made_data()
    call_command("retally", "--check", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE review_jobtally SET reward_units = reward_units + 1")
    with pytest.raises(CommandError, match="review_jobtally"):
        call_command("retally", "--check")
    # The check changed nothing: the drift is still there for `retally` to mend.
    assert recount.drifted(connection) == ["review_jobtally"]
    call_command("retally", verbosity=0)
    assert recount.drifted(connection) == []


@pytest.mark.django_db(transaction=True)
def test_a_backup_never_overwrites_and_a_restore_never_lands_on_data(tmp_path: Path) -> None:
    (trial,) = f.write(f.bundle(name="t1"))
    taken = tmp_path / "taken.backup"
    taken.write_bytes(b"an earlier backup")
    with pytest.raises(CommandError, match="already exists"):
        call_command("backup", str(taken))
    assert taken.read_bytes() == b"an earlier backup"

    with pytest.raises(CommandError, match="not a"):
        call_command("restore", str(taken))
    with pytest.raises(CommandError, match="is not a file"):
        call_command("restore", str(tmp_path / "missing.backup"))

    good = tmp_path / "good.backup"
    call_command("backup", str(good), verbosity=0)
    assert not list(tmp_path.glob(".*partial"))
    # This database holds tables: restoring over it needs --replace.
    with pytest.raises(CommandError, match="--replace"):
        call_command("restore", str(good))
    assert Trial.objects.get().pk == trial.pk


@pytest.mark.django_db(transaction=True)
def test_restore_replace_brings_the_database_back_to_the_backups_moment(tmp_path: Path) -> None:
    make_people_made_data()
    backup = tmp_path / "trialdesk.backup"
    call_command("backup", str(backup), verbosity=0)
    kept = {model: recount.rows(model) for model in recount.KEPT}
    (later,) = f.write(f.bundle(name="after-the-backup", job="other", reward=0.2))
    SavedView.objects.filter(name="failures").delete()

    call_command("restore", str(backup), replace=True, verbosity=0)

    assert not Trial.objects.filter(pk=later.pk).exists()
    assert SavedView.objects.filter(name="failures").exists()
    assert {model: recount.rows(model) for model in recount.KEPT} == kept
    assert recount.drifted(connection) == []
