"""Exports of the explorer's current filter: CSV, JSONL, Parquet, and annotations.

Every export streams: rows are produced a chunk at a time, so memory stays flat however many
trials match. One column list (`trial_columns`) drives CSV and Parquet, so both carry the
same rows and columns; JSONL writes whole `TrialBundle`s, lossless.

CSV cells are formatted in SQL, which lets PostgreSQL stream them with `COPY … TO STDOUT`
(the fastest way out of the database); other databases run the same SELECT and Python
writes the rows. Text cells that a spreadsheet would execute (starting with `=`, `+`, `-`,
`@`, tab or carriage return) get a leading `'`, in SQL too (OWASP's advice for CSV
injection); Parquet keeps values as they are, typed.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import (
    Case,
    CharField,
    Exists,
    F,
    FilteredRelation,
    Func,
    OuterRef,
    Q,
    QuerySet,
    StringAgg,
    Subquery,
    TextField,
    Value,
    When,
)
from django.db.models.functions import Cast

from review import defects
from review.models import Annotation, DefectEntry, FindingReview, StepComment
from rewards.export import iter_trial_chunks, trial_bundle
from rewards.models import Integrity, IntegrityFinding, Trial
from rewards.schemas import (
    Annotation as AnnotationRecord,
    DefectEntry as DefectEntryRecord,
    FindingReview as FindingReviewRecord,
    StepComment as StepCommentRecord,
    TrialBundle,
)

# The export's rows: one tuple of cell values per trial.
RowsQuerySet = QuerySet[Trial, tuple[Any, ...]]

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def neutralise(text: str) -> str:
    """A cell a spreadsheet would run as a formula, made inert with a leading quote."""
    return f"'{text}" if text.startswith(FORMULA_PREFIXES) else text


class OneArgFunc(Func):
    """A one-argument Func whose template may name the argument several times.

    Each mention is a copy of the argument's SQL, so its query parameters repeat with it.
    """

    def as_sql(
        self,
        compiler: Any,
        connection: Any,
        function: Any = None,
        template: str | None = None,
        arg_joiner: Any = None,
        **extra_context: Any,
    ) -> Any:
        template = template or self.template
        sql, params = super().as_sql(
            compiler, connection, function, template, arg_joiner, **extra_context
        )
        return sql, tuple(params) * template.count("%(expressions)s")


class Neutralised(OneArgFunc):
    """`neutralise` in SQL, for the cells PostgreSQL's COPY writes without Python."""

    template = (
        "CASE WHEN SUBSTR(%(expressions)s, 1, 1) IN ('=', '+', '-', '@', '\t', '\r') "
        "THEN '''' || %(expressions)s ELSE %(expressions)s END"
    )
    output_field = TextField()


class IsoUtc(OneArgFunc):
    """A timestamp as ISO 8601 text in UTC, the same spelling on both databases."""

    output_field = CharField()
    template = "%(expressions)s"

    def as_postgresql(self, compiler: Any, connection: Any, **extra_context: Any) -> Any:
        return self.as_sql(
            compiler,
            connection,
            template=(
                "to_char(%(expressions)s AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
            ),
            **extra_context,
        )

    def as_sqlite(self, compiler: Any, connection: Any, **extra_context: Any) -> Any:
        # Django keeps SQLite datetimes as UTC text, microseconds optional.
        return self.as_sql(
            compiler,
            connection,
            template=(
                "replace(substr(%(expressions)s, 1, 19), ' ', 'T') || '.' || "
                "substr(coalesce(substr(%(expressions)s, 21, 6), '') || '000000', 1, 6) || 'Z'"
            ),
            **extra_context,
        )


