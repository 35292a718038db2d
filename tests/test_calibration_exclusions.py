"""Judge calibration and the corrected pass rate leave out, by default, the trials of tasks
confirmed defective and the trials with a confirmed reward hack, behind the same switches as
the job page and compare (`include_defective=1`, `include_hacks=1`), saying how many.

The fixture, one run of judge version judge-1 · r1 (each labelled trial's part chosen):

    task     labelled (judge, human), by part                         judged, unlabelled
    sound    test: 2 PASS/pass, 2 FAIL/fail; calibration: 4 PASS/pass,   3 PASS, 2 FAIL
             1 FAIL/pass, 3 FAIL/fail, 1 PASS/fail
    sound    a hacked trial, calibration: PASS/fail (its finding confirmed below)
    broken   test: 1 PASS/fail; calibration: 3 PASS/fail                  2 FAIL
             (confirmed defective below: the judge passes what humans fail)
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from review import defects
from review.models import CalibrationRule, add_annotation, review_finding
from review.science import calibration, exclusions, judge_error
from review.science.calibration import CALIBRATION, TEST, Version, part_of
from rewards.models import Job, Task, Trial
from rewards.scoring import grading
from tests import review_factories as f
from tests.test_api import auth, make_token
from tests.test_integrity_review import HACK

pytestmark = pytest.mark.django_db

SALT = "a-fixed-salt-for-exclusions"
RUN = "run-x"
VERSION = Version("judge-1", "r1")
DEFECTIVE = frozenset({exclusions.DefectiveTasks.key})
HACKS = frozenset({exclusions.ConfirmedHacks.key})


def _judge(verdict: str) -> Any:
    return f.judge(verdict).model_copy(update={"rubric_version": "r1"})


@dataclass(frozen=True)
class Labelled:
    trial: Trial
    task: str
    judge: str
    human: str
    hacked: bool = False


def _label(
    rita: User, task: str, wanted: dict[str, list[tuple[str, str]]], *, hacked: bool = False
) -> list[Labelled]:
    """Trials of `task` labelled so that each part holds `wanted[part]`: a trial's part is
    known once it exists, and its verdict and label are given then (a trial of a part
    already full stays unjudged)."""
    made = []
    extra = {"detail": HACK, "scorers": [f.scorer("a")], "error_tags": []} if hacked else {}
    while wanted[TEST] or wanted[CALIBRATION]:
        trial = f.make_trial(job=RUN, task=task, judges=[], **extra)
        queue = wanted[part_of(trial.pk, SALT)]
        if not queue:
            continue
        judge, human = queue.pop()
        grading.store_verdict(trial, _judge(judge))
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment=human)
        made.append(Labelled(trial, task, judge, human, hacked))
    return made


@pytest.fixture
def labelled() -> list[Labelled]:
    CalibrationRule.objects.create(
        pk=1, split_salt=SALT, min_labelled=2, min_tpr_lower=0.0, min_tnr_lower=0.0
    )
    rita = f.make_user("rita", "reviewer")
    sound = _label(
        rita,
        "sound",
        {
            TEST: [("PASS", "pass")] * 2 + [("FAIL", "fail")] * 2,
            CALIBRATION: [("PASS", "pass")] * 4
            + [("FAIL", "pass")]
            + [("FAIL", "fail")] * 3
            + [("PASS", "fail")],
        },
    )
    hacked = _label(rita, "sound", {TEST: [], CALIBRATION: [("PASS", "fail")]}, hacked=True)
    broken = _label(rita, "broken", {TEST: [("PASS", "fail")], CALIBRATION: [("PASS", "fail")] * 3})
    f.write(
        *(f.bundle(job=RUN, task="sound", judges=[_judge(v)]) for v in ["PASS"] * 3 + ["FAIL"] * 2),
        *(f.bundle(job=RUN, task="broken", judges=[_judge("FAIL")]) for _ in range(2)),
    )
    return sound + hacked + broken


def _confirm_defect() -> None:
    defects.record(
        task_id=Task.objects.get(name="broken").pk,
        author=f.make_user("eve", "expert"),
        can_settle=True,
        state="confirmed",
        category="broken_test",
        rationale="The test accepts any output.",
    )


def _confirm_hack(labelled: list[Labelled]) -> None:
    [hacked] = [item.trial for item in labelled if item.hacked]
    review_finding(
        finding_id=hacked.integrity_findings.get().pk,
        trial_id=hacked.pk,
        reviewer=f.make_user("ed", "expert"),
        decision="confirmed",
        rationale="wrote reward.txt itself",
    )


def _expected(labelled: list[Labelled], *, broken: bool, hacked: bool) -> dict[str, list[int]]:
    """Each part's confusion counts (tp, fn, tn, fp), counted here trial by trial over the
    trials counted."""
    cells = {("PASS", "pass"): 0, ("FAIL", "pass"): 1, ("FAIL", "fail"): 2, ("PASS", "fail"): 3}
    expected = {CALIBRATION: [0, 0, 0, 0], TEST: [0, 0, 0, 0]}
    for item in labelled:
        if (item.task == "broken" and not broken) or (item.hacked and not hacked):
            continue
        expected[part_of(item.trial.pk, SALT)][cells[item.judge, item.human]] += 1
    return expected


def _got(report: calibration.Report) -> dict[str, list[int]]:
    found = report.of(VERSION)
    assert found is not None
    return {
        part: [c.true_pos, c.false_neg, c.true_neg, c.false_pos]
        for part, c in ((CALIBRATION, found.calibration), (TEST, found.test))
    }


def test_confirming_a_defect_or_a_hack_changes_calibration_only_through_the_switch(
    labelled: list[Labelled],
) -> None:
    everything = _expected(labelled, broken=True, hacked=True)
    assert _got(calibration.report()) == everything
    assert calibration.report().counted == calibration.Counted(calibration.report().versions)

    _confirm_defect()
    without_broken = _expected(labelled, broken=False, hacked=True)
    assert without_broken != everything
    report = calibration.report()
    assert _got(report) == without_broken
    assert report.counted is not None
    assert (report.counted.named_trials, report.counted.named_tasks) == (4, 1)
    assert report.counted.left_out == 4
    switched = calibration.report(included=DEFECTIVE)
    assert _got(switched) == everything
    assert switched.counted is not None
    assert (switched.counted.named_trials, switched.counted.left_out) == (4, 0)

    _confirm_hack(labelled)
    neither = _expected(labelled, broken=False, hacked=False)
    assert neither != without_broken
    assert _got(calibration.report()) == neither
    assert _got(calibration.report(included=HACKS)) == without_broken
    assert _got(calibration.report(included=DEFECTIVE)) == _expected(
        labelled, broken=True, hacked=False
    )
    both = calibration.report(included=DEFECTIVE | HACKS)
    assert _got(both) == everything
    assert both.counted is not None
    assert both.counted.named == {"defective_task": 4, "confirmed_hack": 1}
    assert (both.counted.named_trials, both.counted.named_tasks, both.counted.left_out) == (
        5,
        2,
        0,
    )


def test_the_page_csv_and_api_say_what_is_left_out_and_take_the_switches(
    client: Client, labelled: list[Labelled]
) -> None:
    _confirm_defect()
    without_broken = _expected(labelled, broken=False, hacked=True)
    everything = _expected(labelled, broken=True, hacked=True)
    f.login(client, "exp", "expert")
    page = client.get("/calibration/").content.decode()
    assert "4 labelled trials of 1 task left out" in page
    assert 'href="?include_defective=1"' in page
    assert 'href="/calibration.csv"' in page
    switched = client.get("/calibration/?include_defective=1").content.decode()
    assert "4 labelled trials of 1 task counted" in switched
    assert 'href="/calibration.csv?include_defective=1"' in switched
    assert "include_hacks" not in switched  # no labelled trial has a confirmed hack

    def csv_counts(url: str) -> dict[str, list[int]]:
        rows = csv.DictReader(io.StringIO(client.get(url).content.decode()))
        return {
            row["part"]: [
                int(row[name]) for name in ("true_pos", "false_neg", "true_neg", "false_pos")
            ]
            for row in rows
        }

    assert csv_counts("/calibration.csv") == without_broken
    assert csv_counts("/calibration.csv?include_defective=1") == everything

    token = make_token("api-exp", "expert")

    def api(query: str) -> Any:
        body = client.get(f"/api/calibration{query}", headers=auth(token)).json()
        [version] = body["versions"]
        counts = {
            part: [version[part][k] for k in ("true_pos", "false_neg", "true_neg", "false_pos")]
            for part in (CALIBRATION, TEST)
        }
        return counts, body["left_out"]

    counts, left_out = api("")
    assert counts == without_broken
    assert (left_out["labelled_trials"], left_out["tasks"], left_out["left_out"]) == (4, 1, 4)
    assert left_out["reasons"][0] == {
        "reason": "defective_task",
        "label": "tasks confirmed defective",
        "switch": "include_defective=1",
        "counted": False,
        "labelled_trials": 4,
    }
    counts, left_out = api("?include_defective=1")
    assert counts == everything
    assert (left_out["left_out"], left_out["reasons"][0]["counted"]) == (0, True)


def _judged_counts(job: Job, *, broken: bool, hacked: bool) -> tuple[int, int]:
    """The run's judged trials (passed, decided), counted here over the trials counted."""
    trials = Trial.objects.filter(job=job, judge_verdict__in=["PASS", "FAIL"])
    if not broken:
        trials = trials.exclude(task__name="broken")
    if not hacked:
        trials = trials.exclude(integrity="confirmed")
    return trials.filter(judge_verdict="PASS").count(), trials.count()


