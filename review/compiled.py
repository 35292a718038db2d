"""Queries of fixed shape run on every view of a page, compiled by the ORM once per process.

Compiling a queryset to SQL costs Django about 0.2 ms, as much as PostgreSQL takes to answer
a query that reads one trial's rows by index; the trial page runs four such queries on every
view. `ByTrial` builds its queryset for a placeholder trial once, keeps the SQL Django wrote
for it (so vendor details such as NULLS LAST stay Django's), and runs it for each trial
through `QuerySet.raw`, which still converts every value as the ORM does (JSON decoded,
booleans and datetimes typed). Each is still one query that Django logs and tests count.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import connection
from django.db.models import Model, QuerySet

_PLACEHOLDER = 0


class ByTrial[M: Model]:
    """`build(trial_id)`: a queryset whose only parameter is the trial's id."""

    def __init__(self, build: Callable[[int], QuerySet[M]]) -> None:
        self.build = build
        self._compiled: dict[str, tuple[type[M], str]] = {}

    def compiled(self) -> tuple[type[M], str]:
        """The model and the SQL of the query, written by the ORM for this database."""
        found = self._compiled.get(connection.vendor)
        if found is None:
            queryset = self.build(_PLACEHOLDER)
            sql, params = queryset.query.sql_with_params()
            if tuple(params) != (_PLACEHOLDER,):
                raise ValueError(f"a ByTrial query takes the trial id alone, not {params!r}")
            found = self._compiled[connection.vendor] = (queryset.model, sql)
        return found

    def __call__(self, trial_id: int) -> list[M]:
        model, sql = self.compiled()
        return list(model._default_manager.raw(sql, [trial_id]))
