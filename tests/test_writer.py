"""The bundle writer: rows and summaries, idempotency, updates, atomicity per trial, frozen
task specs, determinism and a query count that does not grow with the batch."""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from rewards import rules
from rewards.ingest import copytext, digest as digest_module, outcomes, prepared as prepared_module
from rewards.ingest.copytext import _adapted, _moment, _uuid, copy_escape, copy_text
from rewards.ingest.digest import as_stored, content_digest, earlier_digest
from rewards.ingest.mapping import child_rows, summary_of, trial_columns_of
from rewards.ingest.outcomes import WriteOutcome
from rewards.ingest.writer import BundleWriter, bundle_written
from rewards.models import (
    ErrorTag,
    EvaluationResult,
    Job,
    JudgeVerdict,
    ScorerResult,
    Task,
    Trial,
    TrialDetail,
)
from rewards.schemas import (
    Annotation,
    ErrorTag as ErrorTagRecord,
    JobRecord,
    JudgeVerdict as JudgeRecord,
    ResultRecord,
    ScorerResult as ScorerRecord,
    TaskRecord,
    TrialBundle,
    TrialRecord,
    ValidityCheck,
)

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
TABLES = (Job, Task, Trial, TrialDetail, EvaluationResult, ScorerResult, JudgeVerdict, ErrorTag)


# --- building bundles ----------------------------------------------------------------------


def result(
    reward: float = 0.8,
    *,
    current: bool = True,
    parseable: bool = True,
    schema_valid: bool = True,
    completed: bool = True,
    errors: list[str] | None = None,
    raw: str | None = None,
) -> ResultRecord:
    raw = raw if raw is not None else json.dumps({"reward": reward})
    return ResultRecord(
        reward=reward,
        metrics={"accuracy": 0.75},
        validity=ValidityCheck(
            output_parseable=parseable,
            schema_valid=schema_valid,
            verifier_completed=completed,
            errors=errors or [],
        ),
        breakdown={"volts": {"score": 0.8, "max_score": 1.0, "evidence": "close"}},
        artifact_digest=hashlib.sha256(raw.encode()).hexdigest(),
        raw_artifacts={"logs/verifier/reward.json": raw},
        is_current=current,
    )


def scorer(name: str, type_: str, verdict: str, **kw: Any) -> ScorerRecord:
    return ScorerRecord.model_validate({"name": name, "type": type_, "verdict": verdict, **kw})


def verdict(outcome: str = "PASS", scored_at: datetime | None = T0, **kw: Any) -> JudgeRecord:
    tiles = (
        {}
        if outcome == "UNPARSEABLE"
        else {"task_completion": 4, "instruction_adherence": 5, "efficiency": 3}
    )
    return JudgeRecord.model_validate(
        {"verdict": outcome, "scored_at": scored_at, "judge_model": "judge-1", **tiles, **kw}
    )


def bundle(
    name: str = "t-001",
    *,
    job: str = "nightly-42",
    task: str = "voltage-drop",
    results: list[ResultRecord] | None = None,
    scorers: list[ScorerRecord] | None = None,
    judges: list[JudgeRecord] | None = None,
    tags: list[ErrorTagRecord] | None = None,
    task_fields: dict[str, Any] | None = None,
    uid: uuid.UUID | None = None,
    **trial_fields: Any,
) -> TrialBundle:
    return TrialBundle(
        job=JobRecord(name=job, started_at=T0, config={"n_attempts": 1}),
        task=TaskRecord(
            name=task,
            source="electrical",
            expected_output_path="/workspace/answer.json",
            output_format="json",
            pass_threshold=0.5,
            scorer_specs=[{"name": "tests", "type": "command", "command": "pytest"}],
            **(task_fields or {}),
        ),
        trial=TrialRecord.model_validate(
            {
                "name": name,
                "uid": uid or uuid.uuid5(uuid.NAMESPACE_URL, f"{job}/{name}"),
                "agent_name": "claude-code",
                "model_name": "m-large",
                "status": "completed",
                "started_at": T0,
                "finished_at": T0 + timedelta(minutes=4),
                "workspace_diff": "--- a\n+++ b\n",
                "stdout_tail": "ok",
            }
            | trial_fields
        ),
        results=results if results is not None else [result()],
        scorers=scorers
        if scorers is not None
        else [
            scorer("tests", "command", "PASS"),
            scorer("no skips", "no_new_skips", "FAIL", score=0.0),
            scorer("scope", "allowed_paths", "N/A"),
        ],
        judge_verdicts=judges if judges is not None else [verdict("PASS")],
        error_tags=tags
        if tags is not None
        else [ErrorTagRecord(category="unit mismatch", description="V vs mV", source="mechanical")],
    )


def counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in TABLES}


def summary_columns(trial: Trial) -> dict[str, Any]:
    return {name: getattr(trial, name) for name in [*rules.SUMMARY_FIELDS, "human_disagreement"]}


# --- ingest --------------------------------------------------------------------------------


def test_ingest_writes_every_row_and_the_summary_columns() -> None:
    old = result(0.2, current=False, raw='{"reward": 0.2}')
    outcome = BundleWriter().write(bundle(results=[old, result(0.8)]))

    assert outcome.status == "ingested"
    trial = Trial.objects.select_related("job", "task", "detail").get()
    assert outcome == WriteOutcome("ingested", "nightly-42", "t-001", trial.pk)
    assert counts() == {
        "Job": 1,
        "Task": 1,
        "Trial": 1,
        "TrialDetail": 1,
        "EvaluationResult": 2,
        "ScorerResult": 3,
        "JudgeVerdict": 1,
        "ErrorTag": 1,
    }
    assert (trial.job.name, trial.job.started_at, trial.job.config) == (
        "nightly-42",
        T0,
        {"n_attempts": 1},
    )
    assert (trial.task.source, trial.task.name, trial.task.pass_threshold) == (
        "electrical",
        "voltage-drop",
        0.5,
    )
    assert trial.uid == uuid.uuid5(uuid.NAMESPACE_URL, "nightly-42/t-001")
    assert (trial.agent_name, trial.model_name, trial.status) == (
        "claude-code",
        "m-large",
        "completed",
    )
    assert trial.finished_at == T0 + timedelta(minutes=4)
    assert trial.detail.workspace_diff == "--- a\n+++ b\n"
    assert trial.detail.stdout_tail == "ok"

    current = trial.results.get(is_current=True)
    assert (current.reward, current.metrics, current.errors) == (0.8, {"accuracy": 0.75}, [])
    assert current.breakdown == {"volts": {"score": 0.8, "max_score": 1.0, "evidence": "close"}}
    assert current.raw_artifacts == {"logs/verifier/reward.json": '{"reward": 0.8}'}
    assert trial.results.get(is_current=False).reward == 0.2

    assert [(s.position, s.type, s.required, s.verdict) for s in trial.scorers.all()] == [
        (0, "command", True, "PASS"),
        (1, "no_new_skips", False, "FAIL"),  # advisory by default
        (2, "allowed_paths", True, "NA"),
    ]
    assert summary_columns(trial) == {
        "reward": 0.8,
        "is_valid": True,
        "scorer_verdict": "PASS",
        "scorer_mean": 0.5,  # (1.0 + 0.0) / 2: the N/A scorer does not count
        "judge_verdict": "PASS",
        "failure_mode": "",
        "run_badge": "PASS",
        "gate_disagreement": rules.ADVISORY_FAIL,
        "judge_task_completion": 4,  # the shown verdict's tiles
        "judge_instruction_adherence": 5,
        "judge_efficiency": 3,
        "error_categories": "unit mismatch",
        "judge_model": "judge-1",  # the shown verdict's
        "judge_rubric_version": None,  # it records none
        "human_disagreement": "",
    }


def test_unparseable_output_with_a_reward_is_stored_as_zero_with_the_rejection() -> None:
    raw = '{"reward": 0.9}'
    bad = result(0.9, parseable=False, errors=["output does not parse as json"], raw=raw)
    BundleWriter().write(bundle(results=[bad]))
    stored = EvaluationResult.objects.get()
    assert stored.reward == 0.0
    assert stored.errors[0] == "output does not parse as json"
    assert "0.9 rejected" in stored.errors[1]
    assert stored.raw_artifacts == {"logs/verifier/reward.json": raw}
    trial = Trial.objects.get()
    assert (trial.reward, trial.is_valid) == (0.0, False)


def test_schema_mismatch_keeps_the_reward() -> None:
    BundleWriter().write(bundle(results=[result(0.9, schema_valid=False, errors=["schema"])]))
    assert EvaluationResult.objects.get().reward == 0.9
    assert Trial.objects.get().reward == 0.9


def test_same_bundle_twice_is_unchanged_and_adds_no_rows() -> None:
    BundleWriter().write(bundle())
    before = counts()
    trial_before = Trial.objects.values().get()

    again = BundleWriter().write(bundle())  # a fresh writer, a freshly built bundle
    same_writer = BundleWriter()
    same_writer.write(bundle())
    third = same_writer.write(bundle())

    assert (again.status, third.status) == ("unchanged", "unchanged")
    assert again.trial_id == trial_before["id"]
    assert counts() == before
    assert Trial.objects.values().get() == trial_before


