"""DESIGN §9: the importer reads only inside the folder it was given, bounds what it reads,
and turns hostile files into recorded errors or named summary lines, never a crash."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from rewards.ingest.files import ArtifactError, Limits, Root, loads_json, too_deep
from rewards.ingest.report import printable
from rewards.models import EvaluationResult, Trial, TrialDetail
from tests.conftest import RecordCalls
from tests.ingest_helpers import harbor_trial, ingest, write_files

pytestmark = pytest.mark.django_db

SECRET = "TOP-SECRET-OUTSIDE-THE-FOLDER"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the one given to ingest, holding a secret."""
    folder = tmp_path / "outside"
    write_files(folder, {"secret.json": {"reward": 1.0, "note": SECRET}, "secret.txt": SECRET})
    return folder


def contract_trial(root: Path, **files: Any) -> Path:
    return write_files(root / "t1", {"logs/verifier/reward.json": {"reward": 0.5}, **files})


def problem_lines() -> list[str]:
    """The stored trial's ingestion problems as 'file: message' (field after the file)."""
    return [
        f"{' '.join(filter(None, (p['file'], p['field'])))}: {p['message']}"
        for p in Trial.objects.get().detail.ingest_problems
    ]


def only_result() -> EvaluationResult:
    return Trial.objects.get().results.get(is_current=True)


def assert_secret_not_stored() -> None:
    for result in EvaluationResult.objects.all():
        assert SECRET not in str(result.raw_artifacts)
        assert SECRET not in str(result.breakdown)
    for detail in TrialDetail.objects.all():
        assert SECRET not in str(detail.trajectory)
        assert SECRET not in detail.workspace_diff


def test_a_reward_symlink_leaving_the_folder_is_not_followed(tmp_path: Path, outside: Path) -> None:
    trial = contract_trial(tmp_path / "runs")
    reward = trial / "logs" / "verifier" / "reward.json"
    reward.unlink()
    reward.symlink_to(outside / "secret.json")

    ran = ingest(tmp_path / "runs")

    assert ran.error == ""
    result = only_result()
    assert (result.reward, result.verifier_completed) == (0.0, True)
    assert result.errors == [
        "logs/verifier/reward.json: a symlink that points outside the folder given"
    ]
    assert_secret_not_stored()


def test_a_symlinked_folder_leaving_the_root_is_not_followed(tmp_path: Path, outside: Path) -> None:
    trial = contract_trial(tmp_path / "runs")
    (trial / "workspace").symlink_to(outside)
    spec = {
        "task": {
            "name": "t",
            "verifier": {
                "script": "s",
                "expected_output_path": "/workspace/secret.json",
                "reward_path": "/logs/verifier/reward.json",
            },
        }
    }
    write_files(trial, {"trial.json": spec})

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert result.output_parseable is False
    assert result.reward == 0.0
    assert any("a symlink that points outside the folder given" in e for e in result.errors)
    assert_secret_not_stored()


def shared_reward_link(runs: Path) -> Path:
    """Trial t1 whose reward.json is a symlink to runs/shared/reward.json."""
    trial = contract_trial(runs)
    write_files(runs / "shared", {"reward.json": {"reward": 0.75}})
    reward = trial / "logs" / "verifier" / "reward.json"
    reward.unlink()
    reward.symlink_to(runs / "shared" / "reward.json")
    return trial


def test_a_symlink_staying_inside_the_folder_given_is_followed(tmp_path: Path) -> None:
    shared_reward_link(tmp_path / "runs")

    assert ingest(tmp_path / "runs").error == ""

    assert only_result().reward == 0.75


def test_the_folder_given_is_the_boundary(tmp_path: Path) -> None:
    trial = shared_reward_link(tmp_path / "runs")

    assert ingest(trial).error == ""

    # Given the trial itself, its sibling "shared" is outside.
    result = only_result()
    assert (result.reward, result.verifier_completed) == (0.0, True)
    assert result.errors == [
        "logs/verifier/reward.json: a symlink that points outside the folder given"
    ]


def test_a_harbor_trajectory_symlink_out_is_an_error_and_the_reward_stays(
    harbor_files: Path, tmp_path: Path, outside: Path
) -> None:
    folder = harbor_trial(tmp_path / "job", "t1", harbor_files)
    (folder / "agent").mkdir()
    (folder / "agent" / "trajectory.json").symlink_to(outside / "secret.json")

    assert ingest(tmp_path / "job").error == ""

    trial = Trial.objects.get()
    assert trial.detail.trajectory is None
    assert only_result().errors == []
    assert problem_lines() == [
        "agent/trajectory.json: a symlink that points outside the folder given"
    ]
    assert only_result().verifier_completed is True
    assert_secret_not_stored()


