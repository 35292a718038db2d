"""The one writer: stores `TrialBundle`s, atomically per trial and idempotently.

Every reader (Harbor folder, contract directory, JSONL line, API body) produces bundles;
this module is the only place that turns them into rows. New trials are written in bulk,
a batch in one transaction; if anything in a batch fails, the batch is rolled back and
written again one trial per transaction, so a bad trial never takes good ones with it and
is never left half-written.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from django.db import DatabaseError, IntegrityError, transaction
from django.dispatch import Signal
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
from rewards.schemas import ResultRecord, TrialBundle

log = logging.getLogger(__name__)

# Sent inside the trial's transaction after its rows are written, so a receiver's rows
# (the review app stores the bundle's annotations) commit or roll back with the trial.
bundle_written = Signal()

Status = Literal["ingested", "unchanged", "updated", "invalid"]


@dataclass(frozen=True)
class WriteOutcome:
    status: Status
    job: str
    trial: str
    trial_id: int | None = None
    reason: str = ""


def content_digest(bundle: TrialBundle) -> str:
    """Identity of a bundle's content; annotations are the review app's and excluded."""
    payload = bundle.model_dump_json(exclude={"annotations"})
    return hashlib.sha256(payload.encode()).hexdigest()


TRIAL_FIELDS = (
    "agent_name",
    "agent_version",
    "model_name",
    "model_provider",
    "status",
    "started_at",
    "finished_at",
    "timings",
    "n_input_tokens",
    "n_cache_tokens",
    "n_output_tokens",
    "cost_usd",
    "exception_type",
    "exception_message",
    "source_path",
)
DETAIL_FIELDS = (
    "config",
    "trajectory",
    "workspace_diff",
    "command",
    "exit_code",
    "stdout_tail",
    "stderr_tail",
    "final_response",
    "exception_traceback",
    "verifier_stdout",
    "ctrf",
)


def summary_of(bundle: TrialBundle, result: ResultRecord) -> rules.TrialSummary:
    """Trial summary columns computed from the bundle itself, without reading rows back."""
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
        failure_mode=(judge.failure_mode or "") if judge else "",
        status=bundle.trial.status,
        exception_type=bundle.trial.exception_type,
    )


def latest_judge(bundle: TrialBundle):  # type: ignore[no-untyped-def]
    """The verdict shown: the latest scored (unscored ones count as oldest), then the last."""
    if not bundle.judge_verdicts:
        return None
    indexed = list(enumerate(bundle.judge_verdicts))
    indexed.sort(key=lambda pair: (pair[1].scored_at is not None, pair[1].scored_at or 0, pair[0]))  # type: ignore[arg-type,return-value]
    return indexed[-1][1]


class BundleWriter:
    """Writes bundles; keeps jobs and tasks it has seen in memory for the run's duration."""

    def __init__(self, batch_size: int = 500) -> None:
        self.batch_size = batch_size
        self._jobs: dict[str, Job] = {}
        self._tasks: dict[tuple[str, str, str], Task] = {}

    # -- public ---------------------------------------------------------------------------
    def write(self, bundle: TrialBundle) -> WriteOutcome:
        return self.write_many([bundle])[0]

    def write_many(self, bundles: Sequence[TrialBundle]) -> list[WriteOutcome]:
        outcomes: list[WriteOutcome] = []
        for start in range(0, len(bundles), self.batch_size):
            batch = [self._checked(b) for b in bundles[start : start + self.batch_size]]
            try:
                with transaction.atomic():
                    outcomes.extend(self._write_batch(batch))
            except (IntegrityError, DatabaseError, ValueError) as exc:
                log.info("batch failed (%s); writing its trials one by one", type(exc).__name__)
                self._forget_cached_rows()
                outcomes.extend(self._write_one_by_one(batch))
        return outcomes

    # -- internals ------------------------------------------------------------------------
    @staticmethod
    def _checked(bundle: TrialBundle) -> TrialBundle:
        results = [r.checked() for r in bundle.results]
        if results == bundle.results:
            return bundle
        return bundle.model_copy(update={"results": results})

    def _forget_cached_rows(self) -> None:
        # Rows created inside a rolled-back transaction no longer exist.
        self._jobs.clear()
        self._tasks.clear()

    def _write_one_by_one(self, batch: Iterable[TrialBundle]) -> list[WriteOutcome]:
        outcomes = []
        for bundle in batch:
            try:
                with transaction.atomic():
                    outcomes.extend(self._write_batch([bundle]))
            except (IntegrityError, DatabaseError, ValueError) as exc:
                self._forget_cached_rows()
                outcomes.append(
                    WriteOutcome(
                        "invalid", bundle.job.name, bundle.trial.name, reason=_db_reason(exc)
                    )
                )
        return outcomes

    def _job(self, bundle: TrialBundle) -> Job:
        record = bundle.job
        job = self._jobs.get(record.name)
        if job is None:
            job, created = Job.objects.get_or_create(
                name=record.name,
                defaults={
                    "started_at": record.started_at,
                    "finished_at": record.finished_at,
                    "config": record.config,
                    "stats": record.stats,
                    "source_path": record.source_path,
                },
            )
            if not created:
                changed = [
                    name
                    for name in ("started_at", "finished_at", "config", "stats", "source_path")
                    if getattr(record, name) and getattr(job, name) != getattr(record, name)
                ]
                for name in changed:
                    setattr(job, name, getattr(record, name))
                if changed:
                    job.save(update_fields=changed)
            self._jobs[record.name] = job
        return job

    def _task(self, bundle: TrialBundle) -> Task:
        record = bundle.task
        key = (record.source, record.name, record.checksum)
        task = self._tasks.get(key)
        if task is None:
            # Seed 003: scorers freeze when the task is created; a later bundle naming the
            # same task never changes its specs.
            task, _ = Task.objects.get_or_create(
                source=record.source,
                name=record.name,
                checksum=record.checksum,
                defaults=record.model_dump(exclude={"source", "name", "checksum"}),
            )
            self._tasks[key] = task
        return task

    def _write_batch(self, batch: Sequence[TrialBundle]) -> list[WriteOutcome]:
        jobs = [self._job(b) for b in batch]
        tasks = [self._task(b) for b in batch]
        digests = [content_digest(b) for b in batch]

        existing = {
            (t.job_id, t.name): t
            for t in Trial.objects.filter(
                job__in={j.pk for j in jobs}, name__in={b.trial.name for b in batch}
            ).select_related("task")
        }
        seen: set[tuple[int, str]] = set()
        outcomes: list[WriteOutcome | None] = [None] * len(batch)
        new: list[tuple[int, Trial]] = []
        for index, (bundle, job, task, digest) in enumerate(
            zip(batch, jobs, tasks, digests, strict=True)
        ):
            key = (job.pk, bundle.trial.name)
            if key in seen:
                raise ValueError(f"trial {bundle.trial.name!r} appears twice in one batch")
            seen.add(key)
            trial = existing.get(key)
            if trial is not None and trial.content_digest == digest:
                outcomes[index] = WriteOutcome("unchanged", job.name, trial.name, trial.pk)
            elif trial is not None:
                self._update(trial, bundle, task, digest)
                outcomes[index] = WriteOutcome("updated", job.name, trial.name, trial.pk)
            else:
                new.append((index, self._new_trial(bundle, job, task, digest)))

        if new:
            Trial.objects.bulk_create([trial for _, trial in new])
            self._create_children([(batch[i], trial) for i, trial in new])
            for index, trial in new:
                outcomes[index] = WriteOutcome("ingested", trial.job.name, trial.name, trial.pk)
        for index, bundle in enumerate(batch):
            outcome = outcomes[index]
            if bundle.annotations and outcome and outcome.status != "unchanged":
                bundle_written.send(
                    sender=BundleWriter, trial_id=outcome.trial_id, bundle=bundle
                )
        return [o for o in outcomes if o is not None]

    @staticmethod
    def _new_trial(bundle: TrialBundle, job: Job, task: Task, digest: str) -> Trial:
        record = bundle.trial
        trial = Trial(
            job=job,
            task=task,
            name=record.name,
            uid=record.uid,
            content_digest=digest,
            **{name: getattr(record, name) for name in TRIAL_FIELDS},
        )
        trial.apply_summary(summary_of(bundle, bundle.current_result))
        return trial

    def _create_children(self, pairs: Sequence[tuple[TrialBundle, Trial]]) -> None:
        now = timezone.now()
        details, results, scorers, verdicts, tags = [], [], [], [], []
        for bundle, trial in pairs:
            details.append(
                TrialDetail(trial=trial, **{n: getattr(bundle.trial, n) for n in DETAIL_FIELDS})
            )
            results.extend(_result_row(trial, r, now) for r in bundle.results)
            scorers.extend(_scorer_rows(trial, bundle))
            verdicts.extend(_verdict_rows(trial, bundle))
            tags.extend(_tag_rows(trial, bundle))
        TrialDetail.objects.bulk_create(details)
        EvaluationResult.objects.bulk_create(results)
        ScorerResult.objects.bulk_create(scorers)
        JudgeVerdict.objects.bulk_create(verdicts)
        ErrorTag.objects.bulk_create(tags)

    def _update(self, trial: Trial, bundle: TrialBundle, task: Task, digest: str) -> None:
        """Changed artifacts: a new current result beside the old ones, the rest replaced."""
        record = bundle.trial
        for name in TRIAL_FIELDS:
            setattr(trial, name, getattr(record, name))
        trial.task = task
        trial.content_digest = digest
        TrialDetail.objects.update_or_create(
            trial=trial, defaults={n: getattr(record, n) for n in DETAIL_FIELDS}
        )

        now = timezone.now()
        stored = set(trial.results.values_list("artifact_digest", flat=True))
        current = bundle.current_result
        trial.results.filter(is_current=True).exclude(
            artifact_digest=current.artifact_digest
        ).update(is_current=False)
        trial.results.filter(artifact_digest=current.artifact_digest).update(is_current=True)
        EvaluationResult.objects.bulk_create(
            [_result_row(trial, r, now) for r in bundle.results if r.artifact_digest not in stored]
        )
        # The judge may be asked again: verdicts accumulate, the latest is shown.
        known = {_verdict_key(v) for v in trial.judge_verdicts.all()}
        JudgeVerdict.objects.bulk_create(
            [v for v in _verdict_rows(trial, bundle) if _verdict_key(v) not in known]
        )
        trial.scorers.all().delete()
        ScorerResult.objects.bulk_create(_scorer_rows(trial, bundle))
        trial.error_tags.all().delete()
        ErrorTag.objects.bulk_create(_tag_rows(trial, bundle))

        trial.refresh_summary()
        trial.save()


