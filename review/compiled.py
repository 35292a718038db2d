"""Queries of fixed shape run on every view of a page, compiled by the ORM once per process.

Compiling a queryset to SQL costs Django about 0.2 ms, as much as PostgreSQL takes to answer
a query that reads one trial's rows by index; the trial page runs four such queries on every
view. `ByTrial` builds its queryset for a placeholder trial once, keeps the SQL Django wrote
for it (so vendor details such as NULLS LAST stay Django's), and runs it for each trial
through `QuerySet.raw`, which still converts every value as the ORM does (JSON decoded,
booleans and datetimes typed). Each is still one query that Django logs and tests count.

`QuerySet.raw` cannot follow a relation as `select_related` does; `users` names foreign keys
to the user model whose username the page shows: it is read by a JOIN in the same query, and
each row gets its user as an instance whose other fields are deferred (read from the database
if anything asks for them), so `annotation.reviewer.get_username()` costs no query.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import F, Model, QuerySet

from rewards.remembered import Remembered

_PLACEHOLDER = 0


class ByTrial[M: Model]:
    """`build(trial_id)`: a queryset whose only parameter is the trial's id."""

    def __init__(self, build: Callable[[int], QuerySet[M]], *, users: tuple[str, ...] = ()) -> None:
        self.build = build
        self.users = users
        self._compiled: dict[str, tuple[type[M], str]] = {}

    def compiled(self) -> tuple[type[M], str]:
        """The model and the SQL of the query, written by the ORM for this database."""
        found = self._compiled.get(connection.vendor)
        if found is None:
            queryset = self.build(_PLACEHOLDER)
            username = get_user_model().USERNAME_FIELD
            queryset = queryset.annotate(
                **{_name_of(user): F(f"{user}__{username}") for user in self.users}
            )
            sql, params = queryset.query.sql_with_params()
            if tuple(params) != (_PLACEHOLDER,):
                raise ValueError(f"a ByTrial query takes the trial id alone, not {params!r}")
            found = self._compiled[connection.vendor] = (queryset.model, sql)
        return found

    def __call__(self, trial_id: int) -> list[M]:
        model, sql = self.compiled()
        rows = list(model._default_manager.raw(sql, [trial_id]))
        if self.users:
            user_model = get_user_model()
            fields = ["id", user_model.USERNAME_FIELD]
            for row in rows:
                for user in self.users:
                    values = [getattr(row, f"{user}_id"), getattr(row, _name_of(user))]
                    setattr(row, user, user_model.from_db(connection.alias, fields, values))
        return rows


def _name_of(user: str) -> str:
    return f"compiled_{user}_name"


# --- a .values() queryset compiled once per key -------------------------------------------
@dataclass(frozen=True)
class _Rows:
    sql: str
    params: tuple[Any, ...]
    names: tuple[str, ...]
    # (position, converters, expression): what the ORM applies to a column's values
    converters: tuple[tuple[int, tuple[Callable[..., Any], ...], Any], ...]


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
    if not found.converters:
        return [dict(zip(names, row, strict=True)) for row in fetched]
    rows = []
    for row in fetched:
        values = list(row)
        for position, converters, expression in found.converters:
            value = values[position]
            for converter in converters:
                value = converter(value, expression, connection)
            values[position] = value
        rows.append(dict(zip(names, values, strict=True)))
    return rows


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
    converters = tuple(
        (position, tuple(convs), expression)
        for position, (convs, expression) in compiler.get_converters(fields).items()
    )
    return _Rows(sql, tuple(params), names, converters)


def forget_value_rows() -> None:
    _VALUE_ROWS.forget()
