"""The pydantic models at the trust boundary: the seed's cross-field rule, scorer defaults,
the judge rubric, and numbers that are really numbers."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from pydantic import ValidationError

from rewards import rules
from rewards.schemas import (
    DetailsDimension,
    DetailsFile,
    EvaluationResult,
    JobRecord,
    JudgeVerdict,
    ResultRecord,
    RewardFile,
    ScorerResult,
    TaskRecord,
    TrialBundle,
    TrialRecord,
    ValidityCheck,
    describe_validation_error,
)

DIGEST = "a" * 64


def validity(parseable: bool = True, schema_valid: bool = True, **kw: Any) -> ValidityCheck:
    return ValidityCheck(
        output_parseable=parseable,
        schema_valid=schema_valid,
        verifier_completed=kw.pop("verifier_completed", True),
        errors=kw.pop("errors", []),
    )


# --- EvaluationResult: the seed's cross-field validator ----------------------------------


@pytest.mark.parametrize("reward", [0.5, 1.0, 1e-6])
def test_evaluation_result_rejects_nonzero_reward_for_unparseable_output(reward: float) -> None:
    with pytest.raises(ValidationError, match="does not parse"):
        EvaluationResult(reward=reward, validity=validity(parseable=False))


def test_evaluation_result_accepts_zero_reward_for_unparseable_output() -> None:
    result = EvaluationResult(reward=0.0, validity=validity(parseable=False))
    assert result.reward == 0.0


def test_schema_mismatch_is_diagnostic_and_leaves_the_reward_alone() -> None:
    result = EvaluationResult(reward=0.9, validity=validity(schema_valid=False))
    assert result.reward == 0.9
    record = ResultRecord(
        reward=0.9, validity=validity(schema_valid=False, errors=["schema"]), artifact_digest=DIGEST
    )
    assert record.checked().reward == 0.9


@pytest.mark.parametrize("reward", [-0.1, 1.5, float("nan"), float("inf")])
def test_evaluation_result_rejects_reward_outside_the_unit_range(reward: float) -> None:
    with pytest.raises(ValidationError, match=r"outside \[0, 1\]"):
        EvaluationResult(reward=reward, validity=validity())


@pytest.mark.parametrize("reward", [True, "0.5"])
def test_evaluation_result_rejects_a_reward_that_is_not_a_number(reward: Any) -> None:
    with pytest.raises(ValidationError, match="must be a number"):
        EvaluationResult(reward=reward, validity=validity())


def test_checked_stores_zero_with_the_rejection_and_keeps_the_raw_artifacts() -> None:
    raw = {"logs/verifier/reward.json": '{"reward": 0.93}', "workspace/answer.json": "{oops"}
    record = ResultRecord(
        reward=0.93,
        metrics={"accuracy": 0.9},
        validity=validity(parseable=False, errors=["output does not parse as json"]),
        artifact_digest=DIGEST,
        raw_artifacts=raw,
    )
    checked = record.checked()
    assert checked.reward == 0.0
    assert checked.validity.output_parseable is False
    assert checked.validity.errors[0] == "output does not parse as json"
    assert len(checked.validity.errors) == 2
    assert "0.93 rejected" in checked.validity.errors[1]
    assert checked.raw_artifacts == raw  # the raw reward is still there
    assert checked.metrics == {"accuracy": 0.9}
    assert record.reward == 0.93  # the record itself is not mutated


def test_checked_turns_an_out_of_range_reward_into_zero_with_the_reason() -> None:
    checked = ResultRecord(reward=1.5, validity=validity(), artifact_digest=DIGEST).checked()
    assert checked.reward == 0.0
    assert checked.validity.errors == ["reward 1.5 is outside [0, 1]"]


def test_checked_leaves_a_valid_record_unchanged() -> None:
    record = ResultRecord(reward=0.7, validity=validity(), artifact_digest=DIGEST)
    assert record.checked() == record


def test_checked_is_idempotent() -> None:
    record = ResultRecord(reward=0.7, validity=validity(parseable=False), artifact_digest=DIGEST)
    once = record.checked()
    assert once.checked() == once


@pytest.mark.parametrize("metric", [True, "0.5", float("nan"), float("inf")])
def test_result_metrics_are_finite_numbers(metric: Any) -> None:
    with pytest.raises(ValidationError):
        ResultRecord(reward=0.5, metrics={"m": metric}, validity=validity(), artifact_digest=DIGEST)


# --- reward.json and details.json --------------------------------------------------------


@pytest.mark.parametrize("reward", [0, 1, 0.5])
def test_reward_file_accepts_unit_numbers(reward: float) -> None:
    assert RewardFile.model_validate({"reward": reward, "accuracy": 0.9}).reward == reward


@pytest.mark.parametrize("reward", [True, "0.5", -0.1, 1.1, float("nan"), None])
def test_reward_file_rejects_anything_else(reward: Any) -> None:
    with pytest.raises(ValidationError):
        RewardFile.model_validate({"reward": reward})


def test_details_file_is_validated_per_dimension() -> None:
    details = DetailsFile.from_data(
        {
            "voltage_drop_v": {"score": 0.95, "max_score": 1.0, "evidence": "within 2%"},
            "compliance": {"score": 1, "max_score": 1, "evidence": "flagged", "note": "extra ok"},
        }
    )
    assert details.dimensions["voltage_drop_v"].score == 0.95
    assert details.dimensions["compliance"].evidence == "flagged"


@pytest.mark.parametrize(
    "dimension",
    [
        {"max_score": 1.0},
        {"score": 1.0},
        {"score": True, "max_score": 1.0},
        {"score": "1", "max_score": 1.0},
        {"score": float("nan"), "max_score": 1.0},
        {"score": 1.0, "max_score": float("inf")},
        {"score": 1.0, "max_score": 1.0, "weight": -1},
        {"score": 1.0, "max_score": 1.0, "weight": True},
    ],
)
def test_details_dimension_rejects_bad_numbers(dimension: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        DetailsDimension.model_validate(dimension)


@pytest.mark.parametrize("data", [[], "x", 0.5, {"a": 1}])
def test_details_file_must_be_an_object_of_objects(data: Any) -> None:
    with pytest.raises(ValidationError):
        DetailsFile.from_data(data)


# --- scorers (seed 003) ------------------------------------------------------------------


@pytest.mark.parametrize("scorer_type", rules.SCORER_TYPES)
def test_scorer_required_defaults_by_type(scorer_type: str) -> None:
    scorer = ScorerResult(name="s", type=scorer_type, verdict="PASS")
    advisory_types = {"no_new_skips", "assertions_not_weakened", "llm_judge"}
    assert scorer.required is (scorer_type not in advisory_types)


@pytest.mark.parametrize("scorer_type", ["no_new_skips", "assertions_not_weakened", "command"])
@pytest.mark.parametrize("required", [True, False])
def test_an_explicit_required_flag_is_kept(scorer_type: str, required: bool) -> None:
    scorer = ScorerResult.model_validate(
        {"name": "s", "type": scorer_type, "verdict": "FAIL", "required": required}
    )
    assert scorer.required is required


def test_llm_judge_marked_required_stays_advisory() -> None:
    scorer = ScorerResult(name="rubric", type="llm_judge", required=True, verdict="FAIL")
    assert rules.is_advisory(scorer.type, bool(scorer.required)) is True


def test_n_slash_a_is_stored_as_na() -> None:
    assert ScorerResult(name="s", type="command", verdict="N/A").verdict == "NA"


@pytest.mark.parametrize(("verdict", "score"), [("PASS", 1.0), ("FAIL", 0.0), ("N/A", 0.0)])
def test_scorer_score_defaults_from_its_verdict(verdict: str, score: float) -> None:
    scorer = ScorerResult.model_validate({"name": "s", "type": "command", "verdict": verdict})
    assert scorer.score == score


@pytest.mark.parametrize(
    "changes",
    [
        {"verdict": "SKIPPED"},
        {"verdict": "pass"},
        {"type": ""},
        {"type": "x" * 33},
        {"score": 1.5},
        {"score": -0.1},
        {"score": True},
        {"score": "1"},
        {"name": ""},
        {"unknown": 1},
    ],
)
def test_scorer_result_rejects_bad_fields(changes: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ScorerResult.model_validate({"name": "s", "type": "command", "verdict": "PASS"} | changes)


def test_an_unknown_scorer_type_is_accepted_and_required_by_default() -> None:
    scorer = ScorerResult.model_validate({"name": "s", "type": "lint_v2", "verdict": "FAIL"})
    assert (scorer.type, scorer.required) == ("lint_v2", True)


# --- judge -------------------------------------------------------------------------------

TILES = {"task_completion": 4, "instruction_adherence": 5, "efficiency": 3}


@pytest.mark.parametrize("verdict", ["PASS", "FAIL"])
def test_pass_or_fail_needs_the_three_rubric_tiles(verdict: str) -> None:
    assert JudgeVerdict.model_validate({"verdict": verdict, **TILES}).task_completion == 4
    for missing in TILES:
        data = {"verdict": verdict, **{k: v for k, v in TILES.items() if k != missing}}
        with pytest.raises(ValidationError, match=missing):
            JudgeVerdict.model_validate(data)


@pytest.mark.parametrize("tile", sorted(TILES))
@pytest.mark.parametrize("value", [0, 6, -1, 2.5, True, "4"])
def test_rubric_tiles_are_integers_from_one_to_five(tile: str, value: Any) -> None:
    with pytest.raises(ValidationError):
        JudgeVerdict.model_validate({"verdict": "PASS", **TILES, tile: value})


@pytest.mark.parametrize("value", [1, 5])
def test_rubric_tile_bounds_are_inclusive(value: int) -> None:
    verdict = JudgeVerdict.model_validate({"verdict": "PASS", **TILES, "efficiency": value})
    assert verdict.efficiency == value


def test_unparseable_verdict_needs_no_tiles() -> None:
    verdict = JudgeVerdict.model_validate({"verdict": "UNPARSEABLE", "raw_response": "{oops"})
    assert verdict.task_completion is None
    assert verdict.raw_response == "{oops"


@pytest.mark.parametrize("verdict", ["pass", "ERROR", ""])
def test_judge_verdict_is_pass_fail_or_unparseable(verdict: str) -> None:
    with pytest.raises(ValidationError):
        JudgeVerdict.model_validate({"verdict": verdict, **TILES})


def test_failure_mode_fits_its_column() -> None:
    with pytest.raises(ValidationError):
        JudgeVerdict.model_validate({"verdict": "FAIL", **TILES, "failure_mode": "x" * 256})


# --- tasks and bundles -------------------------------------------------------------------


@pytest.mark.parametrize("threshold", [-0.1, 1.1, True, "0.5", float("nan")])
def test_task_pass_threshold_is_a_unit_number(threshold: Any) -> None:
    with pytest.raises(ValidationError):
        TaskRecord.model_validate({"name": "t", "pass_threshold": threshold})


def bundle_data(results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "job": JobRecord(name="j").model_dump(),
        "task": TaskRecord(name="t").model_dump(),
        "trial": TrialRecord(name="x", uid=uuid.uuid4()).model_dump(),
        "results": results,
    }


def result_data(digest: str, current: bool) -> dict[str, Any]:
    return {
        "reward": 0.5,
        "validity": validity().model_dump(),
        "artifact_digest": digest,
        "is_current": current,
    }


def test_bundle_has_exactly_one_current_result() -> None:
    TrialBundle.model_validate(
        bundle_data([result_data("a" * 64, True), result_data("b" * 64, False)])
    )
    with pytest.raises(ValidationError, match="exactly one current"):
        TrialBundle.model_validate(bundle_data([result_data("a" * 64, False)]))
    with pytest.raises(ValidationError, match="exactly one current"):
        TrialBundle.model_validate(
            bundle_data([result_data("a" * 64, True), result_data("b" * 64, True)])
        )
    with pytest.raises(ValidationError):
        TrialBundle.model_validate(bundle_data([]))


def test_bundle_results_have_distinct_digests() -> None:
    with pytest.raises(ValidationError, match="same artifact_digest"):
        TrialBundle.model_validate(
            bundle_data([result_data("a" * 64, True), result_data("a" * 64, False)])
        )


def test_validation_errors_are_described_without_echoing_input() -> None:
    secret = "<script>alert(1)</script>"
    with pytest.raises(ValidationError) as caught:
        ScorerResult.model_validate({"name": "s", "type": "command", "verdict": secret})
    message = describe_validation_error(caught.value)
    assert message.startswith("verdict:")
    assert secret not in message
