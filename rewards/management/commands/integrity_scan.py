"""`manage.py integrity_scan [--job NAME]`: run the reward-integrity detectors again over
stored trials (after a detector changed, or for trials stored before it existed).

Findings a person confirmed or dismissed are kept; the stored reward is never changed.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from rewards.integrity.store import rescan
from rewards.models import Job, Trial


class Command(BaseCommand):
    help = "Run the reward-integrity detectors over stored trials."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--job", help="Only this job's trials (its name).")

    def handle(self, *args: Any, **options: Any) -> None:
        trials = Trial.objects.order_by("id")
        if options["job"]:
            job = Job.objects.filter(name=options["job"]).first()
            if job is None:
                raise CommandError(f"No job named {options['job']!r}.")
            trials = trials.filter(job=job)
        report = rescan(trials.values_list("id", flat=True).iterator())
        self.stdout.write(
            f"Scanned {report.scanned} trials: {report.changed} changed, "
            f"{report.flagged} with findings."
        )
