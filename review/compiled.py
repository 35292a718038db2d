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

from collections.abc import Callable

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import F, Model, QuerySet

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
