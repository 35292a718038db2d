"""`manage.py seed_demo` and the `demo` modules: deterministic, varied, and true to the rules."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import models

from demo.cases import CASE_CYCLES, HOSTILE, PROFILES
from demo.generator import DemoGenerator
from demo.loaders import seed_fast, seed_with_writer
from demo.plan import DemoPlan
from rewards import rules
from rewards.models import (
    ErrorTag,
    EvaluationResult,
    Job,
    JudgeVerdict,
    ScorerResult,
    Task,
    Trial,
    TrialDetail,
)
from tests.conftest import purge_review_data

# Enough for every case table to come round at least once (the longest cycle is 19).
COVERAGE_N = 200


def seed(trials: int, **options: Any) -> str:
    out = io.StringIO()
    call_command("seed_demo", trials=trials, no_progress=True, stdout=out, **options)
    return out.getvalue()


def _row(obj: models.Model, skip: Iterable[str] = ()) -> dict[str, Any]:
    skipped = {"id", "trial_id", "updated_at", "imported_at", *skip}
    return {
        f.attname: getattr(obj, f.attname)
        for f in obj._meta.concrete_fields
        if f.attname not in skipped
    }


def snapshot(skip_trial: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Everything the demo stored, keyed by names instead of ids (ids differ run to run)."""
    trials = (
        Trial.objects.select_related("job", "task", "detail")
        .prefetch_related("results", "scorers", "judge_verdicts", "error_tags")
        .order_by("job__name", "name")
    )
    return [
        {
            "job": _row(t.job),
            "task": _row(t.task),
            "trial": _row(t, ["job_id", "task_id", *skip_trial]),
            "detail": _row(t.detail),
            "results": [_row(r) for r in t.results.order_by("created_at", "id")],
            "scorers": [_row(s) for s in t.scorers.order_by("position")],
            "judge": [_row(v) for v in t.judge_verdicts.order_by("id")],
            "tags": [_row(e) for e in t.error_tags.order_by("id")],
        }
        for t in trials
    ]


def wipe() -> None:
    purge_review_data()  # demo trials carry annotations, which are append-only


def summary_columns(trial: Trial) -> dict[str, Any]:
    return {name: getattr(trial, name) for name in (*rules.SUMMARY_FIELDS, "human_disagreement")}


# --- determinism ----------------------------------------------------------------------------------
def test_same_seed_builds_the_same_bundles() -> None:
    first = DemoGenerator(DemoPlan(seed=7, trials=40))
    second = DemoGenerator(DemoPlan(seed=7, trials=40))
    for i in range(40):
        assert first.trial(i).bundle == second.trial(i).bundle


@pytest.mark.django_db
def test_same_seed_stores_the_same_content_and_another_seed_does_not() -> None:
    seed(60, seed=11)
    once = snapshot()
    wipe()
    seed(60, seed=11)
    again = snapshot()
    wipe()
    seed(60, seed=12)
    other = snapshot()

    assert len(once) == 60
    assert once == again
    assert [t["trial"]["name"] for t in other] != [t["trial"]["name"] for t in once]
    assert [t["trial"]["reward"] for t in other] != [t["trial"]["reward"] for t in once]


@pytest.mark.django_db
def test_fast_path_stores_what_the_writer_stores() -> None:
    # Up to ARCHETYPES_PER_PROFILE trials per profile, every fast-path trial is its own
    # archetype: the rows must equal the writer's (content_digest is the writer's alone).
    plan = DemoPlan(seed=5, trials=60)
    seed_with_writer(plan, compact=True)
    written = snapshot(skip_trial=["content_digest"])
    wipe()
    report = seed_fast(plan)
    loaded = snapshot(skip_trial=["content_digest"])

    assert report.trials == 60
    assert loaded == written