def test_annotations_alone_do_not_change_a_bundle() -> None:
    BundleWriter().write(bundle())
    annotated = bundle().model_copy(
        update={
            "annotations": [
                Annotation(reviewer_id="ada", timestamp=T0, judgment="pass", notes="fine")
            ]
        }
    )
    assert BundleWriter().write(annotated).status == "unchanged"


def test_changed_result_is_updated_keeping_the_old_one_not_current() -> None:
    writer = BundleWriter()
    writer.write(bundle(results=[result(0.8)]))
    outcome = writer.write(bundle(results=[result(0.3)]))

    assert outcome.status == "updated"
    trial = Trial.objects.get()
    rewards = dict(trial.results.values_list("reward", "is_current"))
    assert rewards == {0.8: False, 0.3: True}
    assert trial.results.filter(is_current=True).count() == 1
    assert trial.reward == 0.3
    assert Trial.objects.count() == 1


def test_returning_to_earlier_artifacts_makes_that_result_current_again() -> None:
    writer = BundleWriter()
    writer.write(bundle(results=[result(0.8)]))
    writer.write(bundle(results=[result(0.3)]))
    outcome = BundleWriter().write(bundle(results=[result(0.8)]))

    assert outcome.status == "updated"
    trial = Trial.objects.get()
    assert dict(trial.results.values_list("reward", "is_current")) == {0.8: True, 0.3: False}
    assert trial.reward == 0.8


def test_update_replaces_scorers_and_tags() -> None:
    writer = BundleWriter()
    writer.write(bundle())
    writer.write(
        bundle(
            scorers=[scorer("forbid", "forbid_paths", "FAIL")],
            tags=[ErrorTagRecord(category="scope", source="judge")],
        )
    )
    trial = Trial.objects.get()
    assert [(s.position, s.name, s.verdict) for s in trial.scorers.all()] == [(0, "forbid", "FAIL")]
    assert [(t.category, t.source) for t in trial.error_tags.all()] == [("scope", "judge")]
    assert ScorerResult.objects.count() == 1
    assert ErrorTag.objects.count() == 1
    assert (trial.scorer_verdict, trial.scorer_mean) == ("FAIL", 0.0)
    assert trial.gate_disagreement == rules.JUDGE_PASS_SCORERS_FAIL


def test_update_with_no_scorers_clears_the_scorer_gate() -> None:
    writer = BundleWriter()
    writer.write(bundle())
    writer.write(bundle(scorers=[]))
    trial = Trial.objects.get()
    assert (trial.scorer_verdict, trial.scorer_mean, trial.gate_disagreement) == ("", None, "")


def test_judge_verdicts_accumulate_and_the_latest_is_shown() -> None:
    first = verdict("PASS", T0)
    second = verdict("FAIL", T0 + timedelta(hours=1), failure_mode="gave up")
    third = verdict("PASS", T0 - timedelta(hours=1), reasoning="an older run of the judge")
    writer = BundleWriter()
    writer.write(bundle(judges=[first]))
    assert writer.write(bundle(judges=[first, second])).status == "updated"
    assert JudgeVerdict.objects.count() == 2
    trial = Trial.objects.get()
    assert (trial.judge_verdict, trial.failure_mode) == ("FAIL", "gave up")
    assert trial.gate_disagreement == rules.SCORERS_PASS_JUDGE_FAIL

    # A bundle naming only an older verdict adds it; the latest stays the one shown.
    assert writer.write(bundle(judges=[third])).status == "updated"
    assert JudgeVerdict.objects.count() == 3
    trial.refresh_from_db()
    assert (trial.judge_verdict, trial.failure_mode) == ("FAIL", "gave up")


def test_the_judge_model_is_the_shown_verdicts_on_ingest_and_after_a_newer_verdict() -> None:
    newer = verdict("PASS", T0 + timedelta(hours=1), judge_model="judge-new")
    older = verdict("FAIL", T0, judge_model="judge-old", failure_mode="gave up")
    unscored = verdict("FAIL", None, judge_model="judge-unscored", failure_mode="gave up")
    writer = BundleWriter()
    # Listed newest first, with an unscored one last: the shown verdict is the latest scored.
    writer.write(bundle(judges=[newer, older, unscored]))
    assert Trial.objects.get().judge_model == "judge-new"

    latest = verdict("FAIL", T0 + timedelta(hours=2), judge_model="judge-3", failure_mode="x")
    assert writer.write(bundle(judges=[newer, older, unscored, latest])).status == "updated"
    trial = Trial.objects.get()
    assert (trial.judge_verdict, trial.judge_model) == ("FAIL", "judge-3")

    writer.write(bundle("no-judge", judges=[]))
    assert Trial.objects.get(name="no-judge").judge_model == ""


