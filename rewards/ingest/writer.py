"""The one writer: stores `TrialBundle`s, atomically per trial and idempotently.

Every reader (Harbor folder, contract directory, JSONL line, API body) produces bundles;
this module is the only place that turns them into rows. New trials are written in bulk,
a batch in one transaction, with a number of queries that does not grow with the batch;
if anything in a batch fails, the batch is rolled back and written again one trial per
transaction, so a bad trial never takes good ones with it and is never left half-written.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, cast
from uuid import UUID

import orjson
from django.db import DatabaseError, models, transaction
from django.dispatch import Signal
from django.utils import timezone

from rewards import rules, schemas
from rewards.cache import forget_job_choices
from rewards.ingest.bundles import filed_under
from rewards.models import (
    ErrorTag,
    EvaluationResult,
    Job,
    JudgeVerdict,
    ScorerResult,
    Task,
    Trial,
    TrialDetail,
    column_values,
    record_columns,
    unsaved,
)

if TYPE_CHECKING:
    from rewards.ingest.discover import HarborTrialItem
from rewards.ingest.prepared import PreparedTrial, RowInserter, child_links, prepare
from rewards.schemas import ResultRecord, TrialBundle, utc

log = logging.getLogger(__name__)

# Sent inside the trial's transaction for every bundle that carries annotations, whatever
# its status (`status` is passed along), so a receiver's rows (the review app stores the
# bundle's annotations) commit or roll back with the trial. The content digest leaves
# annotations out, so an "unchanged" bundle may still bring new ones: receivers must skip
# annotations they already hold.
bundle_written = Signal()

Status = Literal["ingested", "unchanged", "updated", "invalid"]

# What makes a batch fall back to one trial per transaction; a trial that still fails is
# reported "invalid". Our own ValueErrors name a bundle problem found while writing.
_WRITE_ERRORS = (DatabaseError, ValueError, OverflowError)


@dataclass(frozen=True)
class WriteOutcome:
    status: Status
    job: str
    trial: str
    trial_id: int | None = None
    reason: str = ""
    uid: UUID | None = None  # known when the outcome was decided without reading the trial


# --- canonical content ------------------------------------------------------------------
# The job's metadata: every column of its record but the name.
JOB_FIELDS = tuple(name for name in record_columns(schemas.JobRecord, Job) if name != "name")
# The trial's own columns from its record (name and uid are set apart).
TRIAL_FIELDS = tuple(
    n for n in record_columns(schemas.TrialRecord, Trial) if n not in ("name", "uid")
)

# What the digest leaves out: annotations (the review app's, not the pipeline's), the
# results' `created_at` (when a row was stored, not what the verifier said), and the job's
# metadata: a Harbor job's result.json lists every trial, so including it would make each
# trial's digest change whenever the job grew (and hashing it per trial is quadratic work);
# the writer refreshes the job row on its own.
_DIGEST_EXCLUDE: dict[str, Any] = {
    "annotations": True,
    "results": {"__all__": {"created_at"}},
    "job": set(JOB_FIELDS),
}


def content_digest(bundle: TrialBundle) -> str:
    """Identity of a bundle's content: equal digests mean "unchanged".

    Canonical, so that the same artifacts always give the same digest: keys sorted (a
    PostgreSQL jsonb column hands dicts back in its own key order, so an exported bundle
    would otherwise never match the one it was made from); datetimes are already in UTC
    (`schemas.UtcDatetime`), so their JSON spelling is unique.
    """
    return hashlib.sha256(_canonical(bundle)).hexdigest()


def earlier_digest(bundle: TrialBundle) -> str:
    """The digest as releases before orjson spelled it (the standard library's JSON, which
    writes some small floats differently: `1e-05`, not `0.00001`). A stored digest that
    matches this one is the same content, not a change."""
    return hashlib.sha256(_canonical_stdlib(_content(bundle)).encode()).hexdigest()


def _content(bundle: TrialBundle) -> dict[str, Any]:
    return bundle.model_dump(mode="json", exclude=_DIGEST_EXCLUDE)


# Trial fields holding JSON as it was read, an agent's whole trajectory among them: the
# digest serialises them as they are rather than having pydantic copy them first. Anything
# in them that is not plain JSON data (a datetime, a str subclass…) makes orjson refuse,
# and the digest is then taken from pydantic's copy: the same bytes either way.
_AS_READ = ("trajectory", "config", "ctrf")
_DIGEST_EXCLUDE_AS_READ: dict[str, Any] = {**_DIGEST_EXCLUDE, "trial": set(_AS_READ)}
_PLAIN_JSON_ONLY = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _canonical(bundle: TrialBundle) -> bytes:
    data = bundle.model_dump(mode="json", exclude=_DIGEST_EXCLUDE_AS_READ)
    for name in _AS_READ:
        data["trial"][name] = getattr(bundle.trial, name)
    try:
        return orjson.dumps(data, option=_PLAIN_JSON_ONLY)
    except TypeError:
        pass
    data = _content(bundle)
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer beyond 64 bits
        return _canonical_stdlib(data).encode()


def _canonical_stdlib(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --- NUL characters -------------------------------------------------------------------------
NUL_STANDIN = "\u2400"  # ␀, SYMBOL FOR NULL


def _replace_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", NUL_STANDIN)
    if isinstance(value, dict):
        return {_replace_nul(key): _replace_nul(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace_nul(item) for item in value]
    return value


def checked_digest(bundle: TrialBundle) -> tuple[TrialBundle, str]:
    """The bundle with NUL characters shown as ␀, and its content digest.

    PostgreSQL refuses NUL in text and in jsonb. Agent output may hold NUL bytes; refusing
    the trial would lose it, and dropping the character would hide what the agent wrote.
    The same on every database, so SQLite and PostgreSQL store the same text.

    One serialisation serves both: the digest's canonical JSON escapes a NUL as `\\u0000`,
    so it shows whether the trial's own content holds one; what the digest leaves out
    (annotations, the job) is looked at on its own, the job once per record.
    """
    payload = _canonical(bundle)
    if b"\\u0000" in payload or _nul_outside_digest(bundle):
        bundle = TrialBundle.model_validate(_replace_nul(bundle.model_dump()))
        payload = _canonical(bundle)
    return bundle, hashlib.sha256(payload).hexdigest()


# Jobs already looked at, by identity: every trial of a Harbor job shares one record, whose
# stats may list thousands of trials. The record is kept so its id is not reused.
_CLEAN_JOBS: dict[int, tuple[schemas.JobRecord, bool]] = {}


def _nul_outside_digest(bundle: TrialBundle) -> bool:
    if bundle.annotations and "\\u0000" in json.dumps(
        [a.model_dump(mode="json") for a in bundle.annotations]
    ):
        return True
    job = bundle.job
    known = _CLEAN_JOBS.get(id(job))
    if known is None or known[0] is not job:
        if len(_CLEAN_JOBS) > 256:
            _CLEAN_JOBS.clear()
        known = _CLEAN_JOBS[id(job)] = (job, "\\u0000" in job.model_dump_json())
    return known[1]


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


# --- the writer ---------------------------------------------------------------------------
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
        """One outcome per bundle, in order; never raises for a bundle it cannot store."""
        return self.write_prepared([self.prepared(b) for b in bundles])

    @staticmethod
    def prepared(bundle: TrialBundle, *, fingerprint: str = "") -> PreparedTrial | WriteOutcome:
        """A bundle's rows (`prepared.prepare`), or the outcome that says why it has none."""
        try:
            checked, digest = BundleWriter._checked(bundle)
            return prepare(checked, digest, fingerprint=fingerprint)
        except _WRITE_ERRORS as exc:
            reason = _db_reason(exc)
        except Exception as exc:  # a bug must not lose the other trials
            log.exception("could not prepare %s/%s", bundle.job.name, bundle.trial.name)
            reason = f"could not be stored ({type(exc).__name__})"
        return WriteOutcome("invalid", bundle.job.name, bundle.trial.name, reason=reason)

    def write_prepared(self, items: Sequence[PreparedTrial | WriteOutcome]) -> list[WriteOutcome]:
        """Store prepared trials (outcomes given in their place are passed through).

        A batch that fails for any reason is rolled back and written again one trial per
        transaction, so the trial at fault is reported "invalid" and the others are stored.
        """
        outcomes: list[WriteOutcome] = []
        for start in range(0, len(items), self.batch_size):
            chunk = items[start : start + self.batch_size]
            batch = [p for p in chunk if isinstance(p, PreparedTrial)]
            try:
                with transaction.atomic():
                    written = iter(self._write_batch(batch))
            except Exception as exc:  # isolated below, one trial at a time
                log.info("batch failed (%s); writing its trials one by one", type(exc).__name__)
                self._forget_cached_rows()
                written = iter(self._write_one_by_one(batch))
            outcomes.extend(p if isinstance(p, WriteOutcome) else next(written) for p in chunk)
        return outcomes

    def refresh_job(self, record: schemas.JobRecord) -> None:
        """Bring a job row up to date with its record (a re-ingest that skipped every trial
        of the job still refreshes the job itself)."""
        with transaction.atomic():
            self._jobs_for([record])

    # -- internals ------------------------------------------------------------------------
    @staticmethod
    def _checked(bundle: TrialBundle) -> tuple[TrialBundle, str]:
        """The bundle as stored (results checked, NUL characters replaced) and its digest."""
        results = [r.checked() for r in bundle.results]
        if results != bundle.results:
            bundle = bundle.model_copy(update={"results": results})
        return checked_digest(bundle)

    def _forget_cached_rows(self) -> None:
        # Rows created inside a rolled-back transaction no longer exist.
        self._jobs.clear()
        self._tasks.clear()

    def _write_one_by_one(self, batch: Iterable[PreparedTrial]) -> list[WriteOutcome]:
        outcomes = []
        for prepared in batch:
            try:
                # The trial, and any job or task first created for it, commit together or
                # not at all: a failed trial leaves no row behind.
                with transaction.atomic():
                    outcomes.extend(self._write_batch([prepared]))
                continue
            except _WRITE_ERRORS as exc:
                reason = _db_reason(exc)
            except Exception as exc:  # a bug must not lose the other trials
                log.exception("could not store %s/%s", prepared.job.name, prepared.name)
                reason = f"could not be stored ({type(exc).__name__})"
            self._forget_cached_rows()
            outcomes.append(
                WriteOutcome("invalid", prepared.job.name, prepared.name, reason=reason)
            )
        return outcomes

    def _jobs_for(self, records: Sequence[schemas.JobRecord]) -> list[Job]:
        """The batch's jobs: one SELECT and at most one INSERT, whatever the batch size."""
        wanted: dict[str, schemas.JobRecord] = {}
        for record in records:
            if record.name not in self._jobs:
                wanted.setdefault(record.name, record)
        if wanted:
            found = {job.name: job for job in Job.objects.filter(name__in=list(wanted))}
            for name, job in found.items():
                _refresh_job(job, wanted[name])
            new = [
                Job(name=name, **column_values(record, Job, exclude={"name"}))
                for name, record in wanted.items()
                if name not in found
            ]
            # SQLite and PostgreSQL return the new primary keys from a bulk insert. A job
            # created meanwhile by another ingest raises IntegrityError: the batch is then
            # retried trial by trial, and the SELECT above finds it.
            Job.objects.bulk_create(new)
            if new:  # bulk_create sends no post_save
                forget_job_choices()
            found.update((job.name, job) for job in new)
            self._jobs.update(found)
        return [self._jobs[record.name] for record in records]

    def _tasks_for(self, records: Sequence[schemas.TaskRecord]) -> list[Task]:
        """The batch's tasks, created on first sight and never changed afterwards.

        Seed 003, "Scorers freeze at seed time": a task's scorer specs (and its other
        settings) are those of the first bundle that named it; later bundles naming the
        same task never change them.
        """
        wanted: dict[tuple[str, str, str], schemas.TaskRecord] = {}
        for record in records:
            key = task_key(record)
            if key not in self._tasks:
                wanted.setdefault(key, record)
        if wanted:
            names = {name for _, name, _ in wanted}
            found = {
                (task.source, task.name, task.checksum): task
                for task in Task.objects.filter(name__in=names)
            }
            new = [
                Task(
                    source=record.source,
                    name=record.name,
                    checksum=record.checksum,
                    **record.model_dump(exclude={"source", "name", "checksum"}),
                )
                for key, record in wanted.items()
                if key not in found
            ]
            Task.objects.bulk_create(new)
            found.update(((task.source, task.name, task.checksum), task) for task in new)
            self._tasks.update(found)
        return [self._tasks[task_key(record)] for record in records]

    def _write_batch(self, batch: Sequence[PreparedTrial]) -> list[WriteOutcome]:
        if not batch:
            return []
        jobs = self._jobs_for([p.job for p in batch])
        tasks = self._tasks_for([p.task for p in batch])
        existing = {
            (job_id, name): (pk, digest, fingerprint)
            for job_id, name, pk, digest, fingerprint in Trial.objects.filter(
                job__in={j.pk for j in jobs}, name__in={p.name for p in batch}
            ).values_list("job_id", "name", "pk", "content_digest", "source_fingerprint")
        }
        seen: set[tuple[int, str]] = set()
        outcomes: list[WriteOutcome | None] = [None] * len(batch)
        new: list[int] = []
        restamped: list[tuple[int, str, str]] = []
        for index, (prepared, job, task) in enumerate(zip(batch, jobs, tasks, strict=True)):
            key = (job.pk, prepared.name)
            if key in seen:
                # Retried one by one, where the second copy is "unchanged" or "updated".
                raise ValueError(f"trial {prepared.name!r} appears twice in one batch")
            seen.add(key)
            stored = existing.get(key)
            if stored is None:
                new.append(index)
                continue
            pk, digest, fingerprint = stored
            if digest != prepared.digest:
                bundle, new_digest = self._checked(prepared.load())
                if digest != earlier_digest(bundle):
                    trial = Trial.objects.select_related("task").get(pk=pk)
                    trial.source_fingerprint = prepared.fingerprint
                    self._update(trial, bundle, task, new_digest)
                    outcomes[index] = WriteOutcome("updated", job.name, prepared.name, pk)
                    continue
                restamped.append((pk, new_digest, prepared.fingerprint or fingerprint))
            elif prepared.fingerprint and prepared.fingerprint != fingerprint:
                restamped.append((pk, digest, prepared.fingerprint))
            outcomes[index] = WriteOutcome("unchanged", job.name, prepared.name, pk)

        if new:
            ids = self._insert(
                [batch[i] for i in new], [jobs[i] for i in new], [tasks[i] for i in new]
            )
            for index, pk in zip(new, ids, strict=True):
                outcomes[index] = WriteOutcome("ingested", jobs[index].name, batch[index].name, pk)
        if restamped:
            # Not changed, but touched (remember the folder as it is now, so the next run
            # skips it without reading) or stored with the earlier spelling of its digest.
            Trial.objects.bulk_update(
                [
                    Trial(pk=pk, content_digest=digest, source_fingerprint=fingerprint)
                    for pk, digest, fingerprint in restamped
                ],
                ["content_digest", "source_fingerprint"],
            )
        done = [o for o in outcomes if o is not None]
        for prepared, outcome in zip(batch, done, strict=True):
            if prepared.has_annotations:
                bundle_written.send(
                    sender=BundleWriter,
                    trial_id=outcome.trial_id,
                    bundle=prepared.load(),
                    status=outcome.status,
                )
        return done

    def _insert(
        self, batch: Sequence[PreparedTrial], jobs: Sequence[Job], tasks: Sequence[Task]
    ) -> list[int]:
        """New trials and their children: one INSERT (or COPY) per table; returns the ids."""
        inserter = RowInserter()
        job_ids = [job.pk for job in jobs]
        task_ids = [task.pk for task in tasks]
        rows = [p.trial for p in batch]
        reserved = inserter.reserve_ids(len(batch))
        if reserved is not None:
            inserter.insert(Trial, {"id": reserved, "job_id": job_ids, "task_id": task_ids}, rows)
            ids = reserved
        else:
            inserter.insert(Trial, {"job_id": job_ids, "task_id": task_ids}, rows)
            ids = self._ids_of(batch, job_ids)
        for model, (trial_ids, child_rows_) in child_links(ids, batch).items():
            inserter.insert(model, {"trial_id": trial_ids}, child_rows_)
        return ids

    @staticmethod
    def _ids_of(batch: Sequence[PreparedTrial], job_ids: Sequence[int]) -> list[int]:
        """The ids the database gave the trials just inserted: one SELECT per job."""
        names: dict[int, list[str]] = {}
        for prepared, job_id in zip(batch, job_ids, strict=True):
            names.setdefault(job_id, []).append(prepared.name)
        found: dict[tuple[int, str], int] = {}
        for job_id, job_names in names.items():
            found.update(
                ((job_id, name), pk)
                for name, pk in Trial.objects.filter(job_id=job_id, name__in=job_names)
                .order_by()
                .values_list("name", "pk")
            )
        return [found[(job_id, p.name)] for p, job_id in zip(batch, job_ids, strict=True)]

    def _update(self, trial: Trial, bundle: TrialBundle, task: Task, digest: str) -> None:
        """Changed artifacts: a new current result beside the old ones, the rest replaced."""
        for name, value in trial_columns_of(bundle).items():
            setattr(trial, name, value)
        trial.task = task
        trial.content_digest = digest
        TrialDetail.objects.update_or_create(
            trial=trial, defaults=column_values(bundle.trial, TrialDetail)
        )

        # DESIGN §3: a trial keeps every result it was ever ingested with; exactly one is
        # current. Demote first, then promote, so the partial unique index
        # (result_one_current_per_trial) never sees two current rows.
        now = timezone.now()
        stored = set(trial.results.values_list("artifact_digest", flat=True))
        current = bundle.current_result
        trial.results.filter(is_current=True).exclude(
            artifact_digest=current.artifact_digest
        ).update(is_current=False)
        trial.results.filter(artifact_digest=current.artifact_digest).update(is_current=True)
        rows = child_rows(bundle, trial, now)
        EvaluationResult.objects.bulk_create(
            [r for r in _of(rows, EvaluationResult) if r.artifact_digest not in stored]
        )
        # The judge may be asked again: verdicts accumulate, the latest is shown.
        known = {_verdict_key(v) for v in trial.judge_verdicts.all()}
        JudgeVerdict.objects.bulk_create(
            [v for v in _of(rows, JudgeVerdict) if _verdict_key(v) not in known]
        )
        # Scorers and error tags describe the current artifacts: replaced, not accumulated.
        trial.scorers.all().delete()
        ScorerResult.objects.bulk_create(_of(rows, ScorerResult))
        trial.error_tags.all().delete()
        ErrorTag.objects.bulk_create(_of(rows, ErrorTag))

        summary_fields = trial.refresh_summary()
        # Not a full save: human_judgment and annotation_count belong to the review app,
        # which may have changed them since this trial was read.
        trial.save(
            update_fields=[
                *TRIAL_FIELDS,
                "problem_count",
                "task",
                "content_digest",
                "source_fingerprint",
                *summary_fields,
                "updated_at",
            ]
        )


