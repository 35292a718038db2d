"""Grading batches (issue 21): a re-judge of many trials as one work list that workers share.

A batch's items (one per trial) are its work list. Starting a batch inserts the items in one
statement and enqueues a few runner tasks (`rewards.scoring.tasks`: `fill_batch`,
`grade_batch`), not one task per trial, so enqueueing 10,000 trials is a handful of
statements. Each runner claims the batch's items, keeping up to the judge's concurrency of
them in flight (`TRIALDESK_JUDGE_CONCURRENCY`, default 8), until none is left.

Exactly once, with workers that may be killed at any moment:
- A runner claims a queued item with a fresh token. While the judge is asked, the runner
  refreshes the heartbeat of every item it has in flight, in one statement.
- The verdict row is linked one-to-one to its item (the database refuses a second) and stored
  in the transaction that marks the item done, and only while the claim is still the runner's.
  A runner killed before that commit stored nothing; one killed after it stored both.
- Before asking the judge, a runner looks for a verdict already linked to the item: a verdict
  stored is never asked for twice.

django-tasks-db leaves the task of a killed worker "running" and never runs it again. So
`manage.py grading_worker` (db_worker plus a recovery thread) periodically puts running items
whose heartbeat has been silent for a lease back in the queue (`requeue_expired`, which names
their dead runners, whose tasks are then marked failed) and enqueues a runner for each batch
with queued items that no live runner holds and no runner waits to start (`needing_runner`).
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from rewards import schemas
from rewards.models import GradingBatch, GradingItem, JudgeVerdict, Trial
from rewards.scoring.grading import judge_input_of, store_verdicts
from rewards.scoring.judge import (
    JudgeCalls,
    JudgeInput,
    JudgeNotConfigured,
    JudgeSettings,
    ask_judge,
)

log = logging.getLogger(__name__)

State = GradingItem.State
DEFAULT_LEASE_S = 60.0
# Runners enqueued per batch: how many workers can share one batch.
RUNNERS_PER_BATCH = 4
# How long one runner task lasts, in rounds of calls: it takes ROUNDS_PER_RUN times the judge's
# concurrency of trials, then hands on to a successor, so a worker stopped with SIGTERM soon
# finishes its task in hand, and batches queued together take turns.
ROUNDS_PER_RUN = 25
# How long an answer may wait to be stored with others (seconds): a round of answers costs
# a runner about as much to store as one answer, and the heartbeat keeps their items
# meanwhile (a runner killed before storing them leaves them to be asked again).
STORE_WITHIN_S = 0.25


def lease() -> timedelta:
    """How long a running item's heartbeat may be silent before another runner takes it over
    (`TRIALDESK_GRADING_LEASE_S`). Longer than a heartbeat's interval, far shorter than a judge
    call may last: the heartbeat, not the call, keeps the item."""
    try:
        seconds = float(os.environ.get("TRIALDESK_GRADING_LEASE_S", "") or DEFAULT_LEASE_S)
    except ValueError:
        seconds = DEFAULT_LEASE_S
    return timedelta(seconds=max(1.0, seconds))


def insert_items(batch_id: int, trial_ids: Iterable[int]) -> None:
    """One queued item per trial, in one statement whatever the number of trials.

    Written as SQL for speed: `bulk_create` prepares every field of every instance in Python
    (about 355 ms for 10,000 items on SQLite). Here the ids travel as one parameter, an array
    on PostgreSQL and a JSON list on SQLite (its `json_each` table), and the database makes
    the rows: a 10,000-trial filter is enqueued in about a tenth of a second."""
    ids = list(trial_ids)
    table = connection.ops.quote_name(GradingItem._meta.db_table)
    if connection.vendor == "postgresql":
        rows = "SELECT %s, unnest(%s::bigint[]), %s, '', '', 0"
        params: tuple[Any, ...] = (batch_id, ids, State.QUEUED)
    else:
        rows = "SELECT %s, value, %s, '', '', 0 FROM json_each(%s)"
        params = (batch_id, State.QUEUED, json.dumps(ids))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (batch_id, trial_id, state, reason, runner, attempts) {rows}",
            params,
        )


def cancel(batch: GradingBatch) -> int:
    """Cancel the batch's queued items (a running one finishes); returns how many."""
    now = timezone.now()
    with transaction.atomic():
        GradingBatch.objects.filter(pk=batch.pk, cancelled_at__isnull=True).update(cancelled_at=now)
        # A runner claiming an item holds its row lock (PostgreSQL) or the write lock (SQLite):
        # the item is either claimed first and runs, or cancelled first and never claimed.
        return batch.items.filter(state=State.QUEUED).update(state=State.CANCELLED, finished_at=now)


# --- a runner ----------------------------------------------------------------------------------
@dataclass
class _Job:
    """A claimed item with what the judge is to read about its trial."""

    item: GradingItem
    token: uuid.UUID
    data: JudgeInput


