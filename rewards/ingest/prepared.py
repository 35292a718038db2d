"""A bundle turned into the rows it stores, ready to insert without the ORM.

`prepare` is the one mapping from a `TrialBundle` to rows: the trial's and its children's
column values come from the models' own mappings (`unsaved_values` for the defaults,
`Trial.summary_values`, each child model's `values_of`, which `writer.child_rows` builds
its instances from too), kept as plain data without building an instance. It runs wherever
the bundle was read, a reader process included, so the process holding the database
connection only looks up, inserts and links: the costly part (validation, digest,
summary, JSON text) is spread over the cores. A `PreparedTrial` pickles as strings and
numbers, not as a tree of pydantic models.

`RowInserter` inserts prepared rows: `COPY` on PostgreSQL, one `executemany` per table
elsewhere. Values were adapted when prepared, by each model field (`get_db_prep_save`
needs the backend's operations, not a connection), so inserting only passes them on.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast
from uuid import UUID

import orjson
from django.db import connection, models
from django.utils import timezone

from rewards.models import (
    ErrorTag,
    EvaluationResult,
    JudgeVerdict,
    ScorerResult,
    Trial,
    TrialDetail,
    unsaved_values,
)
from rewards.schemas import JobRecord, TaskRecord, TrialBundle

# The children of a trial, in the order they are inserted.
CHILD_MODELS: tuple[type[models.Model], ...] = (
    TrialDetail,
    EvaluationResult,
    ScorerResult,
    JudgeVerdict,
    ErrorTag,
)
# Set by the writer once the job, the task and the trial's id are known.
_LINKS = {"id", "job_id", "task_id", "trial_id"}


def columns_of(model: type[models.Model]) -> list[models.Field[Any, Any]]:
    """The concrete fields a prepared row carries, in table order (links left out)."""
    return [f for f in model._meta.concrete_fields if f.attname not in _LINKS]


def json_text(value: Any) -> str:
    """A JSON column's text. orjson, or the standard library for what orjson refuses
    (integers beyond 64 bits, lone surrogates), which escapes as Django's JSONField does."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value)


# Values the database driver takes as they are; any other goes through its field.
_PLAIN = (str, int, float, bool)
_PLAIN_FIELDS = (
    models.CharField,
    models.TextField,
    models.IntegerField,
    models.FloatField,
    models.BooleanField,
)
# How a column's value becomes the value inserted.
_AS_IS, _JSON, _JSON_OR_NULL, _ADAPTED = range(4)


def _stamped(f: models.Field[Any, Any]) -> bool:
    """Set by the database write itself (`auto_now`, `auto_now_add`), not by the content."""
    return bool(getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False))


@functools.cache
def _plan(model: type[models.Model]) -> tuple[tuple[str, int, models.Field[Any, Any]], ...]:
    """Each column a prepared row carries, with how its value is made ready (once a model).
    The insert's moment (`stamp_fields`) is not part of the row: the inserter adds it."""
    plan = []
    for f in columns_of(model):
        if _stamped(f):
            continue
        if isinstance(f, models.JSONField):
            kind = _JSON_OR_NULL if f.null else _JSON
        elif isinstance(f, _PLAIN_FIELDS):
            kind = _AS_IS
        else:
            kind = _ADAPTED  # datetimes and UUIDs, as the database takes them
        plan.append((f.attname, kind, f))
    return tuple(plan)


@functools.cache
def stamp_fields(model: type[models.Model]) -> tuple[models.Field[Any, Any], ...]:
    return tuple(f for f in columns_of(model) if _stamped(f))


def _values(model: type[models.Model], values: dict[str, Any]) -> list[Any]:
    """The row's values in `_plan` order, adapted for the database."""
    row = []
    for attname, kind, f in _plan(model):
        value = values[attname]
        if kind == _AS_IS:
            pass
        elif kind == _JSON or (kind == _JSON_OR_NULL and value is not None):
            value = json_text(value)
        elif kind == _ADAPTED and value is not None and not isinstance(value, _PLAIN):
            # Needs the backend's operations, not a connection.
            value = f.get_db_prep_save(value, connection)
        row.append(value)
    return row


# --- PostgreSQL's COPY text format -----------------------------------------------------------
def copy_escape(text: str) -> str:
    r"""Escape text for COPY's text format: only backslash, tab, newline and CR are special."""
    if "\\" in text:
        text = text.replace("\\", "\\\\")
    if "\t" in text or "\n" in text or "\r" in text:
        text = text.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return text


def copy_value(value: Any) -> str:
    r"""One column's value, as the database takes it, in COPY text (\N is NULL)."""
    if value is None:
        return r"\N"
    if value is True or value is False:
        return "t" if value else "f"
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, int | float):
        return str(value)
    return copy_escape(str(value))


def copy_text(values: Iterable[Any]) -> str:
    """Columns in COPY text, tab-separated, without the line's end."""
    return "\t".join(map(copy_value, values))


# A prepared row: its columns as COPY text (PostgreSQL), or as a tuple (elsewhere). Either
# pickles as one string or a few scalars, and the inserter only adds the links in front.
Row = bytes | tuple[Any, ...]


def _text(value: Any) -> str:
    return copy_escape(value if type(value) is str else str(value))


def _json(value: Any) -> str:
    return copy_escape(json_text(value))


