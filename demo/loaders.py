"""The loaders behind `seed_demo`: the generated trials into the database, two ways.

- `seed_with_writer`: `TrialBundle`s stored by the one writer (`BundleWriter.write_many`), which
  validates them and applies the seed's rules. The default for moderate sizes.
- `seed_fast`: the same trials inserted as rows directly (PostgreSQL `COPY`, `bulk_create`
  elsewhere), for a million trials. Trial *contents* come from a bounded set of archetypes (the
  first trials generated, one set per agent profile); each trial gets its own name, uid and
  times. Summary columns are computed by the domain code (`summary_of`, `rules`), never here.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, models, transaction
from django.db.models import Avg, Count, Q
from django.utils import timezone

from demo.catalogue import short_name
from demo.generator import DemoGenerator
from demo.plan import DemoError, DemoPlan, JobPlan, ProgressFn, SeedReport, iso
from rewards.ingest.copytext import copy_escape, copy_text, json_text
from rewards.ingest.mapping import child_rows, finding_rows, summary_of, trial_columns_of
from rewards.ingest.writer import BundleWriter, reserve_trial_ids
from rewards.models import (
    ErrorTag,
    EvaluationResult,
    Integrity,
    IntegrityFinding,
    Job,
    JudgeVerdict,
    ScorerResult,
    Task,
    Trial,
    TrialDetail,
)

# Above this many trials the command takes the fast path: generating, validating, digesting
# and writing a full-size bundle costs ~5-7 ms a trial on PostgreSQL (about 65 s for 10,000),
# fine for a demo, slow for a benchmark database. The fast path stores the same rows.
FAST_THRESHOLD = 5_000
# Distinct trial contents per agent profile on the fast path. Large enough that the explorer
# shows thousands of different rewards and texts; small enough to build in a few seconds.
ARCHETYPES_PER_PROFILE = 512


# --- the writer path ------------------------------------------------------------------------------
def seed_with_writer(
    plan: DemoPlan,
    *,
    compact: bool = False,
    batch_size: int = 500,
    progress: ProgressFn | None = None,
) -> SeedReport:
    """Store every trial as a `TrialBundle` through the one writer."""
    generator = DemoGenerator(plan, compact=compact)
    writer = BundleWriter(batch_size=batch_size)
    report = SeedReport(path="writer")
    tasks_before = Task.objects.count()
    jobs_before = Job.objects.count()
    for start in range(0, plan.trials, batch_size):
        indices = range(start, min(plan.trials, start + batch_size))
        outcomes = writer.write_many(list(generator.bundles(indices)))
        for outcome in outcomes:
            if outcome.status == "ingested":
                report.trials += 1
            elif outcome.status == "unchanged":
                report.unchanged += 1
            elif outcome.status == "updated":
                report.updated += 1
            elif outcome.status == "invalid":
                report.invalid.append(f"{outcome.job}/{outcome.trial}: {outcome.reason}")
        if progress:
            progress(len(indices))
    refresh_job_stats([job.name for job in plan.jobs])
    report.jobs = Job.objects.count() - jobs_before
    report.tasks = Task.objects.count() - tasks_before
    return report


def refresh_job_stats(job_names: Sequence[str]) -> None:
    """Harbor-like job stats (n_trials, n_errors, per agent and dataset means), from the rows."""
    rows = (
        Trial.objects.filter(job__name__in=job_names)
        .values("job_id", "agent_name", "task__source")
        .annotate(
            n=Count("id"),
            errors=Count("id", filter=~Q(exception_type="")),
            mean=Avg("reward"),
        )
        .order_by()
    )
    stats: dict[int, dict[str, Any]] = {}
    for row in rows:
        job_stats = stats.setdefault(row["job_id"], {"n_trials": 0, "n_errors": 0, "evals": {}})
        job_stats["n_trials"] += row["n"]
        job_stats["n_errors"] += row["errors"]
        job_stats["evals"][f"{row['agent_name']}__{row['task__source']}"] = {
            "n_trials": row["n"],
            "n_errors": row["errors"],
            "metrics": [{"mean": round(row["mean"] or 0.0, 4)}],
        }
    for job in Job.objects.filter(pk__in=list(stats)):
        job.stats = stats[job.pk]
        job.save(update_fields=["stats"])


# --- the fast path ------------------------------------------------------------------------------
@dataclass
class _ChildRow:
    values: dict[str, Any]  # attname → value for the constant columns
    moment: datetime | None  # the row's time column, moved with the trial
    text: str = ""  # COPY text of the constant columns


@dataclass(frozen=True)
class _Chunk:
    job: Job
    plan: JobPlan
    indices: range


@dataclass
class _Archetype:
    """A built trial whose content is reused, with its own identity and times, by others."""

    slot: datetime
    task_id: int
    task_short: str
    trial_values: dict[str, Any]
    trial_text: str
    started: datetime | None
    finished: datetime | None
    timings: dict[str, dict[str, datetime]]  # parsed once, moved per trial
    children: dict[type[models.Model], list[_ChildRow]]


_TRIAL_IDENTITY = (
    "id",
    "job_id",
    "name",
    "uid",
    "started_at",
    "finished_at",
    "timings",
    "updated_at",
)
_TIME_FIELD: dict[type[models.Model], str | None] = {
    TrialDetail: None,
    EvaluationResult: "created_at",
    ScorerResult: None,
    JudgeVerdict: "scored_at",
    ErrorTag: None,
    IntegrityFinding: None,
}


def _const_fields(model: type[models.Model], skip: Iterable[str]) -> list[models.Field[Any, Any]]:
    skipped = set(skip)
    return [
        f for f in model._meta.concrete_fields if not f.primary_key and f.attname not in skipped
    ]


def _column(f: models.Field[Any, Any]) -> str:
    assert f.column, f"{f.name} has no column"  # concrete fields always have one
    return f.column


def _copy_row(values: dict[str, Any], fields: Sequence[models.Field[Any, Any]]) -> str:
    """COPY text of `fields`, JSON columns spelled as the writer spells them."""
    return copy_text(
        json_text(values[f.attname])
        if isinstance(f, models.JSONField) and values[f.attname] is not None
        else values[f.attname]
        for f in fields
    )


class FastLoader:
    """Inserts demo trials as rows, in chunks of `chunk` trials, one transaction each.

    Each profile's first `archetypes` trials are generated in full, through the same
    pydantic models and row helpers as the writer, and their summary is computed by
    `summary_of`; later trials reuse an archetype's content with their own name, uid and
    times, so a million trials cost a million small string joins rather than a million
    bundles. On PostgreSQL rows go in with COPY; elsewhere with bulk_create.
    """

    def __init__(
        self,
        plan: DemoPlan,
        *,
        archetypes: int = ARCHETYPES_PER_PROFILE,
        chunk: int = 10_000,
        progress: ProgressFn | None = None,
    ) -> None:
        self.plan = plan
        self.generator = DemoGenerator(plan, compact=True)
        self.n_archetypes = archetypes
        self.chunk = chunk
        self.progress = progress
        self.use_copy = connection.vendor == "postgresql"
        self._archetypes: dict[tuple[int, int], _Archetype] = {}
        self._now = timezone.now()
        self._tasks: dict[tuple[str, str, str], Task] = {}
        self._trial_fields = _const_fields(Trial, _TRIAL_IDENTITY)
        self._child_fields = {
            model: _const_fields(model, ["trial_id", *([t] if t else [])])
            for model, t in _TIME_FIELD.items()
        }
        # COPY column lists, in the order `_copy_lines` writes the values.
        self._columns: dict[type[models.Model], list[str]] = {
            Trial: [*_TRIAL_IDENTITY, *(_column(f) for f in self._trial_fields)]
        }
        for model, time_field in _TIME_FIELD.items():
            self._columns[model] = [
                "trial_id",
                *([time_field] if time_field else []),
                *(_column(f) for f in self._child_fields[model]),
            ]

    def run(self) -> SeedReport:
        plan = self.plan
        clash = list(
            Job.objects.filter(name__in=[j.name for j in plan.jobs]).values_list("name", flat=True)
        )
        if clash:
            raise DemoError(
                f"{len(clash)} demo job(s) already exist (e.g. {clash[0]}): this seed was loaded "
                "before. Use another --seed, or --if-empty."
            )
        report = SeedReport(path="fast (COPY)" if self.use_copy else "fast (bulk_create)")
        tasks_before = Task.objects.count()
        self._create_tasks()
        jobs = self._create_jobs()
        report.tasks = Task.objects.count() - tasks_before
        report.jobs = len(jobs)
        chunks = [
            _Chunk(jobs[job_plan.name], job_plan, range(start, min(end, start + self.chunk)))
            for job_plan in plan.jobs
            for end in [job_plan.first_trial + job_plan.n_trials]
            for start in range(job_plan.first_trial, end, self.chunk)
        ]
        if self.use_copy:
            self._run_copy(chunks, report)
        else:
            for chunk in chunks:
                with transaction.atomic():
                    self._bulk_chunk(chunk)
                self._advance(report, len(chunk.indices))
        refresh_job_stats([j.name for j in plan.jobs])
        return report

    def _advance(self, report: SeedReport, n: int) -> None:
        report.trials += n
        if self.progress:
            self.progress(n)

    # -- jobs, tasks, archetypes ---------------------------------------------------------------
    def _create_tasks(self) -> None:
        for record in self.plan.tasks:
            # As the writer does: a task is created once and never changed (seed 003).
            task, _ = Task.objects.get_or_create(
                source=record.source,
                name=record.name,
                checksum=record.checksum,
                defaults=record.model_dump(exclude={"source", "name", "checksum"}),
            )
            self._tasks[(record.source, record.name, record.checksum)] = task

    def _create_jobs(self) -> dict[str, Job]:
        created = Job.objects.bulk_create(
            [
                Job(
                    name=j.name,
                    started_at=j.started_at,
                    finished_at=j.finished_at,
                    config=j.config(),
                    stats={},
                )
                for j in self.plan.jobs
            ]
        )
        if any(job.pk is None for job in created):  # backends that return no keys
            return {
                job.name: job
                for job in Job.objects.filter(name__in=[j.name for j in self.plan.jobs])
            }
        return {job.name: job for job in created}

    def _archetype(self, i: int, job_plan: JobPlan) -> _Archetype:
        key = (job_plan.profile_index, i % self.n_archetypes)
        found = self._archetypes.get(key)
        if found is None:
            found = self._build_archetype(i)
            self._archetypes[key] = found
        return found

    def _build_archetype(self, i: int) -> _Archetype:
        bundle = self.generator.trial(i).bundle
        results = [r.checked() for r in bundle.results]
        bundle = bundle.model_copy(update={"results": results})
        record = bundle.task
        task = self._tasks[(record.source, record.name, record.checksum)]
        # The writer's own mapping, summary and child rows, so a fast-path trial is the row
        # the writer would have stored.
        trial = Trial(
            task=task,
            name=bundle.trial.name,
            uid=bundle.trial.uid,
            **trial_columns_of(bundle),
        )
        trial.apply_summary(summary_of(bundle, bundle.current_result))
        trial.integrity = Integrity.of(IntegrityFinding.Status.OPEN for _ in finding_rows(bundle))
        trial_values = {f.attname: getattr(trial, f.attname) for f in self._trial_fields}
        children = child_rows(bundle, trial, self._now)
        rows: dict[type[models.Model], list[_ChildRow]] = {}
        for model, instances in children.items():
            fields = self._child_fields[model]
            time_field = _TIME_FIELD[model]
            rows[model] = []
            for instance in instances:
                values = {f.attname: getattr(instance, f.attname) for f in fields}
                moment = getattr(instance, time_field) if time_field else None
                text = _copy_row(values, fields) if self.use_copy else ""
                rows[model].append(_ChildRow(values, moment, text))
        return _Archetype(
            slot=self.plan.slot(i),
            task_id=task.pk,
            task_short=short_name(record.name),
            trial_values=trial_values,
            trial_text=_copy_row(trial_values, self._trial_fields) if self.use_copy else "",
            started=trial.started_at,
            finished=trial.finished_at,
            timings={
                phase: {key: datetime.fromisoformat(value) for key, value in times.items()}
                for phase, times in bundle.trial.timings.items()
            },
            children=rows,
        )

    # -- per-trial identity -------------------------------------------------------------------
    def _identity(self, i: int, arch: _Archetype) -> tuple[str, uuid.UUID, timedelta]:
        name = f"{arch.task_short}__{self.plan.suffix(i)}"
        return name, self.plan.uid(i), self.plan.slot(i) - arch.slot

    @staticmethod
    def _timings(arch: _Archetype, delta: timedelta) -> dict[str, dict[str, str]]:
        return {
            phase: {key: iso(moment + delta) for key, moment in times.items()}
            for phase, times in arch.timings.items()
        }

    # -- PostgreSQL: COPY ------------------------------------------------------------------------
    def _run_copy(self, chunks: Sequence[_Chunk], report: SeedReport) -> None:
        """Pipelined: a worker thread builds chunk k+1's COPY text while chunk k streams in.

        The worker never touches the database (trial ids are reserved here, before it
        starts), and psycopg releases the GIL while it waits on the server, so building and
        loading overlap. Each chunk commits on its own: a failure keeps the chunks before it.
        """
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="seed-demo") as pool:

            def submit(chunk: _Chunk) -> Future[dict[type[models.Model], list[str]]]:
                ids = reserve_trial_ids(len(chunk.indices))
                return pool.submit(self._copy_lines, chunk, ids)

            pending = submit(chunks[0]) if chunks else None
            for k, chunk in enumerate(chunks):
                assert pending is not None
                lines = pending.result()
                pending = submit(chunks[k + 1]) if k + 1 < len(chunks) else None
                with transaction.atomic(), connection.cursor() as cursor:
                    # Demo rows: losing the last chunk in a crash is harmless; waiting for the
                    # WAL flush on every commit is not.
                    cursor.execute("SET LOCAL synchronous_commit TO OFF")
                    for model, model_lines in lines.items():
                        self._copy(cursor, model._meta.db_table, self._columns[model], model_lines)
                self._advance(report, len(chunk.indices))

    def _copy_lines(self, chunk: _Chunk, ids: Sequence[int]) -> dict[type[models.Model], list[str]]:
        """COPY text for one chunk: every table, in `self._columns` order."""
        now = self._now.isoformat()
        job_id = chunk.job.pk
        trial_lines: list[str] = []
        lines: dict[type[models.Model], list[str]] = {Trial: trial_lines}
        lines.update((model, []) for model in _TIME_FIELD)
        for trial_id, i in zip(ids, chunk.indices, strict=True):
            arch = self._archetype(i, chunk.plan)
            name, uid, delta = self._identity(i, arch)
            started = (arch.started + delta).isoformat() if arch.started else r"\N"
            finished = (arch.finished + delta).isoformat() if arch.finished else r"\N"
            timings = copy_escape(json.dumps(self._timings(arch, delta)))
            trial_lines.append(
                f"{trial_id}\t{job_id}\t{name}\t{uid}\t{started}\t{finished}\t{timings}\t"
                f"{now}\t{arch.trial_text}\n"
            )
            for model, rows in arch.children.items():
                model_lines = lines[model]
                if _TIME_FIELD[model]:
                    for row in rows:
                        moment = (row.moment + delta).isoformat() if row.moment else r"\N"
                        model_lines.append(f"{trial_id}\t{moment}\t{row.text}\n")
                else:
                    model_lines.extend(f"{trial_id}\t{row.text}\n" for row in rows)
        return lines

    @staticmethod
    def _copy(cursor: Any, table: str, columns: Sequence[str], lines: list[str]) -> None:
        if not lines:
            return
        quote = connection.ops.quote_name
        sql = f"COPY {quote(table)} ({', '.join(quote(c) for c in columns)}) FROM STDIN"
        with cursor.copy(sql) as copy:
            # Write in pieces of about 8 MB: one huge string would double peak memory.
            for start in range(0, len(lines), 2_000):
                copy.write("".join(lines[start : start + 2_000]))

    # -- any other database: bulk_create ---------------------------------------------------------
    def _bulk_chunk(self, chunk: _Chunk) -> None:
        trials: list[Trial] = []
        archetypes: list[tuple[_Archetype, timedelta]] = []
        for i in chunk.indices:
            arch = self._archetype(i, chunk.plan)
            name, uid, delta = self._identity(i, arch)
            trials.append(
                Trial(
                    job=chunk.job,
                    name=name,
                    uid=uid,
                    started_at=arch.started + delta if arch.started else None,
                    finished_at=arch.finished + delta if arch.finished else None,
                    timings=self._timings(arch, delta),
                    **arch.trial_values,
                )
            )
            archetypes.append((arch, delta))
        Trial.objects.bulk_create(trials, batch_size=2_000)
        children: dict[type[models.Model], list[models.Model]] = {m: [] for m in _TIME_FIELD}
        for trial, (arch, delta) in zip(trials, archetypes, strict=True):
            for model, rows in arch.children.items():
                time_field = _TIME_FIELD[model]
                for row in rows:
                    values = dict(row.values)
                    if time_field:
                        values[time_field] = row.moment + delta if row.moment else None
                    children[model].append(model(trial_id=trial.pk, **values))
        for model, instances in children.items():
            model._default_manager.bulk_create(instances, batch_size=2_000)


def seed_fast(
    plan: DemoPlan,
    *,
    archetypes: int = ARCHETYPES_PER_PROFILE,
    chunk: int = 10_000,
    progress: ProgressFn | None = None,
) -> SeedReport:
    return FastLoader(plan, archetypes=archetypes, chunk=chunk, progress=progress).run()
