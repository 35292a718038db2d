"""Step comments: a reviewer's note on a step of a trajectory, or on a range of its text.

Append-only like annotations: UPDATE and DELETE of a row raise, by trigger, on SQLite and
PostgreSQL, and TRUNCATE on PostgreSQL (`rewards.append_only`).
"""

import django.db.models.deletion
import django.utils.timezone
import uuid
from django.conf import settings
from django.db import migrations, models

from rewards import append_only



class Migration(migrations.Migration):

    dependencies = [
        ('review', '0014_append_only_refuse_truncate'),
        ('rewards', '0016_trial_started_id_index'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='StepComment',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('uid', models.UUIDField(default=uuid.uuid4, editable=False)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('step', models.PositiveIntegerField()),
                ('part', models.CharField(choices=[('message', 'Message'), ('tool_call', 'Tool call'), ('observation', 'Observation'), ('reasoning', 'Reasoning')], max_length=16)),
                ('part_index', models.PositiveSmallIntegerField(default=0)),
                ('start', models.PositiveIntegerField(blank=True, null=True)),
                ('end', models.PositiveIntegerField(blank=True, null=True)),
                ('quote', models.TextField(blank=True)),
                ('text', models.TextField()),
                ('author', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='step_comments', to=settings.AUTH_USER_MODEL)),
                ('supersedes', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='review.stepcomment')),
                ('trial', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='step_comments', to='rewards.trial')),
            ],
            options={
                'ordering': ['created_at', 'id'],
                'indexes': [models.Index(fields=['trial', 'created_at', 'id'], name='stepcomment_trial_time_idx')],
                'constraints': [models.UniqueConstraint(fields=('uid',), name='stepcomment_unique_uid'), models.CheckConstraint(condition=models.Q(('step__gte', 1)), name='stepcomment_step_positive'), models.CheckConstraint(condition=models.Q(('part__in', ['message', 'tool_call', 'observation', 'reasoning'])), name='stepcomment_part_valid'), models.CheckConstraint(condition=models.Q(models.Q(('end__isnull', True), ('start__isnull', True)), models.Q(('end__isnull', False), ('start__isnull', False), ('start__lt', models.F('end'))), _connector='OR'), name='stepcomment_range_valid'), models.CheckConstraint(condition=models.Q(('text', ''), _negated=True), name='stepcomment_text_required')],
            },
        ),
        append_only.operation('review_stepcomment'),
    ]
