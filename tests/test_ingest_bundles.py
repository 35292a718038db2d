"""`.jsonl` bundle files: one TrialBundle per line, validated strictly, round-tripping exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import override_settings

from rewards.ingest import harbor
from rewards.ingest.bundles import parse_line
from rewards.ingest.digest import content_digest
from rewards.ingest.files import Limits, Problem, Root
from rewards.models import EvaluationResult, Job, Trial, TrialDetail
from rewards.schemas import TrialBundle
from tests.ingest_helpers import SINGLE, SINGLE_JOB, TIMEOUT, ingest, lay_out

pytestmark = pytest.mark.django_db


def sample_bundles(harbor_files: Path, tmp_path: Path) -> list[TrialBundle]:
    jobs = lay_out(tmp_path / "jobs")
    folder = Root(jobs.root).folder().child(SINGLE_JOB)
    assert folder is not None
    job, _ = harbor.read_job(folder, SINGLE_JOB)
    bundles = []
    for name in (SINGLE, TIMEOUT):
        trial = folder.child(name)
        assert trial is not None
        bundle = harbor.read_trial(trial, job)
        assert isinstance(bundle, TrialBundle)
        bundles.append(bundle)
    return bundles


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_bundle_survives_a_jsonl_round_trip_exactly(harbor_files: Path, tmp_path: Path) -> None:
    for bundle in sample_bundles(harbor_files, tmp_path):
        line = bundle.model_dump_json()

        parsed = parse_line(line.encode(), Limits.from_settings())

        assert parsed == bundle
        assert content_digest(parsed) == content_digest(bundle)


def test_valid_lines_are_ingested(harbor_files: Path, tmp_path: Path) -> None:
    bundles = sample_bundles(harbor_files, tmp_path)
    path = write_lines(tmp_path / "export.jsonl", [b.model_dump_json() for b in bundles])

    ran = ingest(path)

    assert ran.error == ""
    assert ran.summary() == "Summary: ingested 2, unchanged 0, updated 0, invalid 0, unreadable 0"
    timeout = Trial.objects.get(name=TIMEOUT)
    assert timeout.results.get().reward == 0.4
    assert timeout.exception_type == "AgentTimeoutError"


def test_the_folder_and_its_export_are_the_same_trials(harbor_files: Path, tmp_path: Path) -> None:
    bundles = sample_bundles(harbor_files, tmp_path)
    path = write_lines(tmp_path / "export.jsonl", [b.model_dump_json() for b in bundles])
    assert ingest(tmp_path / "jobs" / SINGLE_JOB).error == ""
    counts = (Trial.objects.count(), EvaluationResult.objects.count(), TrialDetail.objects.count())

    ran = ingest(path)

    assert ran.summary() == "Summary: ingested 0, unchanged 2, updated 0, invalid 0, unreadable 0"
    after = (Trial.objects.count(), EvaluationResult.objects.count(), TrialDetail.objects.count())
    assert after == counts


def test_an_invalid_line_is_named_with_its_number_and_field_path(
    harbor_files: Path, tmp_path: Path
) -> None:
    good, other = sample_bundles(harbor_files, tmp_path)
    bad = json.loads(other.model_dump_json())
    bad["trial"]["uid"] = "not-a-uuid"
    path = write_lines(
        tmp_path / "export.jsonl", [good.model_dump_json(), "", json.dumps(bad), "{oops", "[]"]
    )

    ran = ingest(path)

    assert ran.error == ""
    assert ran.summary() == "Summary: ingested 1, unchanged 0, updated 0, invalid 3, unreadable 0"
    invalid = [line for line in ran.lines if line.startswith("invalid: ")]
    assert invalid[0].startswith(
        f"invalid: {SINGLE_JOB}/{TIMEOUT} ({path} line 3): trial.uid: Input should be a valid UUID"
    )
    assert invalid[1].startswith(f"invalid: {path} line 4: (root): Invalid JSON")
    assert invalid[2].startswith(f"invalid: {path} line 5: (root): Input should be an object")


def test_a_line_with_an_unknown_key_or_a_wrong_format_is_invalid(
    harbor_files: Path, tmp_path: Path
) -> None:
    bundle = json.loads(sample_bundles(harbor_files, tmp_path)[0].model_dump_json())
    extra = {**bundle, "surprise": True}
    wrong_format = {**bundle, "format": "trialdesk.trial/0"}
    lenient_number = json.loads(json.dumps(bundle))
    lenient_number["results"][0]["reward"] = "0.5"
    path = write_lines(
        tmp_path / "x.jsonl",
        [json.dumps(extra), json.dumps(wrong_format), json.dumps(lenient_number)],
    )

    ran = ingest(path)

    assert ran.summary().startswith("Summary: ingested 0, unchanged 0, updated 0, invalid 3,")
    assert "line 1): surprise: Extra inputs are not permitted" in ran.out
    assert "line 2): format: Input should be 'trialdesk.trial/1'" in ran.out
    assert "line 3): results.0.reward" in ran.out


def test_job_option_files_bundles_under_another_job(harbor_files: Path, tmp_path: Path) -> None:
    bundles = sample_bundles(harbor_files, tmp_path)
    path = write_lines(tmp_path / "export.jsonl", [b.model_dump_json() for b in bundles])

    assert ingest(path, "--job", "replayed").error == ""

    assert list(Job.objects.values_list("name", flat=True)) == ["replayed"]


@override_settings(TRIALDESK_MAX_ARTIFACT_BYTES=256)
def test_an_over_long_line_is_named_and_the_next_line_still_read(
    harbor_files: Path, tmp_path: Path
) -> None:
    path = write_lines(tmp_path / "x.jsonl", ["x" * 5000, "{}"])

    ran = ingest(path)

    assert f"invalid: {path} line 1: longer than the 1024-byte line limit" in ran.lines
    assert f"invalid: {path} line 2: " in ran.out


def test_a_non_utf8_line_is_invalid(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"format": "\xff"}\n')

    ran = ingest(path)

    assert f"invalid: {path} line 1: not UTF-8 text" in ran.lines


def test_parse_line_returns_nothing_but_bundles_or_raises(tmp_path: Path) -> None:
    from rewards.ingest.bundles import read_bundle_file

    path = write_lines(tmp_path / "x.jsonl", ["1", "null", '"s"'])

    outcomes = list(read_bundle_file(str(path), limits=Limits.from_settings()))

    problems = [o for o in outcomes if isinstance(o, Problem)]
    assert len(problems) == len(outcomes) == 3
    assert {p.kind for p in problems} == {"invalid"}
    assert [p.name for p in problems] == [f"{path} line {n}" for n in (1, 2, 3)]


def test_a_number_no_column_can_hold_is_an_invalid_trial_not_a_crash(
    harbor_files: Path, tmp_path: Path
) -> None:
    good, other = sample_bundles(harbor_files, tmp_path)
    huge = json.loads(good.model_dump_json())
    huge["trial"]["n_input_tokens"] = 2**70
    path = write_lines(tmp_path / "x.jsonl", [json.dumps(huge), other.model_dump_json()])

    ran = ingest(path)

    assert ran.error == ""
    assert ran.summary() == "Summary: ingested 1, unchanged 0, updated 0, invalid 1, unreadable 0"
    assert ran.lines[1].startswith(f"invalid: {SINGLE_JOB}/{SINGLE} ({path} line 1): ")
    # Refused by the schema, naming the field, before the database could overflow.
    assert ran.lines[1].endswith(
        "trial.n_input_tokens: Input should be less than or equal to 9223372036854775807"
    )
    assert list(Trial.objects.values_list("name", flat=True)) == [TIMEOUT]
