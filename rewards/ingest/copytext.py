"""Rows as the database takes them: PostgreSQL's COPY text, or a tuple of adapted values.

A model's row carries its concrete columns (the links to job, task and trial aside, which
the writer adds in front), each made ready by its own field when the row is prepared
(`get_db_prep_save` needs the backend's operations, not a connection), so a prepared row
pickles as one string or a few scalars and inserting it only passes it on. On PostgreSQL
a row is one line of COPY's text format; elsewhere it is the tuple an `executemany` takes.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any
from uuid import UUID

import orjson
from django.db import connection, models

from rewards.ingest.storable import mend

# Set by the writer once the job, the task and the trial's id are known.
_LINKS = {"id", "job_id", "task_id", "trial_id"}


def columns_of(model: type[models.Model]) -> list[models.Field[Any, Any]]:
    """The concrete fields a prepared row carries, in table order (links left out)."""
    return [f for f in model._meta.concrete_fields if f.attname not in _LINKS]


def json_text(value: Any) -> str:
    """A JSON column's text. orjson, or the standard library for what orjson refuses
    (integers beyond 64 bits, lone surrogates), which escapes as Django's JSONField does.

    The readers have already mended what no column holds (`storable`); a value from
    elsewhere is mended here too, as orjson would write it (NaN and Infinity as null), so
    the standard library never spells out an `Infinity` the database refuses."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(mend(value, "")[0])


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
def column_plan(model: type[models.Model]) -> tuple[tuple[str, int, models.Field[Any, Any]], ...]:
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
    """The row's values in `column_plan` order, adapted for the database."""
    row = []
    for attname, kind, f in column_plan(model):
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
    """Each column of `column_plan` with the function that writes a (non-NULL) value as
    COPY text."""
    plan = []
    for attname, kind, f in column_plan(model):
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


def row_of(model: type[models.Model], values: dict[str, Any]) -> Row:
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
