"""Per-job tallies: each job's figures and each trial's first review, kept by triggers
(review.job_tallies), and agreement's tallies per job, kept beside those of every trial
(review.models.JobJudgmentTally, JobPairTally).

The tables; the triggers on rewards_trial and review_annotation (PostgreSQL: per statement,
over transition tables; SQLite: per row); a first count of what is already stored. The SQL
below is a frozen copy of `review.job_tallies` and of `review.tallies.rebuild`'s per-job
statements as this migration made them: a later change comes with a migration of its own.
"""

from typing import Any

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

BINS = 10
KEY = ("job_id", "task_id", "agent_name", "model_name", "failure_mode")

_GATE_KINDS = ("judge_pass_scorers_fail", "scorers_pass_judge_fail", "advisory_fail")
_HUMAN_KINDS = ("human_pass_automated_fail", "human_fail_automated_pass")


def _when(condition: str) -> str:
    return f"CASE WHEN {condition} THEN 1 ELSE 0 END"


def _among(column: str, values: tuple[str, ...]) -> str:
    return _when(f"{{r}}.{column} IN ({', '.join(repr(v) for v in values)})")


def _bin(i: int) -> str:
    low, high = i / BINS, (i + 1) / BINS
    upper = f"{{r}}.reward <= {high!r}" if i == BINS - 1 else f"{{r}}.reward < {high!r}"
    return _when(f"{{r}}.reward >= {low!r} AND {upper}")


# Each counter: its column and what one trial adds to it ({r}: the trial row, {k}: its task).
COUNTERS: tuple[tuple[str, str], ...] = (
    ("trials", "1"),
    ("reward_sum", "{r}.reward"),
    ("valid", _when("{r}.is_valid")),
    ("scorer_pass", _among("scorer_verdict", ("PASS",))),
    ("scorer_ran", _among("scorer_verdict", ("PASS", "FAIL"))),
    ("judge_pass", _among("judge_verdict", ("PASS",))),
    ("judge_decided", _among("judge_verdict", ("PASS", "FAIL"))),
    ("judge_unparseable", _among("judge_verdict", ("UNPARSEABLE",))),
    ("run_pass", _among("run_badge", ("PASS",))),
    ("run_done", _among("run_badge", ("PASS", "FAIL"))),
    ("reviewed", _when("{r}.annotation_count > 0")),
    ("gate_disagreements", _among("gate_disagreement", _GATE_KINDS)),
    ("human_disagreements", _among("human_disagreement", _HUMAN_KINDS)),
    ("verifier_pass", _when("{r}.reward >= {k}.pass_threshold")),
    ("human_pass", _among("human_judgment", ("pass",))),
    ("human_decided", _among("human_judgment", ("pass", "fail"))),
    *((f"bin{i}", _bin(i)) for i in range(BINS)),
    ("cost_sum", "COALESCE({r}.cost_usd, 0)"),
    ("cost_n", _when("{r}.cost_usd IS NOT NULL")),
    ("tokens_sum", "COALESCE({r}.n_input_tokens + {r}.n_output_tokens, 0)"),
    ("tokens_n", _when("{r}.n_input_tokens IS NOT NULL AND {r}.n_output_tokens IS NOT NULL")),
)
COUNTER_NAMES = tuple(name for name, _ in COUNTERS)

_TALLY = "review_jobtally"
_REVIEWED = "review_trialreviewed"


def _grouped(source: str) -> str:
    """Each key's counts over `source`, a row set of trials with a `sign` column (+1 / -1)."""
    sums = ", ".join(f"SUM(r.sign * ({expr.format(r='r', k='k')}))" for _, expr in COUNTERS)
    key = ", ".join(f"r.{column}" for column in KEY)
    changed = " OR ".join(
        f"SUM(r.sign * ({expr.format(r='r', k='k')})) <> 0" for _, expr in COUNTERS
    )
    return (
        f"SELECT {key}, {sums} FROM ({source}) r JOIN rewards_task k ON k.id = r.task_id"
        f" GROUP BY {key} HAVING {changed} ORDER BY {key}"
    )


def _upsert(select: str) -> str:
    columns = ", ".join((*KEY, *COUNTER_NAMES))
    added = ", ".join(f"{name} = {_TALLY}.{name} + excluded.{name}" for name in COUNTER_NAMES)
    # `WHERE true`: SQLite needs it to read the ON CONFLICT after a SELECT.
    return (
        f"INSERT INTO {_TALLY} ({columns}) SELECT * FROM ({select}) s WHERE true"
        f" ON CONFLICT ({', '.join(KEY)}) DO UPDATE SET {added}"
    )