def _correction(rate: calibration.CorrectedRate, report: calibration.Report) -> Any:
    """What the rate should be: its counts corrected by the report's calibration part."""
    found = report.of(VERSION)
    assert found is not None
    part = found.calibration
    return judge_error.corrected_pass_rate(
        rate.passed, rate.judged, part.true_pos, part.positives, part.true_neg, part.negatives
    )


def test_confirming_a_defect_or_a_hack_changes_the_corrected_rate_only_through_the_switch(
    client: Client, labelled: list[Labelled]
) -> None:
    job = Job.objects.get(name=RUN)
    [before] = calibration.job_corrected_rates([job])[job.pk]
    assert (before.passed, before.judged) == _judged_counts(job, broken=True, hacked=True)
    assert before.corrected is not None
    assert before.corrected == _correction(before, calibration.report())

    _confirm_defect()
    _confirm_hack(labelled)
    left_out = exclusions.for_jobs([job.pk])
    [after] = calibration.job_corrected_rates([job], left_out)[job.pk]
    assert (after.passed, after.judged) == _judged_counts(job, broken=False, hacked=False)
    assert after.corrected is not None
    assert after.corrected == _correction(after, calibration.report())
    assert after.corrected.estimate != before.corrected.estimate
    # The default (no switches given) is the page's default.
    assert calibration.job_corrected_rates([job])[job.pk] == [after]

    switched = exclusions.for_jobs([job.pk], DEFECTIVE | HACKS)
    [again] = calibration.job_corrected_rates([job], switched)[job.pk]
    assert again == before
    only_hacks = exclusions.for_jobs([job.pk], HACKS)
    [some] = calibration.job_corrected_rates([job], only_hacks)[job.pk]
    assert (some.passed, some.judged) == _judged_counts(job, broken=False, hacked=True)
    assert some.corrected == _correction(some, calibration.report(included=HACKS))

    f.login(client, "ann", "analyst")
    for query, rate in (("", after), ("?include_defective=1&include_hacks=1", before)):
        html = client.get(f"/jobs/{job.pk}/{query}").content.decode()
        assert f"{rate.passed} of {rate.judged}</span>" in html
        assert rate.corrected is not None
        assert rate.corrected.estimate is not None
        assert f"<strong>{rate.corrected.estimate * 100:.0f}%</strong>" in html
    html = client.get(f"/jobs/{job.pk}/?include_defective=1").content.decode()
    assert 'href="/calibration/?include_defective=1"' in html
    other = f.make_trial(job="run-y", judges=[_judge("PASS")]).job
    html = client.get(f"/compare/?a={job.pk}&b={other.pk}").content.decode()
    assert f"{after.passed} of {after.judged}</span>" in html
    html = client.get(
        f"/compare/?a={job.pk}&b={other.pk}&include_defective=1&include_hacks=1"
    ).content.decode()
    assert f"{before.passed} of {before.judged}</span>" in html


