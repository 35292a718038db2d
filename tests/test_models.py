"""Each named database constraint rejects the rows it exists to reject (and accepts its
boundary values), and the summary methods compute from rows."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone

from rewards import rules
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

pytestmark = pytest.mark.django_db


@pytest.fixture
def task() -> Task:
    return Task.objects.create(name="voltage-drop", source="electrical", pass_threshold=0.5)


@pytest.fixture
def job() -> Job:
    return Job.objects.create(name="nightly-42")


@pytest.fixture
def trial(job: Job, task: Task) -> Trial:
    return Trial.objects.create(job=job, task=task, name="t-001")


def rejects(make: Callable[[], Any], constraint: str) -> None:
    """The row is refused by the database, by the named constraint (SQLite names it)."""
    with transaction.atomic(), pytest.raises(IntegrityError) as caught:
        make()
    assert constraint in str(caught.value)


def unique(name: str, sqlite_columns: str) -> str:
    """How each database names a unique violation: PostgreSQL by the constraint's name,
    SQLite by its columns."""
    return name if connection.vendor == "postgresql" else sqlite_columns


def accepts(make: Callable[[], Any]) -> None:
    with transaction.atomic():
        make()


def result(trial: Trial, **fields: Any) -> EvaluationResult:
    values: dict[str, Any] = {
        "trial": trial,
        "reward": 0.5,
        "output_parseable": True,
        "schema_valid": True,
        "verifier_completed": True,
        "artifact_digest": uuid.uuid4().hex * 2,
        "is_current": True,
        "created_at": timezone.now(),
    }
    return EvaluationResult.objects.create(**(values | fields))


def scorer(trial: Trial, **fields: Any) -> ScorerResult:
    values: dict[str, Any] = {
        "trial": trial,
        "position": ScorerResult.objects.filter(trial=trial).count(),
        "name": "tests",
        "type": "command",
        "required": True,
        "verdict": "PASS",
        "score": 1.0,
    }
    return ScorerResult.objects.create(**(values | fields))


def judge(trial: Trial, **fields: Any) -> JudgeVerdict:
    values: dict[str, Any] = {
        "trial": trial,
        "verdict": "PASS",
        "task_completion": 4,
        "instruction_adherence": 4,
        "efficiency": 4,
    }
    return JudgeVerdict.objects.create(**(values | fields))


# --- Trial ---------------------------------------------------------------------------------


@pytest.mark.parametrize("reward", [-0.01, 1.01, 2.0])
def test_trial_reward_outside_the_unit_range_is_rejected(
    job: Job, task: Task, reward: float
) -> None:
    rejects(
        lambda: Trial.objects.create(job=job, task=task, name="x", reward=reward),
        "trial_reward_in_unit_range",
    )


@pytest.mark.parametrize("reward", [0.0, 1.0])
def test_trial_reward_bounds_are_accepted(job: Job, task: Task, reward: float) -> None:
    accepts(lambda: Trial.objects.create(job=job, task=task, name=f"x{reward}", reward=reward))


@pytest.mark.parametrize("mean", [-0.5, 1.5])
def test_trial_scorer_mean_outside_the_unit_range_is_rejected(
    job: Job, task: Task, mean: float
) -> None:
    rejects(
        lambda: Trial.objects.create(job=job, task=task, name="x", scorer_mean=mean),
        "trial_scorer_mean_in_unit_range",
    )


def test_trial_name_is_unique_within_its_job(job: Job, task: Task, trial: Trial) -> None:
    rejects(
        lambda: Trial.objects.create(job=job, task=task, name=trial.name),
        unique("trial_unique_name_per_job", "rewards_trial.job_id, rewards_trial.name"),
    )
    other = Job.objects.create(name="nightly-43")
    accepts(lambda: Trial.objects.create(job=other, task=task, name=trial.name))


def test_trial_uid_is_unique_across_jobs(task: Task, trial: Trial) -> None:
    other = Job.objects.create(name="nightly-43")
    rejects(
        lambda: Trial.objects.create(job=other, task=task, name="y", uid=trial.uid),
        unique("rewards_trial_uid_key", "rewards_trial.uid"),
    )


# --- Task ----------------------------------------------------------------------------------


@pytest.mark.parametrize("threshold", [-0.1, 1.1])
def test_task_pass_threshold_outside_the_unit_range_is_rejected(threshold: float) -> None:
    rejects(
        lambda: Task.objects.create(name="t", pass_threshold=threshold),
        "task_pass_threshold_in_unit_range",
    )


@pytest.mark.parametrize("threshold", [0.0, 1.0])
def test_task_pass_threshold_bounds_are_accepted(threshold: float) -> None:
    accepts(lambda: Task.objects.create(name=f"t{threshold}", pass_threshold=threshold))


def test_task_identity_is_source_name_and_checksum(task: Task) -> None:
    rejects(
        lambda: Task.objects.create(name=task.name, source=task.source),
        unique(
            "task_unique_source_name_checksum",
            "rewards_task.source, rewards_task.name, rewards_task.checksum",
        ),
    )
    accepts(lambda: Task.objects.create(name=task.name, source=task.source, checksum="v2"))


# --- EvaluationResult ----------------------------------------------------------------------


@pytest.mark.parametrize("reward", [-0.01, 1.01])
def test_result_reward_outside_the_unit_range_is_rejected(trial: Trial, reward: float) -> None:
    rejects(lambda: result(trial, reward=reward), "result_reward_in_unit_range")


def test_result_nonzero_reward_for_unparseable_output_is_rejected(trial: Trial) -> None:
    rejects(
        lambda: result(trial, reward=0.5, output_parseable=False),
        "result_unparseable_output_has_zero_reward",
    )
    accepts(lambda: result(trial, reward=0.0, output_parseable=False))


def test_result_schema_mismatch_may_keep_its_reward(trial: Trial) -> None:
    accepts(lambda: result(trial, reward=0.9, schema_valid=False))


def test_two_current_results_for_one_trial_are_rejected(trial: Trial) -> None:
    result(trial)
    # The partial unique index result_one_current_per_trial, on trial_id alone.
    with transaction.atomic(), pytest.raises(IntegrityError) as caught:
        result(trial)
    assert unique("result_one_current_per_trial", "rewards_evaluationresult.trial_id") in str(
        caught.value
    )
    accepts(lambda: result(trial, is_current=False))
    accepts(lambda: result(trial, is_current=False))


def test_current_results_of_different_trials_coexist(job: Job, task: Task, trial: Trial) -> None:
    other = Trial.objects.create(job=job, task=task, name="t-002")
    result(trial)
    accepts(lambda: result(other))


def test_duplicate_artifact_digest_per_trial_is_rejected(
    job: Job, task: Task, trial: Trial
) -> None:
    digest = "d" * 64
    result(trial, artifact_digest=digest)
    rejects(
        lambda: result(trial, artifact_digest=digest, is_current=False),
        unique(
            "result_unique_digest_per_trial",
            "rewards_evaluationresult.trial_id, rewards_evaluationresult.artifact_digest",
        ),
    )
    other = Trial.objects.create(job=job, task=task, name="t-002")
    accepts(lambda: result(other, artifact_digest=digest))


# --- ScorerResult --------------------------------------------------------------------------


@pytest.mark.parametrize("score", [-0.1, 1.1])
def test_scorer_score_outside_the_unit_range_is_rejected(trial: Trial, score: float) -> None:
    rejects(lambda: scorer(trial, score=score), "scorer_score_in_unit_range")


@pytest.mark.parametrize("score", [0.0, 1.0])
def test_scorer_score_bounds_are_accepted(trial: Trial, score: float) -> None:
    accepts(lambda: scorer(trial, score=score))


@pytest.mark.parametrize("verdict", ["N/A", "pass", "SKIP", ""])
def test_scorer_verdict_outside_pass_fail_na_is_rejected(trial: Trial, verdict: str) -> None:
    rejects(lambda: scorer(trial, verdict=verdict), "scorer_verdict_valid")


@pytest.mark.parametrize("verdict", ["PASS", "FAIL", "NA"])
def test_scorer_verdicts_are_accepted(trial: Trial, verdict: str) -> None:
    accepts(lambda: scorer(trial, verdict=verdict))


def test_scorer_type_outside_the_catalog_is_stored_as_given(trial: Trial) -> None:
    # A newer pipeline's scorer type is kept (and shown as unknown), not refused.
    accepts(lambda: scorer(trial, type="lint"))
    for scorer_type in rules.SCORER_TYPES:
        accepts(lambda t=scorer_type: scorer(trial, type=t))  # type: ignore[misc]
    known = {s.type: s.is_known_type for s in trial.scorers.all()}
    assert known == {"lint": False, **dict.fromkeys(rules.SCORER_TYPES, True)}


def test_scorer_position_is_unique_per_trial(trial: Trial) -> None:
    scorer(trial, position=0)
    rejects(
        lambda: scorer(trial, position=0),
        unique("scorer_unique_position", "rewards_scorerresult.trial_id"),
    )


# --- JudgeVerdict --------------------------------------------------------------------------


@pytest.mark.parametrize("tile", ["task_completion", "instruction_adherence", "efficiency"])
@pytest.mark.parametrize("value", [0, 6])
def test_judge_tiles_outside_one_to_five_are_rejected(trial: Trial, tile: str, value: int) -> None:
    rejects(lambda: judge(trial, **{tile: value}), f"judge_{tile}_1_to_5")


@pytest.mark.parametrize("value", [1, 5])
def test_judge_tile_bounds_are_accepted(trial: Trial, value: int) -> None:
    accepts(
        lambda: judge(trial, task_completion=value, instruction_adherence=value, efficiency=value)
    )


@pytest.mark.parametrize("verdict", ["PASS", "FAIL"])
def test_judge_pass_or_fail_without_tiles_is_rejected(trial: Trial, verdict: str) -> None:
    rejects(
        lambda: judge(trial, verdict=verdict, efficiency=None),
        "judge_rubric_complete_unless_unparseable",
    )


def test_unparseable_judge_verdict_needs_no_tiles(trial: Trial) -> None:
    accepts(
        lambda: judge(
            trial,
            verdict="UNPARSEABLE",
            task_completion=None,
            instruction_adherence=None,
            efficiency=None,
        )
    )


@pytest.mark.parametrize("verdict", ["pass", "ERROR", ""])
def test_judge_verdict_outside_pass_fail_unparseable_is_rejected(
    trial: Trial, verdict: str
) -> None:
    rejects(lambda: judge(trial, verdict=verdict), "judge_verdict_valid")


# --- summaries -----------------------------------------------------------------------------


def test_refresh_summary_reads_the_current_result_scorers_and_latest_judge(trial: Trial) -> None:
    result(trial, reward=0.2, is_current=False)
    result(trial, reward=0.8)
    scorer(trial, verdict="PASS", score=1.0)
    scorer(trial, type="no_new_skips", required=False, verdict="FAIL", score=0.0)
    scorer(trial, type="file_exists", verdict="NA", score=0.0)
    early = datetime(2026, 11, 1, 10, tzinfo=UTC)
    judge(trial, verdict="FAIL", failure_mode="wrong units", scored_at=early)
    judge(trial, verdict="PASS", scored_at=early.replace(hour=11))
    judge(
        trial,
        verdict="UNPARSEABLE",
        task_completion=None,
        instruction_adherence=None,
        efficiency=None,
        scored_at=None,  # unscored: the oldest, although written last
    )
    fields = trial.refresh_summary()
    trial.save(update_fields=fields)
    trial.refresh_from_db()
    assert trial.reward == 0.8
    assert trial.is_valid is True
    assert trial.scorer_verdict == "PASS"
    assert trial.scorer_mean == 0.5
    assert trial.judge_verdict == "PASS"
    assert trial.failure_mode == ""
    assert trial.run_badge == "PASS"
    assert trial.gate_disagreement == rules.ADVISORY_FAIL


def test_refresh_summary_without_scorers_or_judge_has_no_gates(trial: Trial) -> None:
    result(trial, reward=0.0, verifier_completed=False)
    trial.refresh_summary()
    assert (trial.scorer_verdict, trial.scorer_mean, trial.judge_verdict) == ("", None, "")
    assert trial.run_badge == "FAIL"  # the verifier never finished
    assert trial.is_valid is False


def test_latest_judge_breaks_ties_by_id(trial: Trial) -> None:
    when = datetime(2026, 11, 1, 10, tzinfo=UTC)
    judge(trial, verdict="PASS", scored_at=when)
    judge(trial, verdict="FAIL", scored_at=when, failure_mode="scope")
    result(trial)
    trial.refresh_summary()
    assert (trial.judge_verdict, trial.failure_mode) == ("FAIL", "scope")


@pytest.mark.parametrize(
    ("latest", "reward", "judgment", "disagreement"),
    [
        (["pass"], 0.4, "pass", rules.HUMAN_PASS_AUTOMATED_FAIL),
        (["pass"], 0.5, "pass", ""),  # at the threshold: an automated pass
        (["fail"], 0.5, "fail", rules.HUMAN_FAIL_AUTOMATED_PASS),
        (["fail", "pass"], 0.9, "mixed", ""),
        (["defer"], 0.9, "defer", ""),
        ([], 0.9, "", ""),
    ],
)
def test_record_human_summary(
    trial: Trial, latest: list[str], reward: float, judgment: str, disagreement: str
) -> None:
    Trial.objects.filter(pk=trial.pk).update(reward=reward)
    trial.refresh_from_db()
    trial.record_human_summary(latest, annotation_count=len(latest) + 1)
    trial.refresh_from_db()
    assert trial.human_judgment == judgment
    assert trial.human_disagreement == disagreement
    assert trial.annotation_count == len(latest) + 1


def test_human_disagreement_follows_the_reward_on_refresh(trial: Trial) -> None:
    result(trial, reward=0.9)
    trial.refresh_summary()
    trial.save()
    trial.record_human_summary(["fail"], 1)
    assert trial.human_disagreement == rules.HUMAN_FAIL_AUTOMATED_PASS
    EvaluationResult.objects.filter(trial=trial).update(is_current=False)
    result(trial, reward=0.1)
    trial.refresh_summary()
    assert trial.human_disagreement == ""


def test_scorer_hard_failure_and_advisory_marker(trial: Trial) -> None:
    hard = scorer(trial, verdict="FAIL", score=0.0)
    advisory = scorer(trial, type="no_new_skips", required=False, verdict="FAIL", score=0.0)
    judge_note = scorer(trial, type="llm_judge", required=True, verdict="FAIL", score=0.0)
    assert (hard.is_hard_failure, hard.is_advisory) == (True, False)
    assert (advisory.is_hard_failure, advisory.is_advisory) == (False, True)
    assert (judge_note.is_hard_failure, judge_note.is_advisory) == (False, True)


def test_deleting_a_trial_takes_its_rows_along(trial: Trial) -> None:
    result(trial)
    scorer(trial)
    judge(trial)
    ErrorTag.objects.create(trial=trial, category="unit mismatch", source="mechanical")
    trial.delete()
    for model in (EvaluationResult, ScorerResult, JudgeVerdict, ErrorTag):
        assert model.objects.count() == 0


# --- unsaved: a model instance as Model(**values) builds it --------------------------------
@pytest.mark.parametrize("model", [Trial, TrialDetail, EvaluationResult, Task])
def test_unsaved_builds_what_the_model_constructor_builds(model: type[models.Model]) -> None:
    from rewards.models import unsaved

    plain, fast = model(), unsaved(model)
    made = {f.attname for f in model._meta.concrete_fields if callable(f.default)}
    assert fast.__dict__.keys() == plain.__dict__.keys()
    for name, value in plain.__dict__.items():
        if name in made:  # a fresh uuid4, dict, list…: of the same kind
            assert type(getattr(fast, name)) is type(value), name
        elif name != "_state":
            assert getattr(fast, name) == value, name
    assert fast._state.adding
    assert fast._state.db is None


def test_unsaved_sets_relations_and_gives_each_instance_its_own_mutable_defaults() -> None:
    from rewards.models import unsaved

    trial = Trial(name="t")
    first, second = unsaved(TrialDetail, trial=trial), unsaved(TrialDetail, trial=trial)
    assert first.trial is trial
    assert first.config == {}
    assert first.config is not second.config
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        unsaved(TrialDetail, nope=1)


@pytest.mark.parametrize("model", [Trial, TrialDetail, EvaluationResult, Task])
def test_unsaved_values_are_the_columns_of_an_unsaved_instance(model: type[models.Model]) -> None:
    from rewards.models import unsaved, unsaved_values

    given = {"name": "t"} if model in (Trial, Task) else {}
    values, instance = unsaved_values(model, **given), unsaved(model, **given)
    made = {f.attname for f in model._meta.concrete_fields if callable(f.default)}
    assert values.keys() == {f.attname for f in model._meta.concrete_fields}
    for name, value in values.items():
        if name in made:
            assert type(value) is type(getattr(instance, name)), name
        else:
            assert value == getattr(instance, name), name


def test_unsaved_values_take_columns_only_and_give_each_row_its_own_mutable_defaults() -> None:
    from rewards.models import unsaved_values

    first, second = unsaved_values(TrialDetail), unsaved_values(TrialDetail)
    assert first["config"] == {}
    assert first["config"] is not second["config"]
    assert unsaved_values(TrialDetail, trial_id=3)["trial_id"] == 3
    with pytest.raises(TypeError, match="unexpected keyword argument 'trial'"):
        unsaved_values(TrialDetail, trial=Trial(name="t"))


def test_summary_values_are_what_apply_summary_sets() -> None:
    summary = rules.summarise(
        reward=0.2,
        is_valid=True,
        verifier_completed=True,
        scorers=[],
        judge_verdict="",
        judge_model="",
        failure_mode="",
        status="completed",
        exception_type="",
        judge_tiles=(None, None, None),
        error_categories=[],
    )
    trial = Trial(name="t", human_judgment="pass", task=Task(name="k", pass_threshold=0.5))
    fields = trial.apply_summary(summary)
    values = Trial.summary_values(summary, "pass", 0.5)
    assert fields == list(values)
    assert values == {name: getattr(trial, name) for name in fields}
    assert values["human_disagreement"] == rules.HUMAN_PASS_AUTOMATED_FAIL
