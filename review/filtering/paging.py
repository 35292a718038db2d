"""Paging the trial list: keyset pages over a sort, never an OFFSET, never a count.

A page is "the next N rows after (sort value, id)", read by the index that leads with the
sort's column; a cursor carries (sort, value, id). Sorting by a task's or job's name walks
the names in order, then each name's trials by the index that leads with the relation.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import BooleanField, F, Func, Q, QuerySet, Value

from rewards.models import (
    Job,
    Task,
    Trial,
)

PAGE_SIZE = 50


@dataclass(frozen=True)
class SortKey:
    """A sortable column: its URL name, the ORM path and the Python type of its values."""

    name: str
    field: str
    kind: type
    label: str
    # A column that may be NULL: its rows without a value count as the lowest (`first_rows`
    # reads them as a segment of their own, so no NULLS FIRST/LAST is needed of an index).
    nullable: bool = False


SORT_KEYS = {
    key.name: key
    for key in (
        SortKey("id", "id", int, "Trial"),
        # When the trial ran: "newest first" as a Harbor user means it.
        SortKey("started", "started_at", datetime, "Started", nullable=True),
        SortKey("task", "task__name", str, "Task"),
        SortKey("agent", "agent_name", str, "Agent"),
        SortKey("model", "model_name", str, "Model"),
        SortKey("reward", "reward", float, "Reward"),
        SortKey("job", "job__name", str, "Job"),
    )
}
# "Newest first" is when the trial ran, as a Harbor user reads it (trials without a start
# after those with one); the order of ingestion is the sort "-id".
DEFAULT_SORT = "-started"


class CursorError(ValueError):
    pass


def encode_cursor(sort: str, value: Any, pk: int) -> str:
    if isinstance(value, datetime):
        value = value.isoformat()
    raw = json.dumps([sort, value, pk], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode_cursor(cursor: str, sort: str) -> tuple[Any, int]:
    """(sort value, id) from a cursor made for `sort`; CursorError for anything else."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise CursorError("unreadable cursor") from exc
    if not (isinstance(data, list) and len(data) == 3 and data[0] == sort):
        raise CursorError("cursor made for another sort")
    _, value, pk = data
    key = SORT_KEYS[sort.lstrip("-")]
    kind = key.kind
    if isinstance(pk, bool) or not isinstance(pk, int):
        raise CursorError("cursor id is not an integer")
    if value is None and key.nullable:
        return None, pk
    if kind is datetime and isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError as exc:
            raise CursorError("cursor time is unreadable") from exc
        if moment.tzinfo is None:
            raise CursorError("cursor time has no time zone")
        return moment, pk
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value), pk
    if isinstance(value, kind) and not isinstance(value, bool):
        return value, pk
    raise CursorError("cursor value has the wrong type")


@dataclass(frozen=True)
class Page:
    rows: list[Any]  # Trials, or dicts for a .values() queryset
    next_cursor: str | None
    is_continuation: bool


def order_by_sort(queryset: QuerySet[Trial], sort: str) -> QuerySet[Trial]:
    key = SORT_KEYS[sort.lstrip("-")]
    prefix = "-" if sort.startswith("-") else ""
    # The id breaks ties in the sort value, in the same direction, so (value, id) is a
    # total order the cursor can resume from.
    if key.field == "id":
        return queryset.order_by(f"{prefix}id")
    return queryset.order_by(f"{prefix}{key.field}", f"{prefix}id")


def first_rows(
    queryset: QuerySet[Trial], sort: str, after: tuple[Any, int] | None, limit: int
) -> list[Any]:
    """The first `limit` rows of `queryset` in `sort` order, strictly after the (value, id)
    `after` when given: name by name for a sort by a related row's name, else one sorted
    query from the keyset cursor."""
    key = SORT_KEYS[sort.lstrip("-")]
    descending = sort.startswith("-")
    if key.nullable:
        return _rows_with_nulls(queryset, sort, after, limit)
    if key.field in BY_NAME:
        walked = walk_names(queryset, key.field, descending, after, limit)
        if walked is not None:
            return walked
    return list(first_rows_query(queryset, sort, after, limit))


def _rows_with_nulls(
    queryset: QuerySet[Trial], sort: str, after: tuple[Any, int] | None, limit: int
) -> list[Any]:
    """`first_rows` for a nullable column: the rows with a value in (value, id) order, and
    those without one in id order, as the lowest values (last when descending). Each
    segment is one keyset query on the (value, id) index; a page that crosses from one to
    the other reads both."""
    key = SORT_KEYS[sort.lstrip("-")]
    descending = sort.startswith("-")
    # (without a value?, order): each segment's queryset is built only when it is read (a
    # full first page reads one).
    segments = [(False, sort), (True, "-id" if descending else "id")]
    if not descending:
        segments.reverse()
    rows: list[Any] = []
    reached = after is None
    for is_null, order in segments:
        cursor: tuple[Any, int] | None = None
        if not reached:
            if after is None or (after[0] is None) != is_null:
                continue  # the cursor lies in a later segment
            reached = True
            cursor = after
        segment = queryset.filter(**{f"{key.field}__isnull": is_null})
        rows += first_rows_query(segment, order, cursor, limit - len(rows))
        if len(rows) >= limit:
            break
    return rows


