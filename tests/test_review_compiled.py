"""Queries compiled once (review.compiled.ByTrial) give what the ORM gives, query for query."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from review.adjudication import _ADJUDICATIONS, adjudicate
from review.compiled import ByTrial
from review.models import Annotation, add_annotation
from review.views.trial import _ANNOTATIONS, _ERROR_TAGS, _RESULTS, _SCORERS, _VERDICTS
from rewards.models import ErrorTag, EvaluationResult, JudgeVerdict, ScorerResult, Trial
from rewards.schemas import ErrorTag as ErrorTagRecord
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def _fields(row: Any, model: Any, leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        field.attname: getattr(row, field.attname)
        for field in model._meta.concrete_fields
        if field.name not in leave_out
    }


def test_the_trial_pages_lists_match_the_orm_in_one_query_each(
    django_assert_num_queries: Callable[..., Any],
) -> None:
    unscored = f.judge("FAIL", scored_at=None, fact_checks=[("claim", "supported", "e")])
    later = f.judge("PASS", scored_at=f.START + timedelta(hours=1))
    trial: Trial = f.make_trial(
        scorers=[f.scorer(f"s{i}", verdict="FAIL" if i % 2 else "PASS") for i in range(4)],
        judges=[f.judge("PASS"), unscored, later],
        error_tags=[ErrorTagRecord(category=f"c{i}", source="mechanical") for i in range(3)],
        earlier_rewards=[0.1, 0.2],
    )
    expected: dict[str, list[Any]] = {
        "results": list(
            EvaluationResult.objects.filter(trial=trial)
            .defer("raw_artifacts")
            .order_by("-is_current", "-created_at", "-id")
        ),
        "scorers": list(ScorerResult.objects.filter(trial=trial).order_by("position")),
        "verdicts": list(
            JudgeVerdict.objects.filter(trial=trial).order_by(*JudgeVerdict.LATEST_FIRST)
        ),
        "tags": list(ErrorTag.objects.filter(trial=trial).order_by("id")),
    }
    lists: dict[str, ByTrial[Any]] = {
        "results": _RESULTS,
        "scorers": _SCORERS,
        "verdicts": _VERDICTS,
        "tags": _ERROR_TAGS,
    }
    for name, rows in lists.items():
        with django_assert_num_queries(1):
            got = rows(trial.pk)
        want = expected[name]
        assert [row.pk for row in got] == [row.pk for row in want], name
        model = type(want[0])
        leave_out = ("raw_artifacts",) if name == "results" else ()
        assert [_fields(row, model, leave_out) for row in got] == [
            _fields(row, model, leave_out) for row in want
        ], name
    # The verdict without a scoring time comes last (NULLS LAST), JSON comes back decoded.
    verdicts = _VERDICTS(trial.pk)
    assert verdicts[-1].scored_at is None
    assert isinstance(verdicts[-1].fact_checks, list)
    assert isinstance(_SCORERS(trial.pk)[0].required, bool)


def test_another_trials_rows_are_never_read() -> None:
    one, other = f.make_trial(scorers=[f.scorer("a")]), f.make_trial(scorers=[f.scorer("b")])
    assert [s.name for s in _SCORERS(one.pk)] == ["a"]
    assert [s.name for s in _SCORERS(other.pk)] == ["b"]
    assert _SCORERS(10**9) == []


def test_a_query_with_another_parameter_is_refused() -> None:
    rows = ByTrial(lambda pk: ScorerResult.objects.filter(trial_id=pk, name="x"))
    with pytest.raises(ValueError, match="trial id alone"):
        rows(1)


def test_annotations_and_adjudications_come_with_their_authors_in_one_query_each(
    django_assert_num_queries: Callable[..., Any],
) -> None:
    trial = f.make_trial()
    rita = f.make_user("rita", "reviewer")
    sam = f.make_user("sam", "reviewer")
    judge = f.make_user("ada", "adjudicator")
    judge.email = "ada@example.org"
    judge.save()
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment="pass")
    add_annotation(trial_id=trial.pk, reviewer=sam, judgment="fail")
    adjudicate(trial_id=trial.pk, adjudicator=judge, verdict="pass", rationale="the tests pass")

    with django_assert_num_queries(1):
        annotations = _ANNOTATIONS(trial.pk)
        names = [a.reviewer.get_username() for a in annotations]
    history = list(Annotation.objects.for_trial(trial).history())
    assert [a.pk for a in annotations] == [a.pk for a in history]
    assert names == [a.reviewer.get_username() for a in history] == ["rita", "sam"]
    assert [_fields(a, Annotation) for a in annotations] == [
        _fields(a, Annotation) for a in history
    ]

    with django_assert_num_queries(1):
        (made,) = _ADJUDICATIONS(trial.pk)
        assert made.adjudicator.get_username() == "ada"
    # The user's other fields were not read with it: asking for one reads it, rightly.
    with django_assert_num_queries(1):
        assert made.adjudicator.email == "ada@example.org"
