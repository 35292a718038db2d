"""Each job's figures, counted once when trials and annotations are written.

The job page, its plots and the comparison of two runs would otherwise aggregate a job's
trials on every request (10,000 trials: 10 to 90 ms a query on PostgreSQL). Instead:

- `JobTally` (review.models) holds, for each job, task, agent, model and failure mode, the
  trial counts those pages show (every gate's passes, the reward histogram's bins, cost and
  tokens, the human side). A job's figures are a sum over its few dozen rows.
- `TrialReviewed` holds each reviewed trial's first annotation time (the review-progress
  plot groups it by day).

Every kept figure is an integer, so a figure kept through any sequence of writes equals a
recount exactly (issue 26): adding and subtracting floats drifts in the last digits, and the
drift grows with every re-ingest. Rewards and costs are floats from artifacts, with no
precision of their own to keep, so each is rounded once to `SCALE` units (1e-9: a
nano-reward, a nano-dollar) by the same SQL expression in the triggers and in the recount;
what is added up is then exact integers. At 1e-9 a page's mean (three decimals) cannot move.
A reward is in [0, 1] (a check constraint), at most 1e9 units a trial; a cost is counted
only within [0, `MAX_COUNTED_COST`] dollars (1e15 units a trial), so a 64-bit sum holds
thousands of million-dollar trials and a nonsense cost can neither overflow it nor stop a
trial from being written.

Both are kept by database triggers (review migration 0008, where their SQL is written out
for each vendor, and 0010, which made the sums integers), not by application code: trials
are written by bulk INSERT and COPY (ingest, the demo seed), by bulk updates, by `save()`,
and deleted by cascades from their job, and a trigger sees every one of those, in the
writing transaction. On PostgreSQL the triggers run once per statement over its transition
tables (a COPY of 10,000 trials is one grouped upsert); SQLite has row triggers only. A
deleted or updated trial's old counts are subtracted with an UPDATE (never an insert), so a
tally row that is already gone stays gone.

This module names the counters (the pages read them by these names) and writes the
recount, `rebuild`, from the same rules: for data written with the triggers absent (a
restored dump), and for the tests that check the triggers against it.
"""

# ruff: noqa: S608 (every statement here is built from our own table and column names; no input)
from __future__ import annotations

from typing import Any

from rewards import rules

BINS = 10
# Kept sums count units of 1 / SCALE (review.models.JobTally.reward_units, cost_units).
SCALE = 1_000_000_000
# Dollars: a trial's cost above this (or below zero) is not counted in a job's cost figures.
MAX_COUNTED_COST = 1_000_000
KEY = ("job_id", "task_id", "agent_name", "model_name", "failure_mode")

_GATE_KINDS = (rules.JUDGE_PASS_SCORERS_FAIL, rules.SCORERS_PASS_JUDGE_FAIL, rules.ADVISORY_FAIL)
_HUMAN_KINDS = (rules.HUMAN_PASS_AUTOMATED_FAIL, rules.HUMAN_FAIL_AUTOMATED_PASS)


def _when(condition: str) -> str:
    return f"CASE WHEN {condition} THEN 1 ELSE 0 END"


def _among(column: str, values: tuple[str, ...]) -> str:
    return _when(f"{{r}}.{column} IN ({', '.join(repr(v) for v in values)})")


def _units(value: str) -> str:
    """`value` rounded to a whole number of `SCALE` units, in either database's SQL."""
    return f"CAST(ROUND({value} * {SCALE}) AS BIGINT)"


_COUNTED_COST = f"{{r}}.cost_usd >= 0 AND {{r}}.cost_usd <= {MAX_COUNTED_COST}"


def _bin(i: int) -> str:
    low, high = i / BINS, (i + 1) / BINS
    upper = f"{{r}}.reward <= {high!r}" if i == BINS - 1 else f"{{r}}.reward < {high!r}"
    return _when(f"{{r}}.reward >= {low!r} AND {upper}")


# Each counter: its column and what one trial adds to it ({r}: the trial row, {k}: its task).
COUNTERS: tuple[tuple[str, str], ...] = (
    ("trials", "1"),
    ("reward_units", _units("{r}.reward")),
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
    ("cost_units", f"CASE WHEN {_COUNTED_COST} THEN {_units('{r}.cost_usd')} ELSE 0 END"),
    ("cost_n", _when(_COUNTED_COST)),
    ("tokens_sum", "COALESCE({r}.n_input_tokens + {r}.n_output_tokens, 0)"),
    ("tokens_n", _when("{r}.n_input_tokens IS NOT NULL AND {r}.n_output_tokens IS NOT NULL")),
)
COUNTER_NAMES = tuple(name for name, _ in COUNTERS)

# A pending or running trial (followed while its job runs) has no outcome yet: it is left out
# of the tallies until it finishes, or it would count as a failure (review migration 0011).
COUNTED = "WHERE status NOT IN ('pending', 'running')"

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


# --- recount -------------------------------------------------------------------------------
def rebuild(connection: Any) -> None:
    """Empty both tallies and count them again from every trial and annotation."""
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {_TALLY}")
        cursor.execute(f"DELETE FROM {_REVIEWED}")
        cursor.execute(_upsert(_grouped(f"SELECT 1 AS sign, * FROM rewards_trial {COUNTED}")))
        cursor.execute(
            f"INSERT INTO {_REVIEWED} (trial_id, job_id, first_at)"
            " SELECT a.trial_id, t.job_id, MIN(a.created_at) FROM review_annotation a"
            " JOIN rewards_trial t ON t.id = a.trial_id GROUP BY a.trial_id, t.job_id"
        )


# --- what some trials add ------------------------------------------------------------------
# A contribution row: the tally key with the task's name and source, then every counter.
CONTRIBUTION_KEY = (
    "job_id",
    "task_id",
    "task__name",
    "task__source",
    "agent_name",
    "model_name",
    "failure_mode",
)


def contributions(
    connection: Any, job_ids: list[int], task_ids: list[int], trial_ids: list[int]
) -> list[tuple[Any, ...]]:
    """What the jobs' trials of the tasks `task_ids`, and the trials `trial_ids`, add to
    the kept tallies, per tally key (`CONTRIBUTION_KEY`, then `COUNTER_NAMES`): one query
    over those trials alone (the trial_task_id_idx index), counted by the same rules as the
    triggers. Subtracted from the tallies, the figures without those trials.
    """
    chosen = []
    params: list[Any] = list(job_ids)
    if task_ids:
        chosen.append(f"r.task_id IN ({', '.join(['%s'] * len(task_ids))})")
        params.extend(task_ids)
    if trial_ids:
        chosen.append(f"r.id IN ({', '.join(['%s'] * len(trial_ids))})")
        params.extend(trial_ids)
    if not job_ids or not chosen:
        return []
    sums = ", ".join(f"SUM({expr.format(r='r', k='k')})" for _, expr in COUNTERS)
    key = "r.job_id, r.task_id, k.name, k.source, r.agent_name, r.model_name, r.failure_mode"
    sql = (
        f"SELECT {key}, {sums} FROM rewards_trial r JOIN rewards_task k ON k.id = r.task_id"
        f" WHERE r.job_id IN ({', '.join(['%s'] * len(job_ids))})"
        " AND r.status NOT IN ('pending', 'running')"
        f" AND ({' OR '.join(chosen)}) GROUP BY {key} ORDER BY {key}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [tuple(row) for row in cursor.fetchall()]