def test_judge_verdicts_differing_only_in_tiles_are_both_kept() -> None:
    writer = BundleWriter()
    writer.write(bundle(judges=[verdict("PASS", T0)]))
    writer.write(bundle(judges=[verdict("PASS", T0, efficiency=1)]))
    assert sorted(v or 0 for v in JudgeVerdict.objects.values_list("efficiency", flat=True)) == [
        1,
        3,
    ]


def test_naive_and_aware_scored_at_mix_without_crashing_or_duplicating() -> None:
    naive = verdict("FAIL", datetime(2026, 11, 1, 12, 0), failure_mode="late")
    aware = verdict("PASS", T0)  # 10:00 UTC: older than 12:00 read as UTC
    unscored = verdict("UNPARSEABLE", None, raw_response="{oops")
    writer = BundleWriter()
    assert writer.write(bundle(judges=[aware, naive, unscored])).status == "ingested"
    trial = Trial.objects.get()
    assert (trial.judge_verdict, trial.failure_mode) == ("FAIL", "late")

    writer.write(bundle(judges=[aware, naive, unscored], results=[result(0.4)]))
    assert JudgeVerdict.objects.count() == 3  # the naive one is recognised, not re-added


def test_update_keeps_the_human_side_and_recomputes_the_human_disagreement() -> None:
    writer = BundleWriter()
    writer.write(bundle(results=[result(0.8)]))
    trial = Trial.objects.select_related("task").get()
    trial.record_human_summary(["fail"], annotation_count=2)
    assert trial.human_disagreement == rules.HUMAN_FAIL_AUTOMATED_PASS

    writer.write(bundle(results=[result(0.2)]))
    trial.refresh_from_db()
    assert (trial.human_judgment, trial.annotation_count) == ("fail", 2)
    assert trial.human_disagreement == ""  # 0.2 < 0.5: human and automated agree now


def test_update_does_not_overwrite_a_concurrent_annotation_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    writer = BundleWriter()
    writer.write(bundle(results=[result(0.8)]))
    original = Trial.refresh_summary

    def reviewer_annotates_meanwhile(self: Trial) -> list[str]:
        # A reviewer's annotation lands between the writer's read and its save.
        Trial.objects.filter(pk=self.pk).update(annotation_count=3, human_judgment="pass")
        return original(self)

    monkeypatch.setattr(Trial, "refresh_summary", reviewer_annotates_meanwhile)
    writer.write(bundle(results=[result(0.2)]))
    trial = Trial.objects.get()
    assert (trial.annotation_count, trial.human_judgment, trial.reward) == (3, "pass", 0.2)


def test_update_keeps_the_trial_uid() -> None:
    writer = BundleWriter()
    writer.write(bundle())
    original = Trial.objects.get().uid
    writer.write(bundle(results=[result(0.1)], uid=uuid.uuid4()))
    assert Trial.objects.get().uid == original


def test_job_learns_later_values_but_empty_ones_erase_nothing() -> None:
    BundleWriter().write(bundle())
    later = bundle("t-002").model_copy(
        update={"job": JobRecord(name="nightly-42", finished_at=T0 + timedelta(hours=1))}
    )
    BundleWriter().write(later)
    job = Job.objects.get()
    assert (job.started_at, job.finished_at) == (T0, T0 + timedelta(hours=1))
    assert job.config == {"n_attempts": 1}


# --- atomicity per trial -------------------------------------------------------------------


def test_a_trial_the_database_refuses_is_invalid_and_leaves_no_rows() -> None:
    taken = uuid.uuid4()
    BundleWriter().write(bundle("existing", job="nightly-41", uid=taken))
    before = counts()

    batch = [
        bundle("t-001"),
        # A new job and task, and a uid already used by a trial in another job.
        bundle("t-002", job="nightly-99", task="brand-new-task", uid=taken),
        bundle("t-003"),
    ]
    outcomes = BundleWriter().write_many(batch)

    assert [o.status for o in outcomes] == ["ingested", "invalid", "ingested"]
    assert outcomes[1].trial == "t-002"
    assert outcomes[1].job == "nightly-99"
    assert outcomes[1].trial_id is None
    assert outcomes[1].reason == "its uid is already used by a trial in another job"
    # Exactly the two good trials were added, each whole; nothing of the refused one.
    added = {name: counts()[name] - before[name] for name in before}
    assert added == {
        "Job": 1,  # nightly-42 (nightly-99 rolled back with its trial)
        "Task": 0,  # voltage-drop existed; brand-new-task rolled back
        "Trial": 2,
        "TrialDetail": 2,
        "EvaluationResult": 2,
        "ScorerResult": 6,
        "JudgeVerdict": 2,
        "ErrorTag": 2,
    }
    assert not Job.objects.filter(name="nightly-99").exists()
    assert not Task.objects.filter(name="brand-new-task").exists()
    assert set(Trial.objects.values_list("name", flat=True)) == {"existing", "t-001", "t-003"}


