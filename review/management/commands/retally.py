"""`manage.py retally`: recount every kept tally from the trials and annotations.

The application keeps them itself (agreement's tallies in the annotation's transaction, the
job tallies by database triggers); this is for data written around it, such as rows loaded
with raw SQL or COPY while the triggers were absent, or a restored dump.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.db import connection, transaction

from review.science import job_tallies, tallies


class Command(BaseCommand):
    help = "Recount the latest judgments, agreement's tallies and every job's tallies."

    def handle(self, *args: Any, **options: Any) -> None:
        with transaction.atomic():
            tallies.rebuild(connection)
            job_tallies.rebuild(connection)
        self.stdout.write("Recounted the latest judgments, agreement's and the jobs' tallies.")
