"""The append-only tables refuse TRUNCATE on PostgreSQL.

Annotations (migration 0002) and adjudications (migration 0005) refuse UPDATE and DELETE by
row triggers, but PostgreSQL's TRUNCATE fires no row trigger: it would empty them in one
statement, `TRUNCATE review_annotation` or `TRUNCATE rewards_trial CASCADE` alike. A
statement-level BEFORE TRUNCATE trigger on each refuses it whenever the table holds a row, so
nothing recorded can be removed that way. Truncating an empty table removes nothing and
passes: Django's flush of the test database after a transactional test truncates every
table, after the tests that wrote annotations have purged them (tests/conftest.py,
`purge_review_data`).

SQLite has no TRUNCATE (its `DELETE FROM` without WHERE is refused by migration 0002's and
0005's DELETE triggers), so this migration adds nothing there; other databases rely on the
model code.
"""

from django.db import migrations

TABLES = ("review_annotation", "review_adjudication")

POSTGRES_CREATE = [
    """
    CREATE OR REPLACE FUNCTION review_append_only_no_truncate() RETURNS trigger
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
    """,
    *(
        statement
        for table in TABLES
        for statement in (
            f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table};",
            f"""
            CREATE TRIGGER {table}_no_truncate
            BEFORE TRUNCATE ON {table}
            FOR EACH STATEMENT EXECUTE FUNCTION review_append_only_no_truncate();
            """,
        )
    ),
]
POSTGRES_DROP = [
    *(f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table};" for table in TABLES),
    "DROP FUNCTION IF EXISTS review_append_only_no_truncate();",
]


def _run(connection, statements):
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def forwards(apps, schema_editor):
    _run(schema_editor.connection, POSTGRES_CREATE)


def backwards(apps, schema_editor):
    _run(schema_editor.connection, POSTGRES_DROP)


class Migration(migrations.Migration):
    dependencies = [("review", "0011_running_trials_untallied")]

    operations = [migrations.RunPython(forwards, backwards, elidable=False)]