@dataclass(frozen=True)
class StoredTrial:
    """What is stored of a trial read from a folder: enough to call it unchanged."""

    pk: int
    name: str
    uid: UUID
    fingerprint: str

    def unchanged_if(self, fingerprint: str, job: str) -> WriteOutcome | None:
        """ "unchanged" when the folder still has the fingerprint stored with the trial."""
        if fingerprint != self.fingerprint:
            return None
        return WriteOutcome("unchanged", job, self.name, self.pk, uid=self.uid)


class StoredFingerprints:
    """The fingerprints stored for each job's trial folders, loaded once per job and run.

    Asked about a Harbor trial folder before it is read; the folder's fingerprint
    (`Folder.fingerprint`: names, sizes, modification times) is then taken where it is
    read, and when it equals the stored one the trial is "unchanged" without reading a
    file. Any difference (or no stored fingerprint) sends it down the full path, where the
    content digest decides.
    """

    def __init__(self, writer: BundleWriter) -> None:
        self.writer = writer
        self._jobs: dict[str, dict[str, StoredTrial]] = {}

    def stored(self, item: HarborTrialItem, job_option: str | None) -> StoredTrial | None:
        job = filed_under(item.job, job_option)
        stored = self._jobs.get(job.name)
        if stored is None:
            stored = self._jobs[job.name] = {
                path: StoredTrial(pk, name, uid, fingerprint)
                for path, pk, name, uid, fingerprint in Trial.objects.filter(job__name=job.name)
                .exclude(source_fingerprint="")
                .order_by()
                .values_list("source_path", "pk", "name", "uid", "source_fingerprint")
            }
            if stored:
                self.writer.refresh_job(job)
        return stored.get(item.folder.path)


