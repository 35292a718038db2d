"""Verifier-contract trial directories (seed 000, DESIGN §4.2): each scoring rule, as stored."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from rewards.ingest import contract
from rewards.models import ErrorTag, EvaluationResult, Job, JudgeVerdict, ScorerResult, Task, Trial
from rewards.schemas import TaskSpec
from tests.ingest_helpers import ingest, write_files

pytestmark = pytest.mark.django_db

TASK: dict[str, Any] = {
    "name": "voltage-drop",
    "source": "electrical",
    "verifier": {
        "script": "tests/test.sh",
        "expected_output_path": "/workspace/answer.json",
        "reward_path": "/logs/verifier/reward.json",
        "details_path": "/logs/verifier/details.json",
    },
    "output_format": "json",
    "output_schema": {
        "type": "object",
        "required": ["voltage_drop_v"],
        "properties": {"voltage_drop_v": {"type": "number"}},
    },
    "rubric_strategy": "weighted_mean",
    "pass_threshold": 0.5,
}
TRIAL_JSON: dict[str, Any] = {
    "name": "t-001",
    "job": "nightly-42",
    "task": TASK,
    "agent": {"name": "claude-code", "version": "2.1", "model": "m-large", "provider": "acme"},
    "status": "completed",
    "started_at": "2026-11-01T10:00:00Z",
    "finished_at": "2026-11-01T10:04:10Z",
    "error_tags": [{"category": "unit mismatch", "description": "V vs mV", "source": "mechanical"}],
    "confidence": {"method": "bootstrap", "n": 200, "ci_low": 0.88, "ci_high": 0.97},
}
DETAILS = {
    "voltage_drop_v": {"score": 0.95, "max_score": 1.0, "evidence": "within 2% of reference"},
    "compliance": {"score": 1.0, "max_score": 1.0, "evidence": "correctly flagged compliant"},
}
JUDGE = {
    "verdict": "PASS",
    "task_completion": 5,
    "instruction_adherence": 4,
    "efficiency": 3,
    "reasoning": "Computed the drop correctly.",
    "judge_model": "judge-1",
    "scored_at": "2026-11-01T10:05:00Z",
    "fact_checks": [{"claim": "3.2 V", "status": "verified", "evidence": "calc"}],
}


def make_trial(root: Path, files: dict[str, Any] | None = None, name: str = "t-001") -> Path:
    """A contract trial: a complete, valid one unless `files` replaces or removes (None)."""
    content: dict[str, Any] = {
        "trial.json": TRIAL_JSON,
        "logs/verifier/reward.json": {"reward": 0.93},
        "logs/verifier/details.json": DETAILS,
        "workspace/answer.json": {"voltage_drop_v": 3.2},
    }
    content.update(files or {})
    return write_files(root / name, {k: v for k, v in content.items() if v is not None})


def only_result() -> EvaluationResult:
    return Trial.objects.get().results.get(is_current=True)


def test_a_complete_trial_directory_is_stored_whole(tmp_path: Path) -> None:
    make_trial(
        tmp_path / "runs",
        {
            "scorers.json": [
                {"name": "tests", "type": "command", "verdict": "PASS", "score": 1.0},
                {"name": "skips", "type": "no_new_skips", "verdict": "FAIL"},
            ],
            "judge.json": JUDGE,
            "workspace.diff": "--- a/x\n+++ b/x\n",
            "command_output.json": {
                "command": "pytest",
                "exit_code": 0,
                "stdout_tail": "ok",
                "stderr_tail": "",
            },
        },
    )

    ran = ingest(tmp_path / "runs")

    assert ran.error == ""
    assert ran.summary() == "Summary: ingested 1, unchanged 0, updated 0, invalid 0, unreadable 0"
    trial = Trial.objects.get()
    assert (trial.name, trial.job.name) == ("t-001", "nightly-42")
    assert (trial.agent_name, trial.agent_version, trial.model_name, trial.model_provider) == (
        "claude-code",
        "2.1",
        "m-large",
        "acme",
    )
    result = only_result()
    assert result.reward == 0.93
    assert (result.output_parseable, result.schema_valid, result.verifier_completed) == (
        True,
        True,
        True,
    )
    assert result.errors == []
    assert result.breakdown is not None
    assert result.breakdown["voltage_drop_v"]["score"] == 0.95
    assert result.confidence is not None
    assert result.confidence["ci_high"] == 0.97
    assert result.raw_artifacts["logs/verifier/reward.json"] == '{"reward": 0.93}'
    task = trial.task
    assert (task.name, task.source, task.output_format) == ("voltage-drop", "electrical", "json")
    assert task.expected_output_path == "/workspace/answer.json"
    assert task.verifier_script == "tests/test.sh"
    assert task.checksum == contract.task_checksum(TaskSpec.model_validate(TASK))
    assert [s.name for s in trial.scorers.all()] == ["tests", "skips"]
    assert trial.scorer_verdict == "PASS"  # the advisory no_new_skips FAIL does not gate
    verdict = trial.judge_verdicts.get()
    assert (verdict.verdict, verdict.task_completion, verdict.judge_model) == ("PASS", 5, "judge-1")
    assert trial.gate_disagreement == "advisory_fail"
    assert list(trial.error_tags.values_list("category", "source")) == [
        ("unit mismatch", "mechanical")
    ]
    assert trial.detail.workspace_diff == "--- a/x\n+++ b/x\n"
    assert (trial.detail.command, trial.detail.exit_code, trial.detail.stdout_tail) == (
        "pytest",
        0,
        "ok",
    )


def test_missing_reward_is_ingested_as_zero_and_not_completed(tmp_path: Path) -> None:
    make_trial(tmp_path / "runs", {"logs/verifier/reward.json": None})

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert (result.reward, result.verifier_completed) == (0.0, False)
    assert result.errors == ["reward file missing: the verifier did not finish"]
    assert Trial.objects.get().is_valid is False


@pytest.mark.parametrize(
    ("reward_json", "error"),
    [
        ('{"reward": 1.5}', "reward 1.5 is outside [0, 1]"),
        ('{"reward": -0.1}', "reward -0.1 is outside [0, 1]"),
        ('{"reward": true}', "reward is a boolean, not a number"),
        ('{"reward": "0.9"}', "reward is of type str, not a number"),
        ('{"score": 0.9}', "reward file has no 'reward' key"),
        ("[0.9]", "reward file is not a JSON object"),
        ('{"reward": NaN}', "reward file unreadable: not valid JSON: NaN is not a JSON value"),
        ("", "reward file unreadable: not valid JSON at line 1"),
    ],
)
def test_unusable_reward_is_zero_completed_with_the_reason_and_the_raw_file(
    tmp_path: Path, reward_json: str, error: str
) -> None:
    make_trial(tmp_path / "runs", {"logs/verifier/reward.json": reward_json})

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert (result.reward, result.verifier_completed) == (0.0, True)
    assert error in result.errors
    assert result.raw_artifacts["logs/verifier/reward.json"] == reward_json


def test_other_numeric_reward_keys_are_metrics(tmp_path: Path) -> None:
    make_trial(
        tmp_path / "runs",
        {"logs/verifier/reward.json": {"reward": 0.5, "accuracy": 0.75, "note": "x"}},
    )

    assert ingest(tmp_path / "runs").error == ""

    assert only_result().metrics == {"accuracy": 0.75}


def test_missing_declared_output_does_not_parse(tmp_path: Path) -> None:
    make_trial(
        tmp_path / "runs",
        {"workspace/answer.json": None, "logs/verifier/reward.json": {"reward": 0.0}},
    )

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert (result.output_parseable, result.schema_valid) == (False, False)
    assert "output file missing: /workspace/answer.json" in result.errors


def test_nonzero_reward_for_unparseable_output_is_stored_as_zero_with_the_rejection(
    tmp_path: Path,
) -> None:
    make_trial(tmp_path / "runs", {"workspace/answer.json": "{not json"})

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert result.reward == 0.0
    assert result.output_parseable is False
    assert any(e.startswith("output does not parse as json") for e in result.errors)
    assert "reward 0.93 rejected: the output does not parse, so only 0.0 is valid" in result.errors
    # The raw reward is kept.
    assert json.loads(result.raw_artifacts["logs/verifier/reward.json"]) == {"reward": 0.93}


def test_schema_mismatch_is_diagnostic_and_keeps_the_reward(tmp_path: Path) -> None:
    make_trial(tmp_path / "runs", {"workspace/answer.json": {"voltage_drop_v": "high"}})

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert result.reward == 0.93
    assert (result.output_parseable, result.schema_valid) == (True, False)
    assert result.errors == [
        "output does not match the schema at voltage_drop_v: 'high' is not of type 'number'"
    ]


def test_details_are_the_breakdown_and_never_change_the_reward(tmp_path: Path) -> None:
    zeros = {"a": {"score": 0, "max_score": 1}, "b": {"score": 0, "max_score": 4}}
    make_trial(tmp_path / "runs", {"logs/verifier/details.json": zeros})

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert result.reward == 0.93
    assert result.breakdown is not None
    assert result.breakdown["b"]["max_score"] == 4.0
    assert result.errors == []


@pytest.mark.parametrize(
    ("details", "error"),
    [
        ('{"a": {"score": "high", "max_score": 1}}', "logs/verifier/details.json: a.score"),
        ("[1, 2]", "logs/verifier/details.json: (root): Input should be a valid dictionary"),
        ("{oops", "logs/verifier/details.json: not valid JSON at line 1"),
    ],
)
def test_malformed_details_are_recorded_kept_raw_and_do_not_touch_the_reward(
    tmp_path: Path, details: str, error: str
) -> None:
    make_trial(tmp_path / "runs", {"logs/verifier/details.json": details})

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert result.reward == 0.93
    assert result.breakdown is None
    assert any(e.startswith(error) for e in result.errors), result.errors
    assert result.raw_artifacts["logs/verifier/details.json"] == details


@pytest.mark.parametrize(
    "judge",
    [
        "the judge said: looks fine to me",
        '{"verdict": "PASS"}',  # no rubric scores
        '{"verdict": "MAYBE", "task_completion": 3}',
        '{"verdict": "PASS", "task_completion": 9, "instruction_adherence": 1, "efficiency": 1}',
        b"\xff\xfe garbage",
    ],
)
def test_a_judge_json_that_does_not_parse_is_an_unparseable_verdict_with_its_raw_text(
    tmp_path: Path, judge: str | bytes
) -> None:
    make_trial(tmp_path / "runs", {"judge.json": judge})

    assert ingest(tmp_path / "runs").error == ""

    trial = Trial.objects.get()
    verdict = trial.judge_verdicts.get()
    assert verdict.verdict == JudgeVerdict.Outcome.UNPARSEABLE
    expected = judge.decode("utf-8", errors="replace") if isinstance(judge, bytes) else judge
    assert verdict.raw_response == expected
    assert verdict.reasoning.startswith("judge.json could not be read: ")
    # It never fails the trial.
    assert only_result().errors == []
    assert trial.is_valid is True
    assert trial.judge_verdict == "UNPARSEABLE"


def test_scorer_required_flag_defaults_by_type(tmp_path: Path) -> None:
    scorers: list[dict[str, Any]] = [
        {"name": t, "type": t, "verdict": "FAIL"}
        for t in ("command", "no_new_skips", "assertions_not_weakened", "llm_judge", "file_exists")
    ]
    scorers.append({"name": "explicit", "type": "no_new_skips", "verdict": "N/A", "required": True})
    make_trial(tmp_path / "runs", {"scorers.json": scorers})

    assert ingest(tmp_path / "runs").error == ""

    rows = {s.name: (s.required, s.verdict, s.score) for s in ScorerResult.objects.all()}
    assert rows == {
        "command": (True, "FAIL", 0.0),
        "no_new_skips": (False, "FAIL", 0.0),
        "assertions_not_weakened": (False, "FAIL", 0.0),
        "llm_judge": (False, "FAIL", 0.0),
        "file_exists": (True, "FAIL", 0.0),
        "explicit": (True, "NA", 0.0),
    }
    assert Trial.objects.get().scorer_verdict == "FAIL"


@pytest.mark.parametrize(
    "scorers",
    [
        '[{"name": "x", "type": "telepathy", "verdict": "PASS"}]',
        '{"name": "x"}',
        '[{"name": "x", "type": "command", "verdict": "PASS", "surprise": 1}]',
        "[",
    ],
)
def test_a_malformed_scorers_json_is_recorded_and_kept_raw(tmp_path: Path, scorers: str) -> None:
    make_trial(tmp_path / "runs", {"scorers.json": scorers})

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert result.reward == 0.93
    assert any(e.startswith("scorers.json: ") for e in result.errors)
    assert result.raw_artifacts["scorers.json"] == scorers
    assert ScorerResult.objects.count() == 0


def test_without_trial_json_names_come_from_the_directories(tmp_path: Path) -> None:
    write_files(
        tmp_path / "nightly-7" / "voltage__abc",
        {"logs/verifier/reward.json": {"reward": 1.0}},
    )

    assert ingest(tmp_path / "nightly-7").error == ""

    trial = Trial.objects.get()
    assert (trial.name, trial.job.name, trial.task.name) == ("voltage__abc", "nightly-7", "voltage")
    result = only_result()
    # No declared output: nothing to fail to parse.
    assert (result.reward, result.output_parseable, result.errors) == (1.0, True, [])


def test_a_trial_directory_given_directly_is_filed_under_its_parent(tmp_path: Path) -> None:
    folder = write_files(tmp_path / "batch" / "t9", {"logs/verifier/reward.json": {"reward": 1}})

    assert ingest(folder).error == ""

    assert Trial.objects.get().job.name == "batch"


def test_job_option_overrides_trial_json(tmp_path: Path) -> None:
    make_trial(tmp_path / "runs")

    assert ingest(tmp_path / "runs", "--job", "other").error == ""

    assert Job.objects.get().name == "other"


@pytest.mark.parametrize(
    ("trial_json", "reason"),
    [
        ({**TRIAL_JSON, "surprise": 1}, "trial.json: surprise: Extra inputs are not permitted"),
        ({**TRIAL_JSON, "status": "done"}, "trial.json: status: Input should be"),
        ({**TRIAL_JSON, "task": {**TASK, "pass_threshold": 2}}, "trial.json: task.pass_threshold"),
        ("{", "trial.json: (root): Invalid JSON"),
    ],
)
def test_a_trial_json_that_does_not_validate_is_an_invalid_line_naming_the_trial(
    tmp_path: Path, trial_json: Any, reason: str
) -> None:
    make_trial(tmp_path / "runs", {"trial.json": trial_json})
    make_trial(tmp_path / "runs", {"trial.json": {**TRIAL_JSON, "name": "t-002"}}, name="t-002")

    ran = ingest(tmp_path / "runs")

    assert ran.error == ""
    assert ran.summary() == "Summary: ingested 1, unchanged 0, updated 0, invalid 1, unreadable 0"
    invalid = [line for line in ran.lines if line.startswith("invalid: ")]
    assert len(invalid) == 1
    assert invalid[0].startswith(f"invalid: runs/t-001: {reason}")
    assert Trial.objects.get().name == "t-002"


def test_uid_is_deterministic_so_reingest_is_unchanged(tmp_path: Path) -> None:
    make_trial(tmp_path / "runs")
    assert ingest(tmp_path / "runs").error == ""
    uid = Trial.objects.get().uid

    ran = ingest(tmp_path / "runs")

    assert ran.summary() == "Summary: ingested 0, unchanged 1, updated 0, invalid 0, unreadable 0"
    assert Trial.objects.get().uid == uid == contract.trial_uid("nightly-42", "t-001")


def test_the_same_task_spec_is_the_same_task(tmp_path: Path) -> None:
    for name in ("t-001", "t-002"):
        make_trial(tmp_path / "runs", {"trial.json": {**TRIAL_JSON, "name": name}}, name=name)
    changed = {**TASK, "pass_threshold": 0.9}
    make_trial(
        tmp_path / "runs",
        {"trial.json": {**TRIAL_JSON, "name": "t-003", "task": changed}},
        name="t-003",
    )

    assert ingest(tmp_path / "runs").error == ""

    assert Trial.objects.count() == 3
    assert Task.objects.count() == 2
    assert set(Task.objects.values_list("pass_threshold", flat=True)) == {0.5, 0.9}


def test_error_tags_and_a_bad_command_output_are_recorded(tmp_path: Path) -> None:
    make_trial(tmp_path / "runs", {"command_output.json": {"command": "x", "exit_code": "1"}})

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert any(e.startswith("command_output.json: exit_code") for e in result.errors)
    assert result.raw_artifacts["command_output.json"] == '{"command": "x", "exit_code": "1"}'
    assert ErrorTag.objects.get().category == "unit mismatch"


def test_a_folder_of_contract_trials_is_ingested_and_a_stray_folder_named(tmp_path: Path) -> None:
    for name in ("a", "b"):
        write_files(tmp_path / "runs" / name, {"logs/verifier/reward.json": {"reward": 0.5}})
    (tmp_path / "runs" / "notes").mkdir()

    ran = ingest(tmp_path / "runs")

    assert ran.summary() == "Summary: ingested 2, unchanged 0, updated 0, invalid 0, unreadable 1"
    assert f"unreadable: {tmp_path / 'runs' / 'notes'}: no trials found" in ran.lines


def test_naive_times_in_trial_and_judge_json_are_utc(tmp_path: Path) -> None:
    make_trial(
        tmp_path / "runs",
        {
            "trial.json": {**TRIAL_JSON, "started_at": "2026-11-01T10:00:00"},
            "judge.json": {**JUDGE, "scored_at": "2026-11-01T10:05:00"},
        },
    )

    assert ingest(tmp_path / "runs").error == ""

    trial = Trial.objects.get()
    assert trial.started_at == datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
    assert trial.judge_verdicts.get().scored_at == datetime(2026, 11, 1, 10, 5, tzinfo=UTC)
