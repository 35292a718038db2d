"""Queries of fixed shape run on every view of a page, compiled by the ORM once per process.

Building and compiling a queryset costs Django 0.2 ms for a query that reads one trial's
rows by index (as much as PostgreSQL takes to answer it) and 1.5 ms for the trial page's
trial with its job, task, scenario and neighbours. Each helper here has the ORM write a
query's SQL once (so vendor details such as NULLS LAST stay Django's), keeps it, and runs it
again with new values, its rows converted as the ORM converts them (JSON decoded, booleans
and datetimes typed). Each is still one query that Django logs and tests count.

- `instances(key, build, value)`: model instances, their `select_related` rows, deferred
  fields and annotations as the ORM's own iterator gives them; `build` is called with a
  probe value once and the probe's place among the parameters takes each value after.
  `instance_by_pk` finds one; `ByTrial` a trial's rows (and their authors' usernames).
- `value_rows(key, build)`: the dicts of a `.values()` queryset whose SQL and parameters
  follow from `key` (a filter's query string: `TrialFilterForm.sql_key`).
- `model_rows(model, sql, params)`: instances from SQL written by hand, as `QuerySet.raw`
  gives them, the columns matched to the fields once per statement.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast
from weakref import ref as weak_ref

from django.contrib.auth import get_user_model
from django.core.exceptions import FieldDoesNotExist
from django.db import connection
from django.db.models import Model, QuerySet
from django.db.models.query import get_related_populators
from django.db.models.sql import Query


class Remembered[K: Hashable, V]:
    """Compiled statements kept by key in one process, at most `size`, the least recently
    used dropped first (read and changed under a lock, never held while compiling). They
    are machinery, not data: they cannot go to the shared cache (rewards.cache)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def recall(self, keys: Iterable[K]) -> dict[K, V]:
        with self._lock:
            return {key: self._values[key] for key in keys if key in self._values}

    def remember(self, values: dict[K, V]) -> None:
        with self._lock:
            for key, value in values.items():
                self._values[key] = value
                self._values.move_to_end(key)
            while len(self._values) > self.size:
                self._values.popitem(last=False)

    def forget(self) -> None:
        with self._lock:
            self._values.clear()

    def __len__(self) -> int:
        return len(self._values)


class ByTrial[M: Model]:
    """`build(trial_id)`: a queryset of one trial's rows, run by SQL the ORM writes once
    (`instances`). `users` names foreign keys to the user model whose username the page
    shows: read by a JOIN in the same query, each row's user an instance whose other fields
    are deferred (read from the database if anything asks for them)."""

    def __init__(self, build: Callable[[int], QuerySet[M]], *, users: tuple[str, ...] = ()) -> None:
        self.build = build
        self.users = users

    def queryset(self, trial_id: int) -> QuerySet[M]:
        queryset = self.build(trial_id)
        if not self.users:
            return queryset
        user = get_user_model()
        shown = {user._meta.pk.name, user.USERNAME_FIELD}
        unread = [f.name for f in user._meta.concrete_fields if f.name not in shown]
        return queryset.select_related(*self.users).defer(
            *(f"{relation}__{name}" for relation in self.users for name in unread)
        )

    def __call__(self, trial_id: int) -> list[M]:
        return instances(("ByTrial", self), self.queryset, trial_id)


# --- model instances from SQL written once ------------------------------------------------
# (position, converters, expression): what the ORM applies to a column's values
type _Converters = tuple[tuple[int, tuple[Callable[..., Any], ...], Any], ...]


@dataclass(frozen=True)
class _Shape:
    """How a statement's columns become a model instance, worked out once per statement."""

    columns: tuple[str, ...]
    # The model's fields the statement reads (attnames, in the model's order), and where.
    names: tuple[str, ...]
    positions: tuple[int, ...]
    # Columns that are no field of the model: set on the instance as attributes.
    extra: tuple[tuple[str, int], ...]
    converters: _Converters


_SHAPES: dict[tuple[str, type[Model], str], _Shape] = {}