def _bool(value: Any) -> str:
    return "t" if value else "f"


def _adapted(f: models.Field[Any, Any], value: Any) -> str:
    if not isinstance(value, _PLAIN):
        value = f.get_db_prep_save(value, connection)
    return copy_value(value)


def _moment(f: models.Field[Any, Any], value: Any) -> str:
    """A datetime column: an aware datetime is what PostgreSQL stores as it is, so its ISO
    text goes straight in; anything else is adapted by its field first."""
    if type(value) is datetime and value.tzinfo is not None:
        return value.isoformat()
    return _adapted(f, value)


def _uuid(f: models.Field[Any, Any], value: Any) -> str:
    """A UUID column (PostgreSQL's own uuid type): its text."""
    return str(value) if type(value) is UUID else _adapted(f, value)


@functools.cache
def _copy_plan(model: type[models.Model]) -> tuple[tuple[str, Any], ...]:
    """Each column of `_plan` with the function that writes a (non-NULL) value as COPY text."""
    plan = []
    for attname, kind, f in _plan(model):
        if kind in (_JSON, _JSON_OR_NULL):
            write: Any = _json
        elif kind == _ADAPTED:
            # Datetimes and UUIDs, the common cases written directly (the others adapted by
            # their field, which looks the backend up for each value).
            if isinstance(f, models.DateTimeField):
                write = functools.partial(_moment, f)
            elif isinstance(f, models.UUIDField):
                write = functools.partial(_uuid, f)
            else:
                write = functools.partial(_adapted, f)
        elif isinstance(f, models.BooleanField):
            write = _bool
        elif isinstance(f, models.IntegerField | models.FloatField):
            write = str
        else:
            write = _text
        plan.append((attname, write))
    return tuple(plan)


def _row(model: type[models.Model], values: dict[str, Any]) -> Row:
    """A row of `model` from its column values by attname (`unsaved_values`): COPY text on
    PostgreSQL, a tuple of adapted values elsewhere."""
    if connection.vendor != "postgresql":
        return tuple(_values(model, values))
    return "\t".join(
        [
            r"\N" if (value := values[attname]) is None else write(value)
            for attname, write in _copy_plan(model)
        ]
    ).encode()


@dataclass(slots=True)
class PreparedTrial:
    """One trial's rows and what the writer needs to decide about them."""

    job: JobRecord
    task: TaskRecord
    uid: UUID
    name: str
    digest: str  # the content digest
    fingerprint: str  # the folder's, when read from one
    trial: Row  # its columns (`_plan(Trial)` order), name, digest and fingerprint among them
    children: dict[str, list[Row]]  # model label → rows
    problems: int = 0
    first_problem: str = ""
    has_annotations: bool = False
    # Where the bundle can be read again: a discovered item and the run's `--job`.
    source: Any = None
    job_override: str | None = None
    # The bundle itself when it was read in this process; a reader process leaves it out
    # (the writer reads the trial again in the rare case it needs it: an update).
    bundle: TrialBundle | None = field(default=None, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        state = {name: getattr(self, name) for name in self.__slots__}
        state["bundle"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    @property
    def key(self) -> tuple[str, str]:
        return (self.job.name, self.name)

    def load(self) -> TrialBundle:
        """The bundle, read again from its folder when it was prepared in a reader process."""
        if self.bundle is None:
            from rewards.ingest.discover import read_item

            reads = read_item(self.source, self.job_override) if self.source else iter(())
            read = next(iter(reads), None)
            if not isinstance(read, TrialBundle):
                raise ValueError("its files changed or vanished while it was being ingested")
            self.bundle = read
        return self.bundle


def prepare(bundle: TrialBundle, digest: str, *, fingerprint: str = "") -> PreparedTrial:
    """The rows `bundle` stores (the bundle and digest as `BundleWriter._checked` gives them)."""
    from rewards.ingest.writer import child_values, summary_of, trial_columns_of

    now = timezone.now()  # the children's own times (a result's `evaluated_at`…)
    record = bundle.trial
    # The rows as `unsaved` instances would hold them, built without the instances.
    trial = unsaved_values(Trial, name=record.name, uid=record.uid, **trial_columns_of(bundle))
    # The human side is a new trial's default; only the task's pass threshold is read.
    trial.update(
        Trial.summary_values(
            summary_of(bundle, bundle.current_result),
            trial["human_judgment"],
            bundle.task.pass_threshold,
        )
    )
    trial["content_digest"], trial["source_fingerprint"] = digest, fingerprint
    children = {
        model._meta.label: [_row(model, unsaved_values(model, **values)) for values in rows]
        for model, rows in child_values(bundle, now).items()
    }
    problems = record.ingest_problems
    first = ""
    if problems:
        where = f"{problems[0].file} {problems[0].field}".strip()
        more = len(problems) - 1
        first = f"{where}: {problems[0].message}" + (f" (and {more} more)" if more else "")
    return PreparedTrial(
        job=bundle.job,
        task=bundle.task,
        uid=record.uid,
        name=record.name,
        digest=digest,
        fingerprint=fingerprint,
        trial=_row(Trial, trial),
        children=children,
        problems=len(problems),
        first_problem=first,
        has_annotations=bool(bundle.annotations),
        bundle=bundle,
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
        names = [*links, *(f.attname for f in stamps), *(a for a, _, _ in _plan(model))]
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