def _subtract(select: str) -> str:
    """Take the grouped counts of `select` off the rows that hold them (PostgreSQL)."""
    names = [*KEY, *COUNTER_NAMES]
    taken = ", ".join(f"{name} = {_TALLY}.{name} - s.{name}" for name in COUNTER_NAMES)
    match = " AND ".join(f"{_TALLY}.{column} = s.{column}" for column in KEY)
    return f"UPDATE {_TALLY} SET {taken} FROM ({select}) s ({', '.join(names)}) WHERE {match}"


# --- PostgreSQL: statement triggers over transition tables ---------------------------------
def postgresql_statements() -> list[str]:
    def function(name: str, body: str) -> str:
        return (
            f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$\n"
            f"BEGIN\n{body};\nRETURN NULL;\nEND;\n$$;"
        )

    def trigger(name: str, event: str, tables: str, table: str = "rewards_trial") -> list[str]:
        return [
            f"DROP TRIGGER IF EXISTS {name} ON {table};",
            f"CREATE TRIGGER {name} AFTER {event} ON {table} REFERENCING {tables}"
            f" FOR EACH STATEMENT EXECUTE FUNCTION {name}();",
        ]

    added = _upsert(_grouped("SELECT 1 AS sign, * FROM new_trials"))
    removed = _subtract(_grouped("SELECT 1 AS sign, * FROM old_trials"))
    reviewed = (
        f"INSERT INTO {_REVIEWED} (trial_id, job_id, first_at)"
        " SELECT a.trial_id, t.job_id, MIN(a.created_at) FROM new_annotations a"
        " JOIN rewards_trial t ON t.id = a.trial_id GROUP BY a.trial_id, t.job_id"
        " ORDER BY a.trial_id"
        f" ON CONFLICT (trial_id) DO UPDATE SET"
        f" first_at = LEAST({_REVIEWED}.first_at, excluded.first_at)"
    )
    return [
        function("review_jobtally_insert", added),
        function("review_jobtally_delete", removed),
        function("review_jobtally_update", f"{removed};\n{added}"),
        function("review_trialreviewed_insert", reviewed),
        *trigger("review_jobtally_insert", "INSERT", "NEW TABLE AS new_trials"),
        *trigger("review_jobtally_delete", "DELETE", "OLD TABLE AS old_trials"),
        *trigger(
            "review_jobtally_update", "UPDATE", "OLD TABLE AS old_trials NEW TABLE AS new_trials"
        ),
        *trigger(
            "review_trialreviewed_insert",
            "INSERT",
            "NEW TABLE AS new_annotations",
            "review_annotation",
        ),
    ]


POSTGRESQL_DROP = [
    "DROP TRIGGER IF EXISTS review_jobtally_insert ON rewards_trial;",
    "DROP TRIGGER IF EXISTS review_jobtally_delete ON rewards_trial;",
    "DROP TRIGGER IF EXISTS review_jobtally_update ON rewards_trial;",
    "DROP TRIGGER IF EXISTS review_trialreviewed_insert ON review_annotation;",
    "DROP FUNCTION IF EXISTS review_jobtally_insert();",
    "DROP FUNCTION IF EXISTS review_jobtally_delete();",
    "DROP FUNCTION IF EXISTS review_jobtally_update();",
    "DROP FUNCTION IF EXISTS review_trialreviewed_insert();",
]


# --- SQLite: row triggers ----------------------------------------------------------------------
def _row(alias: str, sign: str) -> str:
    """One trial's counts as a single-row SELECT (`alias` is NEW or OLD)."""
    values = ", ".join(
        [f"{alias}.{column}" for column in KEY]
        + [f"{sign} * ({expr.format(r=alias, k='k')})" for _, expr in COUNTERS]
    )
    return f"SELECT {values} FROM rewards_task k WHERE k.id = {alias}.task_id"


def _row_subtract(alias: str) -> str:
    taken = ", ".join(
        f"{name} = {name} - (SELECT {expr.format(r=alias, k='k')} FROM rewards_task k"
        f" WHERE k.id = {alias}.task_id)"
        for name, expr in COUNTERS
    )
    match = " AND ".join(f"{column} = {alias}.{column}" for column in KEY)
    # Without its task (only while a test database is emptied table by table) a trial's
    # counts cannot be computed: its tally row is left as it is.
    task = f"EXISTS (SELECT 1 FROM rewards_task k WHERE k.id = {alias}.task_id)"
    return f"UPDATE {_TALLY} SET {taken} WHERE {match} AND {task}"