def test_the_job_page_reads_no_more_with_a_confirmed_defect_once_kept(
    client: Client, labelled: list[Labelled], django_assert_num_queries: Callable[..., Any]
) -> None:
    job = Job.objects.get(name=RUN)
    _confirm_defect()
    f.login(client, "ann", "analyst")
    client.get(f"/jobs/{job.pk}/")  # the roles, the ledger, the counts and the report, kept
    # 1 the user, 2 the job, 3 its tally rows, 4 the left-out trials' counts, 5 first
    # annotations by day, 6 the rule with the newest ids: the kept counts by judge version
    # (without the defective task) and the kept report are current.
    with django_assert_num_queries(6):
        assert client.get(f"/jobs/{job.pk}/").status_code == 200
    # The switch is other kept figures: read once, then kept too.
    client.get(f"/jobs/{job.pk}/?include_defective=1")
    with django_assert_num_queries(6):
        assert client.get(f"/jobs/{job.pk}/?include_defective=1").status_code == 200


def test_a_job_with_no_trial_left_out_keeps_one_count_whatever_the_switches(
    labelled: list[Labelled], monkeypatch: pytest.MonkeyPatch
) -> None:
    _confirm_defect()
    other = f.make_trial(job="run-y", task="sound", judges=[_judge("PASS")]).job
    job = Job.objects.get(name=RUN)
    counted: list[int] = []
    real = calibration._count_versions

    def counting(job: Job, left_out: exclusions.Excluded | None = None) -> Any:
        counted.append(job.pk)
        return real(job, left_out)

    monkeypatch.setattr(calibration, "_count_versions", counting)
    for included in (frozenset(), DEFECTIVE, frozenset(), DEFECTIVE):
        calibration.job_corrected_rates(
            [job, other], exclusions.for_jobs([job.pk, other.pk], included)
        )
    # run-x has trials of the defective task: counted once each way; run-y once.
    assert sorted(counted) == sorted([job.pk, job.pk, other.pk])