def test_a_job_created_for_a_refused_trial_is_created_again_for_the_next() -> None:
    taken = uuid.uuid4()
    BundleWriter().write(bundle("existing", job="nightly-41", uid=taken))
    writer = BundleWriter()
    outcomes = writer.write_many(
        [bundle("bad", job="nightly-99", uid=taken), bundle("good", job="nightly-99")]
    )
    assert [o.status for o in outcomes] == ["invalid", "ingested"]
    # The first attempt's nightly-99 was rolled back; the second trial must not point at it.
    job = Job.objects.get(name="nightly-99")
    assert Trial.objects.get(name="good").job_id == job.pk
    assert writer.write(bundle("later", job="nightly-99")).status == "ingested"
    assert Trial.objects.filter(job=job).count() == 2


def test_a_refused_trial_does_not_stop_the_next_batch() -> None:
    taken = uuid.uuid4()
    BundleWriter().write(bundle("existing", job="nightly-41", uid=taken))
    writer = BundleWriter(batch_size=2)
    outcomes = writer.write_many(
        [bundle("a", uid=taken), bundle("b"), bundle("c"), bundle("d", job="other")]
    )
    assert [o.status for o in outcomes] == ["invalid", "ingested", "ingested", "ingested"]
    assert Trial.objects.count() == 4


def test_the_same_trial_twice_in_one_batch_is_written_once() -> None:
    outcomes = BundleWriter().write_many([bundle(), bundle(), bundle(results=[result(0.1)])])
    assert [o.status for o in outcomes] == ["ingested", "unchanged", "updated"]
    assert Trial.objects.count() == 1
    assert EvaluationResult.objects.count() == 2


def test_outcomes_come_back_in_input_order() -> None:
    BundleWriter().write(bundle("b"))
    outcomes = BundleWriter().write_many([bundle("a"), bundle("b"), bundle("c")])
    assert [(o.trial, o.status) for o in outcomes] == [
        ("a", "ingested"),
        ("b", "unchanged"),
        ("c", "ingested"),
    ]
    assert all(o.trial_id == Trial.objects.get(name=o.trial).pk for o in outcomes)


# --- tasks ---------------------------------------------------------------------------------


def test_task_scorer_specs_freeze_when_the_task_is_created() -> None:
    BundleWriter().write(bundle("t-001"))
    edited = {
        "scorer_specs": [{"name": "lint", "type": "command", "command": "ruff check"}],
        "pass_threshold": 0.9,
    }
    later = bundle("t-002", task_fields={}).model_copy(
        update={"task": bundle().task.model_copy(update=edited)}
    )
    BundleWriter().write(later)
    BundleWriter().write_many([bundle("t-003").model_copy(update={"task": later.task})])

    task = Task.objects.get()
    assert task.scorer_specs == [{"name": "tests", "type": "command", "command": "pytest"}]
    assert task.pass_threshold == 0.5
    assert Trial.objects.filter(task=task).count() == 3


def test_a_new_checksum_is_a_new_task() -> None:
    BundleWriter().write(bundle("t-001"))
    BundleWriter().write(bundle("t-002", task_fields={"checksum": "v2"}))
    assert Task.objects.count() == 2


# --- summaries agree with the rows ---------------------------------------------------------