def _result_row(trial: Trial, record: ResultRecord, now: object) -> EvaluationResult:
    validity = record.validity
    return EvaluationResult(
        trial=trial,
        reward=record.reward,
        metrics=record.metrics,
        output_parseable=validity.output_parseable,
        schema_valid=validity.schema_valid,
        verifier_completed=validity.verifier_completed,
        errors=validity.errors,
        breakdown=record.breakdown,
        confidence=record.confidence.model_dump(mode="json") if record.confidence else None,
        artifact_digest=record.artifact_digest,
        raw_artifacts=record.raw_artifacts,
        is_current=record.is_current,
        created_at=record.created_at or now,
    )


def _scorer_rows(trial: Trial, bundle: TrialBundle) -> list[ScorerResult]:
    return [
        ScorerResult(
            trial=trial,
            position=position,
            name=s.name,
            type=s.type,
            required=bool(s.required),
            verdict=s.verdict,
            score=float(s.score or 0.0),
            detail=s.detail,
            output_tail=s.output_tail,
            config=s.config,
        )
        for position, s in enumerate(bundle.scorers)
    ]


def _verdict_rows(trial: Trial, bundle: TrialBundle) -> list[JudgeVerdict]:
    return [
        JudgeVerdict(
            trial=trial,
            verdict=v.verdict,
            task_completion=v.task_completion,
            instruction_adherence=v.instruction_adherence,
            efficiency=v.efficiency,
            failure_mode=v.failure_mode or "",
            reasoning=v.reasoning,
            judge_model=v.judge_model,
            scored_at=v.scored_at,
            fact_checks=[f.model_dump() for f in v.fact_checks],
            expected_outcome=v.expected_outcome,
            raw_response=v.raw_response,
        )
        for v in bundle.judge_verdicts
    ]


def _verdict_key(v: JudgeVerdict) -> tuple[object, ...]:
    return (v.verdict, v.scored_at, v.judge_model, v.reasoning, v.raw_response, v.failure_mode)


def _tag_rows(trial: Trial, bundle: TrialBundle) -> list[ErrorTag]:
    return [
        ErrorTag(
            trial=trial, category=t.category, description=t.description or "", source=t.source
        )
        for t in bundle.error_tags
    ]


def _db_reason(exc: Exception) -> str:
    text = str(exc).lower()
    if "uid" in text:
        return "its id is already used by another trial"
    if isinstance(exc, ValueError):
        return str(exc)[:300]
    return f"the database refused it ({type(exc).__name__})"
