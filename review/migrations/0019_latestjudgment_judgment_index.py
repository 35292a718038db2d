from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('review', '0018_multirated_tally'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='latestjudgment',
            index=models.Index(fields=['judgment', 'trial'], name='latestjudgment_judgment_idx'),
        ),
    ]
