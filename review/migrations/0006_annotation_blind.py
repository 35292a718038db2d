"""Annotations record whether they were made in blind review.

SQLite may rebuild the table to add a column, and a rebuilt table has lost its triggers, so
the append-only triggers of migration 0002 are made again afterwards (both vendors' statements
are idempotent).
"""

import importlib

from django.db import migrations, models


def _append_only():
    return importlib.import_module("review.migrations.0002_annotation_append_only")


def recreate_triggers(apps, schema_editor):
    _append_only().create_triggers(schema_editor.connection)


def drop_triggers(apps, schema_editor):
    # Going back removes the column (SQLite rebuilds the table); the triggers come back after.
    _append_only().drop_triggers(schema_editor.connection)


class Migration(migrations.Migration):

    dependencies = [
        ('review', '0005_adjudication'),
    ]

    operations = [
        migrations.RunPython(drop_triggers, recreate_triggers, elidable=False),
        migrations.AddField(
            model_name='annotation',
            name='blind',
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(recreate_triggers, drop_triggers, elidable=False),
    ]
