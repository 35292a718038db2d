"""Each job's kept figures (review.science.job_tallies), kept by triggers through every write.

After each way of writing a trial (the ingest writer's bulk insert, a re-ingest that updates
it, the demo seed's fast COPY path, an annotation, an adjudication, a re-judge) and of
removing one (a trial deleted, a job deleted), the kept rows must equal a recount, and the
job page's figures read from them must equal the same aggregates taken over the job's trials.
"""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.models import Count, F, Q, Sum

from review import adjudication
from review.models import JobTally, JudgmentTally, TrialReviewed, add_annotation
from review.science import job_tallies, stats
from rewards.models import Job, Trial
from rewards.scoring.grading import store_verdict
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def kept() -> tuple[dict[tuple[Any, ...], tuple[Any, ...]], set[tuple[Any, ...]]]:
    key = job_tallies.KEY
    rows = JobTally.objects.exclude(trials=0).values_list(*key, *job_tallies.COUNTER_NAMES)
    tallies = {tuple(row[: len(key)]): tuple(v for v in row[len(key) :]) for row in rows}
    reviewed = set(TrialReviewed.objects.values_list("trial_id", "job_id", "first_at"))
    return tallies, reviewed


def assert_kept_equals_recount() -> None:
    before = kept()
    job_tallies.rebuild(connection)
    assert before == kept()


def from_trials(job: Job) -> dict[str, Any]:
    """The job page's figures aggregated over its trials, as the page did before tallies."""
    trials = Trial.objects.filter(job=job).exclude(status__in=["pending", "running"])
    summary = stats.Summary.of(trials.aggregate(**f.summary_aggregates()))
    bins = {
        f"bin{i}": Count(
            "id",
            filter=Q(reward__gte=i / 10)
            & (Q(reward__lte=1.0) if i == 9 else Q(reward__lt=(i + 1) / 10)),
        )
        for i in range(10)
    }
    extra = trials.aggregate(
        verifier_pass=Count("id", filter=Q(reward__gte=F("task__pass_threshold"))),
        human_pass=Count("id", filter=Q(human_judgment="pass")),
        human_decided=Count("id", filter=Q(human_judgment__in=["pass", "fail"])),
        cost=Sum("cost_usd"),
        **bins,
    )
    by_task = [
        (row["task__name"], row["task__source"], stats.Summary.of(row))
        for row in trials.values("task__name", "task__source")
        .annotate(**f.summary_aggregates())
        .order_by("task__source", "task__name")
    ]
    modes = list(
        trials.exclude(failure_mode="")
        .values_list("failure_mode")
        .annotate(n=Count("id"))
        .order_by("-n", "failure_mode")
    )
    return {"summary": summary, "extra": extra, "by_task": by_task, "modes": modes}


def from_tallies(job: Job) -> dict[str, Any]:
    kept = stats.job_breakdown(job)
    totals = kept.totals
    extra = {
        name: totals[name]
        for name in (
            "verifier_pass",
            "human_pass",
            "human_decided",
            *(f"bin{i}" for i in range(10)),
        )
    }
    extra["cost"] = totals["cost_sum"] if totals["cost_n"] else None
    return {
        "summary": kept.summary,
        "extra": extra,
        "by_task": kept.by_task,
        "modes": kept.failure_modes,
    }


def assert_page_figures_match_the_trials(job: Job) -> None:
    expected, got = from_trials(job), from_tallies(job)
    assert got["summary"].mean_reward == pytest.approx(expected["summary"].mean_reward)
    for name in ("summary", "by_task"):
        # Mean rewards are sums of floats kept by adding and subtracting: compared apart.
        assert _without_means(got[name]) == _without_means(expected[name])
    if expected["extra"]["cost"] is not None:
        assert got["extra"].pop("cost") == pytest.approx(expected["extra"].pop("cost"))
    assert got["extra"] == expected["extra"]
    assert got["modes"] == expected["modes"]


def _without_means(value: Any) -> Any:
    if isinstance(value, stats.Summary):
        return {k: v for k, v in vars(value).items() if k != "mean_reward"}
    return [(a, b, _without_means(s)) for a, b, s in value]