# --- the summary columns are the domain code's ----------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("path", ["writer", "fast"])
def test_summary_columns_equal_refresh_summary_for_every_trial(path: str) -> None:
    seed(COVERAGE_N, seed=3, **{path: True})
    trials = Trial.objects.select_related("task").prefetch_related("scorers")
    assert trials.count() == COVERAGE_N
    for trial in trials:
        stored = summary_columns(trial)
        trial.refresh_summary()
        assert summary_columns(trial) == stored, trial.name


# --- coverage: every case, by design --------------------------------------------------------------
@pytest.fixture
def covered(db: None) -> None:
    seed(COVERAGE_N, seed=2)


def values(model: type[models.Model], *fields: str) -> set[Any]:
    flat = len(fields) == 1
    return set(model._default_manager.values_list(*fields, flat=flat))


@pytest.mark.usefixtures("covered")
def test_every_gate_outcome_and_disagreement_is_present() -> None:
    assert values(Trial, "gate_disagreement") == {
        "",
        rules.JUDGE_PASS_SCORERS_FAIL,
        rules.SCORERS_PASS_JUDGE_FAIL,
        rules.ADVISORY_FAIL,
    }
    assert values(Trial, "scorer_verdict") == {"PASS", "FAIL", ""}
    assert values(Trial, "judge_verdict") == {"PASS", "FAIL", "UNPARSEABLE", ""}
    assert values(Trial, "run_badge") == {"PASS", "FAIL", ""}
    assert Trial.objects.filter(scorer_verdict="PASS", scorer_mean__isnull=True).exists()


@pytest.mark.usefixtures("covered")
def test_every_scorer_type_and_verdict_mix_is_present() -> None:
    assert values(ScorerResult, "type") == set(rules.SCORER_TYPES)
    gating: set[str] = set()
    advisory: set[str] = set()
    for type_, required, verdict in ScorerResult.objects.values_list("type", "required", "verdict"):
        (advisory if rules.is_advisory(type_, required) else gating).add(verdict)
    assert gating == {"PASS", "FAIL", "NA"}
    assert advisory == {"PASS", "FAIL", "NA"}
    # An advisory-by-default detector explicitly made required, and a "required" llm_judge.
    assert ScorerResult.objects.filter(type="no_new_skips", required=True).exists()
    assert ScorerResult.objects.filter(type="llm_judge", required=True).exists()
    for type_ in ("no_new_skips", "assertions_not_weakened", "llm_judge"):
        assert ScorerResult.objects.filter(type=type_, required=False, verdict="FAIL").exists()


@pytest.mark.usefixtures("covered")
def test_every_judge_shape_is_present() -> None:
    assert values(JudgeVerdict, "verdict") == {"PASS", "FAIL", "UNPARSEABLE"}
    fails = JudgeVerdict.objects.filter(verdict="FAIL")
    assert not fails.filter(failure_mode="").exists()
    assert JudgeVerdict.objects.filter(verdict="UNPARSEABLE", scored_at__isnull=True).exists()
    assert JudgeVerdict.objects.filter(verdict="UNPARSEABLE").exclude(raw_response="").exists()
    assert values(JudgeVerdict, "expected_outcome") == {"completion", "refusal"}
    passed = JudgeVerdict.objects.filter(verdict="PASS").first()
    assert passed is not None
    assert all(tile for _, tile in passed.rubric_tiles)
    assert passed.fact_checks
    assert set(passed.fact_checks[0]) >= {"claim", "status", "evidence"}
    assert len(values(JudgeVerdict, "judge_model")) > 1
    # Re-judged trials keep every verdict; the summary shows the latest.
    rejudged = Trial.objects.annotate(n=models.Count("judge_verdicts")).filter(n__gt=1)
    assert rejudged.exists()
    assert any(len(r.reasoning) > 10_000 for r in JudgeVerdict.objects.all())


