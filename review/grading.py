"""Grading from the review app: which stored trials an explorer filter sends to the judge,
and how much of a batch the pages show (the batches themselves: rewards.scoring.batches).

"Grade these" in the explorer answers at once whatever the filter matches: the request only
creates the batch with its filter and enqueues `list_batch`, and a worker lists the filter's
trials into the batch's items (one INSERT) and enqueues its runners. The API and the commands
list the trials themselves, so that they answer with the count.

Listing is idempotent (the batch row is locked and its `listed_at` set in the transaction that
writes the items), so the worker's recovery (`recover_listing`) may enqueue it again for a
batch whose lister died, and a second lister finds the batch listed and ends.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.http import QueryDict
from django.tasks import TaskResultStatus, task
from django.tasks.exceptions import TaskResultDoesNotExist
from django.utils import timezone

from review.filtering.form import TrialFilterForm, filtered_trials
from rewards.models import GradingBatch, Job
from rewards.scoring.batches import lease
from rewards.scoring.tasks import fill_batch

# A filter re-judge asks the judge once per trial: beyond this many, narrow the filter.
# Listing stays quick at this size (the items in one INSERT, a few runners enqueued):
# about 0.1 s for 10,000 trials, on a worker.
MAX_FILTER_TRIALS = 10_000
# The batches page lists the newest this many; a batch page lists this many failures.
BATCHES_SHOWN = 50
FAILURES_SHOWN = 200


def filter_trial_ids(form: TrialFilterForm) -> list[int] | None:
    """The trials of a valid explorer filter, to re-judge; None beyond MAX_FILTER_TRIALS.
    The app, the API and `manage.py rejudge` all go by it."""
    ids = list(filtered_trials(form).values_list("pk", flat=True)[: MAX_FILTER_TRIALS + 1])
    return None if len(ids) > MAX_FILTER_TRIALS else ids


def job_query(job: str) -> QueryDict | None:
    """The explorer filter of every trial of a job given by its name (or its id); None when
    there is no such job. `manage.py grade --job`, `rejudge --job` and the API go by it."""
    found = Job.objects.filter(name=job).only("id").first()
    if found is None and job.isdigit():
        found = Job.objects.filter(pk=int(job)).only("id").first()
    if found is None:
        return None
    query = QueryDict(mutable=True)
    query["job"] = str(found.pk)
    return query


def too_many_message(what: str = "This filter") -> str:
    return f"{what} matches more than {MAX_FILTER_TRIALS} trials: narrow it to grade."


def start_filter_batch(form: TrialFilterForm, user: User | None) -> GradingBatch:
    """A batch of a valid explorer filter's trials, listed by a worker: answers at once."""
    with transaction.atomic():
        batch = GradingBatch.objects.create(
            query=form.canonical_query().urlencode(), created_by=user
        )
        _enqueue_lister(batch)
    return batch


@task
def list_batch(batch_id: int) -> int:
    """List a filter batch's trials into its items and start its runners (once: a batch
    already listed is left as it is); returns how many trials it lists."""
    with transaction.atomic():
        batch = (
            GradingBatch.objects.select_for_update()
            .filter(pk=batch_id, listed_at__isnull=True)
            .first()
        )
        if batch is None or batch.problem:
            return 0  # listed by an earlier lister, or deleted
        if batch.cancelled_at is not None:
            batch.listed_at = timezone.now()
            batch.save(update_fields=["listed_at"])
            return 0
        form = TrialFilterForm(QueryDict(batch.query))
        ids = filter_trial_ids(form) if form.is_valid() else []
        if not ids:
            batch.problem = (
                "This filter matches no trials: nothing to grade."
                if ids is not None
                else too_many_message()
            )
            batch.listed_at = timezone.now()
            batch.save(update_fields=["problem", "listed_at"])
            return 0
        fill_batch(batch, ids)
        return len(ids)


def recover_listing() -> list[int]:
    """Enqueue a lister again for each filter batch unlisted for longer than a lease whose
    lister neither waits nor is still at it (its worker died); returns the batches' ids."""
    stale = GradingBatch.objects.filter(
        listed_at__isnull=True,
        problem="",
        cancelled_at__isnull=True,
        created_at__lt=timezone.now() - lease(),
    ).only("pk", "lister_id")
    recovered = []
    for batch in stale:
        if _lister_waiting(batch):
            continue
        with transaction.atomic():
            _enqueue_lister(batch)
        recovered.append(batch.pk)
    return recovered


def _enqueue_lister(batch: GradingBatch) -> None:
    batch.lister_id = list_batch.enqueue(batch.pk).id
    batch.save(update_fields=["lister_id"])


def _lister_waiting(batch: GradingBatch) -> bool:
    if not batch.lister_id:
        return False
    try:
        status = list_batch.get_result(batch.lister_id).status
    except TaskResultDoesNotExist:
        return False
    # Listing takes well under a lease: one still running after a lease is a dead worker's.
    return status == TaskResultStatus.READY
