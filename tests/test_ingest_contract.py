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


def problems() -> list[tuple[str, str, str]]:
    """The stored trial's ingestion problems as (file, field, message)."""
    trial = Trial.objects.get()
    stored = trial.detail.ingest_problems
    assert trial.problem_count == len(stored)
    return [(p["file"], p["field"], p["message"]) for p in stored]


def problem(file: str, field: str = "") -> dict[str, str]:
    """The one problem of `file` at `field`."""
    found: list[dict[str, str]] = [
        p
        for p in Trial.objects.get().detail.ingest_problems
        if (p["file"], p["field"]) == (file, field)
    ]
    assert len(found) == 1, problems()
    return found[0]


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
    # Another pipeline's judge: how it was asked is not known, and nothing is made up.
    assert (verdict.rubric_version, verdict.request_settings) == ("", {})
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


def test_details_are_stored_verbatim_nothing_added(tmp_path: Path) -> None:
    details = {"accuracy": {"score": 3, "max_score": 4, "evidence": "3 of 4", "note": "kept"}}
    make_trial(tmp_path / "runs", {"logs/verifier/details.json": details})

    assert ingest(tmp_path / "runs").error == ""

    assert only_result().breakdown == details  # no "weight": null, the extra key kept
    assert problems() == []


@pytest.mark.parametrize(
    ("details", "breakdown", "expected"),
    [
        (
            '{"a": {"score": "high", "max_score": 1}}',
            {"a": {"score": "high", "max_score": 1}},
            ("a.score", "must be a number"),
        ),
        ("[1, 2]", None, ("", "not a JSON object: kept raw only")),
        ("{oops", None, ("", "not valid JSON at line 1")),
    ],
)
def test_malformed_details_are_problems_kept_raw_and_do_not_touch_the_reward(
    tmp_path: Path, details: str, breakdown: Any, expected: tuple[str, str]
) -> None:
    make_trial(tmp_path / "runs", {"logs/verifier/details.json": details})

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert result.reward == 0.93
    assert result.breakdown == breakdown
    # A bad breakdown never makes the result invalid: it is not the reward.
    assert result.errors == []
    field, message = expected
    assert message in problem("logs/verifier/details.json", field)["message"]
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
    # It never fails the trial; the reason is listed among the ingestion problems.
    assert only_result().errors == []
    assert problems()
    assert all(file == "judge.json" for file, _, _ in problems())
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
    ("scorers", "field", "message"),
    [
        ('{"name": "x"}', "", "not a JSON list of scorer results"),
        ("[", "", "not valid JSON"),
    ],
)
def test_a_scorers_json_that_is_not_a_list_is_a_problem_kept_raw(
    tmp_path: Path, scorers: str, field: str, message: str
) -> None:
    make_trial(tmp_path / "runs", {"scorers.json": scorers})

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert result.reward == 0.93
    assert result.errors == []
    found = problem("scorers.json", field)
    assert message in found["message"]
    assert found["raw"] == scorers
    assert ScorerResult.objects.count() == 0


def test_a_bad_scorer_row_is_a_problem_and_the_other_rows_are_stored(tmp_path: Path) -> None:
    rows = [
        {"name": "tests", "type": "command", "verdict": "PASS"},
        {"name": "x", "type": "command", "verdict": "PASS", "surprise": 1},
        {"name": "y", "type": "file_exists", "verdict": "MAYBE", "score": 2},
    ]
    make_trial(tmp_path / "runs", {"scorers.json": rows})

    assert ingest(tmp_path / "runs").error == ""

    assert list(ScorerResult.objects.values_list("name", flat=True)) == ["tests"]
    second = problem("scorers.json", "[1]")
    assert "surprise: Extra inputs are not permitted" in second["message"]
    assert json.loads(second["raw"]) == rows[1]
    third = problem("scorers.json", "[2]")
    assert "verdict:" in third["message"]
    assert "score:" in third["message"]
    assert only_result().errors == []


