"""Every reader fuzzed through `manage.py ingest`: a readable reward is always stored (issue 26).

Hypothesis generates jobs of contract trial folders, Harbor trial folders and bundle files from
valid artifacts with faults put in: a lone surrogate escape in a string, a number beyond a
double (10^400, 501 digits, -Infinity), NaN, a value of the wrong type, an over-long field, a
file in UTF-16, a truncated file, a missing side file. The job is ingested by the command,
exactly as an operator would, and then:
- every trial whose reward is readable is stored, with that reward;
- every damaged part is recorded as an ingestion problem on it, naming its file;
- a trial whose reward cannot be read (a truncated Harbor result.json, a bundle line that is
  cut off or whose reward is not a number) is not stored, and the summary names it (a bundle
  line by its number).
Examples are bounded, and derandomized when CI is set, so a run takes the same time.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rewards.ingest.contract import trial_uid
from rewards.models import Trial
from tests import review_factories as f
from tests.ingest_helpers import HARBOR_FIXTURES, ingest

pytestmark = pytest.mark.django_db

FUZZ = settings(
    max_examples=int(os.environ.get("TRIALDESK_FUZZ_EXAMPLES", "40")),
    deadline=None,
    derandomize=bool(os.environ.get("CI")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
# Each example files its trials under a job of its own: examples share the test's database.
JOBS = itertools.count()

# Faults that make a part unstorable or invalid: each must be named as a problem.
DAMAGE = ("surrogate", "huge", "nan", "wrong_type", "truncated")
# Faults a reader may mend or refuse (decode it, or name it): the trial is stored either way.
HARMLESS = ("good", "missing", "utf16")
NUMBERS = ("1e400", "9" * 501, "-Infinity", "NaN")
PLACEHOLDER = "\x00number\x00"


def dumps(value: Any, number: str = "") -> bytes:
    """JSON text (ASCII, so a lone surrogate is written as its escape), with the placeholder
    string written as the bare number `number`."""
    text = json.dumps(value)
    return text.replace(json.dumps(PLACEHOLDER), number).encode()


def _set(value: Any, path: tuple[Any, ...], leaf: Any) -> Any:
    if not path:
        return leaf
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _set(value[path[0]], path[1:], leaf)
    return copy


@dataclass(frozen=True)
class Fault:
    """How one file is written: as is, damaged at one of its string or number paths, in
    another encoding, cut off, or not at all."""

    kind: str
    number: str = NUMBERS[0]
    at: int = 0  # which of the file's string or number paths
    encoding: str = "utf-16"

    def write(
        self, value: Any, strings: list[tuple[Any, ...]], numbers: list[tuple[Any, ...]]
    ) -> bytes | None:
        match self.kind:
            case "missing":
                return None
            case "utf16":
                return json.dumps(value, ensure_ascii=False).encode(self.encoding)
            case "truncated":
                whole = dumps(value)
                return whole[: len(whole) // 2]
            case "wrong_type":
                # the document as a string: no reader takes a string for a whole file
                return dumps(json.dumps(value))
            case "surrogate":
                return dumps(_set(value, strings[self.at % len(strings)], "x\ud800y"))
            case "huge":
                where = numbers[self.at % len(numbers)]
                return dumps(_set(value, where, PLACEHOLDER), self.number)
            case "nan":
                return dumps(_set(value, numbers[self.at % len(numbers)], PLACEHOLDER), "NaN")
        return dumps(value)

    @property
    def damages(self) -> bool:
        return self.kind in DAMAGE


def faults(kinds: tuple[str, ...] = DAMAGE + HARMLESS) -> st.SearchStrategy[Fault]:
    return st.builds(
        Fault,
        st.sampled_from(kinds),
        st.sampled_from(NUMBERS),
        st.integers(0, 9),
        st.sampled_from(["utf-16", "utf-16-be", "utf-32", "utf-8-sig"]),
    )


@dataclass
class Expected:
    """What ingesting one generated trial must give."""

    uid: uuid.UUID
    reward: float | None  # None: not stored
    damaged: set[str] = field(default_factory=set)  # files that must be named as problems
    label: str = ""


@contextmanager
def folder() -> Iterator[Path]:
    # A fresh folder per example: hypothesis runs every example in one test's fixtures.
    root = Path(tempfile.mkdtemp(prefix="trialdesk-fuzz-"))
    try:
        yield root
    finally:
        shutil.rmtree(root)


def write(path: Path, data: bytes | None) -> None:
    if data is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def assert_ingested(expected: list[Expected], summary: str) -> None:
    stored = {
        t.uid: t
        for t in Trial.objects.filter(uid__in=[e.uid for e in expected]).select_related("detail")
    }
    for case in expected:
        trial = stored.get(case.uid)
        if case.reward is None:
            assert trial is None, f"{case.label}: stored though its reward is unreadable"
            continue
        assert trial is not None, f"{case.label}: not stored\n{summary}"
        assert trial.reward == case.reward, case.label
        named = {p["file"] for p in trial.detail.ingest_problems}
        assert case.damaged <= named, f"{case.label}: problems name only {named}"
        assert trial.problem_count == len(trial.detail.ingest_problems)


# --- contract trial folders ------------------------------------------------------------------
CONTRACT_FILES: dict[str, tuple[Any, list[tuple[Any, ...]], list[tuple[Any, ...]]]] = {
    # file: (a valid document, string paths, number paths)
    "trial.json": (
        {
            "agent": {"name": "claude-code", "version": "2.1", "model": "m-large"},
            "status": "completed",
            "confidence": {"method": "bootstrap", "n": 200, "ci_low": 0.8, "ci_high": 0.9},
        },
        [("agent", "name"), ("agent", "model")],
        [("confidence", "ci_low"), ("confidence", "n")],
    ),
    "logs/verifier/details.json": (
        {"correctness": {"score": 3, "max_score": 5, "evidence": "two of three"}},
        [("correctness", "evidence")],
        [("correctness", "score"), ("correctness", "max_score")],
    ),
    "scorers.json": (
        [{"name": "tests", "type": "command", "verdict": "PASS", "score": 1.0, "detail": "ok"}],
        [(0, "detail"), (0, "name")],
        [(0, "score")],
    ),
    "judge.json": (
        {
            "verdict": "PASS",
            "task_completion": 4,
            "instruction_adherence": 5,
            "efficiency": 3,
            "reasoning": "complete",
            "judge_model": "judge-1",
        },
        [("reasoning",), ("judge_model",)],
        [("task_completion",), ("efficiency",)],
    ),
    "command_output.json": (
        {"command": "make test", "exit_code": 0, "stdout_tail": "ok", "stderr_tail": ""},
        [("stdout_tail",), ("command",)],
        [("exit_code",)],
    ),
}


@st.composite
def contract_trial(draw: st.DrawFn) -> tuple[dict[str, Fault], float | None, Fault | None]:
    """Each side file's fault; the reward (None: reward.json cut off); a fault in
    trial.json's agent name beyond its column (255 characters) or of the wrong type."""
    files = {name: draw(faults()) for name in CONTRACT_FILES}
    reward = draw(st.none() | st.floats(0, 1))
    return files, reward, draw(st.none() | st.sampled_from(["long", "number"]).map(Fault))