def test_kept_figures_follow_every_write_and_deletion() -> None:
    rita = f.make_user("rita", "reviewer")
    sam = f.make_user("sam", "reviewer")
    eve = f.make_user("eve", "expert")
    t1, t2, t3, t4, _ = f.write(
        f.bundle(name="t1", reward=0.9, judges=[f.judge("PASS")]),
        f.bundle(name="t2", reward=0.2, judges=[f.judge("FAIL", failure_mode="units")]),
        f.bundle(name="t3", reward=1.0, judges=[], task="other-task", agent="beta"),
        f.bundle(name="t4", reward=0.05, judges=[f.judge("FAIL", failure_mode="crash")]),
        f.bundle(name="u1", job="other", reward=0.5),
    )
    job = Job.objects.get(name="nightly-42")
    assert_kept_equals_recount()
    assert_page_figures_match_the_trials(job)
    assert JobTally.objects.filter(job=job).aggregate(n=Sum("trials"))["n"] == 4

    # Human judgments: the trial's summary columns move its counts.
    add_annotation(trial_id=t1.pk, reviewer=rita, judgment="fail")
    add_annotation(trial_id=t1.pk, reviewer=sam, judgment="pass")
    add_annotation(trial_id=t2.pk, reviewer=rita, judgment="fail", blind=True)
    assert_kept_equals_recount()
    assert_page_figures_match_the_trials(job)
    adjudication.adjudicate(trial_id=t1.pk, adjudicator=eve, verdict="pass", rationale="ok")
    assert_kept_equals_recount()
    assert_page_figures_match_the_trials(job)

    # A re-judge and a re-ingest with new artifacts update the trial rows.
    later = f.judge("PASS", judge_model="judge-9", scored_at=f.START + timedelta(days=2))
    store_verdict(Trial.objects.get(pk=t2.pk), later)
    f.write(f.bundle(name="t3", reward=0.3, judges=[f.judge("FAIL", failure_mode="units")]))
    assert_kept_equals_recount()
    assert_page_figures_match_the_trials(job)

    # An unreviewed trial deleted; a queryset update around the domain code.
    Trial.objects.filter(pk=t4.pk).delete()
    Trial.objects.filter(pk=t3.pk).update(reward=0.75, judge_verdict="PASS")
    assert_kept_equals_recount()
    assert_page_figures_match_the_trials(job)
    assert JobTally.objects.filter(job=job).aggregate(n=Sum("trials"))["n"] == 3

    # A whole job deleted takes its tally rows with it.
    other = Job.objects.get(name="other")
    other.delete()
    assert not JobTally.objects.filter(job_id=other.pk).exists()
    assert_kept_equals_recount()


def test_first_review_is_the_earliest_annotation_even_when_an_older_one_arrives_later() -> None:
    (trial,) = f.write(f.bundle(name="t1"))
    rita = f.make_user("rita", "reviewer")
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment="pass")
    first = TrialReviewed.objects.get(trial=trial).first_at
    # A bundle carrying an annotation made a day earlier (by another reviewer).
    older = f.annotation("carol", "fail", at=first - timedelta(days=1))
    f.write(f.bundle(name="t1", annotations=[older]))
    assert TrialReviewed.objects.get(trial=trial).first_at == first - timedelta(days=1)
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment="fail")
    assert TrialReviewed.objects.get(trial=trial).first_at == first - timedelta(days=1)
    assert_kept_equals_recount()


def test_the_demo_seeds_fast_copy_path_is_counted_too() -> None:
    call_command("seed_demo", trials=60, fast=True, no_progress=True, stdout=io.StringIO())
    assert Trial.objects.count() == 60
    # The demo's few pending or running trials are not counted before they finish.
    finished = Trial.objects.exclude(status__in=["pending", "running"]).count()
    assert 50 < finished < 60
    assert JobTally.objects.aggregate(n=Sum("trials"))["n"] == finished
    assert_kept_equals_recount()
    for job in Job.objects.all():
        assert_page_figures_match_the_trials(job)


def test_the_retally_command_recounts_what_was_written_around_the_application() -> None:
    (trial,) = f.write(f.bundle(name="t1"))
    rita = f.make_user("rita", "reviewer")
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment="pass")
    before = kept()
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM review_jobtally")
        cursor.execute("DELETE FROM review_trialreviewed")
        cursor.execute("DELETE FROM review_judgmenttally")
    out = io.StringIO()
    call_command("retally", stdout=out)
    assert kept() == before
    assert JudgmentTally.objects.filter(n__gt=0).exists()
    assert "Recounted" in out.getvalue()


def test_a_running_trial_is_left_out_of_the_figures_until_it_finishes() -> None:
    """A trial followed while its job runs has no reward yet: counted, it would be a
    failure in the job's mean reward, pass rates and histogram."""
    f.write(f.bundle(name="done", reward=1.0, judges=[f.judge("PASS")]))
    f.write(f.bundle(name="busy", reward=0.0, status="running", judges=[]))
    (pending,) = f.write(f.bundle(name="queued", reward=0.0, status="pending", judges=[]))
    job = Job.objects.get(name="nightly-42")
    totals = stats.job_breakdown(job).totals
    assert (totals["trials"], totals["verifier_pass"], totals["bin0"]) == (1, 1, 0)
    assert stats.job_breakdown(job).summary.mean_reward == pytest.approx(1.0)
    assert_kept_equals_recount()

    # It finishes (the re-ingest of its completed folder): counted from then on.
    f.write(f.bundle(name="busy", reward=0.25, status="completed", judges=[]))
    totals = stats.job_breakdown(job).totals
    assert (totals["trials"], totals["verifier_pass"], totals["bin2"]) == (2, 1, 1)
    assert_kept_equals_recount()

    # A trial that goes back to running (an update around the writer), and one deleted
    # while pending: neither leaves a count behind.
    Trial.objects.filter(name="busy").update(status="running")
    Trial.objects.filter(pk=pending.pk).delete()
    assert stats.job_breakdown(job).totals["trials"] == 1
    assert_kept_equals_recount()
