"""Property: whatever bytes or JSON an agent leaves in an artifact, a reader never raises; it
gives a bundle (whose bad parts are recorded validity errors) or a named problem."""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rewards import rules
from rewards.ingest import contract, harbor
from rewards.ingest.bundles import read_bundle_file
from rewards.ingest.files import Limits, Problem, Root
from rewards.ingest.writer import BundleWriter
from rewards.schemas import JobRecord, TrialBundle
from tests.ingest_helpers import HARBOR_FIXTURES

EXAMPLES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LIMITS = Limits(max_bytes=64 * 1024, max_depth=16)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
# Objects that look like the artifact often enough to reach past the first check.
REWARDISH = st.dictionaries(st.sampled_from(["reward", "accuracy", "x"]), json_values, max_size=3)
RATING = st.one_of(
    st.integers(1, 5), st.integers(1, 5), st.integers(1, 5), st.integers(0, 6), json_values
)
JUDGEISH = st.fixed_dictionaries(
    {
        "verdict": st.sampled_from(["PASS", "FAIL", "UNPARSEABLE", "maybe"]),
        "task_completion": RATING,
        "instruction_adherence": RATING,
        "efficiency": RATING,
    },
    optional={
        "failure_mode": st.text(max_size=5),
        "scored_at": st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-01", "later", 5]),
        "fact_checks": st.lists(
            st.fixed_dictionaries({"claim": st.text(max_size=5), "status": st.text(max_size=5)}),
            max_size=2,
        )
        | json_values,
    },
)
SCORERISH = st.lists(
    st.fixed_dictionaries(
        {
            "name": st.text(max_size=5),
            "type": st.sampled_from([*rules.SCORER_TYPES, "other"]),
            "verdict": st.sampled_from(["PASS", "FAIL", "N/A", "NA", "pass"]),
        },
        optional={"score": json_values, "required": json_values},
    ),
    max_size=3,
)
TRIALISH = st.fixed_dictionaries(
    {},
    optional={
        "name": st.text(min_size=1, max_size=5) | json_values,
        "job": st.text(max_size=5),
        "status": st.sampled_from(["completed", "failed", "odd"]),
        "task": st.fixed_dictionaries(
            {},
            optional={
                "name": st.text(max_size=5),
                "verifier": st.fixed_dictionaries(
                    {
                        "script": st.just("s"),
                        "expected_output_path": st.sampled_from(
                            ["/out.json", "../x", "/", "", "a/../../b", "out.json"]
                        ),
                        "reward_path": st.sampled_from(["/logs/verifier/reward.json", "../r"]),
                    }
                ),
                "output_format": st.sampled_from(["json", "yaml", "csv", "nope"]),
                "output_schema": json_values,
                "pass_threshold": json_values,
            },
        ),
        "error_tags": json_values,
        "confidence": json_values,
    },
)
RESULTISH = st.fixed_dictionaries(
    {"trial_name": st.text(min_size=1, max_size=10) | json_values},
    optional={
        "id": json_values,
        "task_name": json_values,
        "verifier_result": st.none()
        | st.fixed_dictionaries({"rewards": json_values | REWARDISH})
        | st.fixed_dictionaries(
            {"rewards": st.fixed_dictionaries({"reward": st.floats(0, 1) | json_values})}
        ),
        "agent_result": st.dictionaries(
            st.sampled_from(["n_input_tokens", "cost_usd"]), json_values, max_size=2
        ),
        "exception_info": json_values,
        "started_at": json_values,
        "agent_info": json_values,
        "step_results": json_values,
        "config": json_values,
    },
)


