"""Background work for re-judging, on Django's tasks framework (`django.tasks`).

A re-judge is a grading batch (`rewards.scoring.batches`): its items are the work list, and a
few `grade_batch` runners per batch share it, so any number of workers can share a large
re-judge and a failure stays with its trial. The queue is the database (`TASKS`:
django-tasks-db); `manage.py grading_worker` runs its tasks and recovers the batches of dead
workers, as many workers as a deployment starts (DESIGN §8).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.contrib.auth.models import User
from django.db import transaction
from django.tasks import TaskContext, TaskResultStatus, task
from django.tasks.exceptions import TaskResultDoesNotExist
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from rewards.models import GradingBatch, Trial
from rewards.scoring import batches
from rewards.scoring.grading import rejudge
from rewards.scoring.judge import JudgeSettings

log = logging.getLogger(__name__)


@task
def rejudge_trial(trial_id: int) -> str:
    """Ask the judge again about one trial; returns the new verdict ('' if the trial is gone).

    Kept for tasks enqueued before batches; re-judges are now `grade_batch` runs."""
    settings = JudgeSettings.from_env()
    trial = Trial.objects.select_related("task").filter(pk=trial_id).first()
    if trial is None:
        return ""
    return rejudge(trial, settings).verdict


@task(takes_context=True)
def grade_batch(context: TaskContext[[int], int], batch_id: int) -> int:
    """One runner of a batch: judges up to ROUNDS_PER_RUN rounds of its items (that many times
    the judge's concurrency), then enqueues its successor while items are queued; returns how
    many it took."""
    runner = str(context.task_result.id)
    taken = batches.run(batch_id, rounds=batches.ROUNDS_PER_RUN, runner=runner)
    if taken and batches.has_queued(batch_id):
        with transaction.atomic():
            # The row lock: runners of one batch hand on at once, and none loses another's id.
            batch = (
                GradingBatch.objects.select_for_update().only("pk", "runner_ids").get(pk=batch_id)
            )
            _enqueue_runner(batch)
            batch.save(update_fields=["runner_ids"])
    return taken


def start_batch(
    trial_ids: Iterable[int],
    *,
    user: User | None = None,
    query: str = "",
    trial: Trial | None = None,
) -> GradingBatch:
    """A batch of these trials, queued for the workers; answers without judging anything.

    Items and runners are written in one transaction: a worker sees the runners only once the
    items they claim exist, and a failed enqueue leaves no batch behind."""
    with transaction.atomic():
        batch = GradingBatch.objects.create(trial=trial, query=query, created_by=user)
        fill_batch(batch, trial_ids)
    return batch


def fill_batch(batch: GradingBatch, trial_ids: Iterable[int]) -> None:
    """Write the batch's items and enqueue its runners, inside the caller's transaction."""
    ids = list(trial_ids)
    batches.insert_items(batch.pk, ids)
    for _ in range(min(len(ids), batches.RUNNERS_PER_BATCH)):
        _enqueue_runner(batch)
    batch.listed_at = timezone.now()
    batch.save(update_fields=["runner_ids", "listed_at"])


def _enqueue_runner(batch: GradingBatch) -> None:
    result = grade_batch.enqueue(batch.pk)
    batch.runner_ids = [*batch.runner_ids, result.id]


def _runner_waiting(batch: GradingBatch) -> bool:
    for result_id in batch.runner_ids:
        try:
            if grade_batch.get_result(result_id).status == TaskResultStatus.READY:
                return True
        except TaskResultDoesNotExist:
            continue  # pruned
    return False


class WorkerLost(Exception):
    """The worker running this task stopped (killed, or its machine lost) mid-task."""


def recover() -> list[int]:
    """Put the items of dead runners back in the queue and mark the runners' tasks failed,
    then enqueue a runner for each batch with queued items that no runner holds or waits to
    start; returns the batches' ids."""
    dead = batches.requeue_expired()
    lost = WorkerLost("its grading item's heartbeat stopped: the worker died mid-task")
    # Marked through the backend's own result row: the task API has no call for a task whose
    # worker is gone, and django-tasks-db would otherwise show it running for ever.
    for result in DBTaskResult.objects.filter(id__in=dead, status=TaskResultStatus.RUNNING):
        result.set_failed(lost)
    recovered = []
    for batch in batches.needing_runner():
        if _runner_waiting(batch):
            continue
        with transaction.atomic():
            batch = (
                GradingBatch.objects.select_for_update().only("pk", "runner_ids").get(pk=batch.pk)
            )
            _enqueue_runner(batch)
            batch.save(update_fields=["runner_ids"])
        log.info("grading batch %s: a runner enqueued to resume it", batch.pk)
        recovered.append(batch.pk)
    return recovered