@FUZZ
@given(trials=st.lists(contract_trial(), min_size=1, max_size=4))
def test_every_contract_trial_is_stored_with_its_reward_and_its_damage_named(
    trials: list[tuple[dict[str, Fault], float | None, Fault | None]],
) -> None:
    job = f"fuzz-contract-{next(JOBS)}"
    expected = []
    with folder() as root:
        for index, (files, reward, agent) in enumerate(trials):
            name = f"t{index}"
            trial = root / job / name
            reward_json = dumps({"reward": reward})
            write(
                trial / "logs/verifier/reward.json",
                reward_json[:5] if reward is None else reward_json,
            )
            case = Expected(
                trial_uid(job, name),
                # A contract trial is stored whatever its reward.json: 0.0, with the reason.
                0.0 if reward is None else reward,
                label=f"{name}: {files}, reward {reward}, agent {agent}",
            )
            for file, fault in files.items():
                value, strings, numbers = CONTRACT_FILES[file]
                if file == "trial.json" and agent is not None and fault.kind in ("good", "utf16"):
                    bad = "a" * 300 if agent.kind == "long" else 12345
                    value = _set(value, ("agent", "name"), bad)
                    case.damaged.add(file)
                write(trial / file, fault.write(value, strings, numbers))
                if fault.damages:
                    case.damaged.add(file)
            expected.append(case)

        ran = ingest(root / job)

    assert ran.error == "", ran.out
    assert_ingested(expected, ran.out)
    if any(reward is None for _, reward, _ in trials):
        unreadable = Trial.objects.filter(job__name=job, reward=0.0, results__is_current=True)
        assert unreadable.filter(results__errors__isnull=False).exists()


# --- Harbor trial folders --------------------------------------------------------------------
RESULT = json.loads((HARBOR_FIXTURES / "single_result.json").read_text())
TRAJECTORY = json.loads((HARBOR_FIXTURES / "single_trajectory.json").read_text())
RESULT_STRINGS = [("agent_info", "version"), ("trial_uri",), ("config", "agent", "name")]
RESULT_NUMBERS = [
    ("agent_result", "n_input_tokens"),
    ("agent_result", "cost_usd"),
    ("config", "timeout_multiplier"),
    ("verifier_result", "rewards", "automated"),
]
# Fields over their column's length or of the wrong type (issue 26: kept raw as problems).
RESULT_FIELDS = {
    "long name": ("trial_name", "n" * 300),
    "long checksum": ("task_checksum", "c" * 200),
    "numeric checksum": ("task_checksum", 12345),
    "long agent": ("agent_info", {"name": "a" * 300, "version": "1"}),
}