def artifact(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    """Bytes of the artifact: random bytes, any JSON value, or a near-miss object."""
    return st.one_of(
        st.binary(max_size=200),
        json_values.map(lambda v: json.dumps(v).encode()),
        strategy.map(lambda v: json.dumps(v).encode()),
    )


@contextmanager
def trial_folder(files: dict[str, bytes]) -> Iterator[Path]:
    # A fresh directory per example: hypothesis reuses a test's fixtures across examples.
    root = Path(tempfile.mkdtemp())
    try:
        trial = root / "job" / "t1"
        for name, data in files.items():
            path = trial / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        yield trial
    finally:
        shutil.rmtree(root)


def read_contract(files: dict[str, bytes]) -> TrialBundle | Problem:
    base = {"logs/verifier/reward.json": b'{"reward": 0.5}'}
    with trial_folder({**base, **files}) as trial:
        folder = Root(trial.parent, LIMITS).folder().child("t1")
        assert folder is not None
        return contract.read_trial(folder, default_job="job")


def read_harbor(files: dict[str, bytes]) -> TrialBundle | Problem:
    base = {"result.json": (HARBOR_FIXTURES / "single_result.json").read_bytes()}
    with trial_folder({**base, **files}) as trial:
        folder = Root(trial.parent, LIMITS).folder().child("t1")
        assert folder is not None
        return harbor.read_trial(folder, JobRecord(name="job"))


def assert_well_formed(outcome: TrialBundle | Problem) -> TrialBundle | None:
    if isinstance(outcome, Problem):
        assert outcome.kind in {"invalid", "unreadable"}
        assert outcome.name
        assert outcome.reason
        return None
    assert isinstance(outcome, TrialBundle)
    result = outcome.current_result
    assert rules.is_unit_number(result.reward)
    assert all(math.isfinite(v) for v in result.metrics.values())
    # The stored result is what the writer will store: seed 000's cross-field rule holds.
    checked = result.checked()
    assert checked.validity.output_parseable or checked.reward == 0.0
    return outcome


@EXAMPLES
@given(data=artifact(REWARDISH))
def test_any_reward_json_gives_a_valid_reward_or_a_recorded_error(data: bytes) -> None:
    bundle = assert_well_formed(read_contract({"logs/verifier/reward.json": data}))
    assert bundle is not None
    result = bundle.current_result
    reading = rules.read_reward_json(data)
    assert result.reward == reading.reward
    assert result.validity.errors or (reading.verifier_completed and not reading.errors)
    assert result.raw_artifacts["logs/verifier/reward.json"] == data.decode("utf-8", "replace")


@EXAMPLES
@given(data=artifact(REWARDISH))
def test_any_harbor_reward_file_is_kept_raw_and_never_raises(data: bytes) -> None:
    # Harbor recorded a reward in result.json: the files are kept, the headline stays.
    for name in ("verifier/reward.json", "verifier/reward.txt"):
        bundle = assert_well_formed(read_harbor({name: data}))
        assert bundle is not None
        assert bundle.current_result.reward == 0.0
        assert bundle.current_result.validity.verifier_completed is True
        assert name in bundle.current_result.raw_artifacts


@EXAMPLES
@given(data=artifact(REWARDISH))
def test_any_reward_txt_without_a_verifier_result_is_zero_with_a_reason(data: bytes) -> None:
    result_json = json.loads((HARBOR_FIXTURES / "single_result.json").read_text())
    result_json["verifier_result"] = None
    bundle = assert_well_formed(
        read_harbor({"result.json": json.dumps(result_json).encode(), "verifier/reward.txt": data})
    )
    assert bundle is not None
    assert bundle.current_result.reward == 0.0
    assert bundle.current_result.validity.errors


@EXAMPLES
@given(data=artifact(st.dictionaries(st.text(max_size=5), REWARDISH, max_size=3)))
def test_any_details_json_is_a_verbatim_breakdown_or_a_recorded_problem(data: bytes) -> None:
    bundle = assert_well_formed(read_contract({"logs/verifier/details.json": data}))
    assert bundle is not None
    result = bundle.current_result
    assert result.reward == 0.5  # details never change the reward
    assert result.validity.errors == []  # nor the result's validity
    problems = bundle.trial.ingest_problems
    assert all(p.file == "logs/verifier/details.json" for p in problems)
    if result.breakdown is None:
        assert problems
    else:
        # Verbatim, but for numbers no column can hold (Infinity, beyond a double): those
        # are null, each named as a problem with its text (issue 26).
        written = json.loads(data)
        assert result.breakdown == _finite(written)
        if written != _finite(written):
            assert any("no column can hold it" in p.message for p in problems)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


@EXAMPLES
@given(data=artifact(SCORERISH))
def test_any_scorers_json_is_scorers_and_recorded_problems(data: bytes) -> None:
    bundle = assert_well_formed(read_contract({"scorers.json": data}))
    assert bundle is not None
    assert bundle.current_result.validity.errors == []
    problems = bundle.trial.ingest_problems
    assert all(p.file == "scorers.json" for p in problems)
    if any(p.field == "" for p in problems):  # the file as a whole could not be read
        assert bundle.scorers == []
    else:
        rows = json.loads(data)
        assert isinstance(rows, list)
        # Every row is a stored scorer or a problem naming its place; unknown types are both.
        dropped = {p.field for p in problems if p.field.count("[") == 1 and "." not in p.field}
        assert len(bundle.scorers) + len(dropped) == len(rows)
    assert all(isinstance(s.required, bool) for s in bundle.scorers)


@EXAMPLES
@given(data=artifact(JUDGEISH))
def test_any_judge_json_is_a_verdict_never_a_failed_trial(data: bytes) -> None:
    bundle = assert_well_formed(read_contract({"judge.json": data}))
    assert bundle is not None
    assert len(bundle.judge_verdicts) == 1
    assert bundle.current_result.validity.errors == []
    verdict = bundle.judge_verdicts[0]
    if verdict.verdict == "UNPARSEABLE" and verdict.reasoning.startswith("judge.json could"):
        assert verdict.raw_response == data.decode("utf-8", "replace")


@EXAMPLES
@given(data=artifact(TRIALISH))
def test_any_trial_json_still_stores_the_trial_with_its_reward(data: bytes) -> None:
    outcome = read_contract({"trial.json": data, "out.json": b"{}"})
    bundle = assert_well_formed(outcome)
    assert bundle is not None
    assert all(p.file == "trial.json" for p in bundle.trial.ingest_problems)


@EXAMPLES
@given(data=artifact(RESULTISH))
def test_any_result_json_is_a_bundle_or_a_named_problem(data: bytes) -> None:
    assert_well_formed(read_harbor({"result.json": data}))


@EXAMPLES
@given(data=artifact(st.fixed_dictionaries({"format": st.just("trialdesk.trial/1")})))
def test_any_jsonl_line_is_a_bundle_or_an_invalid_line(data: bytes) -> None:
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as handle:
        handle.write(data.replace(b"\n", b" ") + b"\n")
        handle.flush()
        outcomes = list(read_bundle_file(handle.name, limits=LIMITS))
    for outcome in outcomes:
        assert_well_formed(outcome)


@pytest.mark.django_db
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(result=RESULTISH, reward=artifact(REWARDISH), judge=artifact(JUDGEISH))
def test_whatever_a_reader_gives_the_writer_stores_or_names(
    result: dict[str, Any], reward: bytes, judge: bytes
) -> None:
    outcomes = [
        read_harbor({"result.json": json.dumps(result).encode()}),
        read_contract({"logs/verifier/reward.json": reward, "judge.json": judge}),
    ]
    bundles = [o for o in outcomes if isinstance(o, TrialBundle)]

    written = BundleWriter().write_many(bundles)

    assert len(written) == len(bundles)
    for outcome in written:
        assert outcome.status in {"ingested", "unchanged", "updated", "invalid"}
        if outcome.status == "invalid":
            assert outcome.reason
