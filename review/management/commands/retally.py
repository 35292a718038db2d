"""`manage.py retally`: recount every kept tally from the trials and annotations.

Database triggers keep them (review migrations 0008 and 0009) through every write; this is
for data loaded with the triggers absent, such as a restored dump or rows copied in while
they were dropped.
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
