"""Issue 26: every trial with a readable reward is stored, whatever else its files hold.

What no column can hold (a lone surrogate, a number beyond a double, NaN) is kept as text
and listed as an ingestion problem; an over-long or mistyped Harbor field is dropped as a
problem and the trial stored without it; a result.json in UTF-16 or UTF-32 is decoded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rewards.ingest.copytext import json_text
from rewards.models import Trial
from tests.ingest_helpers import SINGLE, ingest, write_files, write_json
from tests.test_ingest_bundles import sample_bundles, write_lines

pytestmark = pytest.mark.django_db

SURROGATE = '"x\\ud800y"'  # JSON text: a lone surrogate escape
KEPT = "x\\ud800y"  # what is stored: the escape as six characters
HUGE = "1" + "0" * 500 + ".5"  # a 501-digit literal: beyond a double


def with_literal(data: Any, literal: str) -> str:
    """`data` as JSON text with its "PLACE" string replaced by a raw JSON literal."""
    return json.dumps(data).replace('"PLACE"', literal)


def problems() -> list[dict[str, str]]:
    stored: list[dict[str, str]] = Trial.objects.get().detail.ingest_problems
    return stored


def contract(root: Path, **files: Any) -> Path:
    return write_files(
        root / "runs" / "t1", {"logs/verifier/reward.json": {"reward": 0.5}, **files}
    )


def stored_reward() -> None:
    assert Trial.objects.get().reward == 0.5


# --- text that cannot be encoded ------------------------------------------------------------
def test_a_lone_surrogate_in_details_json_is_kept_escaped_as_a_problem(tmp_path: Path) -> None:
    details = {"accuracy": {"score": 1, "max_score": 2, "evidence": "PLACE"}}
    root = contract(tmp_path, **{"logs/verifier/details.json": with_literal(details, SURROGATE)})

    ran = ingest(root.parent)

    assert ran.summary().startswith("Summary: ingested 1,"), ran.out
    stored_reward()
    result = Trial.objects.get().results.get()
    assert result.breakdown is not None
    assert result.breakdown["accuracy"]["evidence"] == KEPT
    [problem] = problems()
    assert (problem["file"], problem["field"]) == (
        "logs/verifier/details.json",
        "accuracy.evidence",
    )
    assert "surrogate" in problem["message"]
    assert problem["raw"] == KEPT


@pytest.mark.parametrize(
    ("name", "data", "field"),
    [
        (
            "scorers.json",
            [{"name": "PLACE", "type": "command", "verdict": "PASS", "score": 1}],
            "[0].name",
        ),
        (
            "command_output.json",
            {"command": "make", "exit_code": 0, "stdout_tail": "PLACE"},
            "stdout_tail",
        ),
    ],
)
def test_a_lone_surrogate_in_a_contract_side_file_keeps_the_trial(
    tmp_path: Path, name: str, data: Any, field: str
) -> None:
    root = contract(tmp_path, **{name: with_literal(data, SURROGATE)})

    ran = ingest(root.parent)

    assert ran.summary().startswith("Summary: ingested 1,"), ran.out
    stored_reward()
    assert [(p["file"], p["field"], p["raw"]) for p in problems()] == [(name, field, KEPT)]
    if name == "scorers.json":
        assert Trial.objects.get().scorers.get().name == KEPT
    else:
        assert Trial.objects.get().detail.stdout_tail == KEPT


def harbor(
    tmp_path: Path,
    harbor_files: Path,
    *,
    result: bytes | None = None,
    files: dict[str, Any] | None = None,
) -> Path:
    """A Harbor job of one trial: its result.json (the fixture's, or `result`) and `files`."""
    job = tmp_path / "jobs" / "job-1"
    data = json.loads((harbor_files / "single_result.json").read_text())
    data["trial_name"] = SINGLE
    write_files(job / SINGLE, files or {})
    (job / SINGLE).mkdir(parents=True, exist_ok=True)
    if result is None:
        write_json(job / SINGLE / "result.json", data)
    else:
        (job / SINGLE / "result.json").write_bytes(result)
    return job


def harbor_result(harbor_files: Path, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((harbor_files / "single_result.json").read_text())
    data["trial_name"] = SINGLE
    data.update(changes)
    return data


def harbor_reward(harbor_files: Path) -> float:
    return float(harbor_result(harbor_files)["verifier_result"]["rewards"]["reward"])


def test_a_lone_surrogate_in_a_harbor_trajectory_keeps_the_trial(
    tmp_path: Path, harbor_files: Path
) -> None:
    trajectory = {"steps": [{"source": "agent", "message": "PLACE"}]}
    job = harbor(
        tmp_path, harbor_files, files={"agent/trajectory.json": with_literal(trajectory, SURROGATE)}
    )

    ran = ingest(job)

    assert ran.summary().startswith("Summary: ingested 1,"), ran.out
    trial = Trial.objects.get()
    assert trial.reward == harbor_reward(harbor_files)
    assert trial.detail.trajectory == {"steps": [{"source": "agent", "message": KEPT}]}
    assert [(p["file"], p["field"]) for p in problems()] == [
        ("agent/trajectory.json", "steps[0].message")
    ]


def test_a_lone_surrogate_in_a_harbor_config_keeps_the_trial(
    tmp_path: Path, harbor_files: Path
) -> None:
    data = harbor_result(harbor_files, config=None)
    job = harbor(
        tmp_path,
        harbor_files,
        result=json.dumps(data).encode(),
        files={"config.json": with_literal({"agent": {"name": "PLACE"}}, SURROGATE)},
    )

    ran = ingest(job)

    assert ran.summary().startswith("Summary: ingested 1,"), ran.out
    assert Trial.objects.get().detail.config == {"agent": {"name": KEPT}}
    assert [(p["file"], p["field"]) for p in problems()] == [("config.json", "agent.name")]


# --- numbers beyond a double, NaN -----------------------------------------------------------
def test_a_number_beyond_a_double_in_details_json_is_kept_as_text(tmp_path: Path) -> None:
    details = {"accuracy": {"score": "PLACE", "max_score": 2}}
    text = with_literal(details, HUGE)
    root = contract(tmp_path, **{"logs/verifier/details.json": text})

    ran = ingest(root.parent)

    assert ran.summary().startswith("Summary: ingested 1,"), ran.out
    stored_reward()
    result = Trial.objects.get().results.get()
    assert result.breakdown == {"accuracy": {"score": None, "max_score": 2}}
    assert result.raw_artifacts["logs/verifier/details.json"] == text  # the text, verbatim
    # The number's own problem first; the dimension's shape (no score left) is named after.
    problem, *shape = problems()
    assert (problem["field"], problem["raw"]) == ("accuracy.score", HUGE)
    assert "double" in problem["message"]
    assert [p["field"] for p in shape] == ["accuracy.score"]


def test_nan_outside_the_reward_in_harbor_result_json_is_a_problem(
    tmp_path: Path, harbor_files: Path
) -> None:
    data = harbor_result(harbor_files)
    data["agent_result"] = {"n_input_tokens": 10, "cost_usd": "PLACE"}
    job = harbor(tmp_path, harbor_files, result=with_literal(data, "NaN").encode())

    ran = ingest(job)

    assert ran.summary().startswith("Summary: ingested 1,"), ran.out
    trial = Trial.objects.get()
    assert trial.reward == harbor_reward(harbor_files)
    assert trial.cost_usd is None
    assert trial.n_input_tokens == 10
    assert [(p["file"], p["field"], p["raw"]) for p in problems()] == [
        ("result.json", "agent_result.cost_usd", "NaN")
    ]


@pytest.mark.parametrize("literal", ["-Infinity", "1e400", "NaN"])
def test_a_non_finite_number_in_a_bundle_trajectory_is_a_problem_of_its_line(
    harbor_files: Path, tmp_path: Path, literal: str
) -> None:
    good, other = sample_bundles(harbor_files, tmp_path)
    data = json.loads(good.model_dump_json())
    # A big integer beside it once sent the trajectory through a JSON writer that spells
    # -Infinity out, which PostgreSQL refuses.
    data["trial"]["trajectory"] = {"steps": [{"big": 2**70, "x": "PLACE"}]}
    path = write_lines(tmp_path / "x.jsonl", [other.model_dump_json(), with_literal(data, literal)])

    ran = ingest(path)

    assert ran.summary() == "Summary: ingested 2, unchanged 0, updated 0, invalid 0, unreadable 0"
    trial = Trial.objects.get(name=good.trial.name)
    assert trial.detail.trajectory == {"steps": [{"big": 2**70, "x": None}]}
    [problem] = trial.detail.ingest_problems[len(good.trial.ingest_problems) :]
    assert (problem["file"], problem["field"], problem["raw"]) == (
        "bundle line 2",
        "trial.trajectory.steps[0].x",
        literal,
    )
    # Idempotent: the same file again changes nothing.
    assert ingest(path).summary().startswith("Summary: ingested 0, unchanged 2,")


def test_a_bundle_trial_the_database_refuses_is_named_with_its_line(
    harbor_files: Path, tmp_path: Path
) -> None:
    good, other = sample_bundles(harbor_files, tmp_path)
    data = json.loads(good.model_dump_json())
    data["trial"]["uid"] = str(other.trial.uid)  # a uid another job's trial holds
    data["job"]["name"] = "elsewhere"
    path = write_lines(tmp_path / "x.jsonl", [other.model_dump_json(), json.dumps(data)])

    ran = ingest(path)

    assert f"invalid: elsewhere/{good.trial.name} ({path} line 2): " in ran.out


# --- Harbor fields over a limit, other encodings -------------------------------------------
@pytest.mark.parametrize(
    ("field", "value"),
    [("trial_name", "t" * 300), ("task_checksum", "c" * 200), ("task_checksum", 12345)],
)
def test_an_over_long_or_mistyped_harbor_field_is_a_problem_not_a_lost_trial(
    tmp_path: Path, harbor_files: Path, field: str, value: Any
) -> None:
    data = harbor_result(harbor_files, **{field: value})
    job = harbor(tmp_path, harbor_files, result=json.dumps(data).encode())

    ran = ingest(job)

    assert ran.summary().startswith("Summary: ingested 1,"), ran.out
    trial = Trial.objects.get()
    assert trial.reward == harbor_reward(harbor_files)
    assert trial.name == SINGLE  # the folder's name when trial_name cannot be kept
    if field == "task_checksum":
        assert trial.task.checksum == ""
    [problem] = problems()
    assert (problem["file"], problem["field"]) == ("result.json", field)
    assert problem["raw"] == (value if isinstance(value, str) else str(value))


@pytest.mark.parametrize("field", ["name", "source"])
def test_an_over_long_task_name_or_source_in_the_config_is_a_problem(
    tmp_path: Path, harbor_files: Path, field: str
) -> None:
    data = harbor_result(harbor_files, task_name=None, source=None, task_id=None)
    data["config"] = {"task": {field: "x" * 300, "path": "tasks/voltage-drop"}}
    job = harbor(tmp_path, harbor_files, result=json.dumps(data).encode())

    ran = ingest(job)

    assert ran.summary().startswith("Summary: ingested 1,"), ran.out
    task = Trial.objects.get().task
    # The name falls back to the task's path; the source is left empty.
    assert (task.name, task.source) == ("voltage-drop", "")
    assert [(p["file"], p["field"], p["raw"]) for p in problems()] == [
        ("result.json", f"task.{field}", "x" * 300)
    ]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig", "utf-32", "utf-16-be"])
def test_a_harbor_result_json_in_another_unicode_encoding_is_decoded(
    tmp_path: Path, harbor_files: Path, encoding: str
) -> None:
    data = harbor_result(harbor_files)
    data["exception_info"] = None
    data["agent_info"]["name"] = "agent-é"
    job = harbor(
        tmp_path, harbor_files, result=json.dumps(data, ensure_ascii=False).encode(encoding)
    )

    ran = ingest(job)

    assert ran.summary().startswith("Summary: ingested 1,"), ran.out
    trial = Trial.objects.get()
    assert trial.reward == harbor_reward(harbor_files)
    assert trial.agent_name == "agent-é"


def test_a_lone_surrogate_in_a_bundle_line_is_kept_escaped(
    harbor_files: Path, tmp_path: Path
) -> None:
    good, _ = sample_bundles(harbor_files, tmp_path)
    data = json.loads(good.model_dump_json())
    data["trial"]["final_response"] = "PLACE"
    path = write_lines(tmp_path / "x.jsonl", [with_literal(data, SURROGATE)])

    ran = ingest(path)

    assert ran.summary().startswith("Summary: ingested 1,"), ran.out
    trial = Trial.objects.get()
    assert trial.detail.final_response == KEPT
    assert [(p["file"], p["field"]) for p in problems()][-1] == (
        "bundle line 1",
        "trial.final_response",
    )


def test_a_json_column_never_spells_out_what_the_database_refuses() -> None:
    # orjson refuses the big integer, so the standard library writes the column: -Infinity
    # is null there too (as orjson writes it), and a lone surrogate is escaped text.
    value = {"big": 2**70, "x": float("-inf"), "s": "x\ud800y"}
    assert json.loads(json_text(value)) == {"big": 2**70, "x": None, "s": KEPT}