def run(
    batch_id: int,
    judge: JudgeSettings | None = None,
    *,
    rounds: int | None = None,
    runner: str = "",
) -> int:
    """Judge the batch's items until none is left to claim (or, with `rounds`, that many
    times the judge's concurrency of them); returns how many this runner (its task result
    id) took.

    Up to `TRIALDESK_JUDGE_CONCURRENCY` calls are in flight at once, on the event loop of
    `JudgeCalls` (one thread, one connection pool). Everything that touches the database
    happens here, in the runner's own thread and connection, between waits for answers:
    claiming, reading the claimed trials together, storing the answers in hand together
    (each verdict under its claim), and one heartbeat for every item in flight."""
    try:
        settings = judge or JudgeSettings.from_env()
    except JudgeNotConfigured as exc:
        return _fail_unjudged(batch_id, runner, f"the worker has no judge: {exc}", rounds)
    limit = None if rounds is None else rounds * settings.concurrency
    every = lease().total_seconds() / 3
    next_beat = time.monotonic() + every
    taken = 0
    claiming = True
    in_flight: dict[Future[schemas.JudgeVerdict], _Job] = {}
    # Answers are stored together, once half the calls in flight have answered or the first
    # has waited STORE_WITHIN_S (at once when no call is left in flight).
    answered: list[tuple[_Job, schemas.JudgeVerdict]] = []
    store_at = max(1, settings.concurrency // 2)
    store_by = 0.0
    with JudgeCalls(settings) as calls:
        while True:
            # The free slots' next calls go out before the answers in hand are stored: answers
            # arriving together would otherwise leave their slots idle while every one of them
            # is written.
            free = settings.concurrency - len(in_flight)
            wanted = free if limit is None else min(free, limit - taken)
            if claiming and wanted:
                claimed = claim(batch_id, runner, wanted)
                claiming = len(claimed) == wanted
                taken += len(claimed)
                for job in _prepare(claimed):
                    in_flight[calls.submit(job.data)] = job
            if answered and (
                not in_flight or len(answered) >= store_at or time.monotonic() >= store_by
            ):
                _store(answered)
                answered.clear()
            if not in_flight:
                return taken
            wake = min(next_beat, store_by) if answered else next_beat
            done, _ = wait(
                in_flight, timeout=max(0.0, wake - time.monotonic()), return_when=FIRST_COMPLETED
            )
            if done and not answered:
                store_by = time.monotonic() + STORE_WITHIN_S
            answered.extend((in_flight.pop(future), future.result()) for future in done)
            if time.monotonic() >= next_beat:
                _beat([*in_flight.values(), *(job for job, _ in answered)])
                next_beat = time.monotonic() + every


def claim_next(batch_id: int, runner: str = "") -> tuple[GradingItem, uuid.UUID] | None:
    """The next queued item of the batch, marked running under a fresh token."""
    claimed = claim(batch_id, runner, 1)
    return claimed[0] if claimed else None


def claim(batch_id: int, runner: str = "", count: int = 1) -> list[tuple[GradingItem, uuid.UUID]]:
    """Up to `count` queued items of the batch, marked running under a fresh token (one per
    claim: with its item's id, it names the claim), in one transaction: a runner fills its
    free slots at once."""
    now = timezone.now()
    token = uuid.uuid4()
    with transaction.atomic():
        # SKIP LOCKED: runners on PostgreSQL pass over each other's rows instead of queueing on
        # them; SQLite takes its write lock up front (IMMEDIATE), one claim at a time. A
        # cancelled batch has no queued item.
        items = list(
            GradingItem.objects.filter(batch_id=batch_id, state=State.QUEUED)
            .select_for_update(skip_locked=True)
            .order_by("id")[:count]
        )
        if not items:
            return []
        GradingItem.objects.filter(pk__in=[item.pk for item in items]).update(
            state=State.RUNNING,
            claim=token,
            runner=runner,
            heartbeat_at=now,
            started_at=now,
            attempts=F("attempts") + 1,
        )
    for item in items:
        item.state = State.RUNNING
        item.claim = token
        item.runner = runner
        item.heartbeat_at = item.started_at = now
        item.attempts += 1
    return [(item, token) for item in items]


def judge_item(item: GradingItem, token: uuid.UUID, judge: JudgeSettings | None) -> None:
    """Judge one claimed item here and now (one call, no other in flight)."""
    prepared = list(_prepare([(item, token)]))
    if not prepared:
        return
    job = prepared[0]
    try:
        settings = judge or JudgeSettings.from_env()
    except JudgeNotConfigured as exc:
        _finish(item, token, State.FAILED, f"the worker has no judge: {exc}")
        return
    _store([(job, ask_judge(job.data, settings))])


def _prepare(claimed: list[tuple[GradingItem, uuid.UUID]]) -> Iterator[_Job]:
    """The jobs of claimed items, their trials read together (`Trial.objects.for_judging`),
    leaving out the items there is nothing to ask the judge about: a verdict is already
    stored for it (the item is done), its trial is gone, or its input cannot be read (the
    item failed)."""
    items = [item for item, _ in claimed]
    answered = set(
        JudgeVerdict.objects.filter(batch_item__in=items)
        .order_by()
        .values_list("batch_item_id", flat=True)
    )
    for item, token in claimed:
        if item.pk in answered:
            _finish(item, token, State.DONE)  # stored under an earlier claim: not asked again
    asked = [(item, token) for item, token in claimed if item.pk not in answered]
    if not asked:
        return
    trials = Trial.objects.for_judging().in_bulk([item.trial_id for item, _ in asked])
    for item, token in asked:
        trial = trials.get(item.trial_id)
        if trial is None:
            continue  # deleted since, and its item with it
        try:
            data = judge_input_of(trial)
        except Exception as exc:
            log.exception("grading trial %s failed", item.trial_id)
            _finish(item, token, State.FAILED, f"grading failed ({type(exc).__name__}: {exc})")
            continue
        yield _Job(item, token, data)


def _store(answered: list[tuple[_Job, schemas.JudgeVerdict]]) -> None:
    """Store a round of answers in one transaction. Each item is finished, and its verdict
    stored, only while its claim is still this runner's: the items' rows stay locked until
    the verdicts are stored beside them. A judge that gave no usable answer still leaves its
    verdict (UNPARSEABLE, with the reason), and the item counts as failed with that reason."""
    if not answered:
        return
    with transaction.atomic():
        # SKIP LOCKED: on PostgreSQL an item another transaction holds is being put back in
        # the queue (its lease ran out), so its answer is not this runner's to store; waiting
        # on it while holding the round's other items could deadlock with that requeue.
        held = set(
            GradingItem.objects.select_for_update(skip_locked=True)
            .filter(
                pk__in=[job.item.pk for job, _ in answered],
                claim__in={job.token for job, _ in answered},
                state=State.RUNNING,
            )
            .order_by("pk")
            .values_list("pk", "claim")
        )
        # The rest lost their lease and were claimed again: that claim stores them.
        ours = [(job, record) for job, record in answered if (job.item.pk, job.token) in held]
        outcomes: dict[tuple[str, str], list[int]] = defaultdict(list)
        for job, record in ours:
            failed = record.verdict == JudgeVerdict.Outcome.UNPARSEABLE
            outcome = (State.FAILED, record.reasoning) if failed else (State.DONE, "")
            outcomes[outcome].append(job.item.pk)
        now = timezone.now()
        for (state, reason), pks in outcomes.items():
            GradingItem.objects.filter(pk__in=pks).update(
                state=state, reason=reason, claim=None, finished_at=now
            )
        store_verdicts([(job.item.trial_id, record, job.item) for job, record in ours])


def _fail_unjudged(batch_id: int, runner: str, reason: str, rounds: int | None) -> int:
    """Without a judge, each item claimed fails with the reason (one at a time)."""
    taken = 0
    while (rounds is None or taken < rounds) and (claimed := claim_next(batch_id, runner)):
        _finish(*claimed, State.FAILED, reason)
        taken += 1
    return taken


def _beat(jobs: Iterable[_Job]) -> None:
    """The heartbeat of every item in flight, in one statement: the lease then says whether
    the runner is alive, not how long a call may take. A claim token names its item."""
    tokens = [job.token for job in jobs]
    if tokens:
        GradingItem.objects.filter(claim__in=tokens, state=State.RUNNING).update(
            heartbeat_at=timezone.now()
        )


def _finish(item: GradingItem, token: uuid.UUID, state: str, reason: str = "") -> bool:
    """Finish the item if the claim is still this one; whether it was."""
    finished = GradingItem.objects.filter(pk=item.pk, claim=token, state=State.RUNNING).update(
        state=state, reason=reason, claim=None, finished_at=timezone.now()
    )
    return finished > 0


def has_queued(batch_id: int) -> bool:
    return GradingItem.objects.filter(batch_id=batch_id, state=State.QUEUED).exists()


# --- recovery ----------------------------------------------------------------------------------
def requeue_expired(now: datetime | None = None) -> set[str]:
    """Running items whose heartbeat has been silent for a lease go back to the queue (those of
    a cancelled batch end cancelled); returns the runners that held them, which are dead."""
    now = now or timezone.now()
    # The heartbeat is compared again by each UPDATE: an item beaten meanwhile stays running.
    expired = GradingItem.objects.filter(state=State.RUNNING, heartbeat_at__lt=now - lease())
    with transaction.atomic():
        runners = set(expired.exclude(runner="").values_list("runner", flat=True))
        expired.filter(batch__cancelled_at__isnull=False).update(
            state=State.CANCELLED, claim=None, finished_at=now
        )
        expired.update(state=State.QUEUED, claim=None)
    return runners


def needing_runner(now: datetime | None = None) -> list[GradingBatch]:
    """Batches with queued items and no live runner (a fresh heartbeat); the caller checks
    whether one of their runners still waits to start."""
    stale = (now or timezone.now()) - lease()
    items = GradingItem.objects.filter(batch=OuterRef("pk"))
    queued = items.filter(state=State.QUEUED)
    live = items.filter(state=State.RUNNING, heartbeat_at__gte=stale)
    return list(
        GradingBatch.objects.filter(Exists(queued)).exclude(Exists(live)).only("pk", "runner_ids")
    )
