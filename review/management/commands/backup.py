"""`manage.py backup PATH`: the whole database, consistent as of one moment, to a new file.

SQLite through its online backup API, PostgreSQL through `pg_dump --format=custom`; the
server may go on serving meanwhile. `manage.py restore PATH` loads it back (review.backup).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from review.backup import BackupError, backup


class Command(BaseCommand):
    help = (
        "Back up the whole database (every trial, annotation, adjudication, saved view, "
        "token, verdict, batch and scenario, with the kept tallies) to a new file."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="the backup file to write (must not exist)")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"])
        try:
            backup(connection, path)
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        if options["verbosity"] > 0:
            size = path.stat().st_size
            self.stdout.write(
                f"Backed up the {connection.vendor} database to {path} ({size:,} bytes)."
            )
