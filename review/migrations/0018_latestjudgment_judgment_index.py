from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('review', '0017_finding_reviews'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='latestjudgment',
            index=models.Index(fields=['judgment', 'trial'], name='latestjudgment_judgment_idx'),
        ),
    ]
