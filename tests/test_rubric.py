"""The rubric scorer (seed 000, "Reward rollup") and `manage.py rubric`."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from hypothesis import given, settings, strategies as st

from rewards import rubric
from rewards.management.commands.rubric import parse_weights
from rewards.schemas import DetailsDimension


def dims(**spec: tuple[float, float] | tuple[float, float, float]) -> dict[str, DetailsDimension]:
    """name=(score, max_score[, weight])."""
    out = {}
    for name, values in spec.items():
        weight = values[2] if len(values) == 3 else None
        out[name] = DetailsDimension(score=values[0], max_score=values[1], weight=weight)
    return out


# The seed's own example: 0.95, 1.0, 1.0.
SEED_EXAMPLE = {
    "voltage_drop_v": {"score": 0.95, "max_score": 1.0, "evidence": "within 2% of reference"},
    "voltage_drop_pct": {"score": 1.0, "max_score": 1.0, "evidence": "exact match"},
    "compliance": {"score": 1.0, "max_score": 1.0, "evidence": "correctly flagged compliant"},
}


def test_seed_example_scores_to_the_mean_rounded_to_four_decimals() -> None:
    details = {k: DetailsDimension.model_validate(v) for k, v in SEED_EXAMPLE.items()}
    assert rubric.score(details) == 0.9833  # (0.95 + 1 + 1) / 3 = 0.98333…
    assert rubric.score(details, "min") == 0.95


def test_each_dimension_is_normalised_by_its_max_score() -> None:
    assert rubric.score(dims(a=(3, 4), b=(1, 2))) == 0.625  # (0.75 + 0.5) / 2


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"a": (2, 1), "b": (0, 1)}, 0.5),  # 2/1 clamps to 1 before averaging, not after
        ({"a": (-1, 1), "b": (1, 1)}, 0.5),  # -1/1 clamps to 0
        ({"a": (5, 1)}, 1.0),
        ({"a": (-5, 1)}, 0.0),
    ],
)
def test_each_dimension_is_clamped_to_the_unit_range(
    spec: dict[str, tuple[float, float]], expected: float
) -> None:
    assert rubric.score(dims(**spec)) == expected


def test_clamping_applies_to_min_too() -> None:
    assert rubric.score(dims(a=(2, 1), b=(3, 1)), "min") == 1.0
    assert rubric.score(dims(a=(-2, 1), b=(1, 1)), "min") == 0.0


def test_weighted_mean_is_sum_of_weighted_scores_over_sum_of_weights() -> None:
    # Σ(n·w)/Σw = (1·3 + 0·1) / 4; an unweighted mean would be 0.5.
    assert rubric.score(dims(a=(1, 1, 3), b=(0, 1, 1))) == 0.75


def test_weights_override_the_dimensions_own_weights() -> None:
    details = dims(a=(1, 1, 3), b=(0, 1, 1))
    assert rubric.score(details, weights={"a": 1, "b": 3}) == 0.25
    assert rubric.score(details, weights={"b": 7}) == 0.3  # a keeps its own 3


def test_default_weight_is_one() -> None:
    assert rubric.score(dims(a=(1, 1), b=(0, 1), c=(0.5, 1))) == 0.5
    assert rubric.score(dims(a=(1, 1), b=(0, 1, 1))) == 0.5


def test_zero_weight_drops_a_dimension_from_the_mean() -> None:
    assert rubric.score(dims(a=(1, 1), b=(0, 1)), weights={"b": 0}) == 1.0


def test_min_is_the_worst_dimension_whatever_the_weights() -> None:
    assert rubric.score(dims(a=(1, 1, 100), b=(0.2, 1, 0)), "min") == 0.2


def test_result_is_rounded_to_four_decimals() -> None:
    assert rubric.score(dims(a=(1, 3))) == 0.3333
    assert rubric.score(dims(a=(2, 3))) == 0.6667
    assert rubric.score(dims(a=(1, 3)), "min") == 0.3333


def test_huge_weights_do_not_overflow() -> None:
    assert rubric.score(dims(a=(1, 1, 1e308), b=(1, 1, 1e308))) == 1.0
    assert rubric.score(dims(a=(1, 1, 1e308), b=(0, 1, 1e308))) == 0.5


@pytest.mark.parametrize(
    ("value", "weights"),
    [
        # Plain floating point gives 0.030649999999999997 (rounds to 0.0306) and
        # 0.37055000000000005 (rounds to 0.3706) for these means of equal values.
        (0.03065, (3.0, 1 / 3)),
        (0.37055, (0.7, 0.1)),
    ],
)
def test_a_weighted_mean_of_equal_values_is_exactly_that_value(
    value: float, weights: tuple[float, float]
) -> None:
    details = dims(a=(value, 1, weights[0]), b=(value, 1, weights[1]))
    assert rubric.score(details) == round(value, 4) == rubric.score(details, "min")


@pytest.mark.parametrize("max_score", [0, -1, -0.5])
def test_max_score_of_zero_or_less_is_rejected(max_score: float) -> None:
    with pytest.raises(rubric.RubricError, match=r"dimension 'b': max_score must be greater"):
        rubric.score(dims(a=(1, 1), b=(1, max_score)))


def test_no_dimensions_is_rejected() -> None:
    with pytest.raises(rubric.RubricError, match="no dimensions"):
        rubric.score({})


def test_unknown_weight_keys_are_rejected_for_both_strategies() -> None:
    for strategy in rubric.STRATEGIES:
        with pytest.raises(rubric.RubricError, match="unknown dimensions: nope"):
            rubric.score(dims(a=(1, 1)), strategy, {"nope": 1})


@pytest.mark.parametrize("weight", [-1.0, float("nan"), float("inf")])
def test_bad_weights_are_rejected(weight: float) -> None:
    with pytest.raises(rubric.RubricError, match="weight must be"):
        rubric.score(dims(a=(1, 1)), weights={"a": weight})


def test_weights_summing_to_zero_are_rejected() -> None:
    with pytest.raises(rubric.RubricError, match="sum to 0"):
        rubric.score(dims(a=(1, 1), b=(1, 1)), weights={"a": 0, "b": 0})


def test_unknown_strategy_is_rejected() -> None:
    with pytest.raises(rubric.RubricError, match="unknown strategy"):
        rubric.score(dims(a=(1, 1)), "max")  # type: ignore[arg-type]


def test_same_details_give_the_same_reward_every_time() -> None:
    details = dims(a=(0.123456, 1, 0.3), b=(7, 9, 1.7), c=(0.5, 2))
    first = rubric.score(details)
    assert all(rubric.score(details) == first for _ in range(50))


# --- property -------------------------------------------------------------------------------

finite = st.floats(allow_nan=False, allow_infinity=False)
dimension = st.builds(
    DetailsDimension,
    score=finite,
    max_score=st.floats(min_value=5e-324, allow_nan=False, allow_infinity=False),
    weight=st.none() | st.floats(min_value=0, allow_nan=False, allow_infinity=False),
)
details_strategy = st.dictionaries(st.text(max_size=8), dimension, min_size=1, max_size=8)


def _normalised(d: DetailsDimension) -> float:
    return min(1.0, max(0.0, d.score / d.max_score))


@settings(max_examples=400, deadline=None)
@given(details_strategy)
def test_any_valid_details_score_into_the_unit_range_with_four_decimals(
    details: dict[str, DetailsDimension],
) -> None:
    values = [_normalised(d) for d in details.values()]
    low, high = round(min(values), 4), round(max(values), 4)
    assert rubric.score(details, "min") == low
    weights = [1.0 if d.weight is None else d.weight for d in details.values()]
    if max(weights) == 0:
        with pytest.raises(rubric.RubricError):
            rubric.score(details)
        return
    mean = rubric.score(details)
    assert 0.0 <= mean <= 1.0
    assert mean == round(mean, 4)
    assert low <= mean <= high


# --- the command ----------------------------------------------------------------------------


def write_details(tmp_path: Path, data: Any, name: str = "details.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("rubric", *args, stdout=out)
    return out.getvalue()


def test_command_prints_the_reward_as_json(tmp_path: Path) -> None:
    path = write_details(tmp_path, SEED_EXAMPLE)
    assert json.loads(run(str(path))) == {"reward": 0.9833}


def test_command_uses_the_strategy(tmp_path: Path) -> None:
    path = write_details(tmp_path, SEED_EXAMPLE)
    assert json.loads(run(str(path), "--strategy", "min")) == {"reward": 0.95}


def test_command_weights_override(tmp_path: Path) -> None:
    path = write_details(
        tmp_path,
        {"a": {"score": 1, "max_score": 1, "weight": 3}, "b": {"score": 0, "max_score": 1}},
    )
    assert json.loads(run(str(path))) == {"reward": 0.75}
    assert json.loads(run(str(path), "--weights", "a=1,b=3")) == {"reward": 0.25}
    assert json.loads(run(str(path), "--weights", " b = 1 ")) == {"reward": 0.75}


def test_command_writes_reward_json_with_o(tmp_path: Path) -> None:
    path = write_details(tmp_path, SEED_EXAMPLE)
    target = tmp_path / "logs" / "reward.json"
    target.parent.mkdir()
    assert run(str(path), "-o", str(target)) == ""
    assert json.loads(target.read_text()) == {"reward": 0.9833}
    assert list(target.parent.iterdir()) == [target]  # no temporary file left behind
    assert target.stat().st_mode & 0o044 == 0o044  # readable by the runner


def test_command_overwrites_an_existing_reward_json(tmp_path: Path) -> None:
    path = write_details(tmp_path, SEED_EXAMPLE)
    target = tmp_path / "reward.json"
    target.write_text('{"reward": 0.1}')
    run(str(path), "--output", str(target))
    assert json.loads(target.read_text()) == {"reward": 0.9833}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON at line 1"),
        ("", "not valid JSON"),
        ("[1, 2]", "expected a JSON object of dimensions, got a list"),
        ("{}", "details has no dimensions to score"),
        ('{"a": {"score": 1}}', "dimension 'a': max_score: Field required"),
        ('{"a": {"score": "high", "max_score": 1}}', "dimension 'a': score: must be a number"),
        ('{"a": {"score": true, "max_score": 1}}', "dimension 'a': score: must be a number"),
        ('{"a": 0.5}', "dimension 'a'"),
        ('{"a": {"score": 1, "max_score": 0}}', "dimension 'a': max_score must be greater than 0"),
        ('{"a": {"score": NaN, "max_score": 1}}', "NaN is not a JSON value"),
    ],
)
def test_command_names_the_problem_with_bad_details(
    tmp_path: Path, content: str, message: str
) -> None:
    path = write_details(tmp_path, content)
    with pytest.raises(CommandError) as caught:
        run(str(path))
    assert message in str(caught.value)
    assert str(path) in str(caught.value)


def test_command_reports_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no such file"):
        run(str(tmp_path / "absent.json"))


def test_command_reports_a_directory(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="is a directory"):
        run(str(tmp_path))


def test_command_reports_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "details.json"
    path.write_bytes(b"{\xff\xfe}")  # not UTF-8, nor UTF-16 (b"\xff\xfe" would be its BOM)
    with pytest.raises(CommandError, match="not UTF-8"):
        run(str(path))


def test_command_reports_an_unknown_weight_key(tmp_path: Path) -> None:
    path = write_details(tmp_path, SEED_EXAMPLE)
    with pytest.raises(CommandError, match="weights name unknown dimensions: volts"):
        run(str(path), "--weights", "volts=2")


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ("a:1", "expected name=number, got 'a:1'"),
        ("a=1,", "expected name=number, got ''"),
        ("=1", "expected name=number"),
        ("a=", "'a' has no number"),
        ("a=heavy", "'a' has no number: 'heavy'"),
        ("a=-1", "'a' must be a finite number ≥ 0"),
        ("a=nan", "'a' must be a finite number ≥ 0"),
        ("a=inf", "'a' must be a finite number ≥ 0"),
        ("a=1,a=2", "'a' is given twice"),
    ],
)
def test_command_reports_bad_weight_syntax(tmp_path: Path, weights: str, message: str) -> None:
    path = write_details(tmp_path, {"a": {"score": 1, "max_score": 1}})
    with pytest.raises(CommandError) as caught:
        run(str(path), "--weights", weights)
    assert message in str(caught.value)


def test_command_rejects_an_unknown_strategy(tmp_path: Path) -> None:
    path = write_details(tmp_path, SEED_EXAMPLE)
    with pytest.raises(CommandError, match="invalid choice: 'max'"):
        run(str(path), "--strategy", "max")


def test_command_reports_an_unwritable_output(tmp_path: Path) -> None:
    path = write_details(tmp_path, SEED_EXAMPLE)
    with pytest.raises(CommandError, match="cannot write"):
        run(str(path), "-o", str(tmp_path / "no" / "such" / "dir" / "reward.json"))


def test_weight_names_may_contain_an_equals_sign() -> None:
    assert parse_weights("a=b=2,c=0") == {"a=b": 2.0, "c": 0.0}
