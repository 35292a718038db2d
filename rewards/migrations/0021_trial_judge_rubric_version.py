"""Trial.judge_rubric_version: the shown verdict's rubric version, a summary column like
`judge_model`, so that a job's pass rate is counted by judge version from the trial rows alone.

Nullable, so adding it does not rebuild the table on SQLite (which would drop the table's
triggers); NULL when the shown verdict records no rubric version. Filled for the trials
stored before it from their latest verdict (the order of JudgeVerdict.LATEST_FIRST: scored
ones newest first, unscored last, then by id), touching only trials whose verdicts record a
rubric version at all, before its index is built. From then on it is written with the other
summary columns.

The index holds every column a job's count by judge version reads (job, judge model, rubric
version, verdict) for the decided verdicts only: PostgreSQL counts a 10,000-trial job from a
few index pages instead of its rows.
"""

from django.db import migrations, models

BACKFILL = {
    "postgresql": """
        UPDATE rewards_trial t SET judge_rubric_version = v.rubric_version
        FROM (SELECT DISTINCT ON (trial_id) trial_id, rubric_version
              FROM rewards_judgeverdict
              WHERE trial_id IN (
                  SELECT trial_id FROM rewards_judgeverdict WHERE rubric_version <> '')
              ORDER BY trial_id, scored_at DESC NULLS LAST, id DESC) v
        WHERE v.trial_id = t.id AND v.rubric_version <> ''
    """,
    "sqlite": """
        UPDATE rewards_trial SET judge_rubric_version = NULLIF((
            SELECT v.rubric_version FROM rewards_judgeverdict v
            WHERE v.trial_id = rewards_trial.id
            ORDER BY v.scored_at IS NULL, v.scored_at DESC, v.id DESC LIMIT 1), '')
        WHERE id IN (SELECT trial_id FROM rewards_judgeverdict WHERE rubric_version <> '')
    """,
}


def backfill(apps, schema_editor):
    statement = BACKFILL.get(schema_editor.connection.vendor)
    if statement:
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(statement)


class Migration(migrations.Migration):

    dependencies = [
        ('rewards', '0020_trial_job_started_index'),
    ]

    operations = [
        migrations.AddField(
            model_name='trial',
            name='judge_rubric_version',
            field=models.CharField(blank=True, max_length=64, null=True),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name='trial',
            index=models.Index(
                condition=models.Q(('judge_verdict__in', ['PASS', 'FAIL'])),
                fields=['job', 'judge_model', 'judge_rubric_version', 'judge_verdict'],
                name='trial_job_judge_version_idx',
            ),
        ),
    ]