def task_key(record: schemas.TaskRecord) -> tuple[str, str, str]:
    """What tells one task from another: the same key is the same stored task."""
    return (record.source, record.name, record.checksum)


def _refresh_job(job: Job, record: schemas.JobRecord) -> None:
    """A later bundle may know more about its job (e.g. finished_at); empty values never
    erase what is stored."""
    values = column_values(record, Job, exclude={"name"})
    changed = [name for name, value in values.items() if value and getattr(job, name) != value]
    for name in changed:
        setattr(job, name, values[name])
    if changed:
        job.save(update_fields=changed)


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
    }


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


def _of[M: models.Model](
    rows: dict[type[models.Model], list[models.Model]], model: type[M]
) -> list[M]:
    """`child_rows`' rows of one model, typed as that model."""
    return cast(list[M], rows[model])


def _verdict_key(v: JudgeVerdict) -> tuple[object, ...]:
    """Everything a verdict says: two verdicts differing in any of it are both kept."""
    return (
        v.verdict,
        v.task_completion,
        v.instruction_adherence,
        v.efficiency,
        v.failure_mode,
        v.reasoning,
        v.judge_model,
        v.scored_at,
        json.dumps(v.fact_checks, sort_keys=True),
        v.expected_outcome,
        v.raw_response,
    )


