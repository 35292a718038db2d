"""Latest judgments and agreement's tallies (review.models.LatestJudgment, JudgmentTally,
PairTally), filled from the annotations stored before them.

The fill is written out in SQL that both vendors run (window functions: a reviewer's latest
annotation of a trial is the newest by created_at, then id). Trials with an adjudication get
their human summary again: the latest adjudication's verdict now stands in for the
annotations it settled.

A migration is history: the statements and the two rules below (a human consensus, its
disagreement with the reward) are frozen as they were when this migration was written, and
nothing is imported from the project's live code.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

FILL = [
    "DELETE FROM review_pairtally",
    "DELETE FROM review_judgmenttally",
    "DELETE FROM review_latestjudgment",
    """
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
""",
    """
INSERT INTO review_judgmenttally (blind, judge_verdict, scorer_verdict, verifier,
    failure_mode, source, judge_model, judgment, n)
SELECT FALSE, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model,
    judgment, COUNT(*)
FROM review_latestjudgment
GROUP BY judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment
UNION ALL
SELECT TRUE, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model,
    blind_judgment, COUNT(*)
FROM review_latestjudgment
WHERE blind_judgment <> ''
GROUP BY judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model,
    blind_judgment
""",
    """
INSERT INTO review_pairtally (blind, reviewer_a_id, reviewer_b_id, judgment_a, judgment_b,
    raters, n)
SELECT FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters, COUNT(*)
FROM (
    SELECT trial_id, reviewer_id, judgment,
        COUNT(*) OVER (PARTITION BY trial_id) AS raters
    FROM review_latestjudgment WHERE judgment IN ('pass', 'fail')
) a
JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
    AND b.judgment IN ('pass', 'fail')
WHERE a.raters > 1
GROUP BY a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters
UNION ALL
SELECT TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters,
    COUNT(*)
FROM (
    SELECT trial_id, reviewer_id, blind_judgment,
        COUNT(*) OVER (PARTITION BY trial_id) AS raters
    FROM review_latestjudgment WHERE blind_judgment IN ('pass', 'fail')
) a
JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
    AND b.blind_judgment IN ('pass', 'fail')
WHERE a.raters > 1
GROUP BY a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters
""",
]


def human_consensus(latest_judgments):
    """rewards.rules.human_consensus as of this migration: a defer abstains; pass + fail
    is "mixed"; only defers is "defer"; nobody is ''."""
    decided = {j for j in latest_judgments if j != "defer"}
    if not latest_judgments:
        return ""
    if not decided:
        return "defer"
    if len(decided) == 1:
        return decided.pop()
    return "mixed"


def human_disagreement(human_judgment, reward, pass_threshold):
    """rewards.rules.human_disagreement as of this migration (automated pass: reward at or
    above the task's pass threshold)."""
    passed = reward >= pass_threshold
    if human_judgment == "pass" and not passed:
        return "human_pass_automated_fail"
    if human_judgment == "fail" and passed:
        return "human_fail_automated_pass"
    return ""


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
        trial.human_judgment = human_consensus(judgments)
        trial.human_disagreement = human_disagreement(
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
        migrations.RunSQL(FILL, migrations.RunSQL.noop),
        migrations.RunPython(adjudicated_summaries, migrations.RunPython.noop),
    ]
