"""The task worker as a process of its own: the app enqueues and answers, the worker judges."""

from __future__ import annotations

import subprocess
import time

import pytest
from django.tasks import TaskResultStatus
from django.test import Client
from django_tasks_db.models import DBTaskResult

from rewards.models import GradingBatch, JudgeVerdict
from tests import review_factories as f
from tests.judge_server import FakeJudge, judge_server
from tests.task_worker import worker_process

__all__ = ["judge_server", "worker_process"]
pytestmark = pytest.mark.django_db(transaction=True)


def _wait_for(condition: object, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


def test_a_worker_process_judges_a_filter_after_the_request_has_answered(
    client: Client, judge_server: FakeJudge, worker_process: subprocess.Popen[str]
) -> None:
    trials = [
        f.make_trial(name=f"fail-{i}", judges=[f.judge("FAIL", failure_mode="x")]) for i in range(3)
    ]
    f.make_trial(name="pass-1", judges=[f.judge("PASS")])
    # The judge holds every answer until the gate opens: the request cannot have waited for one.
    judge_server.reply = ("gate", None)
    f.login(client, "admin", staff=True)
    response = client.post("/rejudge/?judge_verdict=FAIL")
    batch = GradingBatch.objects.get()
    assert (response.status_code, response["Location"]) == (302, f"/batches/{batch.pk}/")
    # The request enqueued the lister alone; the worker lists the three trials and enqueues
    # one runner per trial up to RUNNERS_PER_BATCH (4): three here, not one task per trial.
    assert DBTaskResult.objects.count() == 1
    assert JudgeVerdict.objects.count() == 4  # the ingested ones only
    # The worker has picked a task up and is waiting on the judge.
    assert _wait_for(lambda: len(judge_server.requests) >= 1)
    judge_server.gate.set()
    assert _wait_for(lambda: JudgeVerdict.objects.count() == 7), worker_process.poll()
    for trial in trials:
        assert list(trial.judge_verdicts.order_by("id").values_list("verdict", flat=True)) == [
            "FAIL",
            "FAIL",
        ]
    assert _wait_for(
        lambda: DBTaskResult.objects.filter(status=TaskResultStatus.SUCCESSFUL).count() == 4
    )
    assert worker_process.poll() is None  # still serving
