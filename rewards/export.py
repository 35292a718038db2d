"""Stored trials back out as `TrialBundle`s: the inverse of the bundle writer.

`iter_bundles` walks a queryset in keyset chunks (by id) with its children prefetched per
chunk, so memory stays flat however many trials are exported. Annotations belong to the
review app: it fills `bundle.annotations` itself (rewards never imports review), and so the
reviews of the integrity findings and the task's ledger entries.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Prefetch, QuerySet

from rewards.models import (
    ErrorTag,
    EvaluationResult,
    IntegrityFinding,
    JudgeVerdict,
    ScorerResult,
    Trial,
    record_values,
)
from rewards.schemas import (
    IntegrityFinding as FindingRecord,
    JobRecord,
    TaskRecord,
    TrialBundle,
    TrialRecord,
)

CHUNK = 500


def bundle_queryset(queryset: QuerySet[Trial]) -> QuerySet[Trial]:
    """Everything one bundle needs, in a fixed number of queries per chunk."""
    return queryset.select_related("job", "task", "detail").prefetch_related(
        Prefetch("results", queryset=EvaluationResult.objects.order_by("created_at", "id")),
        Prefetch("scorers", queryset=ScorerResult.objects.order_by("position")),
        Prefetch("judge_verdicts", queryset=JudgeVerdict.objects.order_by("id")),
        Prefetch("error_tags", queryset=ErrorTag.objects.order_by("id")),
        Prefetch("integrity_findings", queryset=IntegrityFinding.objects.order_by("step", "id")),
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


def trial_bundle(trial: Trial) -> TrialBundle:
    # The inverse of the writer, by the same mapping (`models.record_values`).
    detail = getattr(trial, "detail", None)
    return TrialBundle(
        job=JobRecord(**record_values(JobRecord, trial.job)),
        task=TaskRecord(**record_values(TaskRecord, trial.task)),
        trial=TrialRecord(**record_values(TrialRecord, trial, detail)),
        results=[r.to_record() for r in trial.results.all()],
        scorers=[s.to_record() for s in trial.scorers.all()],
        judge_verdicts=[v.to_record() for v in trial.judge_verdicts.all()],
        error_tags=[t.to_record() for t in trial.error_tags.all()],
        integrity_findings=[finding_record(f) for f in trial.integrity_findings.all()],
    )


def finding_record(finding: IntegrityFinding) -> FindingRecord:
    """A stored finding as a bundle carries it (its reviews are the review app's to add)."""
    return FindingRecord(
        detector=finding.detector,
        step=finding.step,
        matched=finding.matched,
        created_at=finding.created_at,
    )