def sqlite_statements() -> list[str]:
    add_new = _upsert(_row("NEW", "1"))
    take_old = _row_subtract("OLD")
    reviewed = (
        f"INSERT INTO {_REVIEWED} (trial_id, job_id, first_at)"
        " SELECT NEW.trial_id, t.job_id, NEW.created_at FROM rewards_trial t"
        " WHERE t.id = NEW.trial_id"
        f" ON CONFLICT (trial_id) DO UPDATE SET"
        f" first_at = MIN({_REVIEWED}.first_at, excluded.first_at)"
    )
    return [
        *SQLITE_DROP,
        "CREATE TRIGGER review_jobtally_insert AFTER INSERT ON rewards_trial"
        f" BEGIN {add_new}; END;",
        "CREATE TRIGGER review_jobtally_delete AFTER DELETE ON rewards_trial"
        f" BEGIN {take_old}; END;",
        "CREATE TRIGGER review_jobtally_update AFTER UPDATE ON rewards_trial"
        f" BEGIN {take_old}; {add_new}; END;",
        "CREATE TRIGGER review_trialreviewed_insert AFTER INSERT ON review_annotation"
        f" BEGIN {reviewed}; END;",
    ]


SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS review_jobtally_insert;",
    "DROP TRIGGER IF EXISTS review_jobtally_delete;",
    "DROP TRIGGER IF EXISTS review_jobtally_update;",
    "DROP TRIGGER IF EXISTS review_trialreviewed_insert;",
]


def create_triggers(connection: Any) -> None:
    statements = {"postgresql": postgresql_statements, "sqlite": sqlite_statements}
    make = statements.get(connection.vendor)
    if make is None:
        return
    with connection.cursor() as cursor:
        for sql in make():
            cursor.execute(sql)


def drop_triggers(connection: Any) -> None:
    drop = {"postgresql": POSTGRESQL_DROP, "sqlite": SQLITE_DROP}.get(connection.vendor, [])
    with connection.cursor() as cursor:
        for sql in drop:
            cursor.execute(sql)


# --- recount -------------------------------------------------------------------------------
def rebuild(connection: Any) -> None:
    """Empty both tallies and count them again from every trial and annotation."""
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {_TALLY}")  # noqa: S608 (our table names)
        cursor.execute(f"DELETE FROM {_REVIEWED}")  # noqa: S608
        cursor.execute(_upsert(_grouped("SELECT 1 AS sign, * FROM rewards_trial")))
        cursor.execute(
            f"INSERT INTO {_REVIEWED} (trial_id, job_id, first_at)"  # noqa: S608
            " SELECT a.trial_id, t.job_id, MIN(a.created_at) FROM review_annotation a"
            " JOIN rewards_trial t ON t.id = a.trial_id GROUP BY a.trial_id, t.job_id"
        )


def forwards(apps, schema_editor):
    create_triggers(schema_editor.connection)
    rebuild(schema_editor.connection)


def backwards(apps, schema_editor):
    drop_triggers(schema_editor.connection)



FILL_JOB_JUDGMENTS = """
INSERT INTO review_jobjudgmenttally (job_id, blind, judge_verdict, scorer_verdict, verifier, failure_mode, source, judge_model, judgment, n)
SELECT t.job_id, FALSE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment, COUNT(*) FROM review_latestjudgment l JOIN rewards_trial t ON t.id = l.trial_id
GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.judgment
UNION ALL
SELECT t.job_id, TRUE, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment, COUNT(*) FROM review_latestjudgment l JOIN rewards_trial t ON t.id = l.trial_id
WHERE l.blind_judgment <> ''
GROUP BY t.job_id, l.judge_verdict, l.scorer_verdict, l.verifier, l.failure_mode, l.source, l.judge_model, l.blind_judgment
"""

FILL_JOB_PAIRS = """
INSERT INTO review_jobpairtally (job_id, blind, reviewer_a_id, reviewer_b_id,
    judgment_a, judgment_b, raters, n)

SELECT t.job_id, FALSE, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters, COUNT(*)
FROM (
    SELECT trial_id, reviewer_id, judgment,
        COUNT(*) OVER (PARTITION BY trial_id) AS raters
    FROM review_latestjudgment WHERE judgment IN ('pass', 'fail')
) a
JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
    AND b.judgment IN ('pass', 'fail') JOIN rewards_trial t ON t.id = a.trial_id
WHERE a.raters > 1
GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.judgment, b.judgment, a.raters

UNION ALL

SELECT t.job_id, TRUE, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters, COUNT(*)
FROM (
    SELECT trial_id, reviewer_id, blind_judgment,
        COUNT(*) OVER (PARTITION BY trial_id) AS raters
    FROM review_latestjudgment WHERE blind_judgment IN ('pass', 'fail')
) a
JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
    AND b.blind_judgment IN ('pass', 'fail') JOIN rewards_trial t ON t.id = a.trial_id
WHERE a.raters > 1
GROUP BY t.job_id, a.reviewer_id, b.reviewer_id, a.blind_judgment, b.blind_judgment, a.raters

"""


