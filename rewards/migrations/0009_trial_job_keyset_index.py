"""One job's trials, by keyset and summed.

- `trial_job_reward_idx`: the explorer filtered to one job and sorted by reward walks it from
  the keyset cursor instead of sorting the whole job.
- On PostgreSQL, `trial_job_id_idx` (job, id descending) is rebuilt with the columns the jobs
  page aggregates as non-key columns (INCLUDE), so each listed job is summed by an
  index-only scan of its own trials rather than a read of every trial row. Same name, same
  key: the model's declaration still describes it, and SQLite (no INCLUDE) keeps the plain
  index.
"""

from typing import Any

from django.db import migrations, models

SUMMARY_COLUMNS = (
    "reward",
    "is_valid",
    "scorer_verdict",
    "judge_verdict",
    "run_badge",
    "annotation_count",
    "gate_disagreement",
    "human_disagreement",
)


def _rebuild(schema_editor: Any, include: tuple[str, ...]) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    columns = ", ".join(f'"{name}"' for name in include)
    schema_editor.execute('DROP INDEX IF EXISTS "trial_job_id_idx"')
    schema_editor.execute(
        'CREATE INDEX "trial_job_id_idx" ON "rewards_trial" ("job_id", "id" DESC)'
        + (f" INCLUDE ({columns})" if include else "")
    )


def cover(apps: Any, schema_editor: Any) -> None:
    _rebuild(schema_editor, SUMMARY_COLUMNS)


def uncover(apps: Any, schema_editor: Any) -> None:
    _rebuild(schema_editor, ())


class Migration(migrations.Migration):
    dependencies = [
        ("rewards", "0008_trial_judge_model"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="trial",
            index=models.Index(fields=["job", "reward", "id"], name="trial_job_reward_idx"),
        ),
        migrations.RunPython(cover, uncover, elidable=False),
    ]
