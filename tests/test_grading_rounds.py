"""A grading runner's rounds (issue 21, the judge at scale): the answers in hand are stored
together, in a few statements whatever their number, each only under its own claim, and the
summary a new verdict leaves is the one the trial's rows give."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from rewards import rules, schemas
from rewards.models import GradingItem, JudgeVerdict, Trial
from rewards.scoring import batches, tasks
from rewards.scoring.grading import store_verdict
from rewards.scoring.judge import JudgeInput, JudgeSettings
from tests import review_factories as f

pytestmark = pytest.mark.django_db

State = GradingItem.State
NOW = datetime.now(UTC)


class InstantJudge:
    """Stands in for `JudgeCalls`: each call is answered at once, with the next of `answers`
    (the last one again when they run out); `on_submit` runs as each call goes out."""

    answers: list[schemas.JudgeVerdict] = []
    on_submit: Callable[[int], None] = staticmethod(lambda count: None)
    asked: list[JudgeInput] = []

    def __init__(self, settings: JudgeSettings) -> None:
        self.settings = settings

    def __enter__(self) -> InstantJudge:
        return self

    def __exit__(self, *exc_info: object) -> None:
        pass

    def submit(self, data: JudgeInput) -> Future[schemas.JudgeVerdict]:
        InstantJudge.asked.append(data)
        InstantJudge.on_submit(len(InstantJudge.asked))
        answers = InstantJudge.answers
        record = answers[min(len(InstantJudge.asked), len(answers)) - 1]
        future: Future[schemas.JudgeVerdict] = Future()
        future.set_result(record.model_copy(update={"expected_outcome": data.expected_outcome}))
        return future


@pytest.fixture
def instant_judge(monkeypatch: pytest.MonkeyPatch) -> type[InstantJudge]:
    monkeypatch.setattr(batches, "JudgeCalls", InstantJudge)
    InstantJudge.answers = [f.judge("PASS", judge_model="judge-2", scored_at=NOW)]
    InstantJudge.on_submit = staticmethod(lambda count: None)
    InstantJudge.asked = []
    return InstantJudge


def _settings(concurrency: int) -> JudgeSettings:
    return JudgeSettings(
        base_url="http://judge.invalid/v1", model="judge-2", concurrency=concurrency
    )


def _summary(trial: Trial) -> dict[str, Any]:
    return {name: getattr(trial, name) for name in (*rules.SUMMARY_FIELDS, "human_disagreement")}


@pytest.mark.parametrize("count", [2, 8])
def test_a_round_of_trials_is_read_and_stored_in_the_same_queries_whatever_its_size(
    count: int, instant_judge: type[InstantJudge], django_assert_num_queries: Callable[..., Any]
) -> None:
    trials = f.make_trials(
        count,
        scorers=[f.scorer("tests"), f.scorer("style", type="llm_judge", verdict="FAIL")],
        judges=[f.judge("FAIL", failure_mode="tests edited")],
    )
    batch = tasks.start_batch([t.pk for t in trials])
    # The runner has every trial in flight at once, then stores their answers together.
    # Claiming: 1 savepoint, 2 the queued items (locked), 3 marked running, 4 release.
    # Reading: 5 verdicts already stored for the items, 6 the trials with their task, blobs
    # and latest verdict's expected outcome, 7 their scorers.
    # Claiming again: 8 savepoint, 9 none queued, 10 release.
    # Storing: 11 savepoint, 12 the items still held under their claims (locked), 13 marked
    # done, 14 the trials (locked) with their latest verdict's time, 15 the verdicts (one
    # INSERT), 16 the trials' failed scorers, 17 their summaries (one UPDATE: judged alike),
    # 18 release.
    with django_assert_num_queries(18):
        assert batches.run(batch.pk, _settings(count)) == count
    assert set(batch.items.values_list("state", flat=True)) == {State.DONE}
    assert JudgeVerdict.objects.filter(batch_item__batch=batch).count() == count
    for trial in Trial.objects.filter(pk__in=[t.pk for t in trials]):
        assert (trial.judge_verdict, trial.judge_model, trial.failure_mode) == (
            "PASS",
            "judge-2",
            "",
        )
        assert trial.gate_disagreement == rules.ADVISORY_FAIL


def test_rounds_of_one_trial_cost_fifteen_queries_each(
    instant_judge: type[InstantJudge], django_assert_num_queries: Callable[..., Any]
) -> None:
    trials = f.make_trials(3, scorers=[f.scorer("tests")], judges=[f.judge("PASS")])
    batch = tasks.start_batch([t.pk for t in trials])
    # One call in flight: each trial is claimed (4 with the savepoint and its release), read
    # (3) and stored (8) on its own, as the test above counts them; the last claim finds
    # none queued (3).
    with django_assert_num_queries(3 * (4 + 3 + 8) + 3):
        assert batches.run(batch.pk, _settings(1)) == 3
    assert JudgeVerdict.objects.filter(batch_item__batch=batch).count() == 3


def test_the_summary_a_round_leaves_is_the_one_the_rows_give(
    instant_judge: type[InstantJudge],
) -> None:
    later = NOW + timedelta(days=365)
    shapes: list[tuple[dict[str, Any], schemas.JudgeVerdict]] = [
        # Both gates pass, an advisory scorer failed.
        (
            {"scorers": [f.scorer("tests"), f.scorer("style", type="llm_judge", verdict="FAIL")]},
            f.judge("PASS", scored_at=NOW),
        ),
        # A required scorer failed, the judge passes.
        (
            {"scorers": [f.scorer("tests", verdict="FAIL", required=True)]},
            f.judge("PASS", scored_at=NOW),
        ),
        # The judge fails it with a failure mode, over an older PASS.
        (
            {"scorers": [f.scorer("tests")], "judges": [f.judge("PASS")]},
            f.judge("FAIL", failure_mode="tests edited", scored_at=NOW),
        ),
        # An older verdict that claims a later time stays the one shown.
        (
            {"judges": [f.judge("FAIL", failure_mode="hallucinated", scored_at=later)]},
            f.judge("PASS", scored_at=NOW),
        ),
        # No scorers, no verdict before; the judge gave no usable answer.
        ({}, f.judge("UNPARSEABLE", scored_at=NOW)),
        # An older verdict without a time counts as the oldest.
        ({"judges": [f.judge("FAIL", scored_at=None)]}, f.judge("PASS", scored_at=NOW)),
    ]
    tags = [schemas.ErrorTag(category="units", source="mechanical")]
    trials = [
        f.make_trial(name=f"t-{i}", error_tags=tags, **kwargs)
        for i, (kwargs, _) in enumerate(shapes)
    ]
    instant_judge.answers = [answer for _, answer in shapes]
    batch = tasks.start_batch([t.pk for t in trials])
    assert batches.run(batch.pk, _settings(len(trials))) == len(trials)

    stored = {
        t.pk: t
        for t in Trial.objects.select_related("task").filter(pk__in=batch.items.values("trial"))
    }
    for trial in trials:
        written = _summary(stored[trial.pk])
        recomputed = Trial.objects.select_related("task").get(pk=trial.pk)
        recomputed.refresh_summary()
        assert written == _summary(recomputed), trial.name
    shown = [stored[t.pk] for t in trials]
    assert [t.gate_disagreement for t in shown[:3]] == [
        rules.ADVISORY_FAIL,
        rules.JUDGE_PASS_SCORERS_FAIL,
        rules.SCORERS_PASS_JUDGE_FAIL,
    ]
    assert (shown[2].judge_verdict, shown[2].failure_mode) == ("FAIL", "tests edited")
    assert (shown[3].judge_verdict, shown[3].failure_mode) == ("FAIL", "hallucinated")
    assert (shown[4].judge_verdict, shown[5].judge_verdict) == ("UNPARSEABLE", "PASS")
    assert batch.items.get(trial=trials[4]).state == State.FAILED


def test_a_round_stores_only_the_answers_whose_claim_is_still_held(
    instant_judge: type[InstantJudge],
) -> None:
    trials = f.make_trials(2)
    batch = tasks.start_batch([t.pk for t in trials])
    first = batch.items.get(trial=trials[0])
    taken_over = uuid.uuid4()

    def lose_the_first(count: int) -> None:
        # While the calls are out, the first item's heartbeat went silent for a lease and
        # another runner claimed it again.
        if count == 2:
            GradingItem.objects.filter(pk=first.pk).update(claim=taken_over, attempts=2)

    instant_judge.on_submit = staticmethod(lose_the_first)
    assert batches.run(batch.pk, _settings(2)) == 2
    first.refresh_from_db()
    assert (first.state, first.claim) == (State.RUNNING, taken_over)  # left to its new claim
    assert not JudgeVerdict.objects.filter(batch_item=first).exists()
    second = batch.items.get(trial=trials[1])
    assert second.state == State.DONE
    assert JudgeVerdict.objects.filter(batch_item=second).count() == 1
    assert Trial.objects.get(pk=trials[0].pk).judge_model != "judge-2"
    assert Trial.objects.get(pk=trials[1].pk).judge_model == "judge-2"


def test_a_claim_marks_its_items_running_under_one_fresh_token() -> None:
    trials = f.make_trials(3)
    batch = tasks.start_batch([t.pk for t in trials])
    before = timezone.now()
    claimed = batches.claim(batch.pk, "runner-1", 2)
    again = batches.claim(batch.pk, "runner-2", 2)
    assert (len(claimed), len(again)) == (2, 1)
    tokens = {token for _, token in claimed}
    assert len(tokens) == 1
    assert tokens.isdisjoint(token for _, token in again)
    for item, token in claimed:
        stored = GradingItem.objects.get(pk=item.pk)
        assert (stored.state, stored.claim, stored.runner, stored.attempts) == (
            State.RUNNING,
            token,
            "runner-1",
            1,
        )
        assert stored.heartbeat_at is not None
        assert stored.heartbeat_at >= before
        assert (item.state, item.claim, item.attempts) == (State.RUNNING, token, 1)


def test_a_single_verdict_is_stored_and_shown_like_a_rounds(
    django_assert_num_queries: Callable[..., Any],
) -> None:
    trial = f.make_trial(scorers=[f.scorer("tests")], judges=[f.judge("PASS")])
    record = f.judge("FAIL", failure_mode="tests edited", judge_model="judge-2", scored_at=NOW)
    # 1 the trial (locked) with its latest verdict's time, 2 the verdict, 3 the trial's failed
    # scorers, 4 its summary (inside the test's transaction: no savepoint of its own).
    with django_assert_num_queries(4):
        row = store_verdict(trial, record)
    assert row.pk is not None
    assert row.judge_model == "judge-2"
    stored = Trial.objects.select_related("task").get(pk=trial.pk)
    assert (stored.judge_verdict, stored.failure_mode) == ("FAIL", "tests edited")
    assert stored.gate_disagreement == rules.SCORERS_PASS_JUDGE_FAIL
    recomputed = Trial.objects.select_related("task").get(pk=trial.pk)
    recomputed.refresh_summary()
    assert _summary(stored) == _summary(recomputed)


class StaggeredJudge(InstantJudge):
    """Answers each call `apart` seconds after the one before, from a thread of its own."""

    apart = 0.02

    def submit(self, data: JudgeInput) -> Future[schemas.JudgeVerdict]:
        answered = super().submit(data)
        future: Future[schemas.JudgeVerdict] = Future()
        delay = StaggeredJudge.apart * len(InstantJudge.asked)
        threading.Timer(delay, future.set_result, [answered.result()]).start()
        return future


def test_answers_are_stored_together_once_half_the_calls_in_flight_have_answered(
    instant_judge: type[InstantJudge], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batches, "JudgeCalls", StaggeredJudge)
    rounds: list[int] = []
    store = batches._store

    def counted(answered: list[Any]) -> None:
        rounds.append(len(answered))
        store(answered)

    monkeypatch.setattr(batches, "_store", counted)
    trials = f.make_trials(8)
    batch = tasks.start_batch([t.pk for t in trials])
    # Eight calls in flight answering 20 ms apart: rounds of four (half of them), not eight
    # rounds of one.
    assert batches.run(batch.pk, _settings(8)) == 8
    assert sum(rounds) == 8
    assert rounds[0] >= 4
    assert len(rounds) <= 2
    assert JudgeVerdict.objects.filter(batch_item__batch=batch).count() == 8