def model_rows[M: Model](model: type[M], sql: str, params: Sequence[Any]) -> list[M]:
    """The instances `model._default_manager.raw(sql, params)` gives (fields it does not read
    deferred, other columns set as attributes, values converted as the ORM converts them),
    with the columns matched to the model's fields once per statement rather than on every
    run: `QuerySet.raw` spends longer on that than a small indexed query takes."""
    adapt = connection.ops.adapt_unknown_value
    with connection.cursor() as cursor:
        cursor.execute(sql, [adapt(value) for value in params])
        columns = tuple(column[0] for column in cursor.description)
        fetched = cursor.fetchall()
    key = (connection.alias, model, sql)
    shape = _SHAPES.get(key)
    if shape is None or shape.columns != columns:  # a table changed under a `SELECT *`
        shape = _SHAPES[key] = _shape_of(model, columns)
    names, positions, extra = shape.names, shape.positions, shape.extra
    alias = connection.alias
    rows = []
    for row in _converted(fetched, shape.converters):
        instance = model.from_db(alias, names, [row[position] for position in positions])
        for name, position in extra:
            setattr(instance, name, row[position])
        rows.append(instance)
    return rows


def _converted(fetched: list[Any], converters: _Converters) -> list[Any]:
    """The rows with the ORM's converters applied: `converters` as `_converters` gives."""
    if not converters:
        return fetched
    rows = []
    for row in fetched:
        values = list(row)
        for position, functions, expression in converters:
            value = values[position]
            for function in functions:
                value = function(value, expression, connection)
            values[position] = value
        rows.append(values)
    return rows


def _converters(compiler: Any, expressions: list[Any]) -> _Converters:
    """(position, converters, expression) for each column the ORM converts."""
    return tuple(
        (position, tuple(functions), expression)
        for position, (functions, expression) in compiler.get_converters(expressions).items()
    )


def _shape_of(model: type[Model], columns: tuple[str, ...]) -> _Shape:
    """What `QuerySet.raw` works out on every run (RawModelIterable), for these columns."""
    normal = connection.introspection.identifier_converter
    by_column = {normal(str(field.column)): field for field in model._meta.concrete_fields}
    read = [normal(name) for name in columns]
    position_of = {
        field: read.index(column) for column, field in by_column.items() if column in read
    }
    fields = list(position_of)
    if any(field not in fields for field in model._meta.pk_fields):
        raise FieldDoesNotExist("the statement must read the primary key")
    table = model._meta.db_table
    cols = [by_column[name].get_col(table) if name in by_column else None for name in read]
    compiler = connection.ops.compiler("SQLCompiler")(Query(model), connection, connection.alias)
    return _Shape(
        columns=columns,
        names=tuple(field.attname for field in fields),
        positions=tuple(position_of.values()),
        extra=tuple(
            (name, position) for position, name in enumerate(read) if name not in by_column
        ),
        converters=_converters(compiler, cols),
    )


# --- a .values() queryset compiled once per key -------------------------------------------
@dataclass(frozen=True)
class _Rows:
    sql: str
    params: tuple[Any, ...]
    names: tuple[str, ...]
    converters: _Converters


_VALUE_ROWS: Remembered[tuple[Hashable, ...], _Rows] = Remembered(512)


def value_rows(key: tuple[Hashable, ...], build: Callable[[], QuerySet[Any]]) -> list[Any]:
    """The rows of the `.values()` queryset `build()` returns, as the ORM gives them (dicts,
    values converted); its SQL and parameters compiled by the ORM the first time `key` is seen
    in this process and run as they are afterwards. `key` must name everything the SQL and
    its parameters depend on: the same key, the same query."""
    full_key = (connection.vendor, connection.alias, *key)
    found = _VALUE_ROWS.recall([full_key]).get(full_key)
    if found is None:
        found = _compile_rows(build())
        _VALUE_ROWS.remember({full_key: found})
    with connection.cursor() as cursor:
        cursor.execute(found.sql, found.params)
        fetched = cursor.fetchall()
    names = found.names
    return [dict(zip(names, row, strict=True)) for row in _converted(fetched, found.converters)]


def _compile_rows(queryset: QuerySet[Any]) -> _Rows:
    query = queryset.query
    compiler = query.get_compiler(connection=connection)
    sql, params = compiler.as_sql()
    names = (
        tuple(query.selected)
        if query.selected
        else (*query.extra_select, *query.values_select, *query.annotation_select)
    )
    if len(names) != compiler.col_count:
        raise ValueError("value_rows needs a .values() queryset")
    fields = [column[0] for column in compiler.select[: compiler.col_count]]
    return _Rows(sql, tuple(params), names, _converters(compiler, fields))