def test_a_harbor_trial_folder_symlinked_from_outside_is_named_unreadable(
    harbor_files: Path, tmp_path: Path
) -> None:
    elsewhere = harbor_trial(tmp_path / "elsewhere", "t0", harbor_files)
    job = tmp_path / "job"
    harbor_trial(job, "t1", harbor_files)
    (job / "t2").symlink_to(elsewhere)

    ran = ingest(job)

    assert ran.summary().endswith("unreadable 1")
    assert f"unreadable: {job / 't2'}: a symlink that points outside the folder given" in ran.lines
    assert list(Trial.objects.values_list("name", flat=True)) == ["t1"]


@pytest.mark.parametrize(
    "path", ["../outside/secret.json", "/workspace/../../outside/secret.json", "a/../../x"]
)
def test_dotdot_in_expected_output_path_is_refused(
    tmp_path: Path, outside: Path, path: str
) -> None:
    spec = {"task": {"verifier": {"script": "s", "expected_output_path": path, "reward_path": "r"}}}
    contract_trial(
        tmp_path, **{"trial.json": spec, "logs/verifier/reward.json": None, "r": {"reward": 1}}
    )

    assert ingest(tmp_path / "t1").error == ""

    result = only_result()
    assert result.output_parseable is False
    assert f"expected_output_path {path!r}: the path leads outside the trial directory" in (
        result.errors
    )
    # A non-zero reward for output that could not be read is rejected (seed 000).
    assert result.reward == 0.0
    assert_secret_not_stored()


def test_dotdot_in_reward_path_means_no_reward_file(tmp_path: Path, outside: Path) -> None:
    spec = {
        "task": {
            "verifier": {
                "script": "s",
                "expected_output_path": "",
                "reward_path": "../../outside/secret.json",
            }
        }
    }
    contract_trial(tmp_path / "runs", **{"trial.json": spec})

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert (result.reward, result.verifier_completed) == (0.0, False)
    assert_secret_not_stored()


def test_an_absolute_expected_output_path_stays_inside_the_trial(tmp_path: Path) -> None:
    spec = {
        "task": {
            "verifier": {
                "script": "s",
                "expected_output_path": "/etc/hostname",
                "reward_path": "/logs/verifier/reward.json",
            }
        }
    }
    contract_trial(
        tmp_path / "runs", **{"trial.json": spec, "logs/verifier/reward.json": {"reward": 0}}
    )

    assert ingest(tmp_path / "runs").error == ""

    assert "output file missing: /etc/hostname" in only_result().errors


@override_settings(TRIALDESK_MAX_ARTIFACT_BYTES=1024)
def test_an_oversized_artifact_is_a_recorded_error(tmp_path: Path) -> None:
    contract_trial(tmp_path / "runs", **{"logs/verifier/details.json": "x" * 5000})

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert result.reward == 0.5
    assert result.errors == []
    assert problem_lines() == ["logs/verifier/details.json: larger than the 1024-byte limit"]


@override_settings(TRIALDESK_MAX_ARTIFACT_BYTES=1024)
def test_an_oversized_result_json_is_a_named_unreadable_line(
    harbor_files: Path, tmp_path: Path
) -> None:
    harbor_trial(tmp_path / "job", "t1", harbor_files)

    ran = ingest(tmp_path / "job")

    assert ran.summary().endswith("unreadable 1")
    path = tmp_path / "job" / "t1" / "result.json"
    assert f"unreadable: {path}: larger than the 1024-byte limit" in ran.lines
    assert Trial.objects.count() == 0


def test_a_long_log_is_kept_by_its_tail_not_refused(tmp_path: Path) -> None:
    write_files(tmp_path, {"verifier/test-stdout.txt": "a" * 3000 + "THE END"})
    root = Root(tmp_path, Limits(max_bytes=1024, max_depth=64))
    verifier = root.folder().child("verifier")
    assert verifier is not None

    data = verifier.read("test-stdout.txt", tail=True)

    assert data is not None
    assert len(data) == 1024
    assert data.endswith(b"THE END")
    with pytest.raises(ArtifactError, match="larger than the 1024-byte limit"):
        verifier.read("test-stdout.txt")