class UuidText(OneArgFunc):
    """A UUID in its usual dashed spelling (SQLite keeps UUIDs as 32 hex digits)."""

    output_field = CharField()
    template = "CAST(%(expressions)s AS TEXT)"

    def as_sqlite(self, compiler: Any, connection: Any, **extra_context: Any) -> Any:
        parts = " || '-' || ".join(
            f"substr(%(expressions)s, {start}, {length})"
            for start, length in ((1, 8), (9, 4), (13, 4), (17, 4), (21, 12))
        )
        return self.as_sql(compiler, connection, template=parts, **extra_context)


def _bool_text(expression: Any) -> Case:
    return Case(
        When(Q(**{expression: True}), then=Value("true")),
        When(Q(**{expression: False}), then=Value("false")),
        default=None,
        output_field=CharField(),
    )


@dataclass(frozen=True)
class Column:
    """One export column: its typed value, its CSV text, and what it means."""

    name: str
    value: Any  # field path or ORM expression giving the typed value
    kind: str  # str | int | float | bool | datetime | json | uuid
    doc: str
    text: Any = None  # CSV expression; derived from `value` and `kind` when None

    def csv_expression(self) -> Any:
        if self.text is not None:
            return self.text
        value = _typed(self)
        if self.kind == "str":
            return Neutralised(value)
        if self.kind == "bool":
            assert isinstance(self.value, str)
            return _bool_text(self.value)
        if self.kind == "datetime":
            return IsoUtc(value)
        if self.kind == "uuid":
            return UuidText(value)
        if self.kind == "json":
            return Neutralised(Cast(value, TextField()))
        return value


BASE_COLUMNS: tuple[Column, ...] = (
    Column("trial_id", "id", "int", "Trialdesk's id of the trial (the /trials/<id>/ page)"),
    Column("trial_uid", "uid", "uuid", "the trial's UUID (Harbor's id)"),
    Column("job", "job__name", "str", "job (evaluation run) name"),
    Column("task_source", "task__source", "str", "dataset the task comes from"),
    Column("task", "task__name", "str", "task name"),
    Column("trial", "name", "str", "trial name, unique within its job"),
    Column("agent", "agent_name", "str", "agent name"),
    Column("agent_version", "agent_version", "str", "agent version"),
    Column("model", "model_name", "str", "model name"),
    Column("model_provider", "model_provider", "str", "model provider"),
    Column("status", "status", "str", "pending, running, completed, failed or cancelled"),
    Column("started_at", "started_at", "datetime", "trial start, UTC"),
    Column("finished_at", "finished_at", "datetime", "trial end, UTC"),
    Column("n_input_tokens", "n_input_tokens", "int", "input tokens"),
    Column("n_cache_tokens", "n_cache_tokens", "int", "cached input tokens"),
    Column("n_output_tokens", "n_output_tokens", "int", "output tokens"),
    Column("cost_usd", "cost_usd", "float", "cost in US dollars"),
    Column("reward", "reward", "float", "the verifier's reward, 0 to 1 (after validation)"),
    Column("pass_threshold", "task__pass_threshold", "float", "the task's pass threshold"),
    Column("metrics", "current__metrics", "json", "the other numeric keys of reward.json"),
    Column("is_valid", "is_valid", "bool", "output parses, verifier completed, no errors"),
    Column("output_parseable", "current__output_parseable", "bool", "validity gate flag"),
    Column("schema_valid", "current__schema_valid", "bool", "validity gate flag"),
    Column("verifier_completed", "current__verifier_completed", "bool", "validity gate flag"),
    Column("validity_errors", "current__errors", "json", "the validity errors, a JSON list"),
    Column("scorers_overall", "scorer_verdict", "str", "PASS, FAIL, or empty without scorers"),
    Column("scorers_mean", "scorer_mean", "float", "mean score of the applicable scorers"),
    Column("judge_verdict", "judge_verdict", "str", "PASS, FAIL, UNPARSEABLE or empty"),
    Column("judge_task_completion", "judge_task_completion", "int", "rubric tile 1 to 5"),
    Column(
        "judge_instruction_adherence", "judge_instruction_adherence", "int", "rubric tile 1 to 5"
    ),
    Column("judge_efficiency", "judge_efficiency", "int", "rubric tile 1 to 5"),
    Column("failure_mode", "failure_mode", "str", "the judge's failure_mode on FAIL"),
    Column("run_badge", "run_badge", "str", "PASS when the run completed cleanly"),
    Column("gate_disagreement", "gate_disagreement", "str", "the named gate disagreement"),
    Column("exception_type", "exception_type", "str", "exception the run ended with"),
    Column("error_categories", "error_categories", "str", "error tag categories, '; '-joined"),
    Column("annotation_count", "annotation_count", "int", "number of annotations"),
    Column("human_consensus", "human_judgment", "str", "pass, fail, defer, mixed or empty"),
    Column("human_disagreement", "human_disagreement", "str", "humans vs the automated outcome"),
    Column(
        "integrity",
        "integrity",
        "str",
        "reward-integrity findings: flagged, confirmed, dismissed or empty (none)",
    ),
    Column(
        "confirmed_findings",
        # Read only for the few confirmed trials: every other row takes the empty text.
        Case(
            When(
                integrity=Integrity.CONFIRMED,
                then=Subquery(
                    IntegrityFinding.objects.filter(
                        trial=OuterRef("pk"), status=IntegrityFinding.Status.CONFIRMED
                    )
                    .order_by()
                    .values("trial")
                    # No ORDER BY inside the aggregate: SQLite before 3.44 has none.
                    .annotate(names=StringAgg("detector", Value("; ")))
                    .values("names")[:1]
                ),
            ),
            default=Value(""),
            output_field=CharField(),
        ),
        "str",
        "the detectors of the confirmed findings, '; '-joined (the reward is unchanged)",
    ),
)
REVIEWER_PREFIX = "reviewer:"


