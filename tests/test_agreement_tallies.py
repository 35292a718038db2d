"""Latest judgments and agreement's tallies, kept by triggers through every write, equal a recount.

`LatestJudgment` holds each reviewer's latest (and latest blind) judgment of each trial with
the trial's gates; `JudgmentTally` and `PairTally` hold their grouped counts, which the
agreement page over every trial reads. Database triggers keep them (review migration
0009). Annotations made one by one, in bulk, through the review form and the API, from a
bundle; adjudications, re-judging, re-ingesting, queryset updates of trials and tasks, a
trial deleted: after each step the kept rows must be exactly what `review.science.tallies.rebuild`
(the live module's SQL, checked here against the migration's frozen trigger SQL) recounts
from the annotations. The same holds for the per-job tallies (`JobJudgmentTally`,
`JobPairTally`, and the trial tallies of review.science.job_tallies).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.http import QueryDict
from django.test import Client

from review import adjudication, tokens
from review.filtering.form import TrialFilterForm
from review.models import (
    GATE_FIELDS,
    Annotation,
    JobJudgmentTally,
    JobMultiRatedTally,
    JobPairTally,
    JobTally,
    JudgmentTally,
    LatestJudgment,
    MultiRatedTally,
    PairTally,
    TrialReviewed,
    add_annotation,
)
from review.science import agreement, job_tallies, tallies
from rewards.models import Task, Trial
from rewards.scoring.grading import store_verdict
from tests import review_factories as f
from tests.conftest import purge_review_data

pytestmark = pytest.mark.django_db

LATEST_COLUMNS = (
    "trial_id",
    "reviewer_id",
    "annotation_id",
    "judgment",
    "blind_annotation_id",
    "blind_judgment",
    *GATE_FIELDS,
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
        "multi-rated": _counted(MultiRatedTally),
        "job multi-rated": _counted(JobMultiRatedTally),
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


def test_a_trials_judgments_are_counted_under_its_gates_and_each_decided_pair_once(
    people: dict[str, User],
) -> None:
    rita, sam, tom, eve = (people[n] for n in ("rita", "sam", "tom", "eve"))
    (trial,) = f.write(f.bundle(name="t1", reward=0.9, judges=[f.judge("PASS")]))
    for reviewer, judgment, blind in [
        (rita, "fail", True),
        (sam, "defer", True),
        (sam, "pass", False),  # sam's latest is pass, his latest blind one defer
        (tom, "pass", False),
        (eve, "defer", False),
    ]:
        add_annotation(trial_id=trial.pk, reviewer=reviewer, judgment=judgment, blind=blind)
    trial.refresh_from_db()
    # The trial's gates: its verdicts, PASS for reward 0.9 ≥ threshold 0.5, the task source.
    gates = (
        trial.judge_verdict,
        trial.scorer_verdict,
        "PASS",
        trial.failure_mode,
        "electrical",
        trial.judge_model,
    )
    assert _counted(JudgmentTally) == {
        (False, *gates, "pass"): 2,
        (False, *gates, "fail"): 1,
        (False, *gates, "defer"): 1,
        (True, *gates, "fail"): 1,
        (True, *gates, "defer"): 1,
    }
    # Three reviewers decided (eve's defer abstains): three pairs, reviewer ids ascending,
    # each weighed by 3 raters; blind, only rita decided, so there is no pair.
    assert _counted(PairTally) == {
        (False, rita.pk, sam.pk, "fail", "pass", 3): 1,
        (False, rita.pk, tom.pk, "fail", "pass", 3): 1,
        (False, sam.pk, tom.pk, "pass", "pass", 3): 1,
    }
    assert _counted(JobPairTally) == {
        (trial.job_id, *key): n for key, n in _counted(PairTally).items()
    }
    # One trial judged by three reviewers who decided, two passes and a fail; blind, one
    # decided only.
    assert _counted(MultiRatedTally) == {(False, *gates, 2, 1): 1}
    assert _counted(JobMultiRatedTally) == {(trial.job_id, False, *gates, 2, 1): 1}

    # rita changes her mind: her fail moves to pass, her pairs with it.
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment="pass")
    assert _counted(JudgmentTally)[(False, *gates, "pass")] == 3
    assert (False, *gates, "fail") not in _counted(JudgmentTally)
    assert _counted(PairTally) == {
        (False, rita.pk, sam.pk, "pass", "pass", 3): 1,
        (False, rita.pk, tom.pk, "pass", "pass", 3): 1,
        (False, sam.pk, tom.pk, "pass", "pass", 3): 1,
    }
    assert _counted(MultiRatedTally) == {(False, *gates, 3, 0): 1}
    # sam's latest blind judgment becomes fail: two blind decided judgments, one trial.
    add_annotation(trial_id=trial.pk, reviewer=sam, judgment="fail", blind=True)
    assert _counted(MultiRatedTally) == {(False, *gates, 2, 1): 1, (True, *gates, 0, 2): 1}
    assert_kept_equals_recount()


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

    # Annotations written in bulk, around `add_annotation`: one of them older than the
    # reviewer's latest, which stays the one that counts.
    newest = Annotation.objects.filter(trial=t3, reviewer=sam).get().created_at
    Annotation.objects.bulk_create(
        [
            Annotation(trial=t3, reviewer=rita, judgment="fail"),
            Annotation(trial=t3, reviewer=tom, judgment="pass", blind=True),
            Annotation(trial=t3, reviewer=sam, judgment="pass", created_at=newest - timedelta(1)),
        ]
    )
    assert_kept_equals_recount()
    assert LatestJudgment.objects.get(trial=t3, reviewer=sam).judgment == "defer"

    # Queryset updates of a trial's gates and of a task's, around the domain code.
    Trial.objects.filter(pk=t3.pk).update(judge_verdict="FAIL", failure_mode="crash")
    assert_kept_equals_recount()
    assert set(LatestJudgment.objects.filter(trial=t3).values_list("failure_mode", flat=True)) == {
        "crash"
    }
    Task.objects.filter(pk=t1.task_id).update(pass_threshold=0.05, source="civil")
    assert_kept_equals_recount()
    assert set(LatestJudgment.objects.filter(trial=t1).values_list("verifier", "source")) == {
        ("PASS", "civil")
    }

    # A trial nobody judged, deleted, takes nothing with it.
    (unjudged,) = f.write(f.bundle(name="t5", reward=0.3))
    Trial.objects.filter(pk=unjudged.pk).delete()
    assert_kept_equals_recount()


def test_annotations_through_the_form_and_the_api_are_counted(client: Client) -> None:
    t1, t2 = f.write(f.bundle(name="t1", reward=0.9), f.bundle(name="t2", reward=0.2))
    rita = f.login(client, "rita", "reviewer")
    sam = f.make_user("sam", "reviewer")
    assert client.post(f"/trials/{t1.pk}/annotations/", {"judgment": "fail"}).status_code == 302
    response = client.post(
        f"/trials/{t2.pk}/annotations/", {"judgment": "pass"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    response = client.post(
        f"/api/trials/{t1.pk}/annotations",
        {"judgment": "pass"},
        content_type="application/json",
        headers={"Authorization": f"Bearer {tokens.create_token(sam, 'test')[1]}"},
    )
    assert response.status_code == 201
    assert_kept_equals_recount()
    assert _counted(PairTally) == {(False, rita.pk, sam.pk, "fail", "pass", 2): 1}


def test_annotations_written_in_sql_are_counted_copy_on_postgresql(
    people: dict[str, User],
) -> None:
    """Rows loaded around the application: one COPY on PostgreSQL (the statement trigger
    sees all of them at once), one multi-row INSERT elsewhere."""
    trials = f.write(*(f.bundle(name=f"t{i}", reward=(0.2, 0.8)[i % 2]) for i in range(4)))
    rows = [
        (trial.pk, people[name].pk, f.START + timedelta(hours=hour), judgment, blind)
        for trial in trials
        for hour, (name, judgment, blind) in enumerate(
            [("rita", "pass", True), ("sam", "fail", False), ("rita", "fail", False)]
        )
    ]
    columns = "trial_id, reviewer_id, created_at, judgment, blind, reviewer_discipline,"
    columns += " categories, notes, judge_verdict_seen"
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.copy(f"COPY review_annotation ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row((*row, "", "[]", "", ""))
        else:
            values = ", ".join(["(%s, %s, %s, %s, %s, '', '[]', '', '')"] * len(rows))
            cursor.execute(
                f"INSERT INTO review_annotation ({columns}) VALUES {values}",  # noqa: S608
                [value for row in rows for value in row],
            )
    assert_kept_equals_recount()
    rita, sam = people["rita"], people["sam"]
    # Per trial rita's latest is fail (blind: pass), sam's fail: one fail/fail pair each.
    assert _counted(PairTally) == {(False, rita.pk, sam.pk, "fail", "fail", 2): 4}


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
    # annotations; read the latest adjudication; UPDATE the trial's human summary; RELEASE.
    # (The latest judgments, agreement's tallies and the job's tallies follow by trigger.)
    with django_assert_num_queries(7):
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment="fail")
    assert_kept_equals_recount()


@pytest.mark.django_db(transaction=True)
def test_migration_0018_counts_the_trials_judged_more_than_once_and_goes_back(
    people: dict[str, User],
) -> None:
    """Migrated forwards, the multi-rated tallies are counted from the latest judgments and
    kept from then on; back, migration 0009's triggers keep the other tallies alone."""
    try:
        trials = two_runs_judged(people, modes=2, judged=6)
        expected = kept()
        assert expected["multi-rated"]
        assert expected["job multi-rated"]
        call_command("migrate", "review", "0017", verbosity=0)
        add_annotation(trial_id=trials[6].pk, reviewer=people["rita"], judgment="pass")
        add_annotation(trial_id=trials[6].pk, reviewer=people["tom"], judgment="fail")
        call_command("migrate", "review", verbosity=0)
        assert kept() == recounted()
        assert kept()["multi-rated"] != expected["multi-rated"]
        add_annotation(trial_id=trials[7].pk, reviewer=people["rita"], judgment="fail")
        add_annotation(trial_id=trials[7].pk, reviewer=people["sam"], judgment="fail")
        Trial.objects.filter(pk__in=[t.pk for t in trials[:8]]).update(judge_verdict="PASS")
        assert_kept_equals_recount()
    finally:
        purge_review_data()


def test_the_tally_reads_break_down_by_a_tallied_gate_only(people: dict[str, User]) -> None:
    two_runs_judged(people, modes=2, judged=4)
    # The breakdown's column is written into the statement: anything but a gate is refused.
    for read in (tallies.judgment_counts, tallies.multi_rated_counts):
        assert read(None, False, "failure_mode")
        with pytest.raises(ValueError, match="not a tallied gate"):
            read(None, False, "failure_mode) FROM review_annotation --")
