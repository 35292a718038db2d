"""Large columns compressed with LZ4 on PostgreSQL (where the server was built with it).

A trial's trajectory, logs and raw artifacts are stored out of line and compressed
(TOAST). PostgreSQL's default, pglz, costs several times LZ4's CPU to compress at ingest
and to decompress on the trial page. Only values written from now on use LZ4; older ones
stay readable as they are. Elsewhere, or without LZ4, nothing changes.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

# (table, columns): the side tables' large columns.
LARGE = {
    "rewards_trialdetail": (
        "config",
        "trajectory",
        "workspace_diff",
        "stdout_tail",
        "stderr_tail",
        "final_response",
        "exception_traceback",
        "verifier_stdout",
        "ctrf",
        "ingest_problems",
    ),
    "rewards_evaluationresult": ("breakdown", "raw_artifacts"),
}


def compression(method: str) -> Any:
    def apply(apps: Any, schema_editor: Any) -> None:
        connection = schema_editor.connection
        if connection.vendor != "postgresql":
            return
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT 'lz4' = ANY(enumvals) FROM pg_settings"
                " WHERE name = 'default_toast_compression'"
            )
            row = cursor.fetchone()
            if not row or not row[0]:
                return
            quote = connection.ops.quote_name
            for table, columns in LARGE.items():
                changes = ", ".join(
                    f"ALTER COLUMN {quote(c)} SET COMPRESSION {method}" for c in columns
                )
                cursor.execute(f"ALTER TABLE {quote(table)} {changes}")

    return apply


class Migration(migrations.Migration):
    dependencies = [("rewards", "0009_trial_job_keyset_index")]

    operations = [migrations.RunPython(compression("lz4"), compression("default"))]