def reviewers_for(queryset: QuerySet[Trial]) -> list[User]:
    """Everyone who annotated a trial of the export, in a stable order (their column order)."""
    return list(
        User.objects.filter(
            Exists(Annotation.objects.filter(reviewer=OuterRef("pk"), trial__in=queryset))
        ).order_by("username", "id")
    )


def trial_columns(reviewers: Iterable[User]) -> list[Column]:
    """The base columns, then each reviewer's latest judgment in a column of its own."""
    columns = list(BASE_COLUMNS)
    for reviewer in reviewers:
        latest = Subquery(
            Annotation.objects.filter(trial=OuterRef("pk"), reviewer=reviewer)
            .order_by("-created_at", "-id")
            .values("judgment")[:1]
        )
        columns.append(
            Column(
                f"{REVIEWER_PREFIX}{reviewer.username}",
                latest,
                "str",
                "this reviewer's latest judgment",
            )
        )
    return columns


def _rows_queryset(queryset: QuerySet[Trial], columns: list[Column], as_text: bool) -> RowsQuerySet:
    aliases = {
        f"c{i}": (c.csv_expression() if as_text else _typed(c)) for i, c in enumerate(columns)
    }
    return (
        queryset.alias(current=FilteredRelation("results", condition=Q(results__is_current=True)))
        .annotate(**aliases)
        .values_list(*aliases)
    )


def export_rows(queryset: QuerySet[Trial], *, as_text: bool) -> RowsQuerySet:
    """The export's one SELECT: CSV text cells, or typed values (Parquet, the benchmark)."""
    return _rows_queryset(queryset, trial_columns(reviewers_for(queryset)), as_text)


def export_select(queryset: QuerySet[Trial], *, as_text: bool) -> tuple[str, tuple[Any, ...]]:
    sql, params = export_rows(queryset, as_text=as_text).query.sql_with_params()
    return sql, tuple(params)


def _typed(column: Column) -> Any:
    return F(column.value) if isinstance(column.value, str) else column.value


def csv_header(columns: list[Column]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer).writerow([neutralise(c.name) for c in columns])
    return buffer.getvalue()


