"""Latest judgments and agreement's tallies (review.models.LatestJudgment, JudgmentTally,
PairTally), filled from the annotations stored before them.

`rebuild` empties and refills all three in SQL that both vendors run (window functions: a
reviewer's latest annotation of a trial is the newest by created_at, then id): for data
loaded around the application, such as the benchmark's annotations, and for tests that
check the tallies kept along the way against a recount.

Trials with an adjudication get their human summary again: the latest adjudication's verdict
now stands in for the annotations it settled (`review.models.refresh_human_summary`).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from rewards import rules

GATES = "judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model"

FILL_LATEST = """
INSERT INTO review_latestjudgment (trial_id, reviewer_id, annotation_id, judgment,
    blind_annotation_id, blind_judgment, judge_verdict, scorer_verdict, verifier,
    failure_mode, source, judge_model)
SELECT l.trial_id, l.reviewer_id, l.id, l.judgment, b.id, COALESCE(b.judgment, ''),
    t.judge_verdict, t.scorer_verdict,
    CASE WHEN t.reward >= k.pass_threshold THEN 'PASS' ELSE 'FAIL' END,
    t.failure_mode, k.source, t.judge_model
FROM (
    SELECT trial_id, reviewer_id, id, judgment,
        ROW_NUMBER() OVER (PARTITION BY trial_id, reviewer_id
                           ORDER BY created_at DESC, id DESC) AS newest
    FROM review_annotation
) l
LEFT JOIN (
    SELECT trial_id, reviewer_id, id, judgment,
        ROW_NUMBER() OVER (PARTITION BY trial_id, reviewer_id
                           ORDER BY created_at DESC, id DESC) AS newest
    FROM review_annotation WHERE blind
) b ON b.trial_id = l.trial_id AND b.reviewer_id = l.reviewer_id AND b.newest = 1
JOIN rewards_trial t ON t.id = l.trial_id
JOIN rewards_task k ON k.id = t.task_id
WHERE l.newest = 1
"""

FILL_JUDGMENTS = f"""
INSERT INTO review_judgmenttally (blind, {GATES}, judgment, n)
SELECT FALSE, {GATES}, judgment, COUNT(*) FROM review_latestjudgment
GROUP BY {GATES}, judgment
UNION ALL
SELECT TRUE, {GATES}, blind_judgment, COUNT(*) FROM review_latestjudgment
WHERE blind_judgment <> ''
GROUP BY {GATES}, blind_judgment
"""


def _pairs(blind, column):
    return f"""
SELECT {blind}, a.reviewer_id, b.reviewer_id, a.{column}, b.{column}, a.raters, COUNT(*)
FROM (
    SELECT trial_id, reviewer_id, {column},
        COUNT(*) OVER (PARTITION BY trial_id) AS raters
    FROM review_latestjudgment WHERE {column} IN ('pass', 'fail')
) a
JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
    AND b.{column} IN ('pass', 'fail')
