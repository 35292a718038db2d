"""`manage.py rejudge`: a grading batch of stored trials from the command line, watched."""

from __future__ import annotations

import io
import subprocess

import pytest
from django.core.management import CommandError, call_command

from rewards.models import GradingBatch, JudgeVerdict
from tests import review_factories as f
from tests.judge_server import FakeJudge, judge_server
from tests.task_worker import run_queued_tasks, worker_process

__all__ = ["judge_server", "worker_process"]
pytestmark = pytest.mark.django_db(transaction=True)


def rejudge(*args: str) -> str:
    out = io.StringIO()
    call_command("rejudge", *args, "--no-progress", "--interval=0.1", stdout=out)
    return out.getvalue()


def test_a_filter_is_queued_at_once_then_watched_to_its_end(judge_server: FakeJudge) -> None:
    failing = [
        f.make_trial(name=f"f-{i}", judges=[f.judge("FAIL", failure_mode="x")]) for i in range(2)
    ]
    f.make_trial(name="p", judges=[f.judge("PASS")])
    f.make_user("admin", staff=True)
    out = rejudge("--query", "?judge_verdict=FAIL", "--user", "admin")
    batch = GradingBatch.objects.get()
    assert f"Grading batch {batch.pk}: 2 trials queued" in out
    assert (batch.query, batch.created_by.username) == ("judge_verdict=FAIL", "admin")  # type: ignore[union-attr]
    assert judge_server.requests == []  # returned at once
    run_queued_tasks()
    assert f"Batch {batch.pk}: 2 judged, 0 failed, 0 cancelled." in rejudge(
        "--watch", str(batch.pk)
    )
    assert JudgeVerdict.objects.filter(batch_item__batch=batch).count() == len(failing)


def test_wait_follows_a_job_batch_until_the_worker_has_judged_it(
    judge_server: FakeJudge, worker_process: subprocess.Popen[str]
) -> None:
    trials = f.make_trials(3, job="nightly-42")
    f.make_trial(job="other")
    judge_server.reply = ("slow", 0.2)
    out = rejudge("--job", "nightly-42", "--wait")
    batch = GradingBatch.objects.get()
    assert f"Batch {batch.pk}: 3 judged, 0 failed, 0 cancelled." in out
    assert sorted(batch.items.values_list("trial_id", flat=True)) == sorted(t.pk for t in trials)
    assert set(batch.items.values_list("state", flat=True)) == {"done"}


def test_a_watched_batch_lists_its_failures(judge_server: FakeJudge) -> None:
    trial = f.make_trial()
    judge_server.answer("not json at all")
    rejudge("--trial", str(trial.pk))
    run_queued_tasks()
    out = rejudge("--watch", str(GradingBatch.objects.get().pk))
    assert "0 judged, 1 failed" in out
    assert f"  trial {trial.pk}: " in out


def test_what_cannot_be_rejudged_is_refused(
    judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    f.make_trial(job="nightly-42")
    for args, message in [
        (["--job", "nope"], "no job 'nope'"),
        (["--trial", "999999"], "no trial 999999"),
        (["--query", "reward_min=lots"], "the filter is not valid"),
        (["--query", "agent=nobody"], "the filter matches no trials"),
        (["--watch", "999999"], "no grading batch 999999"),
        (["--job", "nightly-42", "--user", "ghost"], "no user 'ghost'"),
    ]:
        with pytest.raises(CommandError, match=message):
            rejudge(*args)
    monkeypatch.delenv("TRIALDESK_JUDGE_BASE_URL")
    with pytest.raises(CommandError, match="the judge is not configured"):
        rejudge("--job", "nightly-42")
    assert not GradingBatch.objects.exists()