def _paths(
    value: Any, kind: type | tuple[type, ...], here: tuple[Any, ...] = ()
) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _paths(v, kind, (*here, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _paths(v, kind, (*here, i))]
    return [here] if isinstance(value, kind) and not isinstance(value, bool) else []


TRAJECTORY_STRINGS = _paths(TRAJECTORY, str)[-3:]
TRAJECTORY_NUMBERS = _paths(TRAJECTORY, (int, float))[-3:]


@st.composite
def harbor_trial(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "reward": draw(st.floats(0, 1)),
        # result.json: as is, a field damaged, in UTF-16, or cut off (then unreadable)
        "result": draw(faults(("good", "surrogate", "huge", "nan", "utf16", "truncated"))),
        "field": draw(st.none() | st.sampled_from(sorted(RESULT_FIELDS))),
        "trajectory": draw(faults()),
        "reward_json": draw(faults(("good", "missing", "truncated", "utf16"))),
        "string": draw(st.sampled_from(RESULT_STRINGS)),
        "number": draw(st.sampled_from(RESULT_NUMBERS)),
    }


@FUZZ
@given(trials=st.lists(harbor_trial(), min_size=1, max_size=4))
def test_every_harbor_trial_with_a_readable_result_is_stored_and_its_damage_named(
    trials: list[dict[str, Any]],
) -> None:
    job = f"fuzz-harbor-{next(JOBS)}"
    expected = []
    with folder() as root:
        for index, drawn in enumerate(trials):
            name = f"task__{index:03d}"
            uid = uuid.uuid5(uuid.NAMESPACE_URL, f"{job}/{name}")
            result = {
                **RESULT,
                "trial_name": name,
                "id": str(uid),
                "verifier_result": {"rewards": {"reward": drawn["reward"], "automated": 0.5}},
            }
            fault: Fault = drawn["result"]
            damaged = set()
            if drawn["field"] is not None and fault.kind in ("good", "utf16"):
                key, bad = RESULT_FIELDS[drawn["field"]]
                result[key] = bad
                damaged.add("result.json")
            if fault.damages and fault.kind != "truncated":
                damaged.add("result.json")
            trial = root / job / name
            write(trial / "result.json", fault.write(result, [drawn["string"]], [drawn["number"]]))
            trajectory: Fault = drawn["trajectory"]
            write(
                trial / "agent/trajectory.json",
                trajectory.write(TRAJECTORY, TRAJECTORY_STRINGS, TRAJECTORY_NUMBERS),
            )
            if trajectory.damages:
                damaged.add("agent/trajectory.json")
            write(
                trial / "verifier/reward.json",
                drawn["reward_json"].write({"reward": drawn["reward"]}, [], []),
            )
            readable = fault.kind != "truncated"
            expected.append(
                Expected(uid, drawn["reward"] if readable else None, damaged, f"{name}: {drawn}")
            )

        ran = ingest(root / job)

    assert_ingested(expected, ran.out)
    unreadable = sum(case.reward is None for case in expected)
    assert f"unreadable {unreadable}" in ran.summary(), ran.out


# --- bundle lines ----------------------------------------------------------------------------
NUMBER = object()  # the drawn number, written bare
BUNDLE_FAULTS: dict[str, tuple[tuple[Any, ...], Any, bool]] = {
    # where a fault goes in a bundle line, what is written there, and whether the line is
    # still stored: numbers no column holds and lone surrogates are mended (each a problem);
    # the bundle is a strict format, so any other invalid field makes the line invalid
    "trajectory number": (("trial", "trajectory", "steps", 0, "step_id"), NUMBER, True),
    "metric": (("results", 0, "metrics", "automated"), NUMBER, True),
    "final response": (("trial", "final_response"), "x\ud800y", True),
    "agent name": (("trial", "agent_name"), "x\ud800y", True),
    "reward not a number": (("results", 0, "reward"), "0.5", False),
    "reward beyond a double": (("results", 0, "reward"), NUMBER, False),
    "agent name too long": (("trial", "agent_name"), "a" * 300, False),
    "tokens as text": (("trial", "n_input_tokens"), "12", False),
}


@st.composite
def bundle_line(draw: st.DrawFn) -> tuple[str, str, float]:
    fault = draw(st.sampled_from(["good", "cut off", *sorted(BUNDLE_FAULTS)]))
    return fault, draw(st.sampled_from(NUMBERS)), draw(st.floats(0, 1).map(lambda r: round(r, 6)))


@FUZZ
@given(lines=st.lists(bundle_line(), min_size=1, max_size=5))
def test_every_bundle_line_is_stored_or_named_by_its_line_number(
    lines: list[tuple[str, str, float]],
) -> None:
    job = f"fuzz-bundles-{next(JOBS)}"
    expected = []
    text = []
    for index, (fault, number, reward) in enumerate(lines, start=1):
        bundle = f.bundle(name=f"line-{index}", job=job, reward=reward)
        data = json.loads(bundle.model_dump_json())
        line = dumps(data)
        stored = fault != "cut off"
        if fault == "cut off":
            line = line[: len(line) // 2]
        elif fault in BUNDLE_FAULTS:
            path, leaf, stored = BUNDLE_FAULTS[fault]
            if leaf is NUMBER:
                line = dumps(_set(data, path, PLACEHOLDER), number)
            else:
                line = dumps(_set(data, path, leaf))
        text.append(line)
        expected.append(
            Expected(bundle.trial.uid, reward if stored else None, label=f"line {index}: {fault}")
        )

    with folder() as root:
        jsonl = root / "trials.jsonl"
        jsonl.write_bytes(b"\n".join(text) + b"\n")
        ran = ingest(jsonl)

    assert_ingested(expected, ran.out)
    for index, case in enumerate(expected, start=1):
        if case.reward is None:
            assert f"line {index}" in ran.out, f"{case.label}: not named\n{ran.out}"
        elif lines[index - 1][0] in BUNDLE_FAULTS:
            trial = Trial.objects.select_related("detail").get(uid=case.uid)
            assert trial.detail.ingest_problems, f"{case.label}: no problem recorded"


# --- what the fuzz found, each pinned ---------------------------------------------------------
def _harbor_job(root: Path, result: dict[str, Any], raw: bytes | None = None) -> Path:
    trial = root / "job" / str(result["trial_name"])
    write(trial / "result.json", raw if raw is not None else dumps(result))
    return root / "job"


@pytest.mark.parametrize("encoding", ["utf-16-be", "utf-16-le", "utf-32-be", "utf-32-le"])
def test_a_harbor_result_in_utf16_or_utf32_without_a_bom_is_read(
    tmp_path: Path, encoding: str
) -> None:
    result = {**RESULT, "trial_name": "t1", "id": str(uuid.uuid4())}
    raw = json.dumps(result).encode(encoding)

    ran = ingest(_harbor_job(tmp_path, result, raw))

    assert ran.summary().startswith("Summary: ingested 1,"), ran.out
    assert Trial.objects.get(uid=result["id"]).agent_name == "terminus-2"


LONG = "x" * 300


@pytest.mark.parametrize(
    ("field", "agent_info", "column"),
    [
        ("agent_info.name", {"name": LONG, "version": "1"}, "agent_name"),
        ("agent_info.version", {"name": "agent", "version": LONG}, "agent_version"),
        ("agent_info.model_info.name", {"name": "a", "model_info": {"name": LONG}}, "model_name"),
    ],
)
def test_a_harbor_agent_field_over_its_column_is_a_problem_not_cut_short_in_silence(
    tmp_path: Path, field: str, agent_info: dict[str, Any], column: str
) -> None:
    result = {**RESULT, "trial_name": "t1", "id": str(uuid.uuid4()), "agent_info": agent_info}

    ran = ingest(_harbor_job(tmp_path, result))

    assert ran.summary().startswith("Summary: ingested 1,"), ran.out
    trial = Trial.objects.select_related("detail").get(uid=result["id"])
    assert getattr(trial, column) == ""
    (problem,) = trial.detail.ingest_problems
    assert (problem["file"], problem["field"], problem["raw"]) == ("result.json", field, LONG)


def test_a_bundle_metric_no_column_can_hold_is_a_problem_and_the_line_is_stored(
    tmp_path: Path,
) -> None:
    bundle = f.bundle(name="t1", job="fuzz-metric", reward=0.75)
    data = json.loads(bundle.model_dump_json())
    line = dumps(_set(data, ("results", 0, "metrics", "automated"), PLACEHOLDER), "NaN")
    path = tmp_path / "trials.jsonl"
    path.write_bytes(line + b"\n")

    ran = ingest(path)

    assert ran.summary().startswith("Summary: ingested 1,"), ran.out
    trial = Trial.objects.select_related("detail").get(uid=bundle.trial.uid)
    assert trial.reward == 0.75
    assert trial.results.get().metrics == {}
    (problem,) = trial.detail.ingest_problems
    assert problem["field"] == "results[0].metrics.automated"
    assert problem["raw"] == "NaN"
