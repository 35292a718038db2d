"""`manage.py retally`: recount every kept tally from the trials and annotations.

Database triggers keep them (review migrations 0008 to 0011 and 0018) through every write; this is
for data loaded with the triggers absent, such as rows copied in while they were dropped.
`--check` changes nothing and fails when a kept tally differs from a recount (after a
restore: `manage.py backup` copies the tallies with the rows, so they must agree).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction

from review.science import recount


class Command(BaseCommand):
    help = "Recount the latest judgments, agreement's tallies and every job's tallies."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check",
            action="store_true",
            help="change nothing; fail if any kept tally differs from a recount",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["check"]:
            if drifted := recount.drifted(connection):
                raise CommandError(
                    "kept tallies differ from a recount in "
                    + ", ".join(drifted)
                    + ": run manage.py retally"
                )
            self.stdout.write("Every kept tally equals a recount.")
            return
        with transaction.atomic():
            recount.rebuild(connection)
        self.stdout.write("Recounted the latest judgments, agreement's and the jobs' tallies.")