def test_an_unknown_scorer_type_is_stored_as_given_and_named(tmp_path: Path) -> None:
    rows = [
        {"name": "x", "type": "telepathy", "verdict": "FAIL"},
        {"name": "y", "type": "lint_v2", "verdict": "FAIL", "required": False},
    ]
    make_trial(tmp_path / "runs", {"scorers.json": rows})

    assert ingest(tmp_path / "runs").error == ""

    stored = {s.name: (s.type, s.required, s.is_known_type) for s in ScorerResult.objects.all()}
    # Unknown types gate unless the row says otherwise (seed 003: "All others are required").
    assert stored == {"x": ("telepathy", True, False), "y": ("lint_v2", False, False)}
    assert Trial.objects.get().scorer_verdict == "FAIL"
    assert problem("scorers.json", "[0].type")["message"] == (
        "unknown scorer type 'telepathy': stored as given, required"
    )
    assert problem("scorers.json", "[1].type")["message"].endswith("advisory")


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


def test_job_option_files_the_trial_elsewhere_without_changing_its_uid(tmp_path: Path) -> None:
    make_trial(tmp_path / "runs")
    assert ingest(tmp_path / "runs").error == ""
    uid = Trial.objects.get().uid
    Job.objects.all().delete()

    assert ingest(tmp_path / "runs", "--job", "other").error == ""

    assert Trial.objects.get().uid == uid
    assert Trial.objects.get().job.name == "other"


@pytest.mark.parametrize(
    ("changes", "field", "message", "raw"),
    [
        ({"surprise": 1}, "surprise", "Extra inputs are not permitted", "1"),
        ({"status": "done"}, "status", "Input should be", "done"),
        ({"agent": {"name": 5}}, "agent.name", "Input should be a valid string", "5"),
        ({"started_at": "yesterday"}, "started_at", "valid datetime", "yesterday"),
    ],
)
def test_a_bad_metadata_field_is_a_problem_and_the_trial_keeps_its_reward(
    tmp_path: Path, changes: dict[str, Any], field: str, message: str, raw: str
) -> None:
    make_trial(tmp_path / "runs", {"trial.json": {**TRIAL_JSON, **changes}})

    ran = ingest(tmp_path / "runs")

    assert ran.summary() == "Summary: ingested 1, unchanged 0, updated 0, invalid 0, unreadable 0"
    trial = Trial.objects.get()
    assert (trial.name, trial.reward, trial.is_valid) == ("t-001", 0.93, True)
    found = problem("trial.json", field)
    assert message in found["message"]
    assert found["raw"] == raw


def test_a_bad_task_spec_field_is_a_problem_and_marks_the_result_invalid(tmp_path: Path) -> None:
    spec = {**TRIAL_JSON, "task": {**TASK, "pass_threshold": 2}}
    make_trial(tmp_path / "runs", {"trial.json": spec})

    assert ingest(tmp_path / "runs").error == ""

    trial = Trial.objects.get()
    assert trial.reward == 0.93
    assert trial.task.pass_threshold == 0.5  # read as its default
    assert problem("trial.json", "task.pass_threshold")["raw"] == "2"
    assert trial.is_valid is False
    assert any("task spec has fields that do not validate" in e for e in only_result().errors)


def test_an_unreadable_trial_json_is_a_problem_and_the_reward_is_kept(tmp_path: Path) -> None:
    make_trial(tmp_path / "runs", {"trial.json": "{"})

    ran = ingest(tmp_path / "runs")

    # Stored, and counted invalid (as the explorer's validity filter counts it).
    assert ran.summary() == "Summary: ingested 1, unchanged 0, updated 0, invalid 1, unreadable 0"
    trial = Trial.objects.get()
    assert (trial.name, trial.reward) == ("t-001", 0.93)
    found = problem("trial.json")
    assert "not valid JSON" in found["message"]
    assert found["raw"] == "{"
    assert trial.is_valid is False


