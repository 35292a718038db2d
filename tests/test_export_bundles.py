"""Stored trials go back out as TrialBundles, losslessly."""

import hashlib
import uuid
from datetime import UTC, datetime

import pytest
from pytest_django import DjangoAssertNumQueries

from rewards.export import iter_bundles
from rewards.ingest.writer import BundleWriter
from rewards.models import Job, Task, Trial
from rewards.schemas import (
    ConfidenceMetadata,
    ErrorTag,
    FactCheck,
    JobRecord,
    JudgeVerdict,
    ResultRecord,
    ScorerResult,
    TaskRecord,
    TrialBundle,
    TrialRecord,
    ValidityCheck,
)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def full_bundle(name: str, reward: float = 0.75) -> TrialBundle:
    """A bundle with every section filled, including an earlier, non-current result."""
    at = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
    return TrialBundle(
        job=JobRecord(name="nightly-42", started_at=at, config={"k": [1, 2]}, stats={"n": 2}),
        task=TaskRecord(
            name="voltage-drop",
            source="electrical",
            checksum="abc",
            expected_output_path="/workspace/answer.json",
            output_format="json",
            output_schema={"type": "object"},
            pass_threshold=0.6,
            scorer_specs=[{"name": "tests", "type": "command", "command": "pytest"}],
        ),
        trial=TrialRecord(
            name=name,
            uid=uuid.uuid5(uuid.NAMESPACE_URL, name),
            agent_name="claude-code",
            model_name="m-large",
            started_at=at,
            finished_at=at,
            timings={"agent": 12.5},
            n_input_tokens=100,
            cost_usd=0.25,
            exception_type="AgentTimeoutError",
            exception_message="timed out <script>alert(1)</script>",
            exception_traceback="Traceback …",
            trajectory={"schema_version": "ATIF-v1.7", "steps": [{"step_id": 1}]},
            workspace_diff="--- a/x\n+++ b/x\n",
            command="pytest -q",
            exit_code=1,
            stdout_tail='=HYPERLINK("http://evil")',
            ctrf={"results": {"summary": {"tests": 1}}},
        ),
        results=[
            ResultRecord(
                reward=0.5,
                validity=ValidityCheck(
                    output_parseable=True, schema_valid=True, verifier_completed=True
                ),
                artifact_digest=_digest(name + "old"),
                raw_artifacts={"reward.json": '{"reward": 0.5}'},
                is_current=False,
                created_at=at,
            ),
            ResultRecord(
                reward=reward,
                metrics={"automated": 0.3},
                validity=ValidityCheck(
                    output_parseable=True,
                    schema_valid=False,
                    verifier_completed=True,
                    errors=["output does not match the schema at (root): bad"],
                ),
                breakdown={"v": {"score": 0.9, "max_score": 1.0, "evidence": "close"}},
                confidence=ConfidenceMetadata(method="bootstrap", n=200, ci_low=0.1, ci_high=0.9),
                artifact_digest=_digest(name),
                raw_artifacts={"reward.json": f'{{"reward": {reward}}}'},
                created_at=datetime(2026, 11, 2, 9, 30, 15, 123456, tzinfo=UTC),
            ),
        ],
        scorers=[
            ScorerResult(name="tests", type="command", verdict="FAIL", detail="1 failed"),
            ScorerResult(name="skips", type="no_new_skips", verdict="N/A"),
        ],
        judge_verdicts=[
            JudgeVerdict(
                verdict="PASS",
                task_completion=4,
                instruction_adherence=5,
                efficiency=3,
                reasoning="fine",
                judge_model="j-1",
                scored_at=at,
                fact_checks=[FactCheck(claim="c", status="supported", evidence="e")],
                rubric_version="rubric-0123456789ab",
                request_settings={"temperature": 0, "response_format": "json_schema"},
            ),
            JudgeVerdict(verdict="UNPARSEABLE", raw_response="{not json"),
        ],
        error_tags=[ErrorTag(category="unit mismatch", description="V vs mV", source="mechanical")],
    )


def _export() -> list[str]:
    return [b.model_dump_json() for b in iter_bundles(Trial.objects.all(), chunk=2)]


@pytest.mark.django_db
def test_export_then_ingest_into_an_empty_database_round_trips_exactly() -> None:
    BundleWriter().write_many([full_bundle(f"t-{i}") for i in range(5)])
    first = _export()
    assert len(first) == 5

    Trial.objects.all().delete()
    Task.objects.all().delete()
    Job.objects.all().delete()
    outcomes = BundleWriter().write_many([TrialBundle.model_validate_json(b) for b in first])
    assert {o.status for o in outcomes} == {"ingested"}

    assert _export() == first


@pytest.mark.django_db
def test_exported_bundle_keeps_every_result_and_the_current_one() -> None:
    BundleWriter().write(full_bundle("t-1", reward=0.75))
    (bundle,) = iter_bundles(Trial.objects.all())
    assert [r.reward for r in bundle.results] == [0.5, 0.75]
    assert bundle.current_result.reward == 0.75
    assert bundle.current_result.raw_artifacts == {"reward.json": '{"reward": 0.75}'}
    assert [s.verdict for s in bundle.scorers] == ["FAIL", "NA"]
    assert [v.verdict for v in bundle.judge_verdicts] == ["PASS", "UNPARSEABLE"]
    asked = bundle.judge_verdicts[0]
    assert asked.rubric_version == "rubric-0123456789ab"
    assert asked.request_settings == {"temperature": 0, "response_format": "json_schema"}
    assert (bundle.judge_verdicts[1].rubric_version, bundle.judge_verdicts[1].request_settings) == (
        "",
        {},
    )
    assert bundle.trial.exception_message == "timed out <script>alert(1)</script>"


@pytest.mark.django_db
def test_reingesting_an_export_changes_nothing() -> None:
    BundleWriter().write_many([full_bundle(f"t-{i}") for i in range(3)])
    exported = [TrialBundle.model_validate_json(b) for b in _export()]
    outcomes = BundleWriter().write_many(exported)
    assert [o.status for o in outcomes] == ["unchanged"] * 3
    assert _export() == [b.model_dump_json() for b in exported]


@pytest.mark.django_db
def test_export_reads_a_fixed_number_of_queries_per_chunk(
    django_assert_num_queries: DjangoAssertNumQueries,
) -> None:
    BundleWriter().write_many([full_bundle(f"t-{i}") for i in range(6)])
    # Per chunk of 3: ids page, trials with job/task/detail, results, scorers, verdicts,
    # tags, integrity findings (7); plus the final empty ids page (1). Two chunks: 15.
    with django_assert_num_queries(15):
        assert len(list(iter_bundles(Trial.objects.all(), chunk=3))) == 6
