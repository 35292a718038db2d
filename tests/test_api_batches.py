"""`/api/batches`: staff start a re-judge, watch its counts and cancel it, by token."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from review import tokens
from rewards.models import GradingBatch, GradingItem, JudgeVerdict
from tests import review_factories as f
from tests.judge_server import FakeJudge, judge_server
from tests.task_worker import run_queued_tasks

__all__ = ["judge_server"]
# Committed rows: the worker command closes and reopens its connection between tasks.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def fast_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _token(username: str, *roles: str, staff: bool = False) -> dict[str, str]:
    user = f.make_user(username, *roles, staff=staff)
    return {"Authorization": f"Bearer {tokens.create_token(user, 'test')[1]}"}


def _post(client: Client, url: str, headers: dict[str, str], body: Any = None) -> Any:
    return client.post(
        url, data=json.dumps(body or {}), content_type="application/json", headers=headers
    )


def test_staff_start_a_filter_batch_watch_it_finish_and_list_it(
    client: Client, judge_server: FakeJudge
) -> None:
    failing = [
        f.make_trial(name=f"fail-{i}", judges=[f.judge("FAIL", failure_mode="x")]) for i in range(2)
    ]
    f.make_trial(name="pass", judges=[f.judge("PASS")])
    staff = _token("ci", staff=True)
    response = _post(client, "/api/batches", staff, {"query": "judge_verdict=FAIL"})
    assert response.status_code == 201
    started = response.json()
    assert (started["query"], started["trial"], started["created_by"]) == (
        "judge_verdict=FAIL",
        None,
        "ci",
    )
    assert started["counts"] == {
        "total": 2,
        "queued": 2,
        "running": 0,
        "done": 0,
        "failed": 0,
        "cancelled": 0,
    }
    assert started["finished"] is False
    assert judge_server.requests == []  # enqueued only
    run_queued_tasks()
    watched = client.get(f"/api/batches/{started['id']}", headers=staff).json()
    assert watched["counts"]["done"] == 2
    assert (watched["finished"], watched["failures"]) == (True, [])
    assert JudgeVerdict.objects.filter(batch_item__batch_id=started["id"]).count() == 2
    assert sorted(GradingItem.objects.values_list("trial_id", flat=True)) == [t.pk for t in failing]
    listed = client.get("/api/batches", headers=staff).json()
    assert [b["id"] for b in listed] == [started["id"]]


def test_a_trial_batch_its_failures_and_cancel(client: Client, judge_server: FakeJudge) -> None:
    trial = f.make_trial()
    staff = _token("ci", staff=True)
    judge_server.answer("not json at all")
    one = _post(client, "/api/batches", staff, {"trial": trial.pk}).json()
    assert (one["trial"], one["counts"]["total"]) == (trial.pk, 1)
    run_queued_tasks()
    failed = client.get(f"/api/batches/{one['id']}", headers=staff).json()
    assert failed["counts"]["failed"] == 1
    assert failed["failures"][0]["trial"] == trial.pk
    assert failed["failures"][0]["reason"]
    other = _post(client, "/api/batches", staff, {"query": ""}).json()
    cancelled = _post(client, f"/api/batches/{other['id']}/cancel", staff).json()
    assert cancelled["counts"]["cancelled"] == 1
    assert cancelled["cancelled_at"] is not None
    assert cancelled["finished"] is True


def test_a_job_is_graded_by_name_as_its_explorer_filter(
    client: Client, judge_server: FakeJudge
) -> None:
    trials = f.make_trials(2, job="nightly-42")
    f.make_trial(job="other")
    staff = _token("ci", staff=True)
    response = _post(client, "/api/batches", staff, {"job": "nightly-42"})
    assert response.status_code == 201
    started = response.json()
    assert started["query"] == f"job={trials[0].job_id}"
    assert started["counts"]["total"] == 2
    assert judge_server.requests == []  # enqueued only
    run_queued_tasks()
    assert sorted(
        JudgeVerdict.objects.filter(batch_item__batch_id=started["id"]).values_list(
            "trial_id", flat=True
        )
    ) == sorted(t.pk for t in trials)


def test_bad_requests_are_refused_before_anything_is_queued(
    client: Client, judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    f.make_trial()
    staff = _token("ci", staff=True)
    assert _post(client, "/api/batches", staff, {}).status_code == 422
    assert _post(client, "/api/batches", staff, {"trial": 1, "query": ""}).status_code == 422
    assert _post(client, "/api/batches", staff, {"query": "reward_min=lots"}).status_code == 422
    assert (
        _post(
            client, "/api/batches", staff, {"query": "judge_verdict=PASS&agent=nobody"}
        ).status_code
        == 422
    )
    assert _post(client, "/api/batches", staff, {"trial": 999999}).status_code == 404
    assert _post(client, "/api/batches", staff, {"job": "nope"}).status_code == 404
    assert _post(client, "/api/batches", staff, {"job": "j", "query": ""}).status_code == 422
    assert client.get("/api/batches/999999", headers=staff).status_code == 404
    monkeypatch.delenv("TRIALDESK_JUDGE_BASE_URL")
    assert _post(client, "/api/batches", staff, {"query": ""}).status_code == 409
    assert not GradingBatch.objects.exists()


def test_only_staff_tokens_may_use_batches(client: Client, judge_server: FakeJudge) -> None:
    trial = f.make_trial()
    analyst = _token("ann", "analyst", "reviewer", "expert")
    assert client.get("/api/batches").status_code == 401
    assert client.get("/api/batches", headers=analyst).status_code == 403
    assert _post(client, "/api/batches", analyst, {"trial": trial.pk}).status_code == 403
    assert not GradingBatch.objects.exists()
