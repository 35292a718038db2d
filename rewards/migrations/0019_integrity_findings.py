"""Reward-integrity findings (rewards.integrity): what the detectors saw in a trial, and
Trial.integrity, where they stand (the explorer's filter and the confirmed-hack switch)."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('rewards', '0018_trial_unstarted_index'),
    ]

    operations = [
        migrations.CreateModel(
            name='IntegrityFinding',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('detector', models.CharField(max_length=64)),
                ('step', models.PositiveIntegerField(default=0)),
                ('matched', models.TextField()),
                ('status', models.CharField(choices=[('open', 'open'), ('confirmed', 'confirmed'), ('dismissed', 'dismissed')], default='open', max_length=12)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                'ordering': ['step', 'id'],
            },
        ),
        # Added in SQL, not by AddField: on SQLite AddField rebuilds the trial table, which
        # the review app's triggers on it (review 0008-0011) do not survive. A NOT NULL column
        # with a constant default is one ALTER TABLE on both databases.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(
                    model_name='trial',
                    name='integrity',
                    field=models.CharField(blank=True, choices=[('', 'No findings'), ('flagged', 'flagged'), ('confirmed', 'confirmed'), ('dismissed', 'dismissed')], default='', max_length=12),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE rewards_trial ADD COLUMN integrity varchar(12) DEFAULT '' NOT NULL",
                    "ALTER TABLE rewards_trial DROP COLUMN integrity",
                ),
            ],
        ),
        migrations.AddIndex(
            model_name='trial',
            index=models.Index(condition=models.Q(('integrity', ''), _negated=True), fields=['integrity', '-id'], name='trial_integrity_idx'),
        ),
        migrations.AddField(
            model_name='integrityfinding',
            name='trial',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='integrity_findings', to='rewards.trial'),
        ),
        migrations.AddConstraint(
            model_name='integrityfinding',
            constraint=models.UniqueConstraint(fields=('trial', 'detector', 'step', 'matched'), name='integrity_finding_unique'),
        ),
    ]
