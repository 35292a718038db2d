"""Judge calibration: each judge version against the human reference, split once into
calibration and test parts, admitted by the staff-set rule; the page, its CSV and the API."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from review import tokens
from review.adjudication import adjudicate
from review.models import CalibrationRule, add_annotation
from review.science import calibration, judge_error
from review.science.calibration import CALIBRATION, TEST, Version, part_of
from rewards.models import Job, JudgeVerdict, Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db

SALT = "a-fixed-salt-for-tests"


@pytest.fixture
def rule() -> CalibrationRule:
    return CalibrationRule.objects.create(
        pk=1, split_salt=SALT, min_labelled=2, min_tpr_lower=0.3, min_tnr_lower=0.3
    )


@pytest.fixture
def rita() -> User:
    return f.make_user("rita", "reviewer")


def _judge(verdict: str, model: str = "judge-1", rubric: str = "r1", **kw: Any) -> Any:
    return f.judge(verdict, judge_model=model, **kw).model_copy(update={"rubric_version": rubric})


def _labelled(
    rita: User, judge: str, human: str, *, model: str = "judge-1", rubric: str = "r1"
) -> Trial:
    trial = f.make_trial(judges=[_judge(judge, model, rubric)])
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment=human)
    return trial


def _by_part(trials: list[Trial], judged: list[tuple[str, str]]) -> dict[str, dict[str, int]]:
    """The confusion counts each part should hold, counted here trial by trial."""
    expected = {part: {"tp": 0, "fn": 0, "tn": 0, "fp": 0} for part in (CALIBRATION, TEST)}
    for trial, (judge, human) in zip(trials, judged, strict=True):
        cell = {
            ("PASS", "pass"): "tp",
            ("FAIL", "pass"): "fn",
            ("FAIL", "fail"): "tn",
            ("PASS", "fail"): "fp",
        }[judge, human]
        expected[part_of(trial.pk, SALT)][cell] += 1
    return expected


def _counts(c: calibration.Confusion) -> dict[str, int]:
    return {"tp": c.true_pos, "fn": c.false_neg, "tn": c.true_neg, "fp": c.false_pos}


# --- the split ------------------------------------------------------------------------------
def test_the_split_is_a_salted_hash_near_half_and_half() -> None:
    parts = [part_of(i, SALT) for i in range(1, 2001)]
    assert parts == [part_of(i, SALT) for i in range(1, 2001)]  # the same every time
    assert 900 < parts.count(TEST) < 1100
    # Another salt is another split.
    assert parts != [part_of(i, "another") for i in range(1, 2001)]


def test_the_salt_is_made_once_and_kept_when_staff_change_the_rule(client: Client) -> None:
    first = CalibrationRule.current()
    assert len(first.split_salt) == 32
    f.login(client, "boss", staff=True)
    response = client.post(
        "/calibration/rule/",
        {"min_tpr_lower": "0.7", "min_tnr_lower": "0.75", "min_labelled": "30", "split_salt": "x"},
    )
    assert response.status_code == 302
    again = CalibrationRule.current()
    assert again.split_salt == first.split_salt
    assert (again.min_tpr_lower, again.min_tnr_lower, again.min_labelled) == (0.7, 0.75, 30)
    assert again.updated_by is not None
    assert again.updated_by.username == "boss"


# --- the counts -----------------------------------------------------------------------------
def test_each_part_counts_its_trials_against_the_human_reference(
    rule: CalibrationRule, rita: User
) -> None:
    judged = [("PASS", "pass")] * 7 + [("FAIL", "pass")] * 3 + [("FAIL", "fail")] * 6
    judged += [("PASS", "fail")] * 4
    trials = [_labelled(rita, judge, human) for judge, human in judged]
    # Not labelled: unreviewed, deferred only, and reviewers who disagree.
    f.make_trial(judges=[_judge("PASS")])
    _labelled(rita, "PASS", "defer")
    split = _labelled(rita, "PASS", "pass")
    add_annotation(trial_id=split.pk, reviewer=f.make_user("sam", "reviewer"), judgment="fail")
    # An unparseable verdict decides nothing.
    _labelled(rita, "UNPARSEABLE", "pass")
    [only] = calibration.report().versions
    assert only.version == Version("judge-1", "r1")
    expected = _by_part(trials, judged)
    assert _counts(only.calibration) == expected[CALIBRATION]
    assert _counts(only.test) == expected[TEST]
    assert only.calibration.n + only.test.n == 20


def test_an_adjudicated_verdict_is_the_reference_over_the_reviewers(
    rule: CalibrationRule, rita: User
) -> None:
    sam = f.make_user("sam", "reviewer")
    trial = _labelled(rita, "PASS", "pass")
    add_annotation(trial_id=trial.pk, reviewer=sam, judgment="fail")
    assert calibration.report().versions == []  # disagreeing reviewers label nothing
    adjudicate(
        trial_id=trial.pk,
        adjudicator=f.make_user("eve", "expert"),
        verdict="fail",
        rationale="The voltage is off by a factor of ten.",
    )
    [only] = calibration.report().versions
    part = only.calibration if part_of(trial.pk, SALT) == CALIBRATION else only.test
    assert _counts(part) == {"tp": 0, "fn": 0, "tn": 0, "fp": 1}


def test_versions_are_counted_apart_and_only_each_versions_latest_verdict_counts(
    rule: CalibrationRule, rita: User
) -> None:
    # Judged twice by r1 (FAIL, then PASS: the later counts) and once by r2 and by judge-2.
    trial = f.make_trial(
        judges=[
            _judge("FAIL", scored_at=f.START),
            _judge("PASS", scored_at=f.START.replace(hour=11)),
            _judge("FAIL", rubric="r2"),
            _judge("PASS", model="judge-2"),
        ]
    )
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment="pass")
    report = calibration.report()
    part = part_of(trial.pk, SALT)
    cells = {
        str(c.version): _counts(c.calibration if part == CALIBRATION else c.test)
        for c in report.versions
    }
    assert cells == {
        "judge-1 · r1": {"tp": 1, "fn": 0, "tn": 0, "fp": 0},
        "judge-1 · r2": {"tp": 0, "fn": 1, "tn": 0, "fp": 0},
        "judge-2 · r1": {"tp": 1, "fn": 0, "tn": 0, "fp": 0},
    }


def test_rates_and_intervals_are_wilsons_on_each_part(rule: CalibrationRule, rita: User) -> None:
    c = calibration.Confusion(true_pos=81, false_neg=182, true_neg=0, false_pos=0)
    assert c.tpr == pytest.approx(81 / 263)
    assert c.tpr_interval is not None
    assert (round(c.tpr_interval.low, 4), round(c.tpr_interval.high, 4)) == (0.2553, 0.3662)
    # No human-fail trials: no TNR and no interval, never [x, x].
    assert c.tnr is None
    assert c.tnr_interval is None
    empty = calibration.Confusion()
    assert (empty.n, empty.tpr, empty.tpr_interval) == (0, None, None)


# --- the status -----------------------------------------------------------------------------
def _make_parts(rita: User, test: list[tuple[str, str]], calib: list[tuple[str, str]]) -> None:
    """Trials labelled so that the test part holds `test` and the calibration part `calib`:
    each trial's part is known once it exists, and its verdict and label are given then (a
    trial of a part already full stays unjudged and unlabelled)."""
    wanted = {TEST: list(test), CALIBRATION: list(calib)}
    while wanted[TEST] or wanted[CALIBRATION]:
        trial = f.make_trial(judges=[])
        queue = wanted[part_of(trial.pk, SALT)]
        if not queue:
            continue
        judge, human = queue.pop()
        JudgeVerdict.objects.create(
            trial=trial,
            verdict=judge,
            judge_model="judge-1",
            rubric_version="r1",
            task_completion=3,
            instruction_adherence=3,
            efficiency=3,
        )
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment=human)


def test_the_status_is_decided_on_the_test_part_only(rule: CalibrationRule, rita: User) -> None:
    perfect = [("PASS", "pass")] * 6 + [("FAIL", "fail")] * 6
    wrong = [("FAIL", "pass")] * 6 + [("PASS", "fail")] * 6
    _make_parts(rita, test=wrong, calib=perfect)
    [only] = calibration.report().versions
    assert only.calibration.tpr == 1.0
    assert only.test.tpr == 0.0
    assert only.status == calibration.NOT_ADMITTED
    assert "TPR's lower bound 0.00 is below 0.30" in only.reason


def test_admitted_when_both_lower_bounds_reach_the_rule(rule: CalibrationRule, rita: User) -> None:
    _make_parts(rita, test=[("PASS", "pass")] * 6 + [("FAIL", "fail")] * 6, calib=[])
    [only] = calibration.report().versions
    # 6/6 has a Wilson lower bound of 6 / (6 + 3.84) = 0.61 ≥ 0.3.
    assert only.test.tpr_interval is not None
    assert only.test.tpr_interval.low == pytest.approx(0.6097, abs=1e-4)
    assert only.status == calibration.ADMITTED
    assert only.reason == ""
    CalibrationRule.objects.filter(pk=1).update(min_tnr_lower=0.7)
    [again] = calibration.report().versions
    assert again.status == calibration.NOT_ADMITTED
    assert again.reason == "TNR's lower bound 0.61 is below 0.70"


def test_too_few_labels_of_either_kind(rule: CalibrationRule, rita: User) -> None:
    # Plenty of human-pass trials, one human-fail: the rule asks for two of each.
    _make_parts(rita, test=[("PASS", "pass")] * 5 + [("FAIL", "fail")], calib=[])
    [only] = calibration.report().versions
    assert only.status == calibration.TOO_FEW
    assert only.reason == (
        "the test part has 5 human-pass and 1 human-fail trials; the rule asks for 2 of each"
    )


# --- the page, its CSV and the API --------------------------------------------------------------
def test_experts_and_staff_see_the_page_reviewers_and_analysts_do_not(client: Client) -> None:
    assert client.get("/calibration/").status_code == 302  # to the login page
    for name, roles in (("rev", ("reviewer",)), ("ana", ("analyst",))):
        f.login(client, name, *roles)
        assert client.get("/calibration/").status_code == 403
        assert client.get("/calibration.csv").status_code == 403
    f.login(client, "exp", "expert")
    page = client.get("/calibration/")
    assert page.status_code == 200
    assert b"Judge calibration" in page.content
    assert b"Save the rule" not in page.content  # the rule is staff's
    assert client.post("/calibration/rule/", {"min_labelled": "5"}).status_code == 403
    assert client.post("/calibration/").status_code == 405


def test_a_rule_out_of_range_is_refused_and_shown(client: Client) -> None:
    f.login(client, "boss", staff=True)
    response = client.post(
        "/calibration/rule/", {"min_tpr_lower": "1.5", "min_tnr_lower": "0.8", "min_labelled": "0"}
    )
    assert response.status_code == 400
    assert b"between 0 and 1" in response.content
    assert b"At least one labelled trial" in response.content
    assert CalibrationRule.current().min_tpr_lower == 0.8


def test_the_page_csv_and_api_show_the_same_figures(
    client: Client, rule: CalibrationRule, rita: User
) -> None:
    judged = [("PASS", "pass")] * 4 + [("FAIL", "fail")] * 3 + [("PASS", "fail")]
    trials = [
        _labelled(rita, judge, human, model=f"judge {f.HOSTILE}"[:255]) for judge, human in judged
    ]
    expected = _by_part(trials, judged)
    user = f.login(client, "exp", "expert")
    page = client.get("/calibration/").content.decode()
    assert "<script>window.__pwned" not in page
    assert "&lt;script&gt;window.__pwned" in page
    rows = list(csv.DictReader(io.StringIO(client.get("/calibration.csv").content.decode())))
    assert [row["part"] for row in rows] == [CALIBRATION, TEST]
    for row in rows:
        counts = expected[row["part"]]
        assert (row["true_pos"], row["true_neg"], row["false_pos"]) == (
            str(counts["tp"]),
            str(counts["tn"]),
            str(counts["fp"]),
        )
        assert row["judge_model"].startswith("judge <script>")
    token = tokens.create_token(user, "t")[1]
    body = client.get("/api/calibration", headers={"Authorization": f"Bearer {token}"}).json()
    [version] = body["versions"]
    assert version["test"]["true_pos"] == expected[TEST]["tp"]
    assert version["calibration"]["true_neg"] == expected[CALIBRATION]["tn"]
    assert body["rule"]["min_labelled"] == 2
    assert body["interval"] == "Wilson score, 95%"


def test_the_api_refuses_reviewers_and_analysts(client: Client) -> None:
    user = f.make_user("ana", "analyst")
    token = tokens.create_token(user, "t")[1]
    response = client.get("/api/calibration", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 403
    assert client.get("/api/calibration").status_code == 401


def test_the_page_runs_a_fixed_number_of_queries(
    client: Client,
    rule: CalibrationRule,
    rita: User,
    django_assert_num_queries: Callable[..., Any],
) -> None:
    f.login(client, "boss", staff=True)
    for i in range(3):
        _labelled(rita, "PASS", "pass", model=f"judge-{i}")
    # 1 the session's user, 2 the rule, 3 what the exclusion reasons name (kept from then on),
    # 4 every decided verdict of a labelled trial.
    with django_assert_num_queries(4):
        assert client.get("/calibration/").status_code == 200
    for i in range(6):
        _labelled(rita, "FAIL", "fail", model=f"judge-{i}", rubric=f"r{i}")
    # New labels: the user, the rule and the verdicts again (what the reasons name is kept).
    with django_assert_num_queries(3):
        assert client.get("/calibration/").status_code == 200


# --- corrected pass rates on the job page and in compare --------------------------------------
def _run(name: str, passed: int, failed: int, model: str = "judge-1", rubric: str = "r1") -> Job:
    f.write(
        *(f.bundle(job=name, judges=[_judge("PASS", model, rubric)]) for _ in range(passed)),
        *(f.bundle(job=name, judges=[_judge("FAIL", model, rubric)]) for _ in range(failed)),
    )
    return Job.objects.get(name=name)


def test_a_corrected_rates_interval_is_drawn_once_then_read_from_the_cache(
    rule: CalibrationRule, rita: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    calib = [("PASS", "pass")] * 15 + [("FAIL", "pass")] * 3 + [("FAIL", "fail")] * 12
    calib += [("PASS", "fail")] * 6
    _make_parts(rita, test=[("PASS", "pass")] * 6 + [("FAIL", "fail")] * 6, calib=calib)
    job = _run("run-c", passed=6, failed=4)
    drawn = []
    real = judge_error.corrected_pass_rate

    def counting(*args: Any, **kwargs: Any) -> Any:
        drawn.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(judge_error, "corrected_pass_rate", counting)
    [first] = calibration.job_corrected_rates([job])[job.pk]
    [again] = calibration.job_corrected_rates([job])[job.pk]
    assert drawn == [(6, 10, 15, 18, 12, 18)]
    assert again == first
    assert first.corrected == real(6, 10, 15, 18, 12, 18)


def test_an_admitted_version_corrects_the_jobs_pass_rate_by_its_calibration_part(
    client: Client, rule: CalibrationRule, rita: User
) -> None:
    # Calibration part: TPR 15/18, TNR 12/18; the test part admits the version.
    calib = [("PASS", "pass")] * 15 + [("FAIL", "pass")] * 3 + [("FAIL", "fail")] * 12
    calib += [("PASS", "fail")] * 6
    _make_parts(rita, test=[("PASS", "pass")] * 6 + [("FAIL", "fail")] * 6, calib=calib)
    job = _run("run-b", passed=6, failed=4)
    [rate] = calibration.job_corrected_rates([job])[job.pk]
    assert (rate.version, rate.passed, rate.judged) == (Version("judge-1", "r1"), 6, 10)
    assert rate.status == calibration.ADMITTED
    assert rate.corrected is not None
    # By hand: (0.6 + 4/6 - 1) / (5/6 + 4/6 - 1) = (4/15) / (1/2) = 8/15.
    assert rate.corrected.estimate == pytest.approx(8 / 15)
    assert rate.corrected == judge_error.corrected_pass_rate(6, 10, 15, 18, 12, 18)
    f.login(client, "ann", "analyst")
    html = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "Judge pass rate corrected for judge error" in html
    assert "<strong>53%</strong>" in html
    interval = rate.corrected.interval
    assert interval is not None
    assert f"[{interval.low * 100:.0f}%, {interval.high * 100:.0f}%]" in html


def test_a_version_not_admitted_or_never_labelled_shows_the_reason_not_a_rate(
    client: Client, rule: CalibrationRule, rita: User
) -> None:
    _make_parts(rita, test=[("PASS", "pass")] * 6 + [("FAIL", "fail")], calib=[])
    job = _run("run-c", passed=3, failed=1)
    _run("run-c", passed=2, failed=0, model="judge-9")
    rates = calibration.job_corrected_rates([job])[job.pk]
    assert [(str(r.version), r.passed, r.judged, r.corrected) for r in rates] == [
        ("judge-1 · r1", 3, 4, None),
        ("judge-9 · r1", 2, 2, None),
    ]
    assert rates[0].reason.startswith("too few labels: the test part has 6 human-pass")
    assert rates[1].reason == "no labelled trials"
    f.login(client, "ann", "analyst")
    html = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "not corrected: too few labels" in html
    assert "not corrected: no labelled trials" in html


def test_a_corrected_rate_outside_the_unit_range_says_it_was_clamped(
    client: Client, rule: CalibrationRule, rita: User
) -> None:
    # TPR 5/6 and TNR 4/6 on the calibration part: a run the judge passed 19 of 20 of
    # implies (0.95 + 4/6 - 1) / (5/6 + 4/6 - 1) = 1.2333, shown as 100%.
    calib = [("PASS", "pass")] * 5 + [("FAIL", "pass")] + [("FAIL", "fail")] * 4
    calib += [("PASS", "fail")] * 2
    _make_parts(rita, test=[("PASS", "pass")] * 6 + [("FAIL", "fail")] * 6, calib=calib)
    job = _run("run-d", passed=19, failed=1)
    [rate] = calibration.job_corrected_rates([job])[job.pk]
    assert rate.corrected is not None
    assert rate.corrected.clamped
    f.login(client, "ann", "analyst")
    html = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "clamped to [0, 1] from 1.233" in html


def test_compare_shows_each_runs_corrected_rate(
    client: Client, rule: CalibrationRule, rita: User
) -> None:
    _make_parts(rita, test=[("PASS", "pass")] * 6 + [("FAIL", "fail")] * 6, calib=[])
    a = _run("run-a", passed=2, failed=2)
    b = _run("run-b", passed=3, failed=1)
    f.login(client, "ann", "analyst")
    html = client.get(f"/compare/?a={a.pk}&b={b.pk}").content.decode()
    assert "Judge pass rate corrected for judge error" in html
    assert "A: run-a" in html
    assert "B: run-b" in html
    # Admitted, but the calibration part has no labels: the reason, not a number.
    assert html.count("not corrected: calibration part: no labelled trials of one kind") == 2


def test_the_job_pages_queries_do_not_grow_with_versions_or_labels(
    client: Client,
    rule: CalibrationRule,
    rita: User,
    django_assert_num_queries: Callable[..., Any],
) -> None:
    f.login(client, "ann", "analyst")
    job = _run("run-e", passed=1, failed=1)
    client.get(f"/jobs/{job.pk}/")  # the roles, the counts by version and the report, kept
    # 1 the user, 2 the job, 3 its tally rows, 4 first annotations by day, 5 the rule with the
    # newest verdict, annotation and adjudication ids: the kept counts are still current.
    with django_assert_num_queries(5):
        assert client.get(f"/jobs/{job.pk}/").status_code == 200
    for i in range(4):
        _run("run-e", passed=2, failed=1, model=f"other-{i}", rubric=f"r{i}")
        _labelled(rita, "PASS", "pass", model=f"other-{i}", rubric=f"r{i}")
    # New verdicts and annotations: 6 the job's judged trials by judge version and 7 the
    # versions' labelled verdicts are read again, once.
    with django_assert_num_queries(7):
        html = client.get(f"/jobs/{job.pk}/").content.decode()
    with django_assert_num_queries(5):
        again = client.get(f"/jobs/{job.pk}/").content.decode()
    assert again.count("not corrected:") == html.count("not corrected:")
    assert html.count("not corrected:") == 5
