from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('rewards', '0021_trial_judge_rubric_version'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='trial',
            index=models.Index(
                condition=models.Q(('annotation_count__gt', 0), ('started_at__isnull', False)),
                fields=['started_at', 'id'],
                name='trial_reviewed_started_idx',
            ),
        ),
    ]