def fill_job_agreement(connection: Any) -> None:
    with connection.cursor() as cursor:
        cursor.execute(FILL_JOB_JUDGMENTS)
        cursor.execute(FILL_JOB_PAIRS)


def forwards(apps, schema_editor):
    create_triggers(schema_editor.connection)
    rebuild(schema_editor.connection)
    fill_job_agreement(schema_editor.connection)


def backwards(apps, schema_editor):
    drop_triggers(schema_editor.connection)


class Migration(migrations.Migration):

    dependencies = [
        ('review', '0007_latest_judgment'),
        ('rewards', '0009_trial_job_keyset_index'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='JobJudgmentTally',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('judge_verdict', models.CharField(blank=True, max_length=12)),
                ('scorer_verdict', models.CharField(blank=True, max_length=12)),
                ('verifier', models.CharField(max_length=4)),
                ('failure_mode', models.CharField(blank=True, max_length=255)),
                ('source', models.CharField(blank=True, max_length=255)),
                ('judge_model', models.CharField(blank=True, max_length=255)),
                ('blind', models.BooleanField()),
                ('judgment', models.CharField(choices=[('pass', 'pass'), ('fail', 'fail'), ('defer', 'defer')], max_length=8)),
                ('n', models.IntegerField(default=0)),
                ('job', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='rewards.job')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('job', 'blind', 'judge_verdict', 'scorer_verdict', 'verifier', 'failure_mode', 'source', 'judge_model', 'judgment'), name='jobjudgmenttally_key')],
            },
        ),
        migrations.CreateModel(
            name='JobPairTally',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('blind', models.BooleanField()),
                ('judgment_a', models.CharField(max_length=8)),
                ('judgment_b', models.CharField(max_length=8)),
                ('raters', models.PositiveSmallIntegerField()),
                ('n', models.IntegerField(default=0)),
                ('job', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='rewards.job')),
                ('reviewer_a', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('reviewer_b', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('job', 'blind', 'reviewer_a', 'reviewer_b', 'judgment_a', 'judgment_b', 'raters'), name='jobpairtally_key')],
            },
        ),
        migrations.CreateModel(
            name='JobTally',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('agent_name', models.CharField(blank=True, max_length=255)),
                ('model_name', models.CharField(blank=True, max_length=255)),
                ('failure_mode', models.CharField(blank=True, max_length=255)),
                ('trials', models.IntegerField(default=0)),
                ('reward_sum', models.FloatField(default=0.0)),
                ('valid', models.IntegerField(default=0)),
                ('scorer_pass', models.IntegerField(default=0)),
                ('scorer_ran', models.IntegerField(default=0)),
                ('judge_pass', models.IntegerField(default=0)),
                ('judge_decided', models.IntegerField(default=0)),
                ('judge_unparseable', models.IntegerField(default=0)),
                ('run_pass', models.IntegerField(default=0)),
                ('run_done', models.IntegerField(default=0)),
                ('reviewed', models.IntegerField(default=0)),
                ('gate_disagreements', models.IntegerField(default=0)),
                ('human_disagreements', models.IntegerField(default=0)),
                ('verifier_pass', models.IntegerField(default=0)),
                ('human_pass', models.IntegerField(default=0)),
                ('human_decided', models.IntegerField(default=0)),
                ('bin0', models.IntegerField(default=0)),
                ('bin1', models.IntegerField(default=0)),
                ('bin2', models.IntegerField(default=0)),
                ('bin3', models.IntegerField(default=0)),
                ('bin4', models.IntegerField(default=0)),
                ('bin5', models.IntegerField(default=0)),
                ('bin6', models.IntegerField(default=0)),
                ('bin7', models.IntegerField(default=0)),
                ('bin8', models.IntegerField(default=0)),
                ('bin9', models.IntegerField(default=0)),
                ('cost_sum', models.FloatField(default=0.0)),
                ('cost_n', models.IntegerField(default=0)),
                ('tokens_sum', models.BigIntegerField(default=0)),
                ('tokens_n', models.IntegerField(default=0)),
                ('job', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='rewards.job')),
                ('task', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='rewards.task')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('job', 'task', 'agent_name', 'model_name', 'failure_mode'), name='jobtally_key')],
            },
        ),
        migrations.CreateModel(
            name='TrialReviewed',
            fields=[
                ('trial', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='rewards.trial')),
                ('first_at', models.DateTimeField()),
                ('job', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='rewards.job')),
            ],
            options={
                'indexes': [models.Index(fields=['job', 'first_at'], name='trialreviewed_job_idx')],
            },
        ),
        migrations.RunPython(forwards, backwards, elidable=False),
    ]