def iter_csv(queryset: QuerySet[Trial], chunk: int = 2000) -> Iterator[bytes]:
    """The CSV export, as byte chunks: header first, then the rows."""
    columns = trial_columns(reviewers_for(queryset))
    yield csv_header(columns).encode()
    rows = _rows_queryset(queryset, columns, as_text=True)
    if connection.vendor == "postgresql":
        yield from _copy_out(rows)
        return
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    batch: list[Any] = []
    for row in rows.iterator(chunk_size=chunk):
        batch.append(row)
        if len(batch) >= chunk:
            writer.writerows(batch)
            batch.clear()
            yield _drain(buffer)
    writer.writerows(batch)
    yield _drain(buffer)


def _drain(buffer: io.StringIO) -> bytes:
    data = buffer.getvalue().encode()
    buffer.seek(0)
    buffer.truncate()
    return data


def _copy_out(rows: RowsQuerySet) -> Iterator[bytes]:
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        # COPY takes no server-side parameters; psycopg merges them client-side, quoted.
        statement = f"COPY ({sql}) TO STDOUT WITH (FORMAT csv)"
        with cursor.cursor.copy(statement, params) as copy:
            for block in copy:
                yield bytes(block)


# --- Parquet ---------------------------------------------------------------------------------
ARROW_TYPES: dict[str, Callable[[], pa.DataType]] = {
    "str": pa.string,
    "int": pa.int64,
    "float": pa.float64,
    "bool": pa.bool_,
    "datetime": lambda: pa.timestamp("us", tz="UTC"),
    "json": pa.string,
    "uuid": pa.string,
}


class _Sink(io.RawIOBase):
    """A write-only file that hands over what was written since the last `take`."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        data, self.parts = b"".join(self.parts), []
        return data


def iter_parquet(
    queryset: QuerySet[Trial], chunk: int = 20_000, metadata: dict[str, str] | None = None
) -> Iterator[bytes]:
    """The same rows and columns as the CSV, typed, one row group per chunk; `metadata`
    goes in the file's key-value metadata (the export's manifest)."""
    columns = trial_columns(reviewers_for(queryset))
    schema = pa.schema(
        [pa.field(c.name, ARROW_TYPES[c.kind]()) for c in columns], metadata=metadata
    )
    rows = _rows_queryset(queryset, columns, as_text=False)
    sink = _Sink()
    writer = pq.ParquetWriter(sink, schema, compression="zstd")
    batches = _batches_from_copy(rows, schema) if connection.vendor == "postgresql" else None
    written = 0
    for batch in batches or _batches_from_rows(rows, columns, schema, chunk):
        writer.write_batch(batch)
        written += 1
        yield sink.take()
    if not written:
        writer.write_batch(_empty(schema))
    writer.close()
    yield sink.take()


def _empty(schema: pa.Schema) -> pa.RecordBatch:
    return pa.record_batch([[] for _ in schema], schema=schema)


def _batches_from_rows(
    rows: RowsQuerySet, columns: list[Column], schema: pa.Schema, chunk: int
) -> Iterator[pa.RecordBatch]:
    """Rows fetched through Django and gathered column by column (SQLite)."""
    json_columns = {i for i, c in enumerate(columns) if c.kind == "json"}
    uuid_columns = {i for i, c in enumerate(columns) if c.kind == "uuid"}
    batch: list[list[Any]] = [[] for _ in columns]
    for count, row in enumerate(rows.iterator(chunk_size=2000), start=1):
        for index, value in enumerate(row):
            if value is not None and index in json_columns:
                value = json.dumps(value, sort_keys=True)
            elif value is not None and index in uuid_columns:
                value = str(value)
            batch[index].append(value)
        if count % chunk == 0:
            yield pa.record_batch(batch, schema=schema)
            batch = [[] for _ in columns]
    if batch[0]:
        yield pa.record_batch(batch, schema=schema)


class _CopyReader(io.RawIOBase):
    """The blocks of a `COPY … TO STDOUT` as a readable file, for Arrow's CSV reader."""

    def __init__(self, blocks: Iterator[Any]) -> None:
        self.blocks = blocks
        self.pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.pending:
            block = next(self.blocks, None)
            if block is None:
                return 0
            self.pending = memoryview(bytes(block))
        size = min(len(buffer), len(self.pending))
        buffer[:size] = self.pending[:size]
        self.pending = self.pending[size:]
        return size