# Readable reasons for the database's refusals, by constraint name. Messages never echo
# the database's text: PostgreSQL's DETAIL quotes the offending values, which came from
# an agent under evaluation.
_CONSTRAINT_REASONS = {
    "trial_unique_name_per_job": "another trial in its job has the same name",
    "trial_reward_in_unit_range": "its reward is outside [0, 1]",
    "trial_scorer_mean_in_unit_range": "its scorer mean is outside [0, 1]",
    "task_pass_threshold_in_unit_range": "its task's pass_threshold is outside [0, 1]",
    "task_unique_source_name_checksum": "its task was created at the same time elsewhere",
    "result_reward_in_unit_range": "a result's reward is outside [0, 1]",
    "result_unparseable_output_has_zero_reward": (
        "a result gives a non-zero reward to output that does not parse"
    ),
    "result_one_current_per_trial": "it has more than one current result",
    "result_unique_digest_per_trial": "two of its results have the same artifact digest",
    "scorer_score_in_unit_range": "a scorer's score is outside [0, 1]",
    "scorer_verdict_valid": "a scorer's verdict is not PASS, FAIL or N/A",
    "scorer_unique_position": "two scorers share a position",
    "judge_verdict_valid": "a judge verdict is not PASS, FAIL or UNPARSEABLE",
    "judge_rubric_complete_unless_unparseable": "a PASS or FAIL judge verdict lacks a rubric score",
    "judge_task_completion_1_to_5": "a judge's task_completion is not 1-5",
    "judge_instruction_adherence_1_to_5": "a judge's instruction_adherence is not 1-5",
    "judge_efficiency_1_to_5": "a judge's efficiency is not 1-5",
}


def _db_reason(exc: Exception) -> str:
    if not isinstance(exc, DatabaseError):
        return str(exc)[:300]  # our own ValueError, written for people
    text = str(exc)
    # SQLite: "UNIQUE constraint failed: rewards_trial.uid"; PostgreSQL names the index
    # rewards_trial_uid_key (or …_uniq).
    if "rewards_trial.uid" in text or "rewards_trial_uid" in text:
        return "its uid is already used by a trial in another job"
    for constraint, reason in _CONSTRAINT_REASONS.items():
        if constraint in text:
            return reason
    return f"the database refused it ({type(exc).__name__})"