def forget_value_rows() -> None:
    _VALUE_ROWS.forget()


# --- one instance, its related rows included, from SQL written once per key ---------------
@dataclass(frozen=True)
class _Instance:
    sql: str
    params: tuple[Any, ...]
    slot: int  # where the primary key looked up goes among `params`
    model: type[Model]
    names: tuple[str, ...]  # the model's own fields read (attnames), from `start`
    start: int
    end: int
    klass_info: dict[str, Any]  # the ORM's map of the related rows (`select_related`)
    select: tuple[Any, ...]
    annotations: tuple[tuple[str, int], ...]
    converters: _Converters
    fetch_mode: Any  # how the instance fetches a deferred field or relation later


_INSTANCES: Remembered[tuple[Hashable, ...], _Instance] = Remembered(256)
# A primary key no row has, built into the queryset once to find where the real one goes.
_PROBE = -7_345_012_991


def instances[M: Model](
    key: tuple[Hashable, ...], build: Callable[[Any], QuerySet[M]], value: Any, *, limit: int = 0
) -> list[M]:
    """The instances `build(value)` finds (`limit`: at most that many), their `select_related`
    rows, deferred fields and annotations as the ORM's own iterator gives them
    (`ModelIterable`), with the SQL written by the ORM once per `key`: `build` is called with
    a probe value the first time, and the probe's place among the parameters takes `value`
    from then on. `key` must name everything else the SQL depends on."""
    full_key = (connection.vendor, connection.alias, *key)
    found = _INSTANCES.recall([full_key]).get(full_key)
    if found is None:
        found = _compile_instance(build(_PROBE))
        _INSTANCES.remember({full_key: found})
    params = list(found.params)
    params[found.slot] = value
    with connection.cursor() as cursor:
        cursor.execute(found.sql, params)
        fetched = cursor.fetchmany(limit) if limit else cursor.fetchall()
    alias, mode = connection.alias, found.fetch_mode
    populators = get_related_populators(found.klass_info, list(found.select), alias, mode)
    made: list[M] = []
    peers: list[Any] = []
    for row in _converted(fetched, found.converters):
        instance = found.model.from_db(
            alias, found.names, row[found.start : found.end], fetch_mode=mode
        )
        if mode.track_peers:
            peers.append(weak_ref(instance))
            instance._state.peers = peers
        for populator in populators:
            populator.populate(row, instance)
        for name, position in found.annotations:
            setattr(instance, name, row[position])
        made.append(cast(M, instance))
    return made


def instance_by_pk[M: Model](
    key: tuple[Hashable, ...], build: Callable[[Any], QuerySet[M]], pk: int
) -> M | None:
    """The one instance `build(pk)` finds, None if none (`instances`). Building and compiling
    a queryset that joins four tables and probes two neighbours costs Django about 1.5 ms,
    seven times what PostgreSQL takes to answer it."""
    found = instances(key, build, pk, limit=1)
    return found[0] if found else None


def _compile_instance(queryset: QuerySet[Any]) -> _Instance:
    compiler = queryset.query.get_compiler(connection=connection)
    sql, params = compiler.as_sql()
    slots = [i for i, value in enumerate(params) if value == _PROBE]
    if len(slots) != 1:
        raise ValueError("a kept query must take the probe value exactly once")
    klass_info, select = compiler.klass_info, compiler.select
    fields = klass_info["select_fields"]
    start, end = fields[0], fields[-1] + 1
    return _Instance(
        sql=sql,
        params=tuple(params),
        slot=slots[0],
        model=klass_info["model"],
        names=tuple(column[0].target.attname for column in select[start:end]),
        start=start,
        end=end,
        klass_info=klass_info,
        select=tuple(select),
        annotations=tuple(compiler.annotation_col_map.items()),
        converters=_converters(compiler, [column[0] for column in select[: compiler.col_count]]),
        fetch_mode=queryset._fetch_mode,  # type: ignore[attr-defined]
    )


def forget_instances() -> None:
    _INSTANCES.forget()
