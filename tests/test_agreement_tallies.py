"""Latest judgments and agreement's tallies, kept along every write, equal a recount.

`LatestJudgment` holds each reviewer's latest (and latest blind) judgment of each trial with
the trial's gates; `JudgmentTally` and `PairTally` hold their grouped counts, which the
agreement page over every trial reads. Annotations, adjudications, re-judging and
re-ingesting all go through the domain code here, and after each step the kept rows must be
exactly what `review.tallies.rebuild` recounts from the annotations. The same holds for
the per-job tallies (`JobJudgmentTally`, `JobPairTally`, and the trial tallies of
review.job_tallies, which triggers keep).
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.http import QueryDict

from review import adjudication, agreement, job_tallies, tallies
from review.filters import TrialFilterForm
from review.models import (
    JobJudgmentTally,
    JobPairTally,
    JobTally,
    JudgmentTally,
    LatestJudgment,
    PairTally,
    TrialReviewed,
    add_annotation,
)
from rewards.models import Trial
from rewards.scoring.grading import store_verdict
from tests import review_factories as f

pytestmark = pytest.mark.django_db

LATEST_COLUMNS = (
    "trial_id",
    "reviewer_id",
    "annotation_id",
    "judgment",
    "blind_annotation_id",
    "blind_judgment",
    *tallies.GATE_FIELDS,
)


Kept = dict[str, Any]


def _counted(model: Any) -> dict[tuple[Any, ...], int]:
    rows = model.objects.exclude(n=0).values_list(*model.KEY, "n")
    return {tuple(row[:-1]): row[-1] for row in rows}


def _job_tallies() -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """JobTally rows that count something, sums rounded (kept by adding and subtracting
    floats, they may differ from a recount in the last bits)."""
    key = job_tallies.KEY
    rows = JobTally.objects.exclude(trials=0).values_list(*key, *job_tallies.COUNTER_NAMES)
    return {
        tuple(row[: len(key)]): tuple(
            round(v, 9) if isinstance(v, float) else v for v in row[len(key) :]
        )
        for row in rows
    }


def kept() -> Kept:
    return {
        "latest": set(LatestJudgment.objects.values_list(*LATEST_COLUMNS)),
        "judgments": _counted(JudgmentTally),
        "pairs": _counted(PairTally),
        "job judgments": _counted(JobJudgmentTally),
        "job pairs": _counted(JobPairTally),
        "job trials": _job_tallies(),
        "first reviews": set(TrialReviewed.objects.values_list("trial_id", "job_id", "first_at")),
    }


def recounted() -> Kept:
    tallies.rebuild(connection)
    job_tallies.rebuild(connection)
    return kept()


def assert_kept_equals_recount() -> None:
    before = kept()
    assert before == recounted()
    assert before["judgments"], "the tallies are not empty"
    assert before["job judgments"], "the job tallies are not empty"


def matrices(query: str, by: str) -> list[Any]:
    result = agreement.report(TrialFilterForm(QueryDict(query)), by)
    pairs = [(p.a, p.b, p.matrix.counts) for p in result.reviewers.pairs]
    return [
        [
            (c.overall.counts, c.undecided, [(g.label, g.matrix.counts) for g in c.groups])
            for c in result.comparisons
        ],
        result.judgments,
        result.defers,
        pairs,
        result.reviewers.coincidence,
    ]


@pytest.fixture
def people() -> dict[str, User]:
    return {
        name: f.make_user(name, "expert" if name == "eve" else "reviewer")
        for name in ("rita", "sam", "tom", "eve")
    }


def test_a_trials_tally_counts_each_judgment_under_its_gates_and_each_pair_once() -> None:
    gates = tallies.Gates("PASS", "FAIL", "PASS", "", "electrical", "judge-1")
    rows = [
        tallies.Judged(3, "pass", "", gates),
        tallies.Judged(1, "fail", "fail", gates),
        tallies.Judged(2, "pass", "defer", gates),
        tallies.Judged(4, "defer", "", gates),
    ]
    result = tallies.tally(rows)
    key = ("PASS", "FAIL", "PASS", "", "electrical", "judge-1")
    assert result.judgments == Counter(
        {
            (False, *key, "pass"): 2,
            (False, *key, "fail"): 1,
            (False, *key, "defer"): 1,
            (True, *key, "fail"): 1,
            (True, *key, "defer"): 1,
        }
    )
    # Three reviewers decided (the defer abstains): three pairs, each weighed by 3 raters;
    # blind, only reviewer 1 decided, so there is no pair.
    assert result.pairs == Counter(
        {
            (False, 1, 2, "fail", "pass", 3): 1,
            (False, 1, 3, "fail", "pass", 3): 1,
            (False, 2, 3, "pass", "pass", 3): 1,
        }
    )
    moved = tallies.tally([tallies.Judged(3, "pass", "", gates)]).minus(result)
    assert moved.judgments[(False, *key, "fail")] == -1
    assert (False, *key, "pass") in moved.judgments  # 1 - 2
    assert sum(moved.pairs.values()) == -3


def test_kept_rows_equal_a_recount_through_every_kind_of_write(people: dict[str, User]) -> None:
    rita, sam, tom, eve = (people[n] for n in ("rita", "sam", "tom", "eve"))
    t1, t2, t3 = f.write(
        f.bundle(name="t1", reward=0.9, judges=[f.judge("PASS")]),
        f.bundle(name="t2", reward=0.2, judges=[f.judge("FAIL", failure_mode="units")]),
        f.bundle(name="t3", reward=0.6, judges=[], task_source="mechanical"),
    )
    for trial, reviewer, judgment, blind in [
        (t1, rita, "pass", False),
        (t1, sam, "fail", False),
        (t1, tom, "pass", False),
        (t2, rita, "fail", True),
        (t2, rita, "pass", False),  # rita changes her mind once the trial is revealed
        (t2, sam, "fail", True),
        (t3, sam, "defer", False),
    ]:
        add_annotation(trial_id=trial.pk, reviewer=reviewer, judgment=judgment, blind=blind)
        assert_kept_equals_recount()
    latest = {
        (row.trial.name, row.reviewer.username): (row.judgment, row.blind_judgment)
        for row in LatestJudgment.objects.select_related("trial", "reviewer")
    }
    assert latest[("t2", "rita")] == ("pass", "fail")
    assert latest[("t2", "sam")] == ("fail", "fail")
    assert latest[("t1", "tom")] == ("pass", "")

    # An adjudication changes no judgment; a bundle's annotations arrive by the writer.
    adjudication.adjudicate(trial_id=t1.pk, adjudicator=eve, verdict="pass", rationale="ok")
    f.write(
        f.bundle(
            name="t4",
            judges=[f.judge("FAIL", judge_model="judge-2")],
            annotations=[f.annotation("carol", "fail"), f.annotation("dave", "pass")],
        )
    )
    assert_kept_equals_recount()

    # Re-judging t2 and re-ingesting t1 with new artifacts move their judgments' gates.
    later = f.judge("PASS", judge_model="judge-9", scored_at=f.START + timedelta(days=2))
    store_verdict(Trial.objects.get(pk=t2.pk), later)
    assert_kept_equals_recount()
    f.write(f.bundle(name="t1", reward=0.1, scorers=[f.scorer(verdict="FAIL")]))
    assert_kept_equals_recount()
    gates = set(LatestJudgment.objects.filter(trial=t1).values_list("scorer_verdict", "verifier"))
    assert gates == {("FAIL", "FAIL")}
    assert set(LatestJudgment.objects.filter(trial=t2).values_list("judge_model", flat=True)) == {
        "judge-9"
    }


def test_the_page_over_every_trial_reads_the_tallies_and_agrees_with_grouping_them(
    people: dict[str, User],
) -> None:
    rita, sam, tom = people["rita"], people["sam"], people["tom"]
    trials = f.write(
        *(
            f.bundle(
                name=f"t{i}",
                reward=(0.1, 0.9)[i % 2],
                judges=[f.judge(("PASS", "FAIL")[i % 3 == 0], failure_mode="x")],
            )
            for i in range(8)
        )
    )
    for i, trial in enumerate(trials):
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment=("pass", "fail")[i % 2])
        add_annotation(trial_id=trial.pk, reviewer=sam, judgment=("pass", "fail")[i % 3 == 0])
        if i % 2:
            add_annotation(trial_id=trial.pk, reviewer=tom, judgment="fail", blind=True)
    for counted in ("", "counted=blind"):
        for by in agreement.DIMENSIONS:
            # reward ≥ 0 holds for every trial: the same trials, counted by grouping them.
            tallied = matrices(counted, by)
            assert tallied == matrices(f"{counted}&reward_min=0", by)
            assert tallied[1] > 0
    assert agreement.filtered_trials(TrialFilterForm(QueryDict(""))) is None
    assert agreement.filtered_trials(TrialFilterForm(QueryDict("reward_min=0"))) is not None


def two_runs_judged(people: dict[str, User], *, modes: int, judged: int) -> list[Trial]:
    """Twelve trials, alternately of run-a and run-b, over `modes` failure modes; the first
    `judged` judged by rita and by sam."""
    trials = f.write(
        *(
            f.bundle(
                name=f"t{i}",
                job=("run-a", "run-b")[i % 2],
                reward=(0.1, 0.9)[i % 3 == 0],
                judges=[f.judge(("PASS", "FAIL")[i % 4 == 0], failure_mode=f"m{i % modes}")],
            )
            for i in range(12)
        )
    )
    for i, trial in enumerate(trials[:judged]):
        add_annotation(trial_id=trial.pk, reviewer=people["rita"], judgment=("pass", "fail")[i % 2])
        add_annotation(
            trial_id=trial.pk, reviewer=people["sam"], judgment=("pass", "fail")[i % 5 == 0]
        )
    return trials


def test_the_page_of_one_job_reads_its_tallies_and_agrees_with_grouping_them(
    people: dict[str, User],
) -> None:
    trials = two_runs_judged(people, modes=1, judged=12)
    job_a = trials[0].job
    assert TrialFilterForm(QueryDict(f"job={job_a.pk}")).only_job == job_a
    assert TrialFilterForm(QueryDict(f"job={job_a.pk}&reward_min=0")).only_job is None
    for counted in ("", "&counted=blind"):
        for by in agreement.DIMENSIONS:
            tallied = matrices(f"job={job_a.pk}{counted}", by)
            assert tallied == matrices(f"job={job_a.pk}&reward_min=0{counted}", by)
    assert matrices(f"job={job_a.pk}", "source")[1] == 12  # six trials, two reviewers
    assert_kept_equals_recount()


def test_the_counts_read_new_annotations(people: dict[str, User]) -> None:
    rita, sam = people["rita"], people["sam"]
    trials = two_runs_judged(people, modes=3, judged=10)
    job_a = trials[0].job
    # Every trial's tallies, one job's (also blind only), a filter that groups the latest
    # judgments themselves, and a search.
    queries = ["", f"job={job_a.pk}", f"job={job_a.pk}&counted=blind", "reward_min=0", "q=t1"]

    def judgments() -> dict[str, int]:
        return {q: agreement.report(TrialFilterForm(QueryDict(q))).judgments for q in queries}

    first = judgments()
    assert trials[10].job_id == job_a.pk != trials[11].job_id
    for trial in trials[10:]:
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment="fail")
        add_annotation(trial_id=trial.pk, reviewer=sam, judgment="fail")
    # Four new judgments over every trial, two in run A's; none of them blind. The search
    # matches t1, t10 and t11 (the names contain "t1").
    added = {queries[0]: 4, queries[1]: 2, queries[2]: 0, queries[3]: 4, queries[4]: 4}
    assert judgments() == {q: first[q] + added[q] for q in queries}
    assert_kept_equals_recount()


@pytest.mark.parametrize("reviewers", [1, 12])
def test_adding_an_annotation_keeps_everything_in_a_fixed_number_of_queries(
    reviewers: int, django_assert_num_queries: Any
) -> None:
    trial = f.make_trial(annotations=[f.annotation(f"r{i}", "pass") for i in range(reviewers)])
    rita = f.make_user("rita", "reviewer")
    # SAVEPOINT; lock the trial with its task; INSERT the annotation; read the trial's
    # annotations; read its latest judgments; upsert them; add to the judgment tally and to
    # the pair tally, and to the job's two; read the latest adjudication; UPDATE the trial's
    # human summary; RELEASE. (The job's trial tallies follow by trigger.)
    with django_assert_num_queries(13):
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment="fail")
    assert_kept_equals_recount()
