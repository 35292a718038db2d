"""Append-only tables in the database: triggers that refuse UPDATE and DELETE of a row, and
on PostgreSQL TRUNCATE of a table that holds rows.

A record (an annotation, a gold label, a ledger entry) is corrected by a newer row, never by
changing or removing one. Models enforce it in code; these triggers enforce it for every
other writer. One room for the SQL, so each append-only table's migration says only
`append_only.operation("table")`. (The row triggers of the oldest two, annotations and
adjudications, are written inline in their migrations; their TRUNCATE refusal comes from
here, `refuse_truncate`.)

PostgreSQL's TRUNCATE fires no row trigger, so a statement-level BEFORE TRUNCATE trigger
refuses it whenever the table holds a row, `TRUNCATE rewards_trial CASCADE` included.
Truncating an empty table removes nothing and passes: Django's flush of the test database
truncates every table after a transactional test, once the test has purged its records.
SQLite has no TRUNCATE (its `DELETE FROM` is refused by the DELETE trigger).
"""

from __future__ import annotations

from typing import Any

from django.db import migrations
from django.db.backends.base.base import BaseDatabaseWrapper

_NO_TRUNCATE_FUNCTION = """
    CREATE OR REPLACE FUNCTION append_only_no_truncate() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE
        holds_rows boolean;
    BEGIN
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.%I)', TG_TABLE_SCHEMA, TG_TABLE_NAME)
            INTO holds_rows;
        IF holds_rows THEN
            RAISE EXCEPTION '% is append-only: TRUNCATE is not allowed', TG_TABLE_NAME
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NULL;
    END;
    $$;
"""


def _truncate_statements(table: str) -> tuple[list[str], list[str]]:
    create = [
        _NO_TRUNCATE_FUNCTION,
        f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table};",
        f"""
        CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
        FOR EACH STATEMENT EXECUTE FUNCTION append_only_no_truncate();
        """,
    ]
    # The function is shared by every append-only table: it stays.
    drop = [f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table};"]
    return create, drop


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
    truncate_create, truncate_drop = _truncate_statements(table)
    postgres_create += truncate_create
    postgres_drop = truncate_drop + postgres_drop
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


def refuse_truncate(connection: BaseDatabaseWrapper, table: str) -> None:
    """Only the TRUNCATE refusal (for tables whose row triggers a migration wrote inline)."""
    if connection.vendor == "postgresql":
        _run(connection, _truncate_statements(table)[0])


def allow_truncate(connection: BaseDatabaseWrapper, table: str) -> None:
    if connection.vendor == "postgresql":
        _run(connection, _truncate_statements(table)[1])


def operation(table: str) -> migrations.RunPython:
    """The migration step that makes `table` append-only (and undoes it when reversed)."""

    def forwards(apps: Any, schema_editor: Any) -> None:
        create_triggers(schema_editor.connection, table)

    def backwards(apps: Any, schema_editor: Any) -> None:
        drop_triggers(schema_editor.connection, table)

    return migrations.RunPython(forwards, backwards, elidable=False)