@pytest.mark.usefixtures("covered")
def test_every_validity_case_is_present() -> None:
    current = EvaluationResult.objects.filter(is_current=True)
    assert current.filter(
        output_parseable=True, schema_valid=True, verifier_completed=True, errors=[]
    ).exists()
    assert current.filter(output_parseable=False).exists()
    assert current.filter(output_parseable=True, schema_valid=False).exists()
    assert current.filter(verifier_completed=False, reward=0).exists()
    errors = [e for row in current.values_list("errors", flat=True) for e in row]
    for needle in ("rejected", "no 'reward' key", "outside [0, 1]", "not a number", "unreadable"):
        assert any(needle in e for e in errors), needle
    rejected = next(r for r in current if any("rejected" in e for e in r.errors))
    assert rejected.reward == 0.0
    raw = json.loads(next(v for k, v in rejected.raw_artifacts.items() if "reward" in k))
    assert raw["reward"] > 0  # the verifier's number is kept beside the rejection
    assert EvaluationResult.objects.filter(is_current=False).exists()
    assert current.exclude(breakdown__isnull=True).exists()
    assert current.exclude(confidence__isnull=True).exists()
    assert any(m for m in current.values_list("metrics", flat=True))


@pytest.mark.usefixtures("covered")
def test_every_status_and_exception_is_present() -> None:
    assert values(Trial, "status") == {"pending", "running", "completed", "failed", "cancelled"}
    timeouts = Trial.objects.filter(exception_type="AgentTimeoutError")
    assert timeouts.filter(reward__gt=0).exists()  # the verifier ran after the timeout
    others = TrialDetail.objects.exclude(trial__exception_type="").exclude(
        trial__exception_type="AgentTimeoutError"
    )
    assert len(values(Trial, "exception_type")) >= 6
    assert not others.filter(exception_traceback="").exists()
    assert values(ErrorTag, "source") >= {"mechanical", "judge"}


@pytest.mark.usefixtures("covered")
def test_agents_blobs_and_long_text_are_present() -> None:
    assert values(Trial, "agent_name") >= {"claude-code", "openclaw", "terminus-2"}
    assert len(values(Trial, "model_name")) == len(PROFILES)
    detail = TrialDetail.objects.exclude(trajectory__isnull=True).first()
    assert detail is not None
    trajectory = detail.trajectory
    assert isinstance(trajectory, dict)
    assert trajectory["schema_version"] == "ATIF-v1.7"
    sources = {step["source"] for step in trajectory["steps"]}
    assert sources == {"user", "agent"}
    tool_steps = [s for s in trajectory["steps"] if s.get("tool_calls")]
    assert tool_steps
    assert "results" in tool_steps[0]["observation"]
    assert any("reasoning_content" in s for s in trajectory["steps"])
    assert TrialDetail.objects.filter(workspace_diff__startswith="diff --git").exists()
    assert TrialDetail.objects.exclude(command="").exclude(exit_code=None).exists()
    assert TrialDetail.objects.exclude(ctrf__isnull=True).exists()
    longest_line = max(
        len(line)
        for text in TrialDetail.objects.values_list("stdout_tail", flat=True)
        for line in text.splitlines()
    )
    assert longest_line >= 10_000


@pytest.mark.usefixtures("covered")
def test_hostile_strings_are_stored_verbatim_in_agent_fields() -> None:
    agent_text = "\n".join(
        [
            *TrialDetail.objects.values_list("final_response", flat=True),
            *TrialDetail.objects.values_list("workspace_diff", flat=True),
            *Trial.objects.values_list("exception_message", flat=True),
        ]
    )
    for hostile in HOSTILE:
        assert hostile in agent_text, hostile
    # Spreadsheet formulas lead a cell: they must start a field, not just appear in one.
    finals = set(TrialDetail.objects.values_list("final_response", flat=True))
    for lead in ("=HYPERLINK(", "+cmd|", "-2+3+cmd|", "@SUM("):
        assert any(text.startswith(lead) for text in finals), lead
    assert ErrorTag.objects.filter(description__startswith="<script>").exists()
    artifacts = EvaluationResult.objects.values_list("raw_artifacts", flat=True)
    assert any("\u202e" in text for files in artifacts for text in files.values())
    trajectories = json.dumps(list(TrialDetail.objects.values_list("trajectory", flat=True)))
    assert "onerror=alert(1)" in trajectories


