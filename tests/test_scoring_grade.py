"""`manage.py grade` and re-judging: scorers, then the judge, then ingest; verdicts accumulate."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from rewards.models import JudgeVerdict, ScorerResult, Task, Trial, TrialDetail
from rewards.scoring import scenarios
from rewards.scoring.grading import rejudge, stored_judge_input
from rewards.scoring.judge import JudgeSettings
from tests import review_factories as f
from tests.ingest_helpers import write_files
from tests.judge_server import GOOD_ANSWER, FakeJudge, judge_server
from tests.scoring_helpers import seeded_repo, write

__all__ = ["judge_server"]
pytestmark = pytest.mark.django_db

SCORERS: list[dict[str, Any]] = [
    {"name": "tests", "type": "command", "command": "test -f src/app.py", "timeout_s": 30},
    {"name": "graded tests", "type": "tests_unmodified", "paths": ["tests/test_app.py"]},
    {"name": "skips", "type": "no_new_skips"},
    {"name": "style", "type": "llm_judge", "rubric": "Prefer the smallest change."},
]


def trial_dir(root: Path, name: str = "t-1", scorers: list[dict[str, Any]] | None = None) -> Path:
    task: dict[str, Any] = {"name": "fix-add", "source": "coding", "instruction": "Fix add()."}
    if scorers is not None:
        task["scorers"] = scorers
    return write_files(
        root / "nightly" / name,
        {
            "trial.json": {"name": name, "job": "nightly", "task": task},
            "logs/verifier/reward.json": {"reward": 1.0},
        },
    )


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, str]:
    root, base = seeded_repo(
        tmp_path / "ws",
        {"src/app.py": "def add(a, b):\n    return a - b\n", "tests/test_app.py": "assert 1\n"},
    )
    write(root, {"src/app.py": "def add(a, b):\n    return a + b\n", "tests/test_app.py": "x\n"})
    return root, base


def grade(*args: str | Path) -> str:
    out = io.StringIO()
    call_command("grade", *[str(a) for a in args], stdout=out)
    return out.getvalue()


def test_grading_a_coding_run_scores_judges_and_ingests(
    judge_server: FakeJudge, workspace: tuple[Path, str], tmp_path: Path, client: Client
) -> None:
    root, base = workspace
    directory = trial_dir(tmp_path, scorers=SCORERS)
    out = grade(directory, "--workspace", root, "--baseline", base)
    assert "scorers (trial.json): OVERALL FAIL" in out
    assert "judge: FAIL (judge-large-2026)" in out
    assert "ingested: nightly/t-1" in out

    trial = Trial.objects.get(name="t-1")
    rows = list(ScorerResult.objects.filter(trial=trial).order_by("position"))
    assert [(r.name, r.verdict) for r in rows] == [
        ("tests", "PASS"),
        ("graded tests", "FAIL"),
        ("skips", "PASS"),  # the changed test file adds no skip
        ("style", "NA"),
    ]
    assert (trial.scorer_verdict, trial.judge_verdict) == ("FAIL", "FAIL")
    verdict = JudgeVerdict.objects.get(trial=trial)
    assert (verdict.task_completion, verdict.failure_mode) == (2, "tests edited")
    assert "+    return a + b" in TrialDetail.objects.get(trial=trial).workspace_diff
    assert trial.task.scorer_specs == SCORERS
    # What the judge read: the diff, the objective test result, the table and the rubric note.
    user = judge_server.requests[0]["messages"][1]["content"]
    assert "command: test -f src/app.py" in user
    assert "| graded tests | tests_unmodified | required | FAIL |" in user
    assert "- Prefer the smallest change." in user
    # The files grading wrote are what `ingest` reads.
    assert json.loads((directory / "scorers.json").read_text())[1]["verdict"] == "FAIL"
    assert json.loads((directory / "judge.json").read_text())["verdict"] == "FAIL"
    # And the trial page shows them: the Scorers card and the Judge verdict card.
    f.login(client, "rita", "reviewer")
    page = client.get(f"/trials/{trial.pk}/").content.decode()
    assert 'id="scorers"' in page
    assert "graded tests" in page
    assert "edited: tests/test_app.py (modified)" in page  # a hard failure starts expanded
    assert "tests edited" in page


def test_a_ledger_run_is_judged_only(judge_server: FakeJudge, tmp_path: Path) -> None:
    directory = trial_dir(tmp_path, scorers=SCORERS)
    out = grade(directory)
    assert "scorers: not run (no workspace: a ledger run is judged only)" in out
    trial = Trial.objects.get(name="t-1")
    assert not ScorerResult.objects.filter(trial=trial).exists()
    assert trial.judge_verdict == "FAIL"
    assert not (directory / "scorers.json").exists()
    assert "Workspace diff" not in judge_server.requests[0]["messages"][1]["content"]


def test_a_judge_failure_is_stored_unparseable_and_does_not_fail_grading(
    judge_server: FakeJudge, workspace: tuple[Path, str], tmp_path: Path
) -> None:
    root, base = workspace
    judge_server.reply = ("status", 503)
    out = grade(trial_dir(tmp_path, scorers=SCORERS), "--workspace", root, "--baseline", base)
    assert "judge: UNPARSEABLE (the endpoint answered HTTP 503 to the last of 4 tries)" in out
    trial = Trial.objects.get(name="t-1")
    assert trial.judge_verdict == "UNPARSEABLE"
    assert trial.scorer_verdict == "FAIL"
    assert "overloaded" in JudgeVerdict.objects.get(trial=trial).raw_response


def test_grading_again_adds_a_verdict_and_keeps_the_old_one(
    judge_server: FakeJudge, tmp_path: Path
) -> None:
    directory = trial_dir(tmp_path)
    grade(directory)
    judge_server.answer({**GOOD_ANSWER, "verdict": "PASS", "failure_mode": None})
    out = grade(directory)
    assert "updated: nightly/t-1" in out
    trial = Trial.objects.get(name="t-1")
    assert sorted(JudgeVerdict.objects.filter(trial=trial).values_list("verdict", flat=True)) == [
        "FAIL",
        "PASS",
    ]
    assert trial.judge_verdict == "PASS"


def test_a_task_keeps_the_scorers_it_was_seeded_with(
    judge_server: FakeJudge, workspace: tuple[Path, str], tmp_path: Path
) -> None:
    root, base = workspace
    grade(trial_dir(tmp_path, "t-1", scorers=SCORERS), "--workspace", root, "--baseline", base)
    task = Task.objects.get(name="fix-add")
    task.scorer_specs = [{"name": "secrets", "type": "forbid_secrets"}]  # as seeded earlier
    task.save()
    out = grade(
        trial_dir(tmp_path, "t-1", scorers=SCORERS), "--workspace", root, "--baseline", base
    )
    assert "scorers (task fix-add as seeded): OVERALL PASS" in out
    trial = Trial.objects.get(name="t-1")
    assert list(trial.scorers.values_list("name", flat=True)) == ["secrets"]


def test_grading_refuses_before_anything_runs(
    judge_server: FakeJudge,
    workspace: tuple[Path, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, base = workspace
    bad = trial_dir(tmp_path, "bad", scorers=[{"name": "size", "type": "max_files_changed"}])
    with pytest.raises(CommandError, match=r"scorer 1 \('size'\): field 'limit': is required"):
        grade(bad, "--workspace", root, "--baseline", base)
    with pytest.raises(CommandError, match="--workspace and --baseline go together"):
        grade(trial_dir(tmp_path), "--workspace", root)
    with pytest.raises(CommandError, match="is not a commit"):
        grade(trial_dir(tmp_path), "--workspace", root, "--baseline", "v404")
    monkeypatch.delenv("TRIALDESK_JUDGE_BASE_URL")
    with pytest.raises(CommandError, match="or pass --no-judge"):
        grade(trial_dir(tmp_path))
    assert judge_server.requests == []
    assert not (bad / "scorers.json").exists()
    assert not Trial.objects.exists()


def test_no_judge_grades_with_scorers_only(workspace: tuple[Path, str], tmp_path: Path) -> None:
    root, base = workspace
    out = grade(
        trial_dir(tmp_path, scorers=SCORERS), "--workspace", root, "--baseline", base, "--no-judge"
    )
    assert "judge: not asked" in out
    assert Trial.objects.get(name="t-1").judge_verdict == ""


def test_rejudge_adds_a_verdict_and_refreshes_the_trial(
    judge_server: FakeJudge, workspace: tuple[Path, str], tmp_path: Path
) -> None:
    root, base = workspace
    grade(
        trial_dir(tmp_path, scorers=SCORERS),
        "--workspace",
        root,
        "--baseline",
        base,
        "--expected-outcome",
        "refusal",
    )
    trial = Trial.objects.get(name="t-1")
    data = stored_judge_input(trial)
    assert data.expected_outcome == "refusal"
    assert data.rubric_notes == ["Prefer the smallest change."]
    assert data.objective is not None
    assert data.objective["command"] == "test -f src/app.py"
    assert data.is_coding_run

    judge_server.answer({**GOOD_ANSWER, "verdict": "PASS", "failure_mode": None})
    row = rejudge(trial, JudgeSettings.from_env())
    assert (row.verdict, row.expected_outcome) == ("PASS", "refusal")
    trial.refresh_from_db()
    assert trial.judge_verdict == "PASS"
    assert trial.gate_disagreement == "judge_pass_scorers_fail"
    assert JudgeVerdict.objects.filter(trial=trial).count() == 2
    assert (
        "| graded tests | tests_unmodified | required | FAIL |"
        in (judge_server.requests[1]["messages"][1]["content"])
    )


# --- scenarios frozen at seed time ------------------------------------------------------------
def test_a_new_task_freezes_the_scenarios_current_version(
    workspace: tuple[Path, str], tmp_path: Path
) -> None:
    root, base = workspace
    first = scenarios.create_scenario("python-fix", SCORERS[:2], author="admin")
    out = grade(
        trial_dir(tmp_path, "t-1"),
        "--workspace",
        root,
        "--baseline",
        base,
        "--no-judge",
        "--scenario",
        "python-fix",
    )
    assert "scorers (scenario python-fix v1): OVERALL FAIL" in out
    task = Task.objects.get(name="fix-add")
    assert task.scenario_version == first
    assert task.scorer_specs == SCORERS[:2]

    # A later edit makes version 2; the seeded task keeps grading with version 1.
    second = scenarios.save_version(first.scenario, [{"name": "secrets", "type": "forbid_secrets"}])
    assert second.number == 2
    out = grade(
        trial_dir(tmp_path, "t-2"),
        "--workspace",
        root,
        "--baseline",
        base,
        "--no-judge",
        "--scenario",
        "python-fix",
    )
    assert "scorers (task fix-add as seeded from scenario python-fix v1): OVERALL FAIL" in out
    assert list(Trial.objects.get(name="t-2").scorers.values_list("name", flat=True)) == [
        "tests",
        "graded tests",
    ]
    task.refresh_from_db()
    assert (task.scenario_version, task.scorer_specs) == (first, SCORERS[:2])
    first.refresh_from_db()
    assert first.scorer_specs == SCORERS[:2]


def test_a_scenario_must_exist_and_not_clash_with_trial_json(tmp_path: Path) -> None:

    with pytest.raises(CommandError, match="no scenario is named 'nope'"):
        grade(trial_dir(tmp_path), "--no-judge", "--scenario", "nope")
    scenarios.create_scenario("python-fix", SCORERS[:1])
    with pytest.raises(CommandError, match=r"trial\.json names its own scorers"):
        grade(trial_dir(tmp_path, "t-9", scorers=SCORERS), "--no-judge", "--scenario", "python-fix")
    assert not Trial.objects.exists()


def test_the_scenario_command_creates_then_versions(tmp_path: Path) -> None:
    specs = write_files(tmp_path, {"s.json": SCORERS[:1], "bad.json": [{"type": "zip"}]})
    out = io.StringIO()
    call_command("scenario", "python-fix", "--scorers", specs / "s.json", stdout=out)
    call_command("scenario", "python-fix", "--scorers", specs / "s.json", stdout=out)
    assert out.getvalue().splitlines() == ["python-fix v1: 1 scorers", "python-fix v2: 1 scorers"]
    with pytest.raises(CommandError, match="field 'type'"):
        call_command("scenario", "python-fix", "--scorers", specs / "bad.json")
    version = scenarios.current_version("python-fix")
    assert version is not None
    assert version.number == 2