SCENARIOS: dict[str, dict[str, Any]] = {
    "default": {},
    "no scorers, no judge": {"scorers": [], "judges": []},
    "required failure, judge pass": {"scorers": [scorer("t", "command", "FAIL")]},
    "judge fail": {"judges": [verdict("FAIL", failure_mode="scope")]},
    "judge unparseable": {"judges": [verdict("UNPARSEABLE", None)]},
    "unscored verdict after a scored one": {
        "judges": [verdict("FAIL", T0, failure_mode="x"), verdict("PASS", None)]
    },
    "equal scored_at: the last wins": {
        "judges": [verdict("FAIL", T0, failure_mode="x"), verdict("PASS", T0)]
    },
    "llm_judge required fails": {
        "scorers": [scorer("t", "command", "PASS"), scorer("j", "llm_judge", "FAIL", required=True)]
    },
    "all N/A": {"scorers": [scorer("a", "file_exists", "N/A"), scorer("b", "command", "N/A")]},
    "missing reward": {"results": [result(0.0, completed=False, errors=["reward file missing"])]},
    "unparseable output": {"results": [result(0.7, parseable=False)]},
    "timed out": {"exception_type": "AgentTimeoutError", "status": "failed"},
    "running": {"status": "running"},
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_summary_columns_agree_with_refresh_summary(scenario: str) -> None:
    BundleWriter().write(bundle(**SCENARIOS[scenario]))
    trial = Trial.objects.select_related("task").get()
    written = summary_columns(trial)
    trial.refresh_summary()
    assert summary_columns(trial) == written


def test_summary_columns_agree_with_refresh_summary_after_an_update() -> None:
    writer = BundleWriter()
    writer.write(bundle())
    writer.write(bundle(**SCENARIOS["unscored verdict after a scored one"]))
    trial = Trial.objects.select_related("task").get()
    written = summary_columns(trial)
    trial.refresh_summary()
    assert summary_columns(trial) == written
    assert written["judge_verdict"] == "FAIL"


# --- determinism ---------------------------------------------------------------------------


def test_the_same_artifacts_give_the_same_reward_and_digest_every_time() -> None:
    digests = {content_digest(bundle()) for _ in range(10)}
    assert len(digests) == 1
    BundleWriter().write(bundle())
    assert Trial.objects.get().content_digest == digests.pop()
    assert Trial.objects.get().reward == 0.8


def test_digest_does_not_depend_on_dict_key_order_or_datetime_spelling() -> None:
    original = bundle()
    data = json.loads(original.model_dump_json())
    reordered = {key: data[key] for key in reversed(list(data))}
    reordered["trial"] = {k: data["trial"][k] for k in reversed(list(data["trial"]))}
    reordered["trial"]["started_at"] = "2026-11-01T10:00:00"  # naive: read as UTC
    reordered["trial"]["finished_at"] = "2026-11-01T11:04:00+01:00"  # same instant
    assert content_digest(TrialBundle.model_validate(reordered)) == content_digest(original)


def test_digest_ignores_annotations_and_result_storage_times() -> None:
    original = bundle()
    stamped = original.model_copy(
        update={
            "results": [original.results[0].model_copy(update={"created_at": T0})],
            "annotations": [Annotation(reviewer_id="ada", timestamp=T0, judgment="fail")],
        }
    )
    assert content_digest(stamped) == content_digest(original)


def test_a_digest_stored_in_the_earlier_spelling_is_the_same_content() -> None:
    # The standard library writes 1e-05 where orjson writes 0.00001: the two spellings of
    # the digest differ, yet a trial stored under the earlier one has not changed.
    small = bundle(cost_usd=1e-05)
    assert earlier_digest(small) != content_digest(small)
    BundleWriter().write(small)
    Trial.objects.update(content_digest=earlier_digest(small))

    outcome = BundleWriter().write(small)

    assert outcome.status == "unchanged"
    assert Trial.objects.get().content_digest == content_digest(small)
    assert EvaluationResult.objects.count() == 1
    assert BundleWriter().write(bundle(cost_usd=2e-05)).status == "updated"


@pytest.mark.parametrize(
    "changed",
    [
        bundle(results=[result(0.81)]),
        bundle(scorers=[scorer("tests", "command", "FAIL")]),
        bundle(judges=[verdict("PASS", T0 + timedelta(seconds=1))]),
        bundle(tags=[]),
        bundle(stdout_tail="different"),
        bundle(task_fields={"checksum": "v2"}),
    ],
)
def test_digest_changes_when_the_content_does(changed: TrialBundle) -> None:
    assert content_digest(changed) != content_digest(bundle())


# --- signal --------------------------------------------------------------------------------


def test_bundle_written_is_sent_for_bundles_with_annotations_whatever_their_status() -> None:
    calls: list[tuple[int | None, str]] = []

    def receiver(sender: object, *, trial_id: int | None, status: str, **kw: Any) -> None:
        calls.append((trial_id, status))

    annotated = bundle().model_copy(
        update={"annotations": [Annotation(reviewer_id="ada", timestamp=T0, judgment="pass")]}
    )
    bundle_written.connect(receiver, sender=BundleWriter, dispatch_uid="test-writer")
    try:
        BundleWriter().write(annotated)
        BundleWriter().write(annotated)
        BundleWriter().write(bundle("plain"))  # no annotations: nothing to store
    finally:
        bundle_written.disconnect(sender=BundleWriter, dispatch_uid="test-writer")
    trial_id = Trial.objects.get(name="t-001").pk
    assert calls == [(trial_id, "ingested"), (trial_id, "unchanged")]


# --- query counts --------------------------------------------------------------------------


def _queries_to_write(n: int, job: str) -> int:
    batch = [
        bundle(
            f"t-{i}",
            job=job,
            task=f"task-{i}",  # every trial a different task, as in a real dataset
            results=[result(0.2, current=False, raw=f"old {i}"), result(0.8)],
            judges=[verdict("PASS"), verdict("FAIL", T0 + timedelta(hours=1))],
        )
        for i in range(n)
    ]
    with CaptureQueriesContext(connection) as queries:
        outcomes = BundleWriter().write_many(batch)
    assert [o.status for o in outcomes] == ["ingested"] * n
    return len(queries)


def test_writing_new_bundles_takes_a_fixed_number_of_queries() -> None:
    # SAVEPOINT; SELECT jobs; INSERT job; SELECT tasks; INSERT tasks; SELECT existing
    # trials; the new trials' ids (PostgreSQL: reserved from the sequence; elsewhere: read
    # back); INSERT (or COPY) trials, details, results, scorers, verdicts, tags; RELEASE.
    assert _queries_to_write(5, "five") == 14
    assert _queries_to_write(50, "fifty") == 14
    assert Trial.objects.count() == 55
    assert EvaluationResult.objects.count() == 110


def test_unchanged_bundles_take_a_fixed_number_of_queries() -> None:
    batch = [bundle(f"t-{i}") for i in range(30)]
    BundleWriter().write_many(batch)
    with CaptureQueriesContext(connection) as queries:
        outcomes = BundleWriter().write_many(batch)
    assert {o.status for o in outcomes} == {"unchanged"}
    # SAVEPOINT; SELECT jobs; SELECT tasks; SELECT existing trials; RELEASE.
    assert len(queries) == 5


def test_db_reason_never_echoes_the_database_text() -> None:
    from django.db import IntegrityError

    exc = IntegrityError(
        'duplicate key value violates unique constraint "rewards_trial_uid_key"'
        "\nDETAIL:  Key (uid)=(<script>) already exists."
    )
    assert outcomes.db_reason(exc) == "its uid is already used by a trial in another job"
    check = IntegrityError("CHECK constraint failed: judge_rubric_complete_unless_unparseable")
    assert outcomes.db_reason(check) == "a PASS or FAIL judge verdict lacks a rubric score"
    assert outcomes.db_reason(IntegrityError("<b>")) == ("the database refused it (IntegrityError)")
    # A trial named "fluid" in our own message is not a uid problem.
    assert outcomes.db_reason(ValueError("trial 'fluid' appears twice")) == (
        "trial 'fluid' appears twice"
    )


def test_a_bug_while_writing_one_trial_loses_only_that_trial(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_batch = BundleWriter._write_batch

    def failing(self: BundleWriter, batch: Any) -> Any:
        if any(b.name == "boom" for b in batch):
            raise RuntimeError("a bug while writing")
        return write_batch(self, batch)

    monkeypatch.setattr(BundleWriter, "_write_batch", failing)
    outcomes = BundleWriter().write_many([bundle(name="fine"), bundle(name="boom")])

    assert [(o.trial, o.status) for o in outcomes] == [("fine", "ingested"), ("boom", "invalid")]
    assert outcomes[1].reason == "could not be stored (RuntimeError)"
    assert list(Trial.objects.values_list("name", flat=True)) == ["fine"]


# --- rows as inserted: COPY text on PostgreSQL, tuples elsewhere ------------------------------
def test_copy_text_escapes_what_copy_reads_as_syntax_and_spells_values_as_postgresql_does() -> None:

    assert copy_escape("a\tb\nc\rd\\e") == "a\\tb\\nc\\rd\\\\e"
    assert copy_escape("<script>alert(1)</script>") == "<script>alert(1)</script>"
    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert copy_text([None, True, False, 3, 0.25, moment, "x\\N", '{"a": "b\\n"}']) == (
        '\\N\tt\tf\t3\t0.25\t2026-01-02T03:04:05+00:00\tx\\\\N\t{"a": "b\\\\n"}'
    )


def test_datetime_and_uuid_columns_are_spelled_for_copy_without_asking_the_backend() -> None:

    started, uid = Trial._meta.get_field("started_at"), Trial._meta.get_field("uid")
    moment = datetime(2026, 1, 2, 3, 4, 5, 678, tzinfo=UTC)
    assert _moment(started, moment) == "2026-01-02T03:04:05.000678+00:00"
    east = moment.astimezone(timezone.get_fixed_timezone(120))
    assert _moment(started, east) == "2026-01-02T05:04:05.000678+02:00"  # the same instant
    value = uuid.UUID(int=7)
    assert _uuid(uid, value) == "00000000-0000-0000-0000-000000000007"
    # Anything else is adapted by its field (a naive datetime is taken as the current zone's).
    naive = datetime(2026, 1, 2, 3, 4, 5)
    with pytest.warns(RuntimeWarning, match="naive datetime"):
        assert _moment(started, naive) == _adapted(started, naive)
    assert _uuid(uid, str(value)) == _adapted(uid, str(value))


def test_text_that_looks_like_copy_syntax_is_stored_exactly() -> None:
    hostile = "tab\there\nnewline\rreturn \\N \\. backslash\\ end\t"
    stored = bundle(
        agent_name=hostile[:60],
        stdout_tail=hostile,
        workspace_diff=hostile * 3,
        config={"note": hostile, "\\N": None},
    )

    outcome = BundleWriter().write(stored)

    assert outcome.trial_id is not None
    trial = Trial.objects.select_related("detail").get(pk=outcome.trial_id)
    assert trial.agent_name == hostile[:60]
    assert trial.detail.stdout_tail == hostile
    assert trial.detail.workspace_diff == hostile * 3
    assert trial.detail.config == {"note": hostile, "\\N": None}
    assert BundleWriter().write(stored).status == "unchanged"


def test_insert_time_columns_are_the_moment_of_the_insert() -> None:
    before = timezone.now()
    outcome = BundleWriter().write(bundle())
    assert outcome.trial_id is not None
    trial = Trial.objects.get(pk=outcome.trial_id)
    assert before <= trial.updated_at <= timezone.now()


@pytest.mark.parametrize(
    "as_read",
    [
        {"trajectory": {"steps": [{"message": "x" * 500, "n": 1.5e-07, "ok": None}]}},
        {"config": {"when": datetime(2026, 1, 2, tzinfo=UTC), "id": uuid.uuid4()}},
        {"ctrf": {"big": 2**70}},
    ],
    ids=["plain JSON", "values only pydantic spells", "an integer beyond 64 bits"],
)
def test_the_digest_is_the_canonical_json_of_the_whole_content(as_read: dict[str, Any]) -> None:
    import orjson

    stored = bundle(**as_read)
    content = stored.model_dump(mode="json", exclude=digest_module._DIGEST_EXCLUDE)
    try:
        canonical = orjson.dumps(content, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        canonical = json.dumps(
            content, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()
    assert content_digest(stored) == hashlib.sha256(canonical).hexdigest()


@pytest.mark.parametrize(
    "trajectory",
    [
        {"steps": [{"source": "agent", "message": "tab\there\\"}], "b": 1, "a": [2, None]},
        None,
    ],
)
def test_the_stored_trajectory_is_the_one_read_and_no_trajectory_is_sql_null(
    trajectory: Any,
) -> None:
    outcome = BundleWriter().write(bundle(trajectory=trajectory))
    assert outcome.trial_id is not None
    detail = TrialDetail.objects.get(trial_id=outcome.trial_id)
    assert detail.trajectory == trajectory
    if trajectory is not None and connection.vendor == "sqlite":
        # Text keeps the keys in the order they were read.
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT trajectory FROM rewards_trialdetail WHERE trial_id = %s",
                [outcome.trial_id],
            )
            assert list(json.loads(cursor.fetchone()[0])) == ["steps", "b", "a"]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT trajectory IS NULL FROM rewards_trialdetail WHERE trial_id = %s",
            [outcome.trial_id],
        )
        assert bool(cursor.fetchone()[0]) is (trajectory is None)


def test_prepared_rows_are_the_rows_of_unsaved_instances() -> None:
    from rewards.models import unsaved

    stored = bundle(trajectory={"b": 1, "a": 2})
    checked, digest = as_stored(stored)
    now = timezone.now()
    prepared = prepared_module.prepare(checked, digest, fingerprint="fp")
    trial = unsaved(
        Trial, name=checked.trial.name, uid=checked.trial.uid, **trial_columns_of(checked)
    )
    trial.task = unsaved(Task, pass_threshold=checked.task.pass_threshold)
    trial.apply_summary(summary_of(checked, checked.current_result))
    trial.content_digest, trial.source_fingerprint = digest, "fp"
    assert prepared.trial == copytext.row_of(Trial, trial.__dict__)
    for model, instances in child_rows(checked, trial, now).items():
        rows = prepared.children[model._meta.label]
        expected = [copytext.row_of(model, i.__dict__) for i in instances]
        if model is EvaluationResult:  # its creation moment is the preparing's own
            plan = [a for a, _, _ in copytext.column_plan(model)]
            at = plan.index("created_at")

            def cut(row: Any, at: int = at) -> Any:
                values = row.split(b"\t") if isinstance(row, bytes) else list(row)
                return values[:at] + values[at + 1 :]

            rows, expected = [cut(r) for r in rows], [cut(r) for r in expected]
        assert rows == expected, model
