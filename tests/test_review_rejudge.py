"""Re-judging from the app: staff only, POST with CSRF; the new verdict is added, none lost."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from review import grading
from rewards.models import GradingBatch, JudgeVerdict, Trial
from tests import review_factories as f
from tests.judge_server import GOOD_ANSWER, FakeJudge, judge_server
from tests.task_worker import run_queued_tasks

__all__ = ["judge_server"]
# Committed rows: the worker command closes and reopens its connection between tasks.
pytestmark = pytest.mark.django_db(transaction=True)


def verdicts(trial: Trial) -> list[str]:
    return list(
        JudgeVerdict.objects.filter(trial=trial).order_by("id").values_list("verdict", flat=True)
    )


def test_staff_rejudge_a_trial_and_the_old_verdict_is_kept(
    client: Client, judge_server: FakeJudge
) -> None:
    trial = f.make_trial(judges=[f.judge("PASS")])
    f.login(client, "admin", staff=True)
    response = client.post(f"/trials/{trial.pk}/rejudge/", follow=True)
    # The re-judge is a batch of one, and its page is where staff watch it.
    batch = GradingBatch.objects.get()
    assert response.redirect_chain == [(f"/batches/{batch.pk}/", 302)]
    assert "Re-judge queued" in response.content.decode()
    assert (batch.trial_id, batch.query, batch.created_by.username) == (trial.pk, "", "admin")  # type: ignore[union-attr]
    # The request only enqueued: nothing is asked until a worker runs the task.
    assert verdicts(trial) == ["PASS"]
    assert judge_server.requests == []
    run_queued_tasks()
    assert verdicts(trial) == ["PASS", "FAIL"]
    item = batch.items.get()
    assert (item.state, item.verdict.verdict) == ("done", "FAIL")
    trial.refresh_from_db()
    assert (trial.judge_verdict, trial.failure_mode) == ("FAIL", "tests edited")
    # What the judge read came from the stored trial.
    assert "Task" in judge_server.requests[0]["messages"][1]["content"]


def test_a_judge_failure_is_added_as_unparseable(client: Client, judge_server: FakeJudge) -> None:
    trial = f.make_trial(judges=[f.judge("PASS")])
    judge_server.answer("not json at all")
    f.login(client, "admin", staff=True)
    client.post(f"/trials/{trial.pk}/rejudge/")
    run_queued_tasks()
    assert verdicts(trial) == ["PASS", "UNPARSEABLE"]
    latest = JudgeVerdict.objects.filter(trial=trial).latest("id")
    assert latest.raw_response == "not json at all"


def test_without_a_configured_judge_nothing_changes(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRIALDESK_JUDGE_BASE_URL", raising=False)
    trial = f.make_trial(judges=[f.judge("PASS")])
    f.login(client, "admin", staff=True)
    response = client.post(f"/trials/{trial.pk}/rejudge/", follow=True)
    assert "The judge is not configured" in response.content.decode()
    run_queued_tasks()
    assert verdicts(trial) == ["PASS"]


@pytest.mark.parametrize("roles", [("reviewer",), ("expert",), ("analyst",)])
def test_only_staff_may_rejudge(
    client: Client, judge_server: FakeJudge, roles: tuple[str, ...]
) -> None:
    trial = f.make_trial(judges=[f.judge("PASS")])
    f.login(client, "someone", *roles)
    assert client.post(f"/trials/{trial.pk}/rejudge/").status_code == 403
    assert client.post("/rejudge/").status_code == 403
    assert "Re-judge" not in client.get(f"/trials/{trial.pk}/").content.decode()
    assert "Grade these" not in client.get("/").content.decode()
    assert judge_server.requests == []


def test_anonymous_wrong_method_and_missing_csrf_are_refused(judge_server: FakeJudge) -> None:
    trial = f.make_trial()
    anonymous = Client().post(f"/trials/{trial.pk}/rejudge/")
    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith("/accounts/login/")
    client = Client(enforce_csrf_checks=True)
    f.login(client, "admin", staff=True)
    assert client.get(f"/trials/{trial.pk}/rejudge/").status_code == 405
    assert client.get("/rejudge/").status_code == 405
    assert client.post(f"/trials/{trial.pk}/rejudge/").status_code == 403
    assert client.post("/rejudge/").status_code == 403
    assert judge_server.requests == []


def test_staff_see_the_buttons(client: Client) -> None:
    trial = f.make_trial()
    f.login(client, "admin", staff=True)
    page = client.get(f"/trials/{trial.pk}/").content.decode()
    assert f'action="/trials/{trial.pk}/rejudge/"' in page
    explorer = client.get("/?judge_verdict=FAIL").content.decode()
    assert 'action="/rejudge/?judge_verdict=FAIL"' in explorer
    assert ">Grade these</button>" in explorer


def test_rejudging_a_filter_rejudges_its_trials_only(
    client: Client, judge_server: FakeJudge
) -> None:
    failing = [
        f.make_trial(name=f"fail-{i}", judges=[f.judge("FAIL", failure_mode="x")]) for i in range(3)
    ]
    passing = f.make_trial(name="pass-1", judges=[f.judge("PASS")])
    judge_server.answer({**GOOD_ANSWER, "verdict": "PASS", "failure_mode": None})
    f.login(client, "admin", staff=True)
    response = client.post("/rejudge/?judge_verdict=FAIL", follow=True)
    batch = GradingBatch.objects.get()
    assert response.redirect_chain == [(f"/batches/{batch.pk}/", 302)]
    page = response.content.decode()
    assert "Grading queued: a worker lists the filter&#x27;s trials" in page
    # The request only asked: a worker lists the trials, then judges them.
    assert "A worker is listing the filter's trials" in page
    assert 'hx-trigger="every 2s"' in page
    assert batch.query == "judge_verdict=FAIL"
    assert batch.listing
    assert not batch.items.exists()
    assert judge_server.requests == []
    run_queued_tasks()
    batch.refresh_from_db()
    assert not batch.listing
    assert batch.problem == ""
    assert sorted(batch.items.values_list("trial_id", flat=True)) == [t.pk for t in failing]
    for trial in failing:
        assert verdicts(trial) == ["FAIL", "PASS"]
    assert verdicts(passing) == ["PASS"]
    assert len(judge_server.requests) == 3


def test_a_filter_too_large_or_invalid_is_refused(
    client: Client, judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grading, "MAX_FILTER_TRIALS", 2)
    for i in range(3):
        f.make_trial(name=f"t-{i}")
    f.login(client, "admin", staff=True)
    response = client.post("/rejudge/", follow=True)
    assert response.status_code == 200
    run_queued_tasks()
    too_many = GradingBatch.objects.get()
    page = client.get(f"/batches/{too_many.pk}/").content.decode()
    assert "This filter matches more than 2 trials: narrow it to grade." in page
    assert 'hx-trigger="every 2s"' not in page  # nothing left to wait for
    assert not too_many.items.exists()
    client.post("/rejudge/?agent=nobody")
    run_queued_tasks()
    none = GradingBatch.objects.latest("id")
    assert none.problem == "This filter matches no trials: nothing to grade."
    assert "matches no trials" in client.get("/batches/").content.decode()
    response = client.post("/rejudge/?reward_min=lots")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/plain")
    assert judge_server.requests == []


def test_listing_happens_once_and_a_dead_listers_batch_is_listed_again(
    client: Client, judge_server: FakeJudge
) -> None:
    trials = [f.make_trial(name=f"t-{i}") for i in range(3)]
    f.login(client, "admin", staff=True)
    client.post("/rejudge/")
    batch = GradingBatch.objects.get()
    # A second lister (recovery's, say) finds the batch listed and writes nothing more.
    assert grading.list_batch.call(batch.pk) == 3
    assert grading.list_batch.call(batch.pk) == 0
    assert sorted(batch.items.values_list("trial_id", flat=True)) == [t.pk for t in trials]
    # A batch whose lister's worker died mid-task: its task stays "running", the batch
    # unlisted; after a lease, recovery enqueues a new lister, which lists it.
    client.post("/rejudge/")
    stuck = GradingBatch.objects.latest("id")
    DBTaskResult.objects.filter(id=stuck.lister_id).update(status="RUNNING")
    assert grading.recover_listing() == []  # within its lease: the lister may be at work
    GradingBatch.objects.filter(pk=stuck.pk).update(created_at=timezone.now() - timedelta(hours=1))
    assert grading.recover_listing() == [stuck.pk]
    run_queued_tasks()
    stuck.refresh_from_db()
    assert not stuck.listing
    assert stuck.items.count() == 3


def test_a_batch_cancelled_before_listing_lists_nothing(
    client: Client, judge_server: FakeJudge
) -> None:
    f.make_trial(name="t")
    f.login(client, "admin", staff=True)
    client.post("/rejudge/")
    batch = GradingBatch.objects.get()
    response = client.post(f"/batches/{batch.pk}/cancel/", follow=True)
    assert "cancelled before its trials were listed" in response.content.decode()
    run_queued_tasks()
    batch.refresh_from_db()
    assert batch.listed_at is not None
    assert not batch.items.exists()
