"""Fewer indexes to keep up on every trial inserted.

- The single-column indexes Django made for four foreign keys are dropped: each is the
  leading column of another index that serves the same lookups (the trial's job:
  `trial_job_id_idx` and `trial_unique_name_per_job`; its task: `trial_task_id_idx`; a
  result's trial: `result_unique_digest_per_trial`; a scorer's trial:
  `scorer_unique_position`).
- On PostgreSQL, `trial_job_id_idx` (job, id descending) goes back to a plain keyset index:
  the summary columns it carried since 0009 (INCLUDE) were for the jobs page, which now adds
  up the jobs' kept tallies instead (review 0008).

The model state changes by `AlterField(db_index=False)`; the database change is the `DROP
INDEX` alone, so SQLite does not rebuild the tables (a rebuild would also drop the triggers
that keep the job tallies).
"""

from importlib import import_module

from django.db import migrations, models
from django.db.models import CASCADE, PROTECT

# (index, table, column): the names Django gave them, the same on every database.
FOREIGN_KEY_INDEXES = (
    ("rewards_trial_job_id_eea2bf02", "rewards_trial", "job_id"),
    ("rewards_trial_task_id_8263f9de", "rewards_trial", "task_id"),
    ("rewards_evaluationresult_trial_id_6f832089", "rewards_evaluationresult", "trial_id"),
    ("rewards_scorerresult_trial_id_da5d2988", "rewards_scorerresult", "trial_id"),
)


# The job keyset index as 0009 rebuilt it: back to plain (uncover), or covering again.
_job_index = import_module("rewards.migrations.0009_trial_job_keyset_index")

# (model, field, on_delete, related_name, to): the foreign keys that lose their own index.
UNINDEXED = (
    ("evaluationresult", "trial", CASCADE, "results", "rewards.trial"),
    ("scorerresult", "trial", CASCADE, "scorers", "rewards.trial"),
    ("trial", "job", CASCADE, "trials", "rewards.job"),
    ("trial", "task", PROTECT, "trials", "rewards.task"),
)


class Migration(migrations.Migration):
    dependencies = [
        ("rewards", "0010_large_columns_lz4"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name=model,
                    name=name,
                    field=models.ForeignKey(
                        db_index=False, on_delete=on_delete, related_name=related, to=to
                    ),
                )
                for model, name, on_delete, related, to in UNINDEXED
            ],
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{index}"',
                    reverse_sql=f'CREATE INDEX "{index}" ON "{table}" ("{column}")',
                )
                for index, table, column in FOREIGN_KEY_INDEXES
            ],
        ),
        migrations.RunPython(_job_index.uncover, _job_index.cover, elidable=False),
    ]
