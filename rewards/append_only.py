"""Append-only tables in the database: triggers that refuse UPDATE and DELETE of a row.

A record (an annotation, a gold label, a ledger entry) is corrected by a newer row, never by
changing or removing one. Models enforce it in code; these triggers enforce it for every
other writer. One room for the SQL, so each append-only table's migration says only
`append_only.operation("table")`. (Older migrations, written before this module, carry the
same statements inline.)
"""

from __future__ import annotations

from typing import Any

from django.db import migrations
from django.db.backends.base.base import BaseDatabaseWrapper


def _statements(table: str) -> dict[str, tuple[list[str], list[str]]]:
    message = f"{table} is append-only"
    sqlite_create = [
        f"""
        CREATE TRIGGER IF NOT EXISTS {table}_no_update BEFORE UPDATE ON {table}
        BEGIN SELECT RAISE(ABORT, '{message}: UPDATE is not allowed'); END;
        """,
        f"""
        CREATE TRIGGER IF NOT EXISTS {table}_no_delete BEFORE DELETE ON {table}
        BEGIN SELECT RAISE(ABORT, '{message}: DELETE is not allowed'); END;
        """,
    ]
    sqlite_drop = [
        f"DROP TRIGGER IF EXISTS {table}_no_update;",
        f"DROP TRIGGER IF EXISTS {table}_no_delete;",
    ]
    postgres_create = [
        f"""
        CREATE OR REPLACE FUNCTION {table}_append_only() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION '{message}: % is not allowed', TG_OP
                USING ERRCODE = 'integrity_constraint_violation';
        END;
        $$;
        """,
        f"DROP TRIGGER IF EXISTS {table}_append_only ON {table};",
        f"""
        CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table}
        FOR EACH ROW EXECUTE FUNCTION {table}_append_only();
        """,
    ]
    postgres_drop = [
        f"DROP TRIGGER IF EXISTS {table}_append_only ON {table};",
        f"DROP FUNCTION IF EXISTS {table}_append_only();",
    ]
    return {
        "sqlite": (sqlite_create, sqlite_drop),
        "postgresql": (postgres_create, postgres_drop),
    }


def _run(connection: BaseDatabaseWrapper, statements: list[str]) -> None:
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def create_triggers(connection: BaseDatabaseWrapper, table: str) -> None:
    create, _ = _statements(table).get(connection.vendor, ([], []))
    _run(connection, create)


def drop_triggers(connection: BaseDatabaseWrapper, table: str) -> None:
    _, drop = _statements(table).get(connection.vendor, ([], []))
    _run(connection, drop)


def operation(table: str) -> migrations.RunPython:
    """The migration step that makes `table` append-only (and undoes it when reversed)."""

    def forwards(apps: Any, schema_editor: Any) -> None:
        create_triggers(schema_editor.connection, table)

    def backwards(apps: Any, schema_editor: Any) -> None:
        drop_triggers(schema_editor.connection, table)

    return migrations.RunPython(forwards, backwards, elidable=False)