@pytest.mark.usefixtures("covered")
def test_the_demo_looks_like_a_real_evaluation() -> None:
    """Mostly valid trials with spread rewards; the edge cases a visible minority."""
    trials = Trial.objects.all()
    total = trials.count()
    valid = trials.filter(is_valid=True).count()
    assert 0.75 <= valid / total < 0.95
    disagreeing = trials.exclude(gate_disagreement="").count()
    assert 0.05 <= disagreeing / total <= 0.3
    # Rewards spread over the range, not piled up at zero: every fifth of [0, 1] is used.
    rewards = trials.filter(is_valid=True).values_list("reward", flat=True)
    fifths = {min(int(r * 5), 4) for r in rewards}
    assert fifths == {0, 1, 2, 3, 4}
    assert trials.filter(reward=0).count() / total < 0.35


# --- the command ----------------------------------------------------------------------------------
@pytest.mark.django_db
def test_if_empty_adds_nothing_the_second_time() -> None:
    first = seed(30, if_empty=True)
    count = Trial.objects.count()
    second = seed(30, if_empty=True, seed=99)

    assert count == 30
    assert "30 trials created" in first
    assert "--if-empty" in second
    assert Trial.objects.count() == count


@pytest.mark.django_db
def test_summary_line_names_jobs_tasks_trials_and_time() -> None:
    out = seed(20, seed=4, jobs=3)
    assert "3 jobs" in out
    assert f"{Task.objects.count()} tasks" in out  # the tasks its trials named
    assert "20 trials created" in out
    assert Job.objects.count() == 3


@pytest.mark.django_db
def test_running_the_writer_path_again_changes_nothing() -> None:
    seed(20, seed=8)
    again = seed(20, seed=8)
    assert "0 trials created" in again
    assert "20 already there, unchanged" in again
    assert Trial.objects.count() == 20


@pytest.mark.django_db
def test_fast_path_refuses_a_seed_it_already_loaded() -> None:
    seed(20, seed=8, fast=True)
    with pytest.raises(CommandError, match="already exist"):
        seed(20, seed=8, fast=True)
    assert Trial.objects.count() == 20


def test_case_cycles_are_pairwise_prime_and_short_enough_for_the_coverage_run() -> None:
    assert math.lcm(*CASE_CYCLES) == math.prod(CASE_CYCLES)
    assert max(CASE_CYCLES) <= COVERAGE_N


def test_trial_names_and_uids_are_unique() -> None:
    plan = DemoPlan(seed=1, trials=5_000, jobs=2)
    suffixes = [plan.suffix(i) for i in range(plan.trials)]
    uids = [plan.uid(i) for i in range(plan.trials)]
    assert len(set(suffixes)) == plan.trials
    assert len(set(uids)) == plan.trials
    assert sum(job.n_trials for job in plan.jobs) == plan.trials


# --- Harbor folders -------------------------------------------------------------------------------
TRIAL_RESULT_KEYS = {
    "id",
    "task_name",
    "trial_name",
    "trial_uri",
    "task_id",
    "source",
    "task_checksum",
    "config",
    "agent_info",
    "agent_result",
    "verifier_result",
    "exception_info",
    "started_at",
    "finished_at",
    "environment_setup",
    "agent_setup",
    "agent_execution",
    "verifier",
    "step_results",
}


def harbor(tmp_path: Path, trials: int = 80) -> Path:
    out = io.StringIO()
    root = tmp_path / "jobs"
    call_command("seed_demo", harbor=root, trials=trials, seed=6, no_progress=True, stdout=out)
    assert f"{trials} trials created" in out.getvalue()
    return root


