"""The one writer: stores `TrialBundle`s, atomically per trial and idempotently.

Every reader (Harbor folder, contract directory, JSONL line, API body) produces bundles;
this module is the only place that stores them. New trials are written in bulk,
a batch in one transaction, with a number of queries that does not grow with the batch;
if anything in a batch fails, the batch is rolled back and written again one trial per
transaction, so a bad trial never takes good ones with it and is never left half-written.
Rows come prepared (`prepared`); `RowInserter` inserts them: `COPY` on PostgreSQL, one
`executemany` per table elsewhere.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from typing import Any, cast

from django.db import connection, models, transaction
from django.dispatch import Signal
from django.utils import timezone

from rewards import schemas
from rewards.cache import forget_job_choices
from rewards.ingest.copytext import Row, column_plan, copy_value, stamp_fields
from rewards.ingest.digest import as_stored, earlier_digest
from rewards.ingest.discover import HarborTrialItem, filed_under
from rewards.ingest.mapping import (
    CHILD_MODELS,
    TRIAL_FIELDS,
    child_rows,
    task_key,
    trial_columns_of,
)
from rewards.ingest.outcomes import WRITE_ERRORS, StoredTrial, WriteOutcome, db_reason
from rewards.ingest.prepared import PreparedTrial, prepare_or_refuse
from rewards.integrity.store import sync_findings
from rewards.models import (
    ErrorTag,
    EvaluationResult,
    IntegrityFinding,
    Job,
    JudgeVerdict,
    ScorerResult,
    Task,
    Trial,
    TrialDetail,
    column_values,
)
from rewards.schemas import TrialBundle

log = logging.getLogger(__name__)

# Sent inside the trial's transaction for every bundle that carries annotations, step
# comments, finding reviews or ledger entries (`TrialBundle.carries_review_records`),
# whatever its status (`status` is passed along), so a receiver's rows (the
# review app stores them) commit or roll back with the trial. The content digest leaves
# them out, so an "unchanged" bundle may still bring new ones: receivers must skip those
# they already hold.
bundle_written = Signal()


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
        return self.write_prepared([prepare_or_refuse(b) for b in bundles])

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
            except WRITE_ERRORS as exc:
                reason = db_reason(exc)
            except Exception as exc:  # a bug must not lose the other trials
                log.exception("could not store %s/%s", prepared.job.name, prepared.name)
                reason = f"could not be stored ({type(exc).__name__})"
            self._forget_cached_rows()
            outcomes.append(
                WriteOutcome(
                    "invalid", prepared.job.name, prepared.name, reason=reason, where=prepared.where
                )
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
                bundle, new_digest = as_stored(prepared.load())
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
            if any(jobs[i].finished_at is not None for i in new):
                # The job choices keep a finished job's trial count (review.choices).
                forget_job_choices()
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
        # Findings a person settled stay; the others follow the new trajectory.
        sync_findings(trial, [f.key for f in _of(rows, IntegrityFinding)])

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


def _refresh_job(job: Job, record: schemas.JobRecord) -> None:
    """A later bundle may know more about its job (e.g. finished_at); empty values never
    erase what is stored."""
    values = column_values(record, Job, exclude={"name"})
    changed = [name for name, value in values.items() if value and getattr(job, name) != value]
    for name in changed:
        setattr(job, name, values[name])
    if changed:
        job.save(update_fields=changed)


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
        v.rubric_version,
        json.dumps(v.request_settings, sort_keys=True),
    )


# --- inserting -------------------------------------------------------------------------------
def reserve_trial_ids(n: int) -> list[int]:
    """`n` trial ids taken from the sequence (PostgreSQL), so children can point at their
    trial without reading ids back after a COPY; safe beside concurrent writers."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [Trial._meta.db_table, n],
        )
        return [row[0] for row in cursor.fetchall()]


class RowInserter:
    """Inserts prepared rows, table by table, in the current transaction."""

    def __init__(self) -> None:
        self.copy = connection.vendor == "postgresql"

    def reserve_ids(self, n: int) -> list[int] | None:
        """Trial ids for `n` new trials when the database hands them out up front
        (PostgreSQL); None elsewhere (the writer reads them back)."""
        return reserve_trial_ids(n) if self.copy and n else None

    def insert(
        self,
        model: type[models.Model],
        links: dict[str, Sequence[Any]],
        rows: Sequence[Row],
    ) -> None:
        """Rows of `model`, each with its link columns (`links`: column → one value a row)
        and the moment of this insert in its `auto_now` columns."""
        if not rows:
            return
        stamps = stamp_fields(model)
        names = [*links, *(f.attname for f in stamps), *(a for a, _, _ in column_plan(model))]
        now = timezone.now()
        moment = [f.get_db_prep_save(now, connection) for f in stamps]
        linked = zip(*links.values(), strict=True)
        quote = connection.ops.quote_name
        table = quote(model._meta.db_table)
        cols = ", ".join(quote(name) for name in names)  # attname is the column here
        with connection.cursor() as cursor:
            if self.copy:
                sql = f"COPY {table} ({cols}) FROM STDIN"
                head = "".join(f"{copy_value(v)}\t" for v in moment).encode()
                # One format a line: the link ids, the insert's moment, the prepared row.
                line = b"%d\t" * len(links) + head.replace(b"%", b"%%") + b"%b\n"
                data = b"".join(
                    [
                        line % (*link, cast(bytes, row))
                        for link, row in zip(linked, rows, strict=True)
                    ]
                )
                # psycopg's errors raised as Django's (IntegrityError…), as for an execute.
                with connection.wrap_database_errors, cursor.copy(sql) as copy:
                    copy.write(data)
                return
            params = [(*link, *moment, *row) for link, row in zip(linked, rows, strict=True)]
            marks = ", ".join(["%s"] * len(names))
            # Table and column names come from the models, never from input.
            sql = f"INSERT INTO {table} ({cols}) VALUES ({marks})"  # noqa: S608
            cursor.executemany(sql, params)


def child_links(
    trial_ids: Iterable[int], prepared: Sequence[PreparedTrial]
) -> dict[type[models.Model], tuple[list[int], list[Row]]]:
    """Every child row of the prepared trials, by model, with the trial id of each."""
    out: dict[type[models.Model], tuple[list[int], list[Row]]] = {
        model: ([], []) for model in CHILD_MODELS
    }
    for trial_id, p in zip(trial_ids, prepared, strict=True):
        for model in CHILD_MODELS:
            rows = p.children.get(model._meta.label, ())
            ids, kept = out[model]
            ids.extend([trial_id] * len(rows))
            kept.extend(rows)
    return out
