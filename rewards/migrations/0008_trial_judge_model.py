"""Trial.judge_model: the shown verdict's judge model, a summary column like the gates.

Filled for the trials stored before it from their latest verdict (the order of
JudgeVerdict.LATEST_FIRST: scored ones newest first, unscored last, then by id), before its
index is built.

On PostgreSQL a statement trigger keeps it current when verdicts are inserted by COPY (the
demo loader's fast path), which bypasses `JudgeVerdictQuerySet.bulk_create`; it updates only
the trials whose column differs, so it costs one indexed probe per trial when the writer has
already set it. SQLite gets no trigger: a trigger there that names rewards_trial would break
every later migration that rebuilds that table, and nothing writes verdicts to SQLite by COPY.
"""

from django.db import migrations, models

BACKFILL = {
    "postgresql": """
        UPDATE rewards_trial t SET judge_model = v.judge_model
        FROM (SELECT DISTINCT ON (trial_id) trial_id, judge_model
              FROM rewards_judgeverdict ORDER BY trial_id, scored_at DESC NULLS LAST, id DESC) v
        WHERE v.trial_id = t.id AND v.judge_model <> t.judge_model
    """,
    "sqlite": """
        UPDATE rewards_trial SET judge_model = COALESCE((
            SELECT v.judge_model FROM rewards_judgeverdict v WHERE v.trial_id = rewards_trial.id
            ORDER BY v.scored_at IS NULL, v.scored_at DESC, v.id DESC LIMIT 1), '')
    """,
}

POSTGRES_CREATE = [
    """
    CREATE OR REPLACE FUNCTION rewards_trial_judge_model() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE rewards_trial t SET judge_model = v.judge_model
        FROM (SELECT DISTINCT ON (trial_id) trial_id, judge_model
              FROM rewards_judgeverdict
              WHERE trial_id IN (SELECT trial_id FROM added)
              ORDER BY trial_id, scored_at DESC NULLS LAST, id DESC) v
        WHERE v.trial_id = t.id AND v.judge_model <> t.judge_model;
        RETURN NULL;
    END;
    $$;
    """,
    "DROP TRIGGER IF EXISTS rewards_trial_judge_model ON rewards_judgeverdict;",
    """
    CREATE TRIGGER rewards_trial_judge_model
    AFTER INSERT ON rewards_judgeverdict REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION rewards_trial_judge_model();
    """,
]
POSTGRES_DROP = [
    "DROP TRIGGER IF EXISTS rewards_trial_judge_model ON rewards_judgeverdict;",
    "DROP FUNCTION IF EXISTS rewards_trial_judge_model();",
]


def _run(schema_editor, statements):
    with schema_editor.connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def backfill(apps, schema_editor):
    statement = BACKFILL.get(schema_editor.connection.vendor)
    _run(schema_editor, [statement] if statement else [])


def create_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        _run(schema_editor, POSTGRES_CREATE)


def drop_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        _run(schema_editor, POSTGRES_DROP)


class Migration(migrations.Migration):

    dependencies = [
        ('rewards', '0007_trial_source_fingerprint'),
    ]

    operations = [
        migrations.AddField(
            model_name='trial',
            name='judge_model',
            field=models.CharField(blank=True, default='', max_length=255),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name='trial',
            index=models.Index(fields=['judge_model', '-id'], name='trial_judge_model_idx'),
        ),
        migrations.RunPython(create_trigger, drop_trigger, elidable=False),
    ]