def test_harbor_folders_have_harbor_shapes(tmp_path: Path) -> None:
    root = harbor(tmp_path)
    results = sorted(root.glob("*/*/result.json"))
    assert len(results) == 80
    seen: dict[str, int] = dict.fromkeys(
        ("model_info_null", "no_verifier", "exception", "naive", "extra", "multistep"), 0
    )
    for path in results:
        data = json.loads(path.read_text(encoding="utf-8"))
        trial_dir = path.parent
        assert set(data) >= TRIAL_RESULT_KEYS
        assert set(data) - TRIAL_RESULT_KEYS <= {"skill_learning_result"}
        assert data["trial_name"] == trial_dir.name
        assert set(data["agent_info"]) == {"name", "version", "model_info"}
        assert json.loads((trial_dir / "config.json").read_text())["trial_name"] == trial_dir.name
        seen["model_info_null"] += data["agent_info"]["model_info"] is None
        seen["extra"] += "skill_learning_result" in data
        if data["verifier_result"] is None:
            seen["no_verifier"] += 1
        else:
            assert isinstance(data["verifier_result"]["rewards"]["reward"], int | float)
        if data["exception_info"] is not None:
            seen["exception"] += 1
            assert (trial_dir / "exception.txt").is_file()
        if data["started_at"] and not data["started_at"].endswith("Z"):
            seen["naive"] += 1
        if data["step_results"]:
            seen["multistep"] += 1
            for step in data["step_results"]:
                assert (trial_dir / "steps" / step["step_name"] / "verifier/reward.json").is_file()
        if data["agent_result"] is not None:
            trajectory = json.loads((trial_dir / "agent/trajectory.json").read_text())
            assert trajectory["schema_version"] == "ATIF-v1.7"
    assert all(seen.values()), seen

    timeouts = [
        json.loads(p.read_text())
        for p in results
        if '"AgentTimeoutError"' in p.read_text(encoding="utf-8")
    ]
    assert any(t["verifier_result"] for t in timeouts)
    assert list(root.glob("*/*/verifier/reward.txt"))
    assert list(root.glob("*/*/verifier/reward.json"))
    assert list(root.glob("*/*/verifier/ctrf.json"))
    assert list(root.glob("*/*/verifier/test-stdout.txt"))
    for job_dir in root.iterdir():
        job = json.loads((job_dir / "result.json").read_text())
        assert job["n_total_trials"] == job["stats"]["n_trials"] == len(list(job_dir.glob("*/")))
        assert json.loads((job_dir / "config.json").read_text())["job_name"] == job_dir.name


def test_harbor_refuses_to_overwrite_a_job_folder(tmp_path: Path) -> None:
    harbor(tmp_path, trials=10)
    with pytest.raises(CommandError, match="already exists"):
        harbor(tmp_path, trials=10)


@pytest.mark.django_db
def test_ingesting_the_harbor_folders_stores_every_trial(tmp_path: Path) -> None:
    root = harbor(tmp_path, trials=60)
    call_command("ingest", str(root), no_progress=True, stdout=io.StringIO())
    assert Trial.objects.count() == 60
    assert Job.objects.count() == len(list(root.iterdir()))


@pytest.mark.django_db
def test_demo_trials_carry_reviews_by_the_demo_users_with_both_human_disagreements() -> None:
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from review.models import Annotation

    call_command("demo_users", verbosity=0)
    seed(300, seed=1)

    reviewers = set(Annotation.objects.values_list("reviewer__username", flat=True))
    assert reviewers == {"reviewer", "expert"}
    # Attributed to the real demo accounts, not to inactive stand-ins.
    assert User.objects.filter(username__in=reviewers, is_active=True).count() == 2
    kinds = set(Trial.objects.values_list("human_disagreement", flat=True))
    assert {"human_pass_automated_fail", "human_fail_automated_pass"} <= kinds
    assert Trial.objects.filter(human_judgment="defer").exists()
    # Each review records what the reviewer saw: the trial's reward and judge verdict.
    for note in Annotation.objects.select_related("trial")[:20]:
        assert note.reward_seen == note.trial.reward
        assert note.judge_verdict_seen == note.trial.judge_verdict