@pytest.mark.parametrize("tail", [False, True])
def test_a_file_is_read_whole_in_one_call_yet_short_reads_before_its_end_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record_calls: RecordCalls, tail: bool
) -> None:
    """One read() brings a whole small file (its end is known from its size, not from one
    more call); a filesystem that answers in small pieces (network, FUSE) still gives
    every byte, and a long log still its last `max_bytes`."""
    from rewards.ingest import files

    body = (b"0123456789" * 300) if tail else b'{"reward": 0.5}'
    (tmp_path / "f").write_bytes(body)
    limit = 1024 if tail else 4096
    want = body[-limit:] if tail else body
    real_read = os.read
    calls = record_calls(os, "read")
    assert files.read_regular_file(str(tmp_path / "f"), limit, tail=tail) == want
    assert len(calls) == 1

    def piecemeal(fd: int, n: int) -> bytes:
        return real_read(fd, min(n, 7))

    monkeypatch.setattr(os, "read", piecemeal)
    assert files.read_regular_file(str(tmp_path / "f"), limit, tail=tail) == want


def test_deep_json_is_a_recorded_error_not_a_crash(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    contract_trial(
        tmp_path / "runs",
        **{"logs/verifier/details.json": deep, "scorers.json": deep, "judge.json": deep},
    )

    assert ingest(tmp_path / "runs").error == ""

    assert only_result().errors == []
    assert problem_lines() == [
        "logs/verifier/details.json: JSON nested deeper than 64 levels",
        "scorers.json: JSON nested deeper than 64 levels",
        "judge.json: JSON nested deeper than 64 levels",
    ]
    assert Trial.objects.get().judge_verdicts.get().verdict == "UNPARSEABLE"


def test_a_deep_reward_json_is_zero_with_the_reason(tmp_path: Path) -> None:
    contract_trial(
        tmp_path / "runs", **{"logs/verifier/reward.json": '{"r":' * 5000 + "1" + "}" * 5000}
    )

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert (result.reward, result.verifier_completed) == (0.0, True)
    assert result.errors[0].startswith("reward file unreadable: JSON nested")


def test_deep_harbor_result_json_is_a_named_unreadable_line(tmp_path: Path) -> None:
    write_files(
        tmp_path / "job" / "t1", {"result.json": '{"trial_name": ' + "[" * 200 + "]" * 200 + "}"}
    )

    ran = ingest(tmp_path / "job")

    assert "JSON nested deeper than 64 levels" in ran.out


def test_non_utf8_files_are_recorded_errors(tmp_path: Path) -> None:
    contract_trial(
        tmp_path / "runs",
        # Not UTF-8, and no other Unicode encoding either (b"\xff\xfe" would be UTF-16's BOM).
        **{"logs/verifier/reward.json": b"{\xff\xfe}", "workspace.diff": b"+\xff binary\n"},
    )

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert result.reward == 0.0
    assert result.errors == ["reward file unreadable: not UTF-8 text"]
    assert problem_lines() == ["workspace.diff: not UTF-8 text: undecodable bytes shown as �"]
    assert Trial.objects.get().detail.workspace_diff == "+\ufffd binary\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_like_an_artifact_does_not_hang_the_run(tmp_path: Path) -> None:
    trial = contract_trial(tmp_path / "runs")
    os.mkfifo(trial / "judge.json")
    os.mkfifo(trial / "scorers.json")

    assert ingest(tmp_path / "runs").error == ""

    assert problem_lines() == [
        "scorers.json: not a regular file",
        "judge.json: not a regular file",
    ]
    assert Trial.objects.get().judge_verdicts.get().verdict == "UNPARSEABLE"


def test_a_folder_named_like_a_file_is_a_recorded_error(tmp_path: Path) -> None:
    trial = contract_trial(tmp_path / "runs")
    (trial / "scorers.json").mkdir()

    assert ingest(tmp_path / "runs").error == ""

    assert problem_lines() == ["scorers.json: not a regular file"]
    assert only_result().errors == []


def test_a_remote_schema_ref_is_never_fetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_network(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the importer tried to open a network connection")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    spec = {
        "task": {
            "verifier": {
                "script": "s",
                "expected_output_path": "/out.json",
                "reward_path": "/logs/verifier/reward.json",
            },
            "output_schema": {"$ref": "https://example.com/schema.json"},
        }
    }
    contract_trial(tmp_path / "runs", **{"trial.json": spec, "out.json": {"a": 1}})

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert result.schema_valid is False
    assert result.reward == 0.5


def test_hostile_names_are_printed_escaped(tmp_path: Path) -> None:
    name = "evil\x1b[2J\u202ename"
    write_files(tmp_path / "runs" / name, {"trial.json": "{"})

    ran = ingest(tmp_path / "runs")

    assert "\x1b" not in ran.out
    assert "\u202e" not in ran.out
    assert "evil\\x1b[2J\\u202ename" in ran.out


def test_printable_escapes_controls_and_bounds_length() -> None:
    assert printable("a\nb\tc\x00") == "a\\nb\\tc\\x00"
    assert printable("x" * 600).endswith("…")
    assert len(printable("x" * 600)) == 501


def test_too_deep_counts_nesting_outside_strings_only() -> None:
    assert too_deep("[" * 65 + "]" * 65, 64)
    assert not too_deep("[" * 64 + "]" * 64, 64)
    assert not too_deep('["' + "[" * 500 + '"]', 64)
    assert not too_deep('[{"a": [1, {"b": []}]}]' * 100, 5)
    assert too_deep('[{"a": [1, {"b": [[]]}]}]', 5)
    assert loads_json(b'{"a": "[[[["}', 2) == {"a": "[[[["}
    with pytest.raises(ArtifactError, match="nested deeper"):
        loads_json("[[[]]]", 2)


def test_json_reads_as_the_standard_library_reads_it() -> None:
    # Documents orjson parses, and documents only the standard library parses the same way.
    documents = [
        b'{"a": [1, 2.5, "x\\u00e9", null, true], "b": {"c": []}}',
        b'\xef\xbb\xbf{"bom": 1}',  # a byte order mark is allowed
        b'{"big": 123456789012345678901234567890}',  # beyond 64 bits: kept exact
        b'{"lone": "\\ud800"}',  # a lone surrogate escape
        b'{"a": 1, "a": 2}',  # the last duplicate wins
        b"[1e400]",
    ]
    for raw in documents:
        assert loads_json(raw, 64) == json.loads(raw.decode("utf-8-sig")), raw
    assert loads_json(documents[2], 64)["big"] == 123456789012345678901234567890


def test_json_errors_keep_their_messages() -> None:
    with pytest.raises(ArtifactError, match="NaN is not a JSON value"):
        loads_json(b'{"a": NaN}', 64)
    with pytest.raises(ArtifactError, match="not valid JSON at line 2"):
        loads_json(b'{"a":\n 1,,}', 64)
    with pytest.raises(ArtifactError, match="not UTF-8"):
        loads_json(b'{"a": "\xff"}', 64)


def test_deep_json_is_refused_whichever_parser_reads_it() -> None:
    nested = b'{"a": ' * 10 + b"1" + b"}" * 10
    assert loads_json(nested, 10) is not None
    with pytest.raises(ArtifactError, match="nested deeper than 9 levels"):
        loads_json(nested, 9)
    wide = b"[" + b",".join([b"[[]]"] * 50) + b"]"  # many containers, three levels
    assert len(loads_json(wide, 3)) == 50
    with pytest.raises(ArtifactError, match="nested deeper than 2 levels"):
        loads_json(wide, 2)
    with pytest.raises(ArtifactError, match="nested deeper than 64 levels"):
        loads_json(b"[" * 2000 + b"]" * 2000, 64)  # deeper than orjson's own limit


def test_a_folder_name_that_is_not_utf8_is_reported_not_a_crash(tmp_path: Path) -> None:
    runs = os.fsencode(tmp_path / "runs")
    os.makedirs(runs + b"/t\xff/logs/verifier")
    with open(runs + b"/t\xff/logs/verifier/reward.json", "w") as handle:
        handle.write('{"reward": 1}')
    contract_trial(tmp_path / "runs")

    ran = ingest(tmp_path / "runs")

    assert ran.error == ""
    assert "t1" in set(Trial.objects.values_list("name", flat=True))
    assert ran.summary().startswith("Summary: ")
    assert "\udcff" not in ran.out


def test_yaml_aliases_are_not_expanded_against_a_recursive_schema(tmp_path: Path) -> None:
    # Nine levels of ten aliases: 10**9 nodes if a validator walked it as a tree.
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 10) + "]")
    node = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#/$defs/n"}}]}
    spec = {
        "task": {
            "verifier": {
                "script": "s",
                "expected_output_path": "/out.yaml",
                "reward_path": "/logs/verifier/reward.json",
            },
            "output_format": "yaml",
            "output_schema": {"$defs": {"n": node}, "additionalProperties": {"$ref": "#/$defs/n"}},
        }
    }
    contract_trial(tmp_path / "runs", **{"trial.json": spec, "out.yaml": "\n".join(lines)})

    assert ingest(tmp_path / "runs").error == ""

    result = only_result()
    assert (result.output_parseable, result.schema_valid, result.reward) == (True, False, 0.5)
    assert result.errors == [
        "output uses YAML aliases: not checked against the schema (unbounded expansion)"
    ]
