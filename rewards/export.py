"""Stored trials back out as `TrialBundle`s: the inverse of the bundle writer.

`iter_bundles` walks a queryset in keyset chunks (by id) with its children prefetched per
chunk, so memory stays flat however many trials are exported. Annotations belong to the
review app: it fills `bundle.annotations` itself (rewards never imports review).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import Prefetch, QuerySet
from pydantic import BaseModel

from rewards.models import ErrorTag, EvaluationResult, JudgeVerdict, ScorerResult, Trial
from rewards.schemas import (
    ConfidenceMetadata,
    ErrorTag as ErrorTagSchema,
    FactCheck,
    JobRecord,
    JudgeVerdict as JudgeVerdictSchema,
    ResultRecord,
    ScorerResult as ScorerResultSchema,
    TaskRecord,
    TrialBundle,
    TrialRecord,
    ValidityCheck,
)

CHUNK = 500


def bundle_queryset(queryset: QuerySet[Trial]) -> QuerySet[Trial]:
    """Everything one bundle needs, in a fixed number of queries per chunk."""
    return queryset.select_related("job", "task", "detail").prefetch_related(
        Prefetch("results", queryset=EvaluationResult.objects.order_by("created_at", "id")),
        Prefetch("scorers", queryset=ScorerResult.objects.order_by("position")),
        Prefetch("judge_verdicts", queryset=JudgeVerdict.objects.order_by("id")),
        Prefetch("error_tags", queryset=ErrorTag.objects.order_by("id")),
    )


def iter_trial_chunks(queryset: QuerySet[Trial], chunk: int = CHUNK) -> Iterator[list[Trial]]:
    """Trials in ascending id order, `chunk` at a time, children prefetched per chunk."""
    ids = queryset.order_by().values_list("id", flat=True)
    last = 0
    while True:
        page = list(ids.filter(id__gt=last).order_by("id")[:chunk])
        if not page:
            return
        last = page[-1]
        yield list(bundle_queryset(Trial.objects.filter(id__in=page)).order_by("id"))


def iter_bundles(queryset: QuerySet[Trial], chunk: int = CHUNK) -> Iterator[TrialBundle]:
    for trials in iter_trial_chunks(queryset, chunk):
        for trial in trials:
            yield trial_bundle(trial)


def _fields(record: type[BaseModel], *sources: object) -> dict[str, Any]:
    """A record's fields read by name from the first source that has them (None: skipped)."""
    values: dict[str, Any] = {}
    for name in record.model_fields:
        for source in sources:
            if source is not None and hasattr(source, name):
                values[name] = getattr(source, name)
                break
    return values


def trial_bundle(trial: Trial) -> TrialBundle:
    # The records' fields are the columns' names: the inverse of the writer, field for field.
    detail = getattr(trial, "detail", None)
    return TrialBundle(
        job=JobRecord(**_fields(JobRecord, trial.job)),
        task=TaskRecord(**_fields(TaskRecord, trial.task)),
        trial=TrialRecord(**_fields(TrialRecord, detail, trial)),
        results=[_result(r) for r in trial.results.all()],
        scorers=[
            ScorerResultSchema(
                name=s.name,
                type=s.type,
                required=s.required,
                verdict=s.verdict,
                score=s.score,
                detail=s.detail,
                output_tail=s.output_tail,
                config=s.config,
            )
            for s in trial.scorers.all()
        ],
        judge_verdicts=[
            JudgeVerdictSchema(
                verdict=v.verdict,
                task_completion=v.task_completion,
                instruction_adherence=v.instruction_adherence,
                efficiency=v.efficiency,
                failure_mode=v.failure_mode or None,
                reasoning=v.reasoning,
                judge_model=v.judge_model,
                scored_at=v.scored_at,
                fact_checks=[FactCheck.model_validate(f) for f in v.fact_checks],
                expected_outcome=v.expected_outcome,
                raw_response=v.raw_response,
            )
            for v in trial.judge_verdicts.all()
        ],
        error_tags=[
            ErrorTagSchema(
                category=t.category,
                description=t.description or None,
                source=t.source,
            )
            for t in trial.error_tags.all()
        ],
    )


def _result(result: EvaluationResult) -> ResultRecord:
    return ResultRecord(
        reward=result.reward,
        metrics=result.metrics,
        validity=ValidityCheck(
            output_parseable=result.output_parseable,
            schema_valid=result.schema_valid,
            verifier_completed=result.verifier_completed,
            errors=result.errors,
        ),
        breakdown=result.breakdown,
        confidence=(
            ConfidenceMetadata.model_validate(result.confidence) if result.confidence else None
        ),
        artifact_digest=result.artifact_digest,
        raw_artifacts=result.raw_artifacts,
        is_current=result.is_current,
        created_at=result.created_at,
    )
