"""The explorer's search (`q`) served by trigram indexes on PostgreSQL; nothing on SQLite.

Each index is on exactly the expression Django writes for `icontains` on PostgreSQL,
`UPPER("column"::text)`, so `UPPER(col::text) LIKE UPPER('%term%')` can use it. SQLite
scans, which is what it would do for `LIKE '%term%'` anyway.
"""

from typing import Any

from django.db import migrations

INDEXES = (
    ("trial_name_trgm_idx", "rewards_trial", "name"),
    ("trial_agent_name_trgm_idx", "rewards_trial", "agent_name"),
    ("trial_model_name_trgm_idx", "rewards_trial", "model_name"),
    ("task_name_trgm_idx", "rewards_task", "name"),
)


def create(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for name, table, column in INDEXES:
        schema_editor.execute(
            f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" '
            f'USING gin ((UPPER("{column}"::text)) gin_trgm_ops)'
        )


def drop(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, _, _ in INDEXES:
        schema_editor.execute(f'DROP INDEX IF EXISTS "{name}"')


class Migration(migrations.Migration):
    dependencies = [
        ("rewards", "0005_trial_agent_and_model_sort_indexes"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
