"""Each job's figures, counted once when trials and annotations are written.

The job page, its plots and the comparison of two runs would otherwise aggregate a job's
trials on every request (10,000 trials: 10 to 90 ms a query on PostgreSQL). Instead:

- `JobTally` (review.models) holds, for each job, task, agent, model and failure mode, the
  trial counts those pages show (every gate's passes, the reward histogram's bins, cost and
  tokens, the human side). A job's figures are a sum over its few dozen rows.
- `TrialReviewed` holds each reviewed trial's first annotation time (the review-progress
  plot groups it by day).

Both are kept by database triggers (review migration 0008), not by application code: trials
are written by bulk INSERT and COPY (ingest, the demo seed), by bulk updates, by `save()`,
and deleted by cascades from their job, and a trigger sees every one of those, in the
writing transaction. On PostgreSQL the triggers run once per statement over its transition
tables (a COPY of 10,000 trials is one grouped upsert); SQLite has row triggers only. A
deleted or updated trial's old counts are subtracted with an UPDATE (never an insert), so a
tally row that is already gone stays gone.

`rebuild` recounts both from the trials and annotations, for data written with the
triggers absent (a restored dump); the migration that made them has its own frozen copy.
"""

# ruff: noqa: S608 (every statement here is built from our own table and column names; no input)
from __future__ import annotations

from typing import Any

from rewards import rules

BINS = 10
KEY = ("job_id", "task_id", "agent_name", "model_name", "failure_mode")

_GATE_KINDS = (rules.JUDGE_PASS_SCORERS_FAIL, rules.SCORERS_PASS_JUDGE_FAIL, rules.ADVISORY_FAIL)
_HUMAN_KINDS = (rules.HUMAN_PASS_AUTOMATED_FAIL, rules.HUMAN_FAIL_AUTOMATED_PASS)


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
        cursor.execute(f"DELETE FROM {_TALLY}")
        cursor.execute(f"DELETE FROM {_REVIEWED}")
        cursor.execute(_upsert(_grouped("SELECT 1 AS sign, * FROM rewards_trial")))
        cursor.execute(
            f"INSERT INTO {_REVIEWED} (trial_id, job_id, first_at)"
            " SELECT a.trial_id, t.job_id, MIN(a.created_at) FROM review_annotation a"
            " JOIN rewards_trial t ON t.id = a.trial_id GROUP BY a.trial_id, t.job_id"
        )
