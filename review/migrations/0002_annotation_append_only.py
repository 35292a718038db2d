"""Annotations are append-only in the database too: UPDATE and DELETE of a row raise.

SQLite and PostgreSQL each get their own triggers (chosen by the connection's vendor); other
databases get none and rely on the model code. `create_triggers` / `drop_triggers` are also
used by tests that must empty the table between transactional tests (SQLite's flush is a
DELETE). PostgreSQL's TRUNCATE fires no row trigger: it needs the table owner's privilege
and is an administrator's operation, not the application's.
"""

from django.db import migrations

MESSAGE = "review_annotation is append-only"

SQLITE_CREATE = [
    f"""
    CREATE TRIGGER IF NOT EXISTS review_annotation_no_update
    BEFORE UPDATE ON review_annotation
    BEGIN SELECT RAISE(ABORT, '{MESSAGE}: UPDATE is not allowed'); END;
    """,
    f"""
    CREATE TRIGGER IF NOT EXISTS review_annotation_no_delete
    BEFORE DELETE ON review_annotation
    BEGIN SELECT RAISE(ABORT, '{MESSAGE}: DELETE is not allowed'); END;
    """,
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS review_annotation_no_update;",
    "DROP TRIGGER IF EXISTS review_annotation_no_delete;",
]

POSTGRES_CREATE = [
    f"""
    CREATE OR REPLACE FUNCTION review_annotation_append_only() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '{MESSAGE}: % is not allowed', TG_OP
            USING ERRCODE = 'integrity_constraint_violation';
    END;
    $$;
    """,
    "DROP TRIGGER IF EXISTS review_annotation_append_only ON review_annotation;",
    """
    CREATE TRIGGER review_annotation_append_only
    BEFORE UPDATE OR DELETE ON review_annotation
    FOR EACH ROW EXECUTE FUNCTION review_annotation_append_only();
    """,
]
POSTGRES_DROP = [
    "DROP TRIGGER IF EXISTS review_annotation_append_only ON review_annotation;",
    "DROP FUNCTION IF EXISTS review_annotation_append_only();",
]

STATEMENTS = {
    "sqlite": (SQLITE_CREATE, SQLITE_DROP),
    "postgresql": (POSTGRES_CREATE, POSTGRES_DROP),
}


def _run(connection, statements):
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def create_triggers(connection):
    create, _ = STATEMENTS.get(connection.vendor, ([], []))
    _run(connection, create)


def drop_triggers(connection):
    _, drop = STATEMENTS.get(connection.vendor, ([], []))
    _run(connection, drop)


def forwards(apps, schema_editor):
    create_triggers(schema_editor.connection)


def backwards(apps, schema_editor):
    drop_triggers(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [("review", "0001_initial")]

    operations = [migrations.RunPython(forwards, backwards, elidable=False)]