def first_rows_query(
    queryset: QuerySet[Trial], sort: str, after: tuple[Any, int] | None, limit: int
) -> QuerySet[Trial]:
    """`queryset` in `sort` order from the (value, id) `after` on, `limit` rows: one query."""
    key = SORT_KEYS[sort.lstrip("-")]
    ordered = order_by_sort(queryset, sort)
    if after is not None:
        ordered = ordered.filter(_after_row(key.field, *after, sort.startswith("-")))
    return ordered[:limit]


# Sorts by the name of a related row, a trial's task or job: few such rows, many trials each.
# Sorted by ORDER BY over the join, the database reads every trial of the first name (or
# more) before it can return a page: half a second at a million trials. `walk_names` lists
# the names in the database's own order instead, then reads each name's trials in id order
# by the index that leads with the relation: a page reads one name or two.
BY_NAME: dict[str, tuple[type[Task] | type[Job], str]] = {
    "task__name": (Task, "task_id"),
    "job__name": (Job, "job_id"),
}
# Names a page may read one by one. A filter that leaves so few trials a name that a page
# spans more of them is selective enough for one sorted query over what it matches.
MAX_NAMES_WALKED = 6


# Rows of the named table read for one walk: enough for MAX_NAMES_WALKED names unless
# names repeat a great deal (then the page is one sorted query).
NAME_ROWS = 200


def _name_groups(
    model: type[Task] | type[Job], descending: bool, start: str | None
) -> tuple[list[tuple[str, list[int]]], bool]:
    """The distinct names from `start` on (all of them without one), each with the ids of
    its rows, in the database's ORDER BY name (descending: reversed); at most NAME_ROWS rows
    are read. Also: whether those are all the names there are from `start` on (otherwise
    the last, maybe incomplete, name is left out)."""
    rows = model.objects.order_by("-name" if descending else "name", "id")
    if start is not None:
        rows = rows.filter(**{"name__lte" if descending else "name__gte": start})
    fetched = list(rows.values_list("name", "id")[:NAME_ROWS])
    groups: list[tuple[str, list[int]]] = []
    for name, pk in fetched:
        if groups and groups[-1][0] == name:
            groups[-1][1].append(pk)
        else:
            groups.append((name, [pk]))
    complete = len(fetched) < NAME_ROWS
    return (groups if complete else groups[:-1]), complete


def walk_names(
    queryset: QuerySet[Trial],
    field: str,
    descending: bool,
    after: tuple[Any, int] | None,
    limit: int,
) -> list[Any] | None:
    """The first `limit` rows of `queryset` in (name, id) order strictly after `after`,
    read name by name; None when that would read more than MAX_NAMES_WALKED names (or more
    names than one read of the named table gives), for the caller to sort in SQL instead."""
    model, column = BY_NAME[field]
    groups, complete = _name_groups(model, descending, after[0] if after else None)
    if after is not None and (not groups or groups[0][0] != after[0]):
        return None  # the cursor's name is gone
    rows: list[Any] = []
    for walked, (name, ids) in enumerate(groups):
        if walked == MAX_NAMES_WALKED:
            return None
        trials = queryset.filter(**{f"{column}__in": ids})
        if after is not None and name == after[0]:
            trials = (
                trials.filter(id__lt=after[1]) if descending else trials.filter(id__gt=after[1])
            )
        rows += trials.order_by("-id" if descending else "id")[: limit - len(rows)]
        if len(rows) >= limit:
            return rows
    return rows if complete else None


def rows_after(field: str, value: Any, pk: Any, descending: bool) -> Q:
    """Rows strictly after (value, pk) in the order.

    Written as `value >= v AND (value > v OR id > pk)` rather than a bare OR so that the
    leading range condition can start an index scan on (field, id) at the cursor.
    """
    if field == "id":
        return Q(id__lt=pk) if descending else Q(id__gt=pk)
    op, strict, id_op = ("lte", "lt", "lt") if descending else ("gte", "gt", "gt")
    return Q(**{f"{field}__{op}": value}) & (
        Q(**{f"{field}__{strict}": value}) | Q(**{f"id__{id_op}": pk})
    )


def _after_row(field: str, value: Any, pk: int, descending: bool) -> Any:
    """Rows strictly after (value, pk), as one row comparison: `(field, id) > (value, pk)`.

    The database starts its (field, id) index scan exactly at the cursor, however many rows
    share the cursor's value (a page deep in "reward, ascending" sits among thousands of
    zeros, which `rows_after`'s form would read and discard).
    """
    if field == "id":
        return Q(id__lt=pk) if descending else Q(id__gt=pk)
    row, cursor = Row(F(field), F("id")), Row(Value(value), Value(pk))
    return RowLessThan(row, cursor) if descending else RowGreaterThan(row, cursor)


class Row(Func):
    """A row value, `(a, b)`: what a keyset compares, in the order of its index."""

    template = "(%(expressions)s)"


class RowGreaterThan(Func):
    """`(a, b) > (x, y)`, a row comparison in SQL (PostgreSQL; SQLite since 3.15). The
    database starts a scan of the (a, b) index at (x, y); the equivalent OR of column
    comparisons would not be planned as one index range."""

    arg_joiner = " > "
    template = "%(expressions)s"
    output_field = BooleanField()


class RowLessThan(RowGreaterThan):
    """`(a, b) < (x, y)`: as `RowGreaterThan`, walking the index backwards."""

    arg_joiner = " < "


def sort_value(trial: Trial | dict[str, Any], field: str) -> Any:
    if isinstance(trial, dict):  # a row of .values(): keys are the field paths
        return trial[field]
    if field == "id":
        return trial.pk
    obj: Any = trial
    for part in field.split("__"):
        obj = getattr(obj, part)
    return obj
