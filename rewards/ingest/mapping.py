"""The bundle-to-row mapping: the column values of each table a `TrialBundle` stores.

One mapping serves every way rows are made: the writer's prepared rows (`prepared`) and
its updates, and `seed_demo`'s fast loader. The trial's own columns come from its record
(`column_values`), its summary columns from the bundle itself (`summary_of`, which must
agree with `Trial.refresh_summary()` over the stored rows), and each child model's row from
that model's own mapping (`values_of`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.db import models

from rewards import rules, schemas
from rewards.integrity.detectors import Finding, TaskPaths, scan
from rewards.models import (
    ErrorTag,
    EvaluationResult,
    IntegrityFinding,
    JudgeVerdict,
    ScorerResult,
    Trial,
    TrialDetail,
    column_values,
    record_columns,
    unsaved,
)
from rewards.schemas import ResultRecord, TrialBundle, utc

# The trial's own columns from its record (name and uid are set apart).
TRIAL_FIELDS = tuple(
    n for n in record_columns(schemas.TrialRecord, Trial) if n not in ("name", "uid")
)
# The children of a trial, in the order they are inserted.
CHILD_MODELS: tuple[type[models.Model], ...] = (
    TrialDetail,
    EvaluationResult,
    ScorerResult,
    JudgeVerdict,
    ErrorTag,
    IntegrityFinding,
)


def task_key(record: schemas.TaskRecord) -> tuple[str, str, str]:
    """What tells one task from another: the same key is the same stored task."""
    return (record.source, record.name, record.checksum)


def trial_columns_of(bundle: TrialBundle) -> dict[str, Any]:
    """The trial row's own columns from a bundle (summary columns aside)."""
    return {
        **column_values(bundle.trial, Trial, exclude={"name", "uid"}),
        "problem_count": len(bundle.trial.ingest_problems),
    }


def child_values(
    bundle: TrialBundle, now: datetime
) -> dict[type[models.Model], list[dict[str, Any]]]:
    """Every row a bundle stores beside its trial, by model, in insertion order: the columns
    the bundle gives it, by attname (the others take their defaults; the link to the trial
    aside)."""
    return {
        TrialDetail: [column_values(bundle.trial, TrialDetail)],
        EvaluationResult: [EvaluationResult.values_of(r, now) for r in bundle.results],
        ScorerResult: [ScorerResult.values_of(i, s) for i, s in enumerate(bundle.scorers)],
        JudgeVerdict: [JudgeVerdict.values_of(v) for v in bundle.judge_verdicts],
        ErrorTag: [ErrorTag.values_of(t) for t in bundle.error_tags],
        IntegrityFinding: finding_rows(bundle),
    }


def findings_of(bundle: TrialBundle) -> list[Finding]:
    """The reward-integrity findings of a bundle's trajectory and workspace diff."""
    task = bundle.task
    paths = TaskPaths.of(task.verifier_script, task.reward_path, task.details_path)
    return scan(bundle.trial.trajectory, bundle.trial.workspace_diff, paths)


def finding_values(finding: Finding) -> dict[str, Any]:
    """A finding's columns (the link to its trial aside)."""
    return {"detector": finding.detector, "step": finding.step or 0, "matched": finding.matched}


def finding_rows(bundle: TrialBundle) -> list[dict[str, Any]]:
    """The findings a bundle stores: those it carries (an export's, kept as they were, with
    the time each was found, whether or not today's detectors see them), then those the
    detectors see that it does not carry."""
    rows: dict[tuple[str, int, str], dict[str, Any]] = {}
    for record in bundle.integrity_findings:
        values: dict[str, Any] = {
            "detector": record.detector,
            "step": record.step,
            "matched": record.matched,
        }
        if record.created_at is not None:
            values["created_at"] = utc(record.created_at)
        rows.setdefault(record.key, values)
    for finding in findings_of(bundle):
        values = finding_values(finding)
        rows.setdefault((values["detector"], values["step"], values["matched"]), values)
    return list(rows.values())


def child_rows(
    bundle: TrialBundle, trial: Trial, now: datetime
) -> dict[type[models.Model], list[models.Model]]:
    """Every row a bundle stores beside its trial, unsaved, by model, in insertion order.

    The writer (`child_values`, the same rows without instances) and `seed_demo`'s fast
    loader both build rows from one mapping, so they store the same.
    """
    return {
        model: [unsaved(model, trial=trial, **values) for values in rows]
        for model, rows in child_values(bundle, now).items()
    }


# --- summary from a bundle ----------------------------------------------------------------
def summary_of(bundle: TrialBundle, result: ResultRecord) -> rules.TrialSummary:
    """Trial summary columns computed from the bundle itself, without reading rows back.

    Must agree with `Trial.refresh_summary()` computed from the rows this bundle becomes.
    """
    scorers = [
        rules.ScorerOutcome(
            required=bool(s.required), type=s.type, verdict=s.verdict, score=float(s.score or 0)
        )
        for s in bundle.scorers
    ]
    judge = latest_judge(bundle)
    validity = result.validity
    return rules.summarise(
        reward=result.reward,
        is_valid=rules.is_valid(
            validity.output_parseable, validity.verifier_completed, validity.errors
        ),
        verifier_completed=validity.verifier_completed,
        scorers=scorers,
        judge_verdict=judge.verdict if judge else "",
        judge_model=judge.judge_model if judge else "",
        judge_rubric_version=judge.rubric_version if judge else "",
        failure_mode=(judge.failure_mode or "") if judge else "",
        status=bundle.trial.status,
        exception_type=bundle.trial.exception_type,
        judge_tiles=(
            (judge.task_completion, judge.instruction_adherence, judge.efficiency)
            if judge
            else (None, None, None)
        ),
        error_categories=[t.category for t in bundle.error_tags],
    )


_NEVER = datetime.min.replace(tzinfo=UTC)


def latest_judge(bundle: TrialBundle) -> schemas.JudgeVerdict | None:
    """The verdict shown: the latest scored (unscored ones count as oldest), then the last.

    The same order as `JudgeVerdict.LATEST_FIRST` over the rows, whose ids follow the
    bundle's order.
    """
    if not bundle.judge_verdicts:
        return None

    def order(pair: tuple[int, schemas.JudgeVerdict]) -> tuple[bool, datetime, int]:
        index, verdict = pair
        scored = verdict.scored_at
        return (scored is not None, utc(scored) if scored else _NEVER, index)

    return max(enumerate(bundle.judge_verdicts), key=order)[1]
