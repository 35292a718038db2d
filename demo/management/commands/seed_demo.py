"""`manage.py seed_demo`: realistic, varied, deterministic demo trials.

    seed_demo [--trials N] [--seed S] [--jobs J] [--if-empty] [--fast | --writer]
    seed_demo --harbor DIR [--trials N] [--seed S] [--jobs J]

Up to 5,000 trials go through the ingest writer (every bundle validated, the seed's rules
applied); more take the fast path (rows built from the same generator and inserted in bulk,
COPY on PostgreSQL). `--harbor DIR` writes Harbor job folders instead of touching the database.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from demo.harbor import write_harbor
from demo.loaders import FAST_THRESHOLD, seed_fast, seed_with_writer
from demo.plan import MIN_JOBS, TRIALS_PER_JOB, DemoError, DemoPlan, SeedReport
from rewards.models import Trial


class Command(BaseCommand):
    help = "Create demo jobs, tasks and trials (or Harbor job folders with --harbor)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--trials", type=int, default=300, help="how many trials (300)")
        parser.add_argument("--seed", type=int, default=1, help="same seed, same data (1)")
        parser.add_argument(
            "--jobs",
            type=int,
            default=None,
            help=f"how many jobs (default: one per {TRIALS_PER_JOB:,} trials, at least {MIN_JOBS})",
        )
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="do nothing when the database already holds trials (for `make run`)",
        )
        parser.add_argument(
            "--harbor",
            type=Path,
            metavar="DIR",
            help="write Harbor job folders under DIR instead of the database",
        )
        path = parser.add_mutually_exclusive_group()
        path.add_argument(
            "--fast",
            action="store_true",
            help="insert rows directly (COPY on PostgreSQL) whatever the size",
        )
        path.add_argument(
            "--writer",
            action="store_true",
            help="store every trial through the ingest writer whatever the size",
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.perf_counter()
        harbor: Path | None = options["harbor"]
        if harbor is None and options["if_empty"]:
            existing = Trial.objects.count()
            if existing:
                self.stdout.write(
                    f"--if-empty: the database already holds {existing:,} trials; "
                    "no demo data added."
                )
                return
        try:
            plan = DemoPlan(seed=options["seed"], trials=options["trials"], jobs=options["jobs"])
        except DemoError as exc:
            raise CommandError(str(exc)) from exc

        bar = tqdm(
            total=plan.trials,
            unit="trial",
            file=sys.stderr,
            disable=options["no_progress"] or options["verbosity"] == 0,
            dynamic_ncols=True,
        )
        try:
            report = self._run(plan, harbor, options, bar.update)
        except DemoError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            bar.close()

        elapsed = time.perf_counter() - started
        rate = report.trials / elapsed if elapsed else 0.0
        where = f" under {harbor}" if harbor else ""
        summary = (
            f"seed_demo ({report.path}, seed {plan.seed}){where}: {report.jobs} jobs, "
            f"{report.tasks} tasks, {report.trials:,} trials created in {elapsed:.1f}s "
            f"({rate:,.0f} trials/s)"
        )
        if report.unchanged:
            summary += f"; {report.unchanged:,} already there, unchanged"
        if report.updated:
            summary += f"; {report.updated:,} already there, updated"
        self.stdout.write(self.style.SUCCESS(summary))
        for line in report.invalid[:20]:
            self.stderr.write(f"invalid: {line}")
        if report.invalid:
            raise CommandError(f"{len(report.invalid)} demo trials were refused by the writer")

    @staticmethod
    def _run(
        plan: DemoPlan, harbor: Path | None, options: dict[str, Any], progress: Any
    ) -> SeedReport:
        if harbor is not None:
            return write_harbor(plan, harbor, progress=progress)
        fast = options["fast"] or (not options["writer"] and plan.trials > FAST_THRESHOLD)
        if fast:
            return seed_fast(plan, progress=progress)
        return seed_with_writer(plan, progress=progress)
