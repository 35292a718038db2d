"""Trial.judge_model: the shown verdict's judge model, a summary column like the gates.

Filled for the trials stored before it from their latest verdict (the order of
JudgeVerdict.LATEST_FIRST: scored ones newest first, unscored last, then by id), before its
index is built. From then on it is written with the other summary columns.
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

def _run(schema_editor, statements):
    with schema_editor.connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def backfill(apps, schema_editor):
    statement = BACKFILL.get(schema_editor.connection.vendor)
    _run(schema_editor, [statement] if statement else [])


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
    ]
