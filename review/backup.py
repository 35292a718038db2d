"""Backup and restore of everything stored, with each database's own tools (issue 26).

What people make (annotations, adjudications, saved views, API tokens and their
revocations, judge verdicts asked from the app, grading batches, scenarios) cannot be made
again from artifacts; so a backup is the whole database, not an export of some tables: the
rows, the triggers that keep the tallies, and the tallies themselves, consistent with each
other as of one moment. Restored, the kept tallies equal a recount with nothing to redo.

- SQLite: the online backup API (`sqlite3.Connection.backup`): a consistent copy of a live
  database, page by page, while reviewers go on writing; the copy is checked
  (`PRAGMA quick_check`) before it takes the backup's name.
- PostgreSQL: `pg_dump --format=custom` (one snapshot of a live database) and
  `pg_restore --single-transaction` (a restore that fails leaves the database as it was).

Either way a backup is written to a temporary file beside PATH and renamed when complete,
so PATH never holds half a backup. A restore goes into an empty database unless told to
replace what is there, then migrates it (a backup from an older release is brought up to
date).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from django.core.management import call_command

# The table every Trialdesk database holds: what tells a backup from any other file.
_MIGRATIONS = "django_migrations"


class BackupError(Exception):
    """A backup or restore that cannot go ahead; the message says why and what to do."""


def backup(connection: Any, path: Path) -> None:
    """Write a backup of the database behind `connection` to `path` (a new file)."""
    if path.exists():
        raise BackupError(f"{path} already exists: back up to a new file")
    if not path.parent.is_dir():
        raise BackupError(f"{path.parent} is not a directory")
    with _temporary_beside(path) as partial:
        if connection.vendor == "sqlite":
            _sqlite_backup(str(connection.settings_dict["NAME"]), partial)
        elif connection.vendor == "postgresql":
            _run(
                _tool("pg_dump"),
                "--format=custom",
                "--no-owner",
                "--no-privileges",
                f"--file={partial}",
                settings=connection.settings_dict,
            )
        else:
            raise BackupError(f"no backup for the {connection.vendor} database")
        partial.rename(path)


def restore(connection: Any, path: Path, *, replace: bool = False) -> None:
    """Load the backup at `path` into the database behind `connection`, then migrate it.

    Refuses (and changes nothing) when `path` is not a backup for this database, or when the
    database already holds tables and `replace` is not given.
    """
    if not path.is_file():
        raise BackupError(f"{path} is not a file")
    if connection.vendor == "sqlite":
        _check_sqlite_backup(path)
    elif connection.vendor == "postgresql":
        _check_pg_archive(path)
    else:
        raise BackupError(f"no restore for the {connection.vendor} database")
    tables = connection.introspection.table_names()
    if tables and not replace:
        raise BackupError(
            f"the database {connection.settings_dict['NAME']} already holds {len(tables)}"
            " tables: restore into an empty database, or pass --replace to overwrite it"
        )
    # The restore writes through connections of its own.
    connection.close()
    if connection.vendor == "sqlite":
        _sqlite_restore(path, str(connection.settings_dict["NAME"]))
    else:
        clean = ["--clean", "--if-exists"] if tables else []
        _run(
            _tool("pg_restore"),
            "--no-owner",
            "--no-privileges",
            "--single-transaction",
            "--exit-on-error",
            *clean,
            f"--dbname={connection.settings_dict['NAME']}",
            str(path),
            settings=connection.settings_dict,
        )
    call_command("migrate", verbosity=0, interactive=False)


# --- SQLite ----------------------------------------------------------------------------------
def _sqlite_backup(source: str, target: Path) -> None:
    with closing(sqlite3.connect(source)) as live, closing(sqlite3.connect(target)) as copy:
        # One step (pages=-1): the copy is of one moment, whatever is written meanwhile.
        live.backup(copy)
    _check_sqlite_backup(target)


def _check_sqlite_backup(path: Path) -> None:
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            (verdict,) = db.execute("PRAGMA quick_check").fetchone()
            found = db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (_MIGRATIONS,)
            ).fetchone()
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{path} is not a SQLite backup ({exc})") from exc
    if verdict != "ok":
        raise BackupError(f"{path} is damaged: {verdict}")
    if not found:
        raise BackupError(f"{path} is a SQLite file but not a Trialdesk database")


def _sqlite_restore(path: Path, target: str) -> None:
    source = f"{path.resolve().as_uri()}?mode=ro"
    with (
        closing(sqlite3.connect(source, uri=True)) as backup,
        closing(sqlite3.connect(target)) as db,
    ):
        backup.backup(db)


# --- PostgreSQL ------------------------------------------------------------------------------
def _check_pg_archive(path: Path) -> None:
    listed = subprocess.run(  # noqa: S603 (our tool, its arguments a list, no shell)
        [_tool("pg_restore"), "--list", str(path)], capture_output=True, text=True, check=False
    )
    if listed.returncode != 0:
        raise BackupError(f"{path} is not a pg_dump archive (made by manage.py backup)")


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise BackupError(
            f"{name} is not installed: install the PostgreSQL client of the server's version"
            " (Debian: postgresql-client)"
        )
    return found


def _run(*command: str, settings: dict[str, Any]) -> None:
    """A PostgreSQL client tool, pointed at the database by the environment (the password
    never on a command line)."""
    env = {**os.environ, "PGDATABASE": str(settings["NAME"])}
    for variable, key in (("PGHOST", "HOST"), ("PGPORT", "PORT"), ("PGUSER", "USER")):
        if settings.get(key):
            env[variable] = str(settings[key])
    if settings.get("PASSWORD"):
        env["PGPASSWORD"] = str(settings["PASSWORD"])
    ran = subprocess.run(  # noqa: S603 (our tool, its arguments a list, no shell)
        list(command), env=env, capture_output=True, text=True, check=False
    )
    if ran.returncode != 0:
        tool = Path(command[0]).name
        raise BackupError(f"{tool} failed: {ran.stderr.strip() or ran.returncode}")


@contextmanager
def _temporary_beside(path: Path) -> Iterator[Path]:
    partial = path.with_name(f".{path.name}.partial")
    partial.unlink(missing_ok=True)
    try:
        yield partial
    finally:
        partial.unlink(missing_ok=True)