WHERE a.raters > 1
GROUP BY a.reviewer_id, b.reviewer_id, a.{column}, b.{column}, a.raters
"""


FILL_PAIRS = f"""
INSERT INTO review_pairtally (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b,
    raters, n)
{_pairs("FALSE", "judgment")}
UNION ALL
{_pairs("TRUE", "blind_judgment")}
"""


def rebuild(connection):
    with connection.cursor() as cursor:
        for table in ("review_pairtally", "review_judgmenttally", "review_latestjudgment"):
            cursor.execute(f"DELETE FROM {table}")
        for statement in (FILL_LATEST, FILL_JUDGMENTS, FILL_PAIRS):
            cursor.execute(statement)


def fill(apps, schema_editor):
    rebuild(schema_editor.connection)


def adjudicated_summaries(apps, schema_editor):
    Adjudication = apps.get_model("review", "Adjudication")
    LatestJudgment = apps.get_model("review", "LatestJudgment")
    Trial = apps.get_model("rewards", "Trial")
    trial_ids = set(Adjudication.objects.values_list("trial_id", flat=True))
    for trial in Trial.objects.filter(pk__in=trial_ids).select_related("task"):
        verdict, settled = (
            Adjudication.objects.filter(trial=trial)
            .order_by("-created_at", "-id")
            .values_list("verdict", "settled")
            .first()
        )
        unsettled = LatestJudgment.objects.filter(trial=trial).exclude(annotation__in=settled)
        judgments = [verdict, *unsettled.values_list("judgment", flat=True)]
        trial.human_judgment = rules.human_consensus(judgments)
        trial.human_disagreement = rules.human_disagreement(
            trial.human_judgment, trial.reward, trial.task.pass_threshold
        )
        trial.save(update_fields=["human_judgment", "human_disagreement"])


class Migration(migrations.Migration):

    dependencies = [
        ('review', '0006_annotation_blind'),
        ('rewards', '0008_trial_judge_model'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='JudgmentTally',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('blind', models.BooleanField()),
                ('judge_verdict', models.CharField(blank=True, max_length=12)),
                ('scorer_verdict', models.CharField(blank=True, max_length=12)),
                ('verifier', models.CharField(max_length=4)),
                ('failure_mode', models.CharField(blank=True, max_length=255)),
                ('source', models.CharField(blank=True, max_length=255)),
                ('judge_model', models.CharField(blank=True, max_length=255)),
                ('judgment', models.CharField(choices=[('pass', 'pass'), ('fail', 'fail'), ('defer', 'defer')], max_length=8)),
                ('n', models.IntegerField(default=0)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('blind', 'judge_verdict', 'scorer_verdict', 'verifier', 'failure_mode', 'source', 'judge_model', 'judgment'), name='judgmenttally_key')],
            },
        ),
        migrations.CreateModel(
            name='LatestJudgment',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('judgment', models.CharField(choices=[('pass', 'pass'), ('fail', 'fail'), ('defer', 'defer')], max_length=8)),
                ('blind_judgment', models.CharField(blank=True, choices=[('pass', 'pass'), ('fail', 'fail'), ('defer', 'defer')], max_length=8)),
                ('judge_verdict', models.CharField(blank=True, max_length=12)),
                ('scorer_verdict', models.CharField(blank=True, max_length=12)),
                ('verifier', models.CharField(max_length=4)),
                ('failure_mode', models.CharField(blank=True, max_length=255)),
                ('source', models.CharField(blank=True, max_length=255)),
                ('judge_model', models.CharField(blank=True, max_length=255)),
                ('annotation', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='latest_of', to='review.annotation')),
                ('blind_annotation', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='latest_blind_of', to='review.annotation')),
                ('reviewer', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('trial', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='latest_judgments', to='rewards.trial')),
            ],
            options={
                'indexes': [models.Index(fields=['reviewer', 'judgment', 'trial'], name='latestjudgment_reviewer_idx'), models.Index(condition=models.Q(('blind_judgment', ''), _negated=True), fields=['trial', 'reviewer', 'blind_judgment'], name='latestjudgment_blind_idx')],
                'constraints': [models.UniqueConstraint(fields=('trial', 'reviewer'), name='latestjudgment_trial_reviewer_uniq')],
            },
        ),
        migrations.CreateModel(
            name='PairTally',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('blind', models.BooleanField()),
                ('judgment_a', models.CharField(max_length=8)),
                ('judgment_b', models.CharField(max_length=8)),
                ('raters', models.PositiveSmallIntegerField()),
                ('n', models.IntegerField(default=0)),
                ('reviewer_a', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('reviewer_b', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('blind', 'reviewer_a', 'reviewer_b', 'judgment_a', 'judgment_b', 'raters'), name='pairtally_key')],
            },
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.RunPython(adjudicated_summaries, migrations.RunPython.noop),
    ]