def _batches_from_copy(rows: RowsQuerySet, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """PostgreSQL writes the typed rows as CSV with COPY and Arrow parses them in C++.

    COPY's CSV tells NULL (an unquoted empty field) from an empty string (`""`), writes
    booleans as t/f and timestamps with their UTC offset; JSON arrives as its text.
    """
    sql, params = rows.query.sql_with_params()
    names = [f"c{i}" for i in range(len(schema))]
    read = pacsv.ReadOptions(column_names=names, use_threads=False, block_size=1 << 22)
    parse = pacsv.ParseOptions(newlines_in_values=True)
    convert = pacsv.ConvertOptions(
        column_types=dict(zip(names, schema.types, strict=True)),
        true_values=["t"],
        false_values=["f"],
        null_values=[""],
        strings_can_be_null=True,
        quoted_strings_can_be_null=False,
    )
    statement = f"COPY ({sql}) TO STDOUT WITH (FORMAT csv)"
    with connection.cursor() as cursor, cursor.cursor.copy(statement, params) as copy:
        blocks = iter(copy)
        first = next(blocks, None)
        if first is None:  # no rows: Arrow refuses an empty CSV
            return
        source = io.BufferedReader(
            _CopyReader(itertools.chain([first], blocks)), buffer_size=1 << 20
        )
        reader = pacsv.open_csv(
            source, read_options=read, parse_options=parse, convert_options=convert
        )
        for batch in reader:
            yield pa.RecordBatch.from_arrays(batch.columns, schema=schema)


# --- JSONL -----------------------------------------------------------------------------------
def annotation_record(annotation: Annotation) -> AnnotationRecord:
    return AnnotationRecord(
        reviewer_id=annotation.reviewer.username,
        reviewer_discipline=annotation.reviewer_discipline or None,
        timestamp=annotation.created_at,
        judgment=annotation.judgment,
        categories=annotation.categories,
        notes=annotation.notes or None,
        reward_seen=annotation.reward_seen,
        judge_verdict_seen=annotation.judge_verdict_seen,
        seconds_to_review=annotation.seconds_to_review,
        guideline_version=annotation.guideline_version,
    )


def step_comment_record(comment: StepComment) -> StepCommentRecord:
    return StepCommentRecord(
        uid=comment.uid,
        author_id=comment.author.username,
        timestamp=comment.created_at,
        step=comment.step,
        part=comment.part,
        part_index=comment.part_index,
        start=comment.start,
        end=comment.end,
        quote=comment.quote,
        text=comment.text,
        supersedes=comment.supersedes.uid if comment.supersedes else None,
    )


def finding_review_record(review: FindingReview) -> FindingReviewRecord:
    return FindingReviewRecord(
        reviewer_id=review.reviewer.username,
        timestamp=review.created_at,
        decision=review.decision,
        rationale=review.rationale,
    )


def defect_entry_record(entry: DefectEntry, uids: dict[int, uuid.UUID]) -> DefectEntryRecord:
    """A ledger entry as a bundle carries it; `uids` holds the uids of (at least) the trials
    its evidence links name."""
    return DefectEntryRecord(
        author_id=entry.author.username,
        timestamp=entry.created_at,
        state=entry.state,
        category=entry.category,
        rationale=entry.rationale,
        evidence=list(entry.evidence),
        evidence_trials={
            str(pk): uids[pk] for pk in defects.trials_named(entry.evidence) if pk in uids
        },
    )


def with_annotations(trials: list[Trial]) -> Iterator[TrialBundle]:
    """Bundles for trials whose children are loaded (`rewards.export.bundle_queryset`), each
    with its annotations, step comments, finding reviews (when it has findings) and its
    task's ledger entries (one query each, and one for the uids of the trials the entries'
    evidence links name, when they name any)."""
    by_trial: dict[int, list[AnnotationRecord]] = {t.pk: [] for t in trials}
    for annotation in (
        Annotation.objects.filter(trial__in=by_trial)
        .select_related("reviewer")
        .order_by("created_at", "id")
    ):
        by_trial[annotation.trial_id].append(annotation_record(annotation))
    comments: dict[int, list[StepCommentRecord]] = {t.pk: [] for t in trials}
    for comment in (
        StepComment.objects.filter(trial__in=comments)
        .select_related("author", "supersedes")
        .order_by(*StepComment.HISTORY)
    ):
        comments[comment.trial_id].append(step_comment_record(comment))
    reviews: dict[int, list[FindingReviewRecord]] = {}
    finding_ids = [f.pk for t in trials for f in t.integrity_findings.all()]
    for review in (
        FindingReview.objects.filter(finding_id__in=finding_ids)
        .select_related("reviewer")
        .order_by("created_at", "id")
        if finding_ids
        else ()
    ):
        reviews.setdefault(review.finding_id, []).append(finding_review_record(review))
    entries = list(
        DefectEntry.objects.filter(task_id__in={t.task_id for t in trials})
        .select_related("author")
        .order_by("id")
    )
    linked = {pk for entry in entries for pk in defects.trials_named(entry.evidence)}
    uids = dict(Trial.objects.filter(pk__in=linked).values_list("pk", "uid")) if linked else {}
    ledger: dict[int, list[DefectEntryRecord]] = {}
    for entry in entries:
        ledger.setdefault(entry.task_id, []).append(defect_entry_record(entry, uids))
    for trial in trials:
        bundle = trial_bundle(trial)
        bundle.annotations = by_trial[trial.pk]
        bundle.step_comments = comments[trial.pk]
        # `trial_bundle` made one record per finding, in the prefetched order.
        for record, finding in zip(
            bundle.integrity_findings, trial.integrity_findings.all(), strict=True
        ):
            record.reviews = reviews.get(finding.pk, [])
        bundle.defect_entries = ledger.get(trial.task_id, [])
        yield bundle


def iter_jsonl(queryset: QuerySet[Trial]) -> Iterator[bytes]:
    """One TrialBundle per line, with what people made of it (annotations, step comments,
    finding reviews, the task's ledger): `ingest` reads it back as it was."""
    for trials in iter_trial_chunks(queryset):
        yield b"".join(
            bundle.model_dump_json().encode() + b"\n" for bundle in with_annotations(trials)
        )


# --- annotations -----------------------------------------------------------------------------
ANNOTATION_COLUMNS = (
    ("annotation_id", "id", "Trialdesk's id of the annotation"),
    ("trial_id", "trial_id", "the trial's id"),
    ("job", "trial__job__name", "job name"),
    ("task", "trial__task__name", "task name"),
    ("trial", "trial__name", "trial name"),
    ("reviewer", "reviewer__username", "who annotated (the logged-in user)"),
    ("reviewer_discipline", "reviewer_discipline", "their discipline at the time"),
    ("created_at", "created_at", "when, UTC"),
    ("judgment", "judgment", "pass, fail or defer"),
    ("categories", "categories", "'; '-joined categories"),
    ("notes", "notes", "free text"),
    ("reward_seen", "reward_seen", "the reward the reviewer saw"),
    ("judge_verdict_seen", "judge_verdict_seen", "the judge verdict the reviewer saw"),
    (
        "seconds_to_review",
        "seconds_to_review",
        "from the queue handing the trial out; empty outside it",
    ),
    ("guideline_version", "guideline_version", "the queue's guidelines it was made under"),
    ("reward", "trial__reward", "the trial's reward now"),
)


def iter_annotations_csv(queryset: QuerySet[Trial], chunk: int = 2000) -> Iterator[bytes]:
    """One row per annotation of the filtered trials, oldest first."""
    rows = Annotation.objects.filter(trial__in=queryset).order_by("created_at", "id")
    return _review_rows_csv(rows, ANNOTATION_COLUMNS, chunk)


# --- step comments ---------------------------------------------------------------------------
COMMENT_COLUMNS = (
    ("comment_uid", "uid", "the comment's uid (stable across databases)"),
    ("trial_id", "trial_id", "the trial's id"),
    ("job", "trial__job__name", "job name"),
    ("task", "trial__task__name", "task name"),
    ("trial", "trial__name", "trial name"),
    ("author", "author__username", "who commented (the logged-in user)"),
    ("created_at", "created_at", "when, UTC"),
    ("step", "step", "the step's 1-based position in the trajectory"),
    ("part", "part", "message, tool_call, observation or reasoning"),
    ("part_index", "part_index", "which part of that kind in the step, from 0"),
    ("start", "start", "first character of the range (empty: the whole part)"),
    ("end", "end", "character after the range"),
    ("quote", "quote", "the text the range covered"),
    ("text", "text", "the comment"),
    ("supersedes", "supersedes__uid", "uid of the earlier comment this one corrects"),
)


def iter_comments_csv(queryset: QuerySet[Trial], chunk: int = 2000) -> Iterator[bytes]:
    """One row per step comment of the filtered trials, oldest first."""
    rows = StepComment.objects.filter(trial__in=queryset).order_by(*StepComment.HISTORY)
    return _review_rows_csv(rows, COMMENT_COLUMNS, chunk)


def _review_rows_csv(
    rows: QuerySet[Any], columns: tuple[tuple[str, str, str], ...], chunk: int
) -> Iterator[bytes]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([name for name, _, _ in columns])
    yield _drain(buffer)
    values = rows.values_list(*[path for _, path, _ in columns])
    for count, row in enumerate(values.iterator(chunk_size=chunk), start=1):
        writer.writerow([_annotation_cell(value) for value in row])
        if count % chunk == 0:
            yield _drain(buffer)
    yield _drain(buffer)


def _annotation_cell(value: Any) -> Any:
    if isinstance(value, list):
        value = "; ".join(str(item) for item in value)
    if isinstance(value, str):
        return neutralise(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


@dataclass(frozen=True)
class ExportFormat:
    name: str
    extension: str
    content_type: str
    stream: Callable[[QuerySet[Trial]], Iterator[bytes]]


FORMATS = {
    "csv": ExportFormat("csv", "csv", "text/csv; charset=utf-8", iter_csv),
    "jsonl": ExportFormat("jsonl", "jsonl", "application/x-ndjson", iter_jsonl),
    "parquet": ExportFormat("parquet", "parquet", "application/vnd.apache.parquet", iter_parquet),
    "annotations": ExportFormat(
        "annotations", "annotations.csv", "text/csv; charset=utf-8", iter_annotations_csv
    ),
    "comments": ExportFormat(
        "comments", "comments.csv", "text/csv; charset=utf-8", iter_comments_csv
    ),
}

# Where a Parquet export carries its manifest (review.science.exclusions.manifest) as JSON.
MANIFEST_METADATA_KEY = "trialdesk.manifest"


def export_stream(fmt: str, queryset: QuerySet[Trial], manifest_json: str) -> Iterator[bytes]:
    """The export `fmt` of `queryset`; a Parquet file carries `manifest_json` in its
    key-value metadata (the other formats have no place for it: their manifest travels
    beside them)."""
    if fmt == "parquet":
        return iter_parquet(queryset, metadata={MANIFEST_METADATA_KEY: manifest_json})
    return FORMATS[fmt].stream(queryset)
