"""`manage.py restore PATH [--replace]`: load a backup made by `manage.py backup`.

Into an empty database (a new SQLite file, a database made with `createdb`), or over the
current one with `--replace`; then migrated. Stop the server and the workers first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from review.backup import BackupError, restore


class Command(BaseCommand):
    help = "Restore a backup made by manage.py backup into this database, then migrate it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="the backup file")
        parser.add_argument(
            "--replace",
            action="store_true",
            help="overwrite a database that already holds tables (everything in it is lost)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"])
        try:
            restore(connection, path, replace=options["replace"])
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        if options["verbosity"] > 0:
            self.stdout.write(
                f"Restored {path} into the {connection.vendor} database"
                f" {connection.settings_dict['NAME']}; check it with: manage.py retally --check"
            )
