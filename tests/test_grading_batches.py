"""Grading batches (issue 21, item 2): the pages staff watch them on, cancel, and the runners'
claims (a lost lease stores nothing, a stored verdict is never asked for twice, recovery)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.tasks import TaskResultStatus
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from rewards import schemas
from rewards.models import GradingBatch, GradingItem, JudgeVerdict, Trial
from rewards.scoring import batches, tasks
from rewards.scoring.grading import store_verdict
from rewards.scoring.judge import RUBRIC_VERSION, JudgeSettings
from tests import review_factories as f
from tests.judge_server import FakeJudge, judge_server

__all__ = ["judge_server"]
pytestmark = pytest.mark.django_db

State = GradingItem.State
HX = {"HX-Request": "true"}


def _batch(count: int, **kwargs: Any) -> tuple[GradingBatch, list[Trial]]:
    trials = [f.make_trial(name=f"t-{i}", judges=[f.judge("PASS")]) for i in range(count)]
    return tasks.start_batch([t.pk for t in trials], **kwargs), trials


def _settings(judge: FakeJudge) -> JudgeSettings:
    return JudgeSettings(base_url=judge.url, model="judge-large", timeout_s=5)


# --- the pages -----------------------------------------------------------------------------------
def test_the_batches_page_lists_what_who_when_and_the_counts(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    admin = f.login(client, "admin", staff=True)
    batch, _ = _batch(3, user=admin, query="judge_verdict=FAIL")
    claimed = batches.claim_next(batch.pk)
    assert claimed is not None
    # 1 the user, 2 the batches with their counts by state and who asked (one query).
    with django_assert_num_queries(2):
        page = client.get("/batches/").content.decode()
    assert f'href="/batches/{batch.pk}/"' in page
    assert "filter ?judge_verdict=FAIL" in page
    assert "admin" in page
    row = re.search(r'<td class="num">(\d+)</td>\s*' * 5, page)
    assert row is not None
    assert row.groups() == ("2", "1", "0", "0", "0")
    assert 'progress max="3" value="0"' in page
    # Unfinished: the table asks for itself again every 2 s.
    assert 'hx-get="/batches/" hx-trigger="every 2s"' in page
    assert '<a href="/batches/" aria-current="page">Batches</a>' in page  # staff's navigation


def test_a_batch_page_shows_its_progress_failures_and_a_cancel_form(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    admin = f.login(client, "admin", staff=True)
    batch, trials = _batch(3, user=admin)
    GradingItem.objects.filter(trial=trials[0]).update(
        state=State.FAILED, reason="<script>alert(1)</script> no answer within 5s"
    )
    GradingItem.objects.filter(trial=trials[1]).update(state=State.DONE)
    # 1 the user, 2 the batch with its counts, 3 its failures with their trials' names.
    with django_assert_num_queries(3):
        response = client.get(f"/batches/{batch.pk}/")
    page = response.content.decode()
    assert response.status_code == 200
    assert "&lt;script&gt;alert(1)&lt;/script&gt; no answer within 5s" in page
    assert "<script>alert(1)" not in page
    assert f'href="/trials/{trials[0].pk}/">t-0</a>' in page
    assert 'progress class="progress-wide" max="3" value="2"' in page
    assert f'action="/batches/{batch.pk}/cancel/"' in page
    assert f'hx-get="/batches/{batch.pk}/" hx-trigger="every 2s"' in page
    assert "<html" in page.lower()


def test_the_htmx_poll_gets_the_progress_region_alone_and_stops_when_finished(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    admin = f.login(client, "admin", staff=True)
    batch, _ = _batch(2, user=admin)
    with django_assert_num_queries(3):  # as the page: the user, the batch, its failures
        response = client.get(f"/batches/{batch.pk}/", headers=HX)
    fragment = response.content.decode()
    assert "HX-Request" in response["Vary"]
    assert fragment.lstrip().startswith('<section id="batch-progress"')
    assert "<html" not in fragment.lower()
    assert "every 2s" in fragment
    listing = client.get("/batches/", headers=HX).content.decode()
    assert listing.lstrip().startswith('<div id="batches"')
    batch.items.update(state=State.DONE)
    finished = client.get(f"/batches/{batch.pk}/", headers=HX).content.decode()
    assert "hx-trigger" not in finished
    assert "cancel/" not in finished
    assert "hx-trigger" not in client.get("/batches/", headers=HX).content.decode()


def test_batch_pages_refuse_the_anonymous_the_wrong_method_and_non_staff(client: Client) -> None:
    batch, _ = _batch(1)
    urls = ["/batches/", f"/batches/{batch.pk}/"]
    anonymous = [Client().get(url) for url in urls] + [
        Client().post(f"/batches/{batch.pk}/cancel/")
    ]
    for response in anonymous:
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
    f.login(client, "rita", "reviewer", "analyst", "expert")
    for url in urls:
        assert client.get(url).status_code == 403
    assert 'href="/batches/"' not in client.get("/").content.decode()
    assert client.post(f"/batches/{batch.pk}/cancel/").status_code == 403
    f.login(client, "admin", staff=True)
    for url in urls:
        assert client.post(url).status_code == 405
    assert client.get(f"/batches/{batch.pk}/cancel/").status_code == 405
    assert client.get("/batches/999999/").status_code == 404
    csrf = Client(enforce_csrf_checks=True)
    f.login(csrf, "admin2", staff=True)
    assert csrf.post(f"/batches/{batch.pk}/cancel/").status_code == 403
    assert batch.items.get().state == State.QUEUED


def test_cancel_leaves_queued_trials_unjudged_and_lets_a_running_one_finish(
    client: Client, judge_server: FakeJudge
) -> None:
    admin = f.login(client, "admin", staff=True)
    batch, trials = _batch(3, user=admin)
    claimed = batches.claim_next(batch.pk)
    assert claimed is not None
    item, token = claimed
    response = client.post(f"/batches/{batch.pk}/cancel/", follow=True)
    assert response.redirect_chain == [(f"/batches/{batch.pk}/", 302)]
    assert "2 queued trials will not be judged" in response.content.decode()
    states = dict(batch.items.values_list("trial_id", "state"))
    assert states == {trials[0].pk: "running", trials[1].pk: "cancelled", trials[2].pk: "cancelled"}
    batches.judge_item(item, token, _settings(judge_server))  # the running one finishes
    assert batches.run(batch.pk, _settings(judge_server)) == 0  # and nothing else is taken
    assert len(judge_server.requests) == 1
    assert dict(batch.items.values_list("trial_id", "state")) == {
        trials[0].pk: "done",
        trials[1].pk: "cancelled",
        trials[2].pk: "cancelled",
    }
    assert JudgeVerdict.objects.filter(batch_item__batch=batch).count() == 1
    batch.refresh_from_db()
    assert batch.cancelled_at is not None


# --- the runners -------------------------------------------------------------------------------
def test_a_runner_judges_every_item_and_records_an_unusable_answer_as_a_failure(
    judge_server: FakeJudge,
) -> None:
    batch, _ = _batch(2)
    judge_server.answer("not json at all")
    assert batches.run(batch.pk, _settings(judge_server)) == 2
    failed = list(batch.items.values_list("state", "attempts"))
    assert failed == [("failed", 1), ("failed", 1)]
    assert all(item.reason for item in batch.items.all())
    # The judge's failure is still the trial's newest verdict, linked to its item.
    assert JudgeVerdict.objects.filter(batch_item__batch=batch, verdict="UNPARSEABLE").count() == 2


def test_a_runner_keeps_the_judges_concurrency_in_flight_and_judges_each_item_once(
    judge_server: FakeJudge,
) -> None:
    batch, trials = _batch(10)
    judge_server.open_gate_at(in_flight=4)  # answers once four requests are held together
    settings = dataclasses.replace(_settings(judge_server), concurrency=4)
    assert batches.run(batch.pk, settings) == 10
    assert judge_server.max_in_flight == 4  # as many as allowed, never more
    assert len(judge_server.requests) == 10
    assert set(batch.items.values_list("state", "attempts")) == {("done", 1)}
    verdicts = JudgeVerdict.objects.filter(batch_item__batch=batch)
    assert sorted(verdicts.values_list("trial_id", flat=True)) == sorted(t.pk for t in trials)
    assert set(verdicts.values_list("rubric_version", flat=True)) == {RUBRIC_VERSION}


def test_a_runner_takes_rounds_of_its_concurrency_then_stops(judge_server: FakeJudge) -> None:
    batch, _ = _batch(7)
    settings = dataclasses.replace(_settings(judge_server), concurrency=3)
    assert batches.run(batch.pk, settings, rounds=2) == 6
    assert batches.has_queued(batch.pk)
    assert batches.run(batch.pk, settings, rounds=2) == 1
    assert not batches.has_queued(batch.pk)


def test_without_a_judge_the_runners_items_fail_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TRIALDESK_JUDGE_BASE_URL", raising=False)
    batch, _ = _batch(2)
    assert batches.run(batch.pk) == 2
    reasons = set(batch.items.values_list("state", "reason"))
    assert reasons == {
        (
            "failed",
            "the worker has no judge: set TRIALDESK_JUDGE_BASE_URL and TRIALDESK_JUDGE_MODEL "
            "to use the judge",
        )
    }


def test_a_runner_that_lost_its_lease_stores_nothing(judge_server: FakeJudge) -> None:
    batch, _ = _batch(1)
    first = batches.claim_next(batch.pk, "first-runner")
    assert first is not None
    assert batches.claim_next(batch.pk) is None  # held, and its heartbeat is fresh
    assert batches.requeue_expired() == set()
    # The first runner's heartbeat stopped a lease ago: recovery puts the item back in the
    # queue, and another runner takes it over.
    GradingItem.objects.update(heartbeat_at=timezone.now() - batches.lease() - timedelta(1))
    assert batches.requeue_expired() == {"first-runner"}
    second = batches.claim_next(batch.pk, "second-runner")
    assert second is not None
    batches.judge_item(*first, _settings(judge_server))
    assert JudgeVerdict.objects.filter(batch_item__batch=batch).count() == 0
    batches.judge_item(*second, _settings(judge_server))
    item = batch.items.get()
    assert (item.state, item.attempts) == ("done", 2)
    assert JudgeVerdict.objects.filter(batch_item=item).count() == 1


def test_a_verdict_stored_for_an_item_is_never_asked_for_again(judge_server: FakeJudge) -> None:
    batch, trials = _batch(1)
    claimed = batches.claim_next(batch.pk)
    assert claimed is not None
    item, token = claimed
    record = schemas.JudgeVerdict(verdict="UNPARSEABLE", reasoning="stored before")
    store_verdict(trials[0], record, batch_item=item)
    # The database refuses a second verdict for the item ...
    with pytest.raises(IntegrityError), transaction.atomic():
        store_verdict(trials[0], record, batch_item=item)
    # ... and a runner that finds one does not ask the judge.
    batches.judge_item(item, token, _settings(judge_server))
    assert judge_server.requests == []
    assert batch.items.get().state == State.DONE
    assert JudgeVerdict.objects.filter(batch_item=item).count() == 1


def test_recovery_requeues_a_dead_runners_item_fails_its_task_and_enqueues_a_runner() -> None:
    batch, _ = _batch(2)
    assert len(batch.runner_ids) == 2
    assert tasks.recover() == []  # its runners wait to start
    # A worker started a runner and claimed an item; then it died and its heartbeat went silent.
    dead_runner = batch.runner_ids[0]
    DBTaskResult.objects.filter(id=dead_runner).update(status=TaskResultStatus.RUNNING)
    DBTaskResult.objects.exclude(id=dead_runner).update(status=TaskResultStatus.SUCCESSFUL)
    claimed = batches.claim_next(batch.pk, dead_runner)
    assert claimed is not None
    assert tasks.recover() == []  # the heartbeat is fresh: a runner holds the batch
    GradingItem.objects.filter(state=State.RUNNING).update(
        heartbeat_at=timezone.now() - batches.lease() - timedelta(seconds=1)
    )
    assert tasks.recover() == [batch.pk]
    assert set(batch.items.values_list("state", flat=True)) == {"queued"}
    # The dead runner's task is not left running for ever.
    dead = DBTaskResult.objects.get(id=dead_runner)
    assert dead.status == TaskResultStatus.FAILED
    assert dead.exception_class_path == "rewards.scoring.tasks.WorkerLost"
    batch.refresh_from_db()
    assert len(batch.runner_ids) == 3
    assert tasks.recover() == []  # the new runner waits to start


def test_a_cancelled_batch_is_not_resumed_and_a_dead_runners_item_ends_cancelled() -> None:
    batch, _ = _batch(2)
    assert batches.claim_next(batch.pk, batch.runner_ids[0]) is not None
    batches.cancel(batch)
    DBTaskResult.objects.update(status=TaskResultStatus.SUCCESSFUL)
    GradingItem.objects.filter(state=State.RUNNING).update(
        heartbeat_at=timezone.now() - batches.lease() - timedelta(seconds=1)
    )
    assert tasks.recover() == []
    assert set(batch.items.values_list("state", flat=True)) == {"cancelled"}


@pytest.mark.parametrize("count", [5, 300])
def test_starting_a_batch_costs_the_same_queries_whatever_its_size(
    count: int, django_assert_num_queries: Callable[..., Any]
) -> None:
    f.make_trials(count)
    ids = list(Trial.objects.values_list("pk", flat=True))
    # 1 the savepoint of its transaction (the test runs inside one), 2 the batch, 3 its items
    # (one INSERT), 4-7 four runners' task rows (RUNNERS_PER_BATCH, one INSERT each: the task
    # API enqueues one at a time), 8 the runners' ids on the batch, 9 the savepoint's release.
    with django_assert_num_queries(9):
        batch = tasks.start_batch(ids)
    assert batch.items.count() == count
