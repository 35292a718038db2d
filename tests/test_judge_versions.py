"""A trial's shown judge version on its row: `Trial.judge_rubric_version` follows the shown
verdict (ingest, a newer verdict, an older one that stays hidden, the recompute), is filled by
its migration for trials stored before it, and a job's counts by judge version read from the
trial rows equal those read from each trial's latest verdict."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.models import Count, OuterRef, Q, Subquery

from review.science import calibration
from review.science.calibration import Version
from rewards.models import Job, JudgeVerdict, Trial
from rewards.scoring import grading
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def _judge(
    verdict: str, rubric: str, *, model: str = "judge-1", hours: int | None = 0, **kw: Any
) -> Any:
    scored_at = None if hours is None else f.START + timedelta(hours=hours)
    return f.judge(verdict, judge_model=model, scored_at=scored_at, **kw).model_copy(
        update={"rubric_version": rubric}
    )


def _shown(trial: Trial) -> tuple[str, str, str | None]:
    trial.refresh_from_db()
    return trial.judge_verdict, trial.judge_model, trial.judge_rubric_version


def test_ingest_keeps_the_shown_verdicts_rubric_version() -> None:
    newer = _judge("PASS", "r2", hours=1)
    older = _judge("FAIL", "r1", failure_mode="gave up")
    unscored = _judge("FAIL", "r9", hours=None, failure_mode="gave up")
    # Listed newest first, an unscored one last: the shown verdict is the latest scored.
    [trial] = f.write(f.bundle(judges=[older, newer, unscored]))
    assert _shown(trial) == ("PASS", "judge-1", "r2")
    [none_recorded] = f.write(f.bundle(judges=[_judge("PASS", "")]))
    assert _shown(none_recorded) == ("PASS", "judge-1", None)
    [unjudged] = f.write(f.bundle(judges=[]))
    assert _shown(unjudged) == ("", "", None)
    # Stored again with a later verdict: the re-ingest's recompute moves it on.
    name = trial.name
    latest = _judge("FAIL", "r3", model="judge-2", hours=2, failure_mode="x")
    f.write(f.bundle(name=name, judges=[older, newer, unscored, latest]))
    assert _shown(Trial.objects.get(name=name)) == ("FAIL", "judge-2", "r3")


def test_a_new_verdict_moves_it_and_an_older_one_leaves_it() -> None:
    trial = f.make_trial(judges=[_judge("PASS", "r1", hours=1)])
    assert _shown(trial) == ("PASS", "judge-1", "r1")
    # A newer verdict is shown: `Trial.apply_verdict`.
    grading.store_verdict(trial, _judge("FAIL", "r2", hours=2, failure_mode="units"))
    assert _shown(trial) == ("FAIL", "judge-1", "r2")
    # One that claims an earlier time is kept but not shown: the summary is recomputed.
    grading.store_verdict(trial, _judge("PASS", "r0", model="judge-0", hours=0))
    assert _shown(trial) == ("FAIL", "judge-1", "r2")
    # A newer one without a rubric version clears it.
    grading.store_verdict(trial, _judge("PASS", "", model="judge-3", hours=3))
    assert _shown(trial) == ("PASS", "judge-3", None)
    # The recompute from the stored rows agrees with what was kept along the way.
    trial.refresh_summary()
    assert (trial.judge_model, trial.judge_rubric_version) == ("judge-3", None)


def _counts_from_the_verdicts(job: Job) -> list[tuple[Version, int, int]]:
    """The counts as they were read before the column: each judged trial's rubric version
    from its latest verdict (`JudgeVerdict.LATEST_FIRST`)."""
    latest_rubric = (
        JudgeVerdict.objects.filter(trial=OuterRef("pk"))
        .order_by(*JudgeVerdict.LATEST_FIRST)
        .values("rubric_version")[:1]
    )
    rows = (
        Trial.objects.filter(job=job, judge_verdict__in=["PASS", "FAIL"])
        .annotate(rubric=Subquery(latest_rubric))
        .order_by()
        .values("judge_model", "rubric")
        .annotate(judged=Count("pk"), passed=Count("pk", filter=Q(judge_verdict="PASS")))
        .values_list("judge_model", "rubric", "passed", "judged")
    )
    return sorted(
        ((Version(model, rubric or ""), passed, judged) for model, rubric, passed, judged in rows),
        key=lambda row: (-row[2], str(row[0])),
    )


def test_a_jobs_counts_by_version_equal_those_read_from_the_verdicts() -> None:
    judged = [
        [_judge("PASS", "r1")],
        [_judge("PASS", "r1")],
        [_judge("FAIL", "r1", failure_mode="x")],
        [_judge("PASS", "r2")],
        [_judge("FAIL", "r1", failure_mode="x"), _judge("PASS", "r2", hours=1)],
        [_judge("PASS", "r2", hours=1), _judge("FAIL", "r1", failure_mode="x")],
        [_judge("PASS", "r1", hours=None), _judge("FAIL", "r2", failure_mode="x")],
        [_judge("PASS", "", model="judge-2")],
        [_judge("FAIL", "", model="judge-2", failure_mode="x")],
        [_judge("UNPARSEABLE", "r1")],
        [],
    ]
    f.write(*(f.bundle(job="run-v", judges=judges) for judges in judged))
    f.write(f.bundle(job="other", judges=[_judge("PASS", "r1")]))
    job = Job.objects.get(name="run-v")
    trial = Trial.objects.filter(job=job, judge_verdict="PASS", judge_rubric_version="r1").first()
    assert trial is not None
    grading.store_verdict(trial, _judge("FAIL", "r3", hours=5, failure_mode="late"))
    counts = calibration.shown_versions(job)
    assert counts == _counts_from_the_verdicts(job)
    assert counts == [
        (Version("judge-1", "r2"), 3, 4),
        (Version("judge-1", "r1"), 1, 2),
        (Version("judge-2", ""), 1, 2),
        (Version("judge-1", "r3"), 0, 1),
    ]


@pytest.mark.django_db(transaction=True)
def test_the_migration_fills_it_from_each_trials_latest_verdict() -> None:
    f.write(
        f.bundle(
            name="a", judges=[_judge("FAIL", "r1", failure_mode="x"), _judge("PASS", "r2", hours=1)]
        ),
        f.bundle(name="b", judges=[_judge("PASS", "r1", hours=None), _judge("FAIL", "r2")]),
        f.bundle(name="c", judges=[_judge("PASS", "r1"), _judge("PASS", "", hours=1)]),
        f.bundle(name="d", judges=[_judge("PASS", "")]),
        f.bundle(name="e", judges=[]),
    )
    expected = dict(Trial.objects.values_list("name", "judge_rubric_version"))
    assert expected == {"a": "r2", "b": "r2", "c": None, "d": None, "e": None}
    with connection.cursor() as cursor:
        cursor.execute("UPDATE rewards_trial SET judge_rubric_version = 'stale'")
    call_command("migrate", "rewards", "0020", verbosity=0)
    call_command("migrate", verbosity=0)
    assert dict(Trial.objects.values_list("name", "judge_rubric_version")) == expected
