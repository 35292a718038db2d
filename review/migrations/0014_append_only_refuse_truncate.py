"""The append-only tables refuse TRUNCATE on PostgreSQL.

Annotations (migration 0002) and adjudications (migration 0005) refuse UPDATE and DELETE by
row triggers, but PostgreSQL's TRUNCATE fires no row trigger: it would empty them in one
statement, `TRUNCATE review_annotation` or `TRUNCATE rewards_trial CASCADE` alike. A
statement-level BEFORE TRUNCATE trigger on each (`rewards.append_only.refuse_truncate`, which
tables made append-only later get with their row triggers) refuses it whenever the table holds
a row, so nothing recorded can be removed that way. Truncating an empty table removes nothing and
passes: Django's flush of the test database after a transactional test truncates every
table, after the tests that wrote annotations have purged them (tests/conftest.py,
`purge_review_data`).

SQLite has no TRUNCATE (its `DELETE FROM` without WHERE is refused by migration 0002's and
0005's DELETE triggers), so this migration adds nothing there; other databases rely on the
model code.
"""

from django.db import migrations

from rewards import append_only

TABLES = ("review_annotation", "review_adjudication")


def forwards(apps, schema_editor):
    for table in TABLES:
        append_only.refuse_truncate(schema_editor.connection, table)


def backwards(apps, schema_editor):
    for table in TABLES:
        append_only.allow_truncate(schema_editor.connection, table)


class Migration(migrations.Migration):
    dependencies = [("review", "0013_calibration_rule")]

    operations = [migrations.RunPython(forwards, backwards, elidable=False)]
