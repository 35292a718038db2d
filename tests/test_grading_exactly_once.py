"""Exactly once (issue 21, item 5): a worker killed mid-batch loses nothing and duplicates nothing.

The workers here are real `manage.py grading_worker` processes on the test database; the
judge is `tests/judge_server.py`, answering slowly so that a kill lands mid-batch.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Iterator

import pytest
from django.db.models import Count
from django.tasks import TaskResultStatus
from django.test import Client
from django_tasks_db.models import DBTaskResult

from rewards.models import GradingItem, JudgeVerdict
from rewards.scoring import batches, tasks
from tests import review_factories as f
from tests.judge_server import FakeJudge, judge_server
from tests.task_worker import run_queued_tasks, start_worker, stop_worker

__all__ = ["judge_server"]
pytestmark = pytest.mark.django_db(transaction=True)

State = GradingItem.State


def _wait_for(condition: Callable[[], bool], seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def workers() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    try:
        yield started
    finally:
        for process in started:
            if process.poll() is None:
                stop_worker(process)


def test_a_worker_killed_mid_batch_leaves_exactly_one_new_verdict_per_trial(
    client: Client,
    judge_server: FakeJudge,
    workers: list[subprocess.Popen[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trials = [
        f.make_trial(name=f"fail-{i}", judges=[f.judge("FAIL", failure_mode="x")]) for i in range(6)
    ]
    # One runner for the batch: once it is killed, only recovery can resume the batch.
    monkeypatch.setattr(batches, "RUNNERS_PER_BATCH", 1)
    judge_server.reply = ("slow", 0.6)
    # Started here, listed here: the workers' processes see RUNNERS_PER_BATCH unpatched.
    batch = tasks.start_batch([t.pk for t in trials])
    # Two judge calls in flight at once: the kill lands on more than one claimed item.
    lease = {"TRIALDESK_GRADING_LEASE_S": "2", "TRIALDESK_JUDGE_CONCURRENCY": "2"}

    first = start_worker(**lease)
    workers.append(first)
    items = GradingItem.objects.filter(batch=batch)
    # Mid-batch: two trials judged, a third being judged (its request is at the judge).
    assert _wait_for(
        lambda: (
            items.filter(state=State.DONE).count() >= 2
            and items.filter(state=State.RUNNING).exists()
        )
    )
    first.send_signal(signal.SIGKILL)
    first.wait()
    killed = set(items.filter(state=State.RUNNING).values_list("pk", flat=True))
    assert 1 <= len(killed) <= 2  # what the runner had in flight
    done_before = items.filter(state=State.DONE).count()
    assert done_before < len(trials)

    second = start_worker(**lease)
    workers.append(second)
    assert _wait_for(lambda: not items.filter(state__in=[State.QUEUED, State.RUNNING]).exists())
    assert second.poll() is None

    assert sorted(items.values_list("state", flat=True)) == ["done"] * len(trials)
    # Each trial: its ingested verdict and exactly one new one, linked to its item.
    per_trial = dict(
        JudgeVerdict.objects.values_list("trial_id").annotate(n=Count("id")).order_by()
    )
    assert per_trial == {t.pk: 2 for t in trials}
    assert JudgeVerdict.objects.filter(batch_item__batch=batch).count() == len(trials)
    # The items the dead worker held were claimed again (their lease expired), not left
    # running, and the dead worker's task is marked failed rather than running for ever.
    assert list(items.filter(pk__in=killed).values_list("attempts", flat=True)) == [2] * len(killed)
    assert set(items.exclude(pk__in=killed).values_list("attempts", flat=True)) == {1}
    # The live runner's own task returns just after its last item is done: waited for.
    assert _wait_for(
        lambda: not DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING).exists()
    )
    assert DBTaskResult.objects.filter(status=TaskResultStatus.FAILED).count() == 1


def test_runners_hand_on_after_a_few_trials_and_every_trial_is_judged_once(
    judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    trials = f.make_trials(7)
    # A runner takes one round of its two calls in flight, then hands on.
    monkeypatch.setattr(batches, "ROUNDS_PER_RUN", 1)
    monkeypatch.setenv("TRIALDESK_JUDGE_CONCURRENCY", "2")
    batch = tasks.start_batch([t.pk for t in trials])
    assert len(batch.runner_ids) == batches.RUNNERS_PER_BATCH
    run_queued_tasks()
    batch.refresh_from_db()
    # Four runners took two trials each at most, then handed on to successors while trials
    # were queued: every task is short, so a worker stopped with SIGTERM soon stops.
    assert len(batch.runner_ids) > batches.RUNNERS_PER_BATCH
    results = DBTaskResult.objects.filter(status=TaskResultStatus.SUCCESSFUL)
    assert results.count() == len(batch.runner_ids)
    assert max(r.return_value for r in results) == 2
    assert set(batch.items.values_list("state", flat=True)) == {"done"}
    assert JudgeVerdict.objects.filter(batch_item__batch=batch).count() == len(trials)
    assert len(judge_server.requests) == len(trials)


def test_a_judge_call_longer_than_the_lease_is_kept_by_its_heartbeat(
    judge_server: FakeJudge, workers: list[subprocess.Popen[str]]
) -> None:
    trials = f.make_trials(3)
    batch = tasks.start_batch([t.pk for t in trials])
    # Each answer takes 2.5 lease periods; two workers, each of which would take over an item
    # whose heartbeat went silent (and both look for batches to recover every 0.5 s). The
    # first runner has every item in flight at once: one heartbeat keeps them all.
    judge_server.reply = ("slow", 2.5)
    workers.extend(start_worker(TRIALDESK_GRADING_LEASE_S="1") for _ in range(2))
    items = GradingItem.objects.filter(batch=batch)
    assert _wait_for(lambda: items.filter(state=State.DONE).count() == 3)
    assert len(judge_server.requests) == 3
    assert set(items.values_list("attempts", flat=True)) == {1}
    assert JudgeVerdict.objects.filter(batch_item__batch=batch).count() == 3
