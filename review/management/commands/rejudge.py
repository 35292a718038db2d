"""`manage.py rejudge`: re-judge stored trials as a grading batch, and watch it.

    manage.py rejudge --job nightly-42              # every trial of a job
    manage.py rejudge --query "judge_verdict=FAIL"  # an explorer filter (its query string)
    manage.py rejudge --trial 17 --wait             # one trial, and wait for its verdict
    manage.py rejudge --watch 12                    # the progress of batch 12

The batch is judged by the task workers (`manage.py grading_worker`), exactly as one started
from the app: the command enqueues and returns at once, or with `--wait` shows a progress bar
until every trial is judged (Ctrl-C stops watching, not the batch). The filter is the
explorer's, so it lives here with the review app rather than in `rewards`.
"""

from __future__ import annotations

import sys
import time
from argparse import ArgumentParser
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError
from django.http import QueryDict
from tqdm import tqdm

from review.filtering.form import TrialFilterForm, filter_errors
from review.grading import MAX_FILTER_TRIALS, filter_trial_ids, job_query
from rewards.models import GradingBatch, GradingItem, Trial
from rewards.scoring import judge
from rewards.scoring.tasks import start_batch

# Failures listed at the end of a watched batch.
FAILURES_LISTED = 20


class Command(BaseCommand):
    help = "Re-judge stored trials (a job, an explorer filter or one trial) as a grading batch."

    def add_arguments(self, parser: ArgumentParser) -> None:
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--job", help="every trial of this job (its name or id)")
        what.add_argument(
            "--query", help='an explorer filter, as its query string ("judge_verdict=FAIL")'
        )
        what.add_argument("--trial", type=int, help="one trial, by id")
        what.add_argument("--watch", type=int, metavar="BATCH", help="watch a batch started before")
        parser.add_argument(
            "--wait", action="store_true", help="show a progress bar until the batch is judged"
        )
        parser.add_argument(
            "--user", help="record this user as the one who asked (default: nobody)"
        )
        parser.add_argument(
            "--interval", type=float, default=1.0, help="seconds between two looks (--wait)"
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["watch"] is not None:
            batch = GradingBatch.objects.filter(pk=options["watch"]).first()
            if batch is None:
                raise CommandError(f"no grading batch {options['watch']}")
            self._watch(batch, options)
            return
        if not judge.is_configured():
            raise CommandError(
                "the judge is not configured: set TRIALDESK_JUDGE_BASE_URL and "
                "TRIALDESK_JUDGE_MODEL"
            )
        batch = self._start(options)
        size = batch.items.count()
        self.stdout.write(
            f"Grading batch {batch.pk}: {size} trials queued for the workers "
            f"(manage.py grading_worker); watch it with `manage.py rejudge --watch {batch.pk}`."
        )
        if options["wait"]:
            self._watch(batch, options)

    def _start(self, options: dict[str, Any]) -> GradingBatch:
        user = None
        if options["user"]:
            user = User.objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"no user {options['user']!r}")
        if options["trial"] is not None:
            trial = Trial.objects.filter(pk=options["trial"]).only("id").first()
            if trial is None:
                raise CommandError(f"no trial {options['trial']}")
            return start_batch([trial.pk], user=user, trial=trial)
        if options["job"] is not None:
            query = job_query(options["job"])
            if query is None:
                raise CommandError(f"no job {options['job']!r}")
        else:
            query = QueryDict(options["query"].lstrip("?"))
        form = TrialFilterForm(query)
        if errors := filter_errors(form):
            raise CommandError("the filter is not valid: " + "; ".join(errors))
        ids = filter_trial_ids(form)
        if ids is None:
            raise CommandError(f"the filter matches more than {MAX_FILTER_TRIALS} trials")
        if not ids:
            raise CommandError("the filter matches no trials")
        return start_batch(ids, user=user, query=form.canonical_query().urlencode())

    def _watch(self, batch: GradingBatch, options: dict[str, Any]) -> None:
        counts = _counts(batch)
        progress = tqdm(
            total=counts["total"],
            desc=f"batch {batch.pk}",
            unit=" trials",
            file=sys.stderr,
            disable=options["no_progress"],
            dynamic_ncols=True,
        )
        try:
            with progress:
                while True:
                    finished = counts["done"] + counts["failed"] + counts["cancelled"]
                    progress.update(finished - progress.n)
                    progress.set_postfix(
                        running=counts["running"], failed=counts["failed"], refresh=False
                    )
                    if not (counts["queued"] or counts["running"]):
                        break
                    time.sleep(max(0.05, options["interval"]))
                    counts = _counts(batch)
        except KeyboardInterrupt:
            self.stdout.write(f"Stopped watching; batch {batch.pk} goes on.")
            return
        self.stdout.write(
            f"Batch {batch.pk}: {counts['done']} judged, {counts['failed']} failed, "
            f"{counts['cancelled']} cancelled."
        )
        failures = batch.items.filter(state=GradingItem.State.FAILED).order_by("id")
        for item in failures[:FAILURES_LISTED]:
            self.stdout.write(f"  trial {item.trial_id}: {item.reason}")


def _counts(batch: GradingBatch) -> dict[str, int]:
    row = GradingBatch.objects.with_counts().filter(pk=batch.pk)
    names = ["total", *(state.value for state in GradingItem.State)]
    values = row.values_list(*names).get()
    return dict(zip(names, values, strict=True))
