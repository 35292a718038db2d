"""The agreement page's statistics, honest: κ's interval resamples trials (a trial judged by
two or three reviewers is one unit), degenerate or small tables get a dash and a reason,
the default breakdown gives meaningful judge matrices, and cells say what they count.

The fixture: 14 trials of task source "electrical" (the judge PASS on t0 to t6, FAIL on
t7 to t13), judged by rita, sam and tom (p pass, f fail, - none):

    t0 ppp  t1 pp-  t2 p--  t3 pf-  t4 ppf  t5 p--  t6 f--
    t7 fff  t8 ff-  t9 f--  t10 pf- t11 f-- t12 p-- t13 ffp
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db.models import Q
from django.http import QueryDict
from django.test import Client

from review.filtering.form import TrialFilterForm
from review.models import add_annotation
from review.science import agreement
from rewards import agreement as stats
from rewards.agreement import Clusters, Interval
from rewards.models import Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db

JUDGMENTS = {
    # trial: (judge verdict, judgments of rita, sam, tom)
    "t0": ("PASS", "ppp"),
    "t1": ("PASS", "pp"),
    "t2": ("PASS", "p"),
    "t3": ("PASS", "pf"),
    "t4": ("PASS", "ppf"),
    "t5": ("PASS", "p"),
    "t6": ("PASS", "f"),
    "t7": ("FAIL", "fff"),
    "t8": ("FAIL", "ff"),
    "t9": ("FAIL", "f"),
    "t10": ("FAIL", "pf"),
    "t11": ("FAIL", "f"),
    "t12": ("FAIL", "p"),
    "t13": ("FAIL", "ffp"),
}


@pytest.fixture
def reviewers() -> list[User]:
    return [f.make_user(name, "reviewer") for name in ("rita", "sam", "tom")]


@pytest.fixture
def judged(reviewers: list[User]) -> dict[str, Trial]:
    made = f.write(
        *(
            f.bundle(
                name=name,
                reward=0.9 if verdict == "PASS" else 0.1,
                judges=[f.judge(verdict, failure_mode="" if verdict == "PASS" else "units")],
            )
            for name, (verdict, _) in JUDGMENTS.items()
        )
    )
    by_name = {t.name: t for t in made}
    for name, (_, judgments) in JUDGMENTS.items():
        for reviewer, letter in zip(reviewers, judgments, strict=False):
            judgment = {"p": "pass", "f": "fail"}[letter]
            add_annotation(trial_id=by_name[name].pk, reviewer=reviewer, judgment=judgment)
    return by_name


def _by_hand() -> Clusters:
    """What each trial adds to the judge's matrix (PASS·pass, PASS·fail, FAIL·pass,
    FAIL·fail), one unit per trial."""
    profiles = []
    for verdict, judgments in JUDGMENTS.values():
        row = 0 if verdict == "PASS" else 2
        cells = [0, 0, 0, 0]
        cells[row] = judgments.count("p")
        cells[row + 1] = judgments.count("f")
        profiles.append((cells, 1))
    return Clusters.of(2, profiles)


def test_kappas_interval_resamples_the_trials_not_the_judgments(judged: dict[str, Any]) -> None:
    units = _by_hand()
    assert units.units == 14
    assert units.table == [[10, 3], [3, 10]]
    for form in (TrialFilterForm({}), TrialFilterForm({"reward_min": "0"})):
        # Over every trial (the kept tallies) and under a filter (the grouped judgments).
        judge = agreement.report(form).comparisons[0]
        assert judge.overall.counts == [[10, 3], [3, 10]]
        multi = agreement.multi_rated(form, agreement.DIMENSIONS["source"])
        assert judge.overall.units(multi) == units
        expected = stats.kappa_interval(units)
        assert isinstance(expected, Interval)
        assert judge.overall.interval == expected
        # The task source's one group holds the same trials: the same units, with the
        # breakdown's replicates.
        (group,) = judge.groups
        assert group.label == "electrical"
        assert group.matrix.interval == stats.kappa_interval(
            units, replicates=agreement.GROUP_REPLICATES
        )
    # Resampling the 26 judgments as if independent is another interval (how much wider the
    # honest one is depends on how alike a trial's judgments are: tests/test_agreement_stats.py).
    assert stats.kappa_interval([[10, 3], [3, 10]]) != expected


def test_a_reviewer_pairs_counts_are_trials_each_one_unit(judged: dict[str, Any]) -> None:
    pairs = {(p.a, p.b): p.matrix for p in agreement.report(TrialFilterForm({})).reviewers.pairs}
    # rita and sam both judged t0, t1, t3, t4, t7, t8, t10, t13: eight trials, too few.
    rita_sam = pairs["rita", "sam"]
    assert rita_sam.counts == [[3, 2], [0, 3]]
    assert rita_sam.units({}) == Clusters.of_cells([[3, 2], [0, 3]])
    assert rita_sam.interval is None
    assert rita_sam.no_interval == "fewer than 10 trials"


def test_a_constant_gate_shows_a_dash_and_the_reason_never_a_point(client: Client) -> None:
    # The statistician's table: the judge FAIL on all 28 trials, reviewers split evenly
    # (cells 0, 0, 14, 14). κ is 0 by construction; its interval was [0.00, 0.00].
    rita = f.make_user("rita", "reviewer")
    for index, trial in enumerate(f.make_trials(28, judges=[f.judge("FAIL", failure_mode="x")])):
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment=("pass", "fail")[index % 2])
    judge = agreement.report(TrialFilterForm({})).comparisons[0]
    assert judge.overall.counts == [[0, 0], [14, 14]]
    assert judge.overall.kappa == 0.0
    assert judge.overall.interval is None
    assert judge.overall.no_interval == "the judge verdict never varies here"
    f.login(client, "ann", "analyst")
    html = client.get("/agreement/").content.decode()
    assert "[0.00, 0.00]" not in html
    assert '— <span class="no-interval">the judge verdict never varies here</span>' in html
    # The CSV and the JSON say it too: no interval, and why.
    rows = client.get("/agreement.csv").content.decode().splitlines()
    assert rows[0].endswith(",kappa_ci_low,kappa_ci_high,kappa_no_interval")
    assert rows[1].startswith("judge,,(all),28,0,0,14,14,")
    assert rows[1].endswith(",,,the judge verdict never varies here")
    report = agreement.report(TrialFilterForm({}))
    assert report.comparisons[0].overall.as_dict()["kappa_ci"] is None
    assert report.comparisons[0].overall.as_dict()["kappa_no_interval"] == (
        "the judge verdict never varies here"
    )


def test_a_reviewer_pair_names_the_reviewer_who_never_varied() -> None:
    urls = [["", ""], ["", ""]]
    rita_all_pass = agreement.Matrix(
        counts=[[7, 5], [0, 0]], urls=urls, rows_name="rita", columns_name="sam"
    )
    assert rita_all_pass.no_interval == "rita gave one judgment only"
    sam_all_fail = agreement.Matrix(
        counts=[[0, 7], [0, 5]], urls=urls, rows_name="rita", columns_name="sam"
    )
    assert sam_all_fail.no_interval == "sam gave one judgment only"


def test_reviewers_who_all_agree_get_no_interval(client: Client) -> None:
    rita = f.make_user("rita", "reviewer")
    for trial in f.make_trials(6, reward=0.9, judges=[f.judge("PASS")]):
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment="pass")
    fails = f.make_trials(6, reward=0.1, judges=[f.judge("FAIL", failure_mode="x")])
    for trial in fails:
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment="fail")
    judge = agreement.report(TrialFilterForm({})).comparisons[0]
    assert judge.overall.counts == [[6, 0], [0, 6]]
    assert judge.overall.kappa == 1.0
    assert judge.overall.no_interval == "no disagreement: κ is 1 in every resample"
    f.login(client, "ann", "analyst")
    assert "[1.00, 1.00]" not in client.get("/agreement/").content.decode()


def test_the_default_breakdown_is_task_source_and_failure_mode_says_it_is_fail_only(
    client: Client, judged: dict[str, Any]
) -> None:
    assert agreement.report(TrialFilterForm({})).dimension.key == "source"
    f.login(client, "ann", "analyst")
    html = client.get("/agreement/").content.decode()
    assert "<h3>By task source</h3>" in html
    assert "(FAIL verdicts only)" in html  # beside the failure mode link
    by_mode = client.get("/agreement/?by=failure_mode").content.decode()
    assert "A failure mode exists only on a FAIL verdict" in by_mode
    # Indeed: the judge matrix of a failure mode has its FAIL row only.
    judge = agreement.report(TrialFilterForm({}), "failure_mode").comparisons[0]
    units = next(g for g in judge.groups if g.label == "units")
    assert units.matrix.counts[0] == [0, 0]


def test_cells_count_judgments_their_links_list_trials_and_the_page_says_why(
    client: Client, judged: dict[str, Any]
) -> None:
    f.login(client, "ann", "analyst")
    html = client.get("/agreement/").content.decode()
    assert "a count is judgments and a cell's link lists trials" in html
    assert "pass (judgments)" in html
    # PASS·pass counts 10 judgments of 6 trials (t0 three times, t1 and t4 twice).
    assert 'aria-label="the trials of these 10 judgments">trials</a>' in html


def test_without_a_trial_judged_twice_the_intervals_read_nothing_more(
    client: Client, django_assert_num_queries: Any
) -> None:
    rita = f.make_user("rita", "reviewer")
    for index, trial in enumerate(f.make_trials(12, judges=[f.judge("PASS")])):
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment=("pass", "fail")[index % 3 == 0])
    f.login(client, "ann", "analyst")
    # the user, their role groups, the tasks confirmed defective (none; then cached), the
    # grouped counts, the reviewer pairs (none: so no trial judged more than once to look for).
    with django_assert_num_queries(5):
        response = client.get("/agreement/")
    assert response.status_code == 200


def test_blind_annotations_only_resample_the_trials_of_their_blind_judgments(
    judged: dict[str, Any], reviewers: list[User]
) -> None:
    # Blind judgments on t0 (rita, sam: pass, fail) and t7 (rita, sam: fail, fail), and one
    # on each of t1 to t6 and t8 to t11 by tom: twelve trials, two of them judged twice.
    rita, sam, tom = reviewers
    blind = [("t0", rita, "pass"), ("t0", sam, "fail"), ("t7", rita, "fail"), ("t7", sam, "fail")]
    blind += [(f"t{i}", tom, "pass" if i < 7 else "fail") for i in (1, 2, 3, 4, 5, 6, 8, 9, 10, 11)]
    for name, reviewer, judgment in blind:
        add_annotation(trial_id=judged[name].pk, reviewer=reviewer, judgment=judgment, blind=True)
    units = Clusters.of(
        2, [((1, 1, 0, 0), 1), ((0, 0, 0, 2), 1), ((1, 0, 0, 0), 6), ((0, 0, 0, 1), 4)]
    )
    for form in (
        TrialFilterForm({"counted": "blind"}),
        TrialFilterForm({"counted": "blind", "reward_min": "0"}),
    ):
        judge = agreement.report(form).comparisons[0]
        assert judge.overall.counts == [[7, 1], [0, 6]]
        assert judge.overall.interval == stats.kappa_interval(units)


def _intervals(query: str, by: str, left_out: Q | None = None) -> list[Any]:
    result = agreement.report(TrialFilterForm(QueryDict(query)), by, left_out)
    return [
        (m.counts, m.interval, m.no_interval)
        for c in result.comparisons
        for m in (c.overall, *(g.matrix for g in c.groups))
    ]


def test_the_kept_units_are_the_grouped_ones_with_and_without_trials_left_out(
    judged: dict[str, Any], reviewers: list[User]
) -> None:
    # A second job's trials (t14 to t16, judged twice, with another failure mode), and
    # blind judgments on some of the first job's.
    rita, sam, tom = reviewers
    more = f.write(
        *(
            f.bundle(
                name=f"t{i}", job="run-b", reward=0.2, judges=[f.judge("FAIL", failure_mode="m2")]
            )
            for i in (14, 15, 16)
        )
    )
    for trial in more:
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment="fail")
        add_annotation(trial_id=trial.pk, reviewer=sam, judgment="pass")
    for name, reviewer, judgment in [("t0", rita, "fail"), ("t0", sam, "fail"), ("t13", tom, "p")]:
        judgment = {"p": "pass"}.get(judgment, judgment)
        add_annotation(trial_id=judged[name].pk, reviewer=reviewer, judgment=judgment, blind=True)
    job = judged["t0"].job_id
    assert more[0].job_id != job
    # Trials left out: one judged three times, one twice, one once, and one of the second job.
    left_out = Q(pk__in=[judged["t0"].pk, judged["t3"].pk, judged["t2"].pk, more[0].pk])
    for kept in ("", "counted=blind", f"job={job}", f"job={job}&counted=blind"):
        grouped = f"{kept}&reward_min=0"  # the same trials, grouped from their judgments
        for by in agreement.DIMENSIONS:
            for out in (None, left_out):
                forms = TrialFilterForm(QueryDict(kept)), TrialFilterForm(QueryDict(grouped))
                units = [
                    agreement.multi_rated(form, agreement.DIMENSIONS[by], out) for form in forms
                ]
                assert dict(units[0]) == dict(units[1])
                assert _intervals(kept, by, out) == _intervals(grouped, by, out)
    # Without t0, t2, t3 and t14, the judge's matrix over every trial holds these trials
    # judged more than once: (row, passes, fails, trials), PASS row 0, FAIL row 1; t10 and
    # the second job's t15 and t16 add the same.
    form = TrialFilterForm(QueryDict(""))
    multi = agreement.multi_rated(form, agreement.DIMENSIONS["source"], left_out)
    assert sorted(multi[("judge", None)]) == [
        (0, 2, 0, 1),  # t1
        (0, 2, 1, 1),  # t4
        (1, 0, 2, 1),  # t8
        (1, 0, 3, 1),  # t7
        (1, 1, 1, 3),  # t10, t15, t16
        (1, 1, 2, 1),  # t13
    ]
