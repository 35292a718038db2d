"""Grading what is stored (issue 21, item 3): a Harbor trial is judged as a ledger run from
what it has (instruction, trajectory, run error, verifier tests and output, reward), through
`manage.py grade --job/--filter/--trial`, and its page shows the verdict."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from rewards.models import GradingBatch, Job, JudgeVerdict, ScorerResult, Task, Trial
from rewards.scoring import scenarios
from rewards.scoring.grading import MAX_STEP_PART_CHARS, stored_judge_input, trajectory_text
from rewards.scoring.judge import build_messages
from tests import review_factories as f
from tests.harbor_desk import ingest_desk, trial_name
from tests.ingest_helpers import (
    HARBOR_FIXTURES,
    PASS_JOB,
    PASSING,
    SINGLE_JOB,
    TIMEOUT,
    Jobs,
    ingest,
    lay_out,
    write_files,
)
from tests.judge_server import GOOD_ANSWER, FakeJudge, judge_server
from tests.scoring_helpers import seeded_repo, write
from tests.task_worker import run_queued_tasks

__all__ = ["judge_server"]

INSTRUCTION = "Read /app/data/forecast.csv and write a short weather report for Lisbon"
VERIFIER_OUTPUT = "tests/test_wrap.py ..  [100%]\n2 passed in 0.41s\n"
CONTRACT_ONLY = (
    "## Workspace diff",
    "## Objective test result",
    "## Scorer results",
    "## Agent command output",
)


@pytest.fixture
def jobs(tmp_path: Path) -> Jobs:
    """The Harbor fixture jobs, the passing trial with a trajectory and the verifier's output
    beside its CTRF report, so one trial carries every kind of evidence."""
    laid_out = lay_out(tmp_path / "jobs")
    passing = laid_out.trial(PASS_JOB, PASSING)
    (passing / "agent").mkdir()
    shutil.copyfile(HARBOR_FIXTURES / "single_trajectory.json", passing / "agent/trajectory.json")
    write_files(passing, {"verifier/test-stdout.txt": VERIFIER_OUTPUT})
    ran = ingest(laid_out.root)
    assert ran.error == ""
    return laid_out


def prompt(trial: Trial) -> str:
    return build_messages(stored_judge_input(trial))[1]["content"]


def grade(*args: str) -> str:
    out = io.StringIO()
    call_command("grade", *args, "--no-progress", "--interval=0.1", stdout=out)
    return out.getvalue()


# --- what the judge reads about a Harbor trial -------------------------------------------------
@pytest.mark.django_db
def test_a_harbor_trials_prompt_holds_its_instruction_steps_tests_output_and_reward(
    jobs: Jobs,
) -> None:
    trial = Trial.objects.select_related("task").get(name=PASSING)
    assert trial.task.instruction == ""  # Harbor stores no task text
    text = prompt(trial)
    assert "Verifier reward: 1 (0 to 1)" in text
    task = text.split("## Task\nBEGIN TASK\n", 1)[1].split("\nEND TASK", 1)[0]
    assert task.startswith(INSTRUCTION)  # the trajectory's first user message
    # The steps as steps: their source, tool calls with their arguments, observations.
    assert "[step 1] user\nMessage: " + INSTRUCTION in text
    assert (
        '[step 2] agent\nTool call exec: {\n  "command": "head -5 /app/data/forecast.csv"\n}'
        in (text)
    )
    # A tool's result that is both the step's message and its observation is given once.
    assert (
        "[step 3] agent\nMessage: city,date,high_f,low_f\nLisbon,2026-10-06,70,57\n\n[step 4]"
        in text
    )
    assert '"schema_version"' not in text  # not the document's JSON
    tests = text.split("## Verifier tests\nBEGIN VERIFIER TESTS\n", 1)[1].split("\nEND", 1)[0]
    assert tests.splitlines() == [
        "- passed: tests/test_wrap.py::test_wraps_long_words",
        "- passed: tests/test_wrap.py::test_keeps_short_lines",
    ]
    assert f"## Verifier output\nBEGIN VERIFIER OUTPUT\n{VERIFIER_OUTPUT}" in text
    for section in (*CONTRACT_ONLY, "## Run error", "## Agent logs"):
        assert section not in text


@pytest.mark.django_db
def test_a_timed_out_harbor_trial_is_judged_on_its_error_and_what_it_did(jobs: Jobs) -> None:
    trial = Trial.objects.select_related("task").get(name=TIMEOUT)
    text = prompt(trial)
    error = text.split("## Run error\nBEGIN RUN ERROR\n", 1)[1].split("\nEND RUN ERROR", 1)[0]
    assert error.startswith("AgentTimeoutError: Agent execution timed out after 600.0 seconds\n")
    assert error.endswith("AgentTimeoutError: Agent execution timed out after 600.0 seconds\n")
    assert "Verifier reward: 0.4 (0 to 1)" in text
    assert "(no instruction recorded)" in text  # no task text, no trajectory: said so
    for section in (*CONTRACT_ONLY, "## Trajectory", "## Verifier tests"):
        assert section not in text


@pytest.mark.django_db
def test_a_trial_with_no_trajectory_is_judged_on_its_agent_logs(tmp_path: Path) -> None:
    folders = ingest_desk(tmp_path)
    logs_only = Trial.objects.select_related("task").get(name=trial_name("logs-only"))
    text = prompt(logs_only)
    assert "## Agent logs\nBEGIN AGENT LOGS\n== agent/" in text
    assert "## Trajectory" not in text
    # A trial with a trajectory is judged on it: its logs are not read.
    with_steps = Trial.objects.select_related("task").get(name=trial_name("trajectory"))
    assert "## Agent logs" not in prompt(with_steps)
    # The folder gone: judged on what is stored, without the logs.
    shutil.rmtree(folders["logs-only"])
    assert "## Agent logs" not in prompt(logs_only)


def test_each_step_part_is_bounded_and_stages_keep_their_names() -> None:
    huge = "x" * (MAX_STEP_PART_CHARS + 500)
    staged = {
        "multi_step": [
            {"step_name": "plan", "trajectory": {"steps": [{"source": "agent", "message": huge}]}},
            {"step_name": "run", "trajectory": {"unexpected": True}},
        ]
    }
    text = trajectory_text(staged)
    assert text is not None
    lines = text.splitlines()
    assert lines[:2] == ["### stage plan", "[step 1] agent"]
    assert lines[2] == f"Message: {'x' * MAX_STEP_PART_CHARS} [… 500 more characters left out …]"
    assert lines[3] == "### stage run"
    assert trajectory_text(None) is None


# --- grading stored trials -----------------------------------------------------------------
@pytest.mark.django_db(transaction=True)
def test_a_harbor_job_is_graded_end_to_end_and_its_pages_show_the_verdict(
    jobs: Jobs, judge_server: FakeJudge, client: Client
) -> None:
    f.make_user("admin", staff=True)
    out = grade("--job", SINGLE_JOB, "--user", "admin")
    batch = GradingBatch.objects.get()
    assert f"Grading batch {batch.pk}: 2 trials queued" in out
    assert judge_server.requests == []  # enqueued; the workers judge
    trials = list(Trial.objects.filter(job__name=SINGLE_JOB))
    assert {t.judge_verdict for t in trials} == {""}

    run_queued_tasks()

    assert len(judge_server.requests) == 2
    prompts = [r["messages"][1]["content"] for r in judge_server.requests]
    assert sum(INSTRUCTION in p for p in prompts) == 1  # the trial with a trajectory
    assert sum("AgentTimeoutError" in p for p in prompts) == 1
    assert JudgeVerdict.objects.filter(batch_item__batch=batch).count() == 2
    f.login(client, "reviewer-1", "reviewer")
    for trial in trials:
        trial.refresh_from_db()
        assert (trial.judge_verdict, trial.judge_model) == ("FAIL", "judge-large-2026")
        page = client.get(f"/trials/{trial.pk}/").content.decode()
        card = page.split('<section id="judge"', 1)[1].split("</section>", 1)[0]
        assert "no judge" not in card
        assert "tests edited" in card  # the stub's failure mode
        assert GOOD_ANSWER["reasoning"].replace("'", "&#x27;") in card
        assert "judge-large-2026" in card


@pytest.mark.django_db(transaction=True)
def test_a_filter_grades_the_stored_trials_it_matches(jobs: Jobs, judge_server: FakeJudge) -> None:
    job = Job.objects.get(name=PASS_JOB)
    out = grade("--filter", f"?job={job.pk}&judge_verdict=none")
    batch = GradingBatch.objects.get()
    assert f"Grading batch {batch.pk}: 1 trials queued" in out
    assert batch.query == f"job={job.pk}&judge_verdict=none"
    run_queued_tasks()
    assert list(batch.items.values_list("trial__name", "state")) == [(PASSING, "done")]
    assert Trial.objects.get(name=PASSING).judge_verdict == "FAIL"
    assert Trial.objects.exclude(name=PASSING).filter(judge_verdict="FAIL").count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_stored_harbor_trial_is_scored_over_its_workspace_then_judged(
    jobs: Jobs, judge_server: FakeJudge, tmp_path: Path
) -> None:
    root, base = seeded_repo(tmp_path / "ws", {"wrap.py": "def wrap(s):\n    return s\n"})
    write(root, {"wrap.py": "def wrap(s):\n    return s.split()\n"})
    scenarios.create_scenario(
        "textkit", [{"name": "wrapped", "type": "command", "command": "grep -q split wrap.py"}]
    )
    trial = Trial.objects.get(name=PASSING)
    with pytest.raises(CommandError, match=r"task .* has no scorers: name a scenario"):
        grade("--trial", str(trial.pk), "--workspace", str(root), "--baseline", base)
    assert judge_server.requests == []

    out = grade(
        "--trial", str(trial.pk), "--workspace", str(root), "--baseline", base,
        "--scenario", "textkit",
    )  # fmt: skip
    assert "scorers (scenario textkit v1): OVERALL PASS" in out
    assert "Grading batch" in out
    assert list(ScorerResult.objects.filter(trial=trial).values_list("name", "verdict")) == [
        ("wrapped", "PASS")
    ]
    task = Task.objects.get(pk=trial.task_id)
    assert task.scorer_specs[0]["name"] == "wrapped"
    assert task.scenario_version is not None
    trial.refresh_from_db()
    assert trial.scorer_verdict == "PASS"
    assert "+    return s.split()" in trial.detail.workspace_diff

    run_queued_tasks()
    text = judge_server.requests[0]["messages"][1]["content"]
    assert "| wrapped | command | required | PASS |" in text  # the scorers are evidence
    assert "## Workspace diff" in text
    trial.refresh_from_db()
    assert trial.gate_disagreement == "scorers_pass_judge_fail"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give a trial directory, or stored trials"),
        (("--job", "x", "--filter", "agent=a"), "give a trial directory, or stored trials"),
        (("somewhere", "--trial", "1"), "a trial directory or stored trials, not both"),
        (("--job", "x", "--workspace", "w", "--baseline", "b"), "give it with --trial"),
        (("--job", "x", "--workspace", "w"), "--workspace and --baseline go together"),
        (("--job", "x", "--no-judge"), "nothing to do"),
        (("--job", "x", "--scenario", "s"), "--scenario seeds the scorers"),
        (("--job", "x", "--expected-outcome", "refusal"), "--expected-outcome is for a trial"),
        (("--filter", "reward_min=lots"), "the filter is not valid"),
        (("--job", "nope"), "no job 'nope'"),
    ],
)
def test_grading_stored_trials_refuses_what_it_cannot_do(
    judge_server: FakeJudge, args: tuple[str, ...], message: str
) -> None:
    with pytest.raises(CommandError, match=message):
        grade(*args)
    assert not GradingBatch.objects.exists()


@pytest.mark.django_db
def test_without_a_judge_a_stored_trial_is_not_scored_either(
    jobs: Jobs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRIALDESK_JUDGE_BASE_URL", raising=False)
    root, base = seeded_repo(tmp_path / "ws", {"wrap.py": "x = 1\n"})
    scenarios.create_scenario("textkit", [{"name": "ok", "type": "command", "command": "true"}])
    trial = Trial.objects.get(name=PASSING)
    args = ("--trial", str(trial.pk), "--workspace", str(root), "--baseline", base)
    with pytest.raises(CommandError, match=r"the judge is not configured.*--no-judge"):
        grade(*args, "--scenario", "textkit")
    assert not ScorerResult.objects.filter(trial=trial).exists()
    assert Task.objects.get(pk=trial.task_id).scorer_specs == []
    out = grade(*args, "--scenario", "textkit", "--no-judge")
    assert "scorers (scenario textkit v1): OVERALL PASS" in out
    assert out.rstrip().endswith("judge: not asked")
    assert not GradingBatch.objects.exists()