def test_a_bad_error_tag_is_a_problem_kept_raw_and_an_unknown_source_is_stored(
    tmp_path: Path,
) -> None:
    tags = [
        {"category": "unit mismatch", "description": "V vs mV", "source": "mechanical"},
        {"description": "no category", "source": "mechanical"},
        {"category": "flaky network", "source": "pipeline-v9"},
    ]
    make_trial(tmp_path / "runs", {"trial.json": {**TRIAL_JSON, "error_tags": tags}})

    assert ingest(tmp_path / "runs").error == ""

    stored = list(ErrorTag.objects.values_list("category", "source"))
    assert stored == [("unit mismatch", "mechanical"), ("flaky network", "pipeline-v9")]
    bad = problem("trial.json", "error_tags[1]")
    assert "category: Field required" in bad["message"]
    assert json.loads(bad["raw"]) == tags[1]
    unknown = problem("trial.json", "error_tags[2].source")
    assert unknown["message"] == "unknown error source 'pipeline-v9': stored as given"
    assert Trial.objects.get().is_valid is True


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


def test_a_bad_command_output_field_is_a_problem_and_the_rest_is_kept(tmp_path: Path) -> None:
    make_trial(tmp_path / "runs", {"command_output.json": {"command": "x", "exit_code": "1"}})

    assert ingest(tmp_path / "runs").error == ""

    found = problem("command_output.json", "exit_code")
    assert "valid integer" in found["message"]
    assert found["raw"] == "1"
    detail = Trial.objects.get().detail
    assert (detail.command, detail.exit_code) == ("x", None)
    assert only_result().errors == []
    assert ErrorTag.objects.get().category == "unit mismatch"


def test_a_trial_with_a_bad_tag_an_unknown_scorer_and_a_judge_missing_a_field(
    tmp_path: Path,
) -> None:
    """The issue's case: every problem listed, the reward stored, the filter finds it."""
    make_trial(
        tmp_path / "runs",
        {
            "trial.json": {**TRIAL_JSON, "error_tags": [{"category": "x", "source": 7}]},
            "scorers.json": [{"name": "vision", "type": "screenshot_diff", "verdict": "PASS"}],
            "judge.json": {k: v for k, v in JUDGE.items() if k != "efficiency"},
        },
    )

    assert ingest(tmp_path / "runs").error == ""

    trial = Trial.objects.get()
    assert trial.reward == 0.93
    assert trial.judge_verdict == "UNPARSEABLE"
    assert [(f, field) for f, field, _ in problems()] == [
        ("trial.json", "error_tags[0]"),
        ("scorers.json", "[0].type"),
        ("judge.json", ""),
    ]
    assert "efficiency" in problems()[2][2]
    assert list(Trial.objects.with_ingest_problems()) == [trial]


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


def test_problem_messages_read_without_pydantic_prefixes(tmp_path: Path) -> None:
    make_trial(
        tmp_path / "runs",
        {"judge.json": {k: v for k, v in JUDGE.items() if k != "efficiency"}},
    )

    assert ingest(tmp_path / "runs").error == ""

    assert problem("judge.json")["message"] == "a PASS verdict needs scores for efficiency"


def test_the_summary_counts_trials_stored_with_a_rejected_reward_as_invalid(
    tmp_path: Path,
) -> None:
    for i in range(3):
        trial = {**TRIAL_JSON, "name": f"bad-{i}"}
        files = {"trial.json": trial, "logs/verifier/reward.json": {"reward": 1.5}}
        make_trial(tmp_path / "runs", files, f"bad-{i}")
    make_trial(tmp_path / "runs", name="good")

    ran = ingest(tmp_path / "runs")

    assert ran.error == ""
    assert ran.summary() == "Summary: ingested 4, unchanged 0, updated 0, invalid 3, unreadable 0"
    rejected = [line for line in ran.lines if line.startswith("invalid:") and "bad-" in line]
    assert len(rejected) == 3
    assert all("stored as invalid: reward 1.5 is outside [0, 1]" in line for line in rejected)
    assert Trial.objects.filter(is_valid=False).count() == 3
    # Ingested again, unchanged: nothing new to report.
    again = ingest(tmp_path / "runs")
    assert again.summary() == "Summary: ingested 0, unchanged 4, updated 0, invalid 0, unreadable 0"
