"""Agreement's tallies: each reviewer's latest judgments, counted, kept by the database.

The agreement page over every trial would otherwise group every latest judgment on every
request (hundreds of thousands at a million trials). Instead `LatestJudgment` holds each
reviewer's latest (and latest blind) judgment of each trial, with the trial's gates, and
`JudgmentTally`, `PairTally`, `MultiRatedTally` and their per-job twins (review.models)
hold their grouped counts:
- per latest judgment, one count under its trial's gates (`GATE_FIELDS`) and its judgment,
  and one more under `blind=True` with its latest blind judgment, if it has one;
- per unordered pair of a trial's reviewers who both judged pass or fail (reviewer ids
  ascending), one count under their two judgments and the number of such reviewers on the
  trial (what Krippendorff's alpha weighs a pair by), for every judgment and for blind
  judgments alike;
- per trial with two or more pass / fail judgments, one count under its gates and the
  numbers of them that pass and fail (`MultiRatedTally`, `JobMultiRatedTally`: the units
  of κ's cluster bootstrap), for every judgment and for blind judgments alike.

Database triggers keep all of them (review migrations 0009 and 0018), in the writing statement's
transaction, whichever way an annotation is inserted or a trial's gates change (`save()`,
`bulk_create`, `QuerySet.update`, COPY). This module holds the recount, `rebuild`: the
same rules written as one set of statements over every trial, for data written with the
triggers absent (a restored dump) and for the tests that check the triggers against it.

It also holds the reads the agreement page makes of them (`judgment_counts`,
`multi_rated_counts`, `pair_counts`): a few hundred rows summed by a statement fixed but
for the breakdown's column, written here as SQL because building and compiling the
equivalent queryset costs more than running it.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import connection as default_connection

from review.models import GATE_FIELDS

# --- recount ---------------------------------------------------------------------------------
# Every statement below runs on SQLite and PostgreSQL alike (window functions). A reviewer's
# latest annotation of a trial is the newest by created_at, then id.
_GATES = ", ".join(GATE_FIELDS)

_FILL_LATEST = """
INSERT INTO review_latestjudgment (trial_id, reviewer_id, annotation_id, judgment,
    blind_annotation_id, blind_judgment, judge_verdict, scorer_verdict, verifier,
    failure_mode, source, judge_model)
SELECT l.trial_id, l.reviewer_id, l.id, l.judgment, b.id, COALESCE(b.judgment, ''),
    t.judge_verdict, t.scorer_verdict,
    CASE WHEN t.reward >= k.pass_threshold THEN 'PASS' ELSE 'FAIL' END,
    t.failure_mode, k.source, t.judge_model
FROM (
    SELECT trial_id, reviewer_id, id, judgment,
        ROW_NUMBER() OVER (PARTITION BY trial_id, reviewer_id
                           ORDER BY created_at DESC, id DESC) AS newest
    FROM review_annotation
) l
LEFT JOIN (
    SELECT trial_id, reviewer_id, id, judgment,
        ROW_NUMBER() OVER (PARTITION BY trial_id, reviewer_id
                           ORDER BY created_at DESC, id DESC) AS newest
    FROM review_annotation WHERE blind
) b ON b.trial_id = l.trial_id AND b.reviewer_id = l.reviewer_id AND b.newest = 1
JOIN rewards_trial t ON t.id = l.trial_id
JOIN rewards_task k ON k.id = t.task_id
WHERE l.newest = 1
"""


def _fill_judgments(per_job: bool) -> str:
    table = "review_jobjudgmenttally" if per_job else "review_judgmenttally"
    job = "t.job_id, " if per_job else ""
    join = " JOIN rewards_trial t ON t.id = l.trial_id" if per_job else ""
    gates = ", ".join(f"l.{name}" for name in GATE_FIELDS)
    return f"""
INSERT INTO {table} ({"job_id, " if per_job else ""}blind, {_GATES}, judgment, n)
SELECT {job}FALSE, {gates}, l.judgment, COUNT(*) FROM review_latestjudgment l{join}
GROUP BY {job}{gates}, l.judgment
UNION ALL
SELECT {job}TRUE, {gates}, l.blind_judgment, COUNT(*) FROM review_latestjudgment l{join}
WHERE l.blind_judgment <> ''
GROUP BY {job}{gates}, l.blind_judgment
"""  # noqa: S608 (our table and column names)


def _pairs(blind: str, column: str, per_job: bool) -> str:
    job = "t.job_id, " if per_job else ""
    join = " JOIN rewards_trial t ON t.id = a.trial_id" if per_job else ""
    return f"""
SELECT {job}{blind}, a.reviewer_id, b.reviewer_id, a.{column}, b.{column}, a.raters, COUNT(*)
FROM (
    SELECT trial_id, reviewer_id, {column},
        COUNT(*) OVER (PARTITION BY trial_id) AS raters
    FROM review_latestjudgment WHERE {column} IN ('pass', 'fail')
) a
JOIN review_latestjudgment b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
    AND b.{column} IN ('pass', 'fail'){join}
WHERE a.raters > 1
GROUP BY {job}a.reviewer_id, b.reviewer_id, a.{column}, b.{column}, a.raters
"""  # noqa: S608 (our table and column names)


def _fill_pairs(per_job: bool) -> str:
    table = "review_jobpairtally" if per_job else "review_pairtally"
    return f"""
INSERT INTO {table} ({"job_id, " if per_job else ""}blind, reviewer_a_id, reviewer_b_id,
    judgment_a, judgment_b, raters, n)
{_pairs("FALSE", "judgment", per_job)}
UNION ALL
{_pairs("TRUE", "blind_judgment", per_job)}
"""


def _multi_rated(blind: str, column: str, per_job: bool) -> str:
    """Per trial with two or more pass / fail judgments (`column`): its gates and how many
    of them pass and fail."""
    job = "t.job_id, " if per_job else ""
    join = " JOIN rewards_trial t ON t.id = l.trial_id" if per_job else ""
    gates = ", ".join(f"l.{name}" for name in GATE_FIELDS)
    return f"""
    SELECT {job}{blind} AS blind, {gates},
        SUM(CASE WHEN l.{column} = 'pass' THEN 1 ELSE 0 END) AS passes,
        SUM(CASE WHEN l.{column} = 'fail' THEN 1 ELSE 0 END) AS fails
    FROM review_latestjudgment l{join}
    WHERE l.{column} IN ('pass', 'fail')
    GROUP BY {job}l.trial_id, {gates}
    HAVING COUNT(*) > 1"""  # noqa: S608 (our table and column names)


def _fill_multi_rated(per_job: bool) -> str:
    table = "review_jobmultiratedtally" if per_job else "review_multiratedtally"
    job = "m.job_id, " if per_job else ""
    key = f"{job}m.blind, {', '.join(f'm.{name}' for name in GATE_FIELDS)}, m.passes, m.fails"
    return f"""
INSERT INTO {table} ({"job_id, " if per_job else ""}blind, {_GATES}, passes, fails, n)
SELECT {key}, COUNT(*) FROM ({_multi_rated("FALSE", "judgment", per_job)}
    UNION ALL{_multi_rated("TRUE", "blind_judgment", per_job)}
) m
GROUP BY {key}
"""  # noqa: S608 (our table and column names)


def rebuild(connection: Any) -> None:
    """Recount the latest judgments and every agreement tally (of all trials and per job)
    from the annotations.

    For data written with the triggers absent (a restored dump): the triggers keep all of
    them otherwise. `manage.py retally` runs it, with the job tallies'.
    """
    tables = (
        "review_jobmultiratedtally",
        "review_multiratedtally",
        "review_jobpairtally",
        "review_jobjudgmenttally",
        "review_pairtally",
        "review_judgmenttally",
        "review_latestjudgment",
    )
    statements = (
        _FILL_LATEST,
        _fill_judgments(per_job=False),
        _fill_pairs(per_job=False),
        _fill_judgments(per_job=True),
        _fill_pairs(per_job=True),
        _fill_multi_rated(per_job=False),
        _fill_multi_rated(per_job=True),
    )
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"DELETE FROM {table}")  # noqa: S608 (our table names)
        for statement in statements:
            cursor.execute(statement)


# --- reads -------------------------------------------------------------------------------------
# Every trial's rows, or one job's (its tally's key leads with the job), of judgments counted
# alike (every reviewer's latest, or blind ones only); a row counting none is a count taken
# back to 0 and left in place.
def _where(job: int | None, blind: bool, alias: str = "") -> tuple[str, list[Any]]:
    prefix = f"{alias}." if alias else ""
    where = f"{prefix}blind = %s AND {prefix}n > 0"
    if job is None:
        return where, [blind]
    return f"{prefix}job_id = %s AND {where}", [job, blind]


def _group_column(group: str) -> str:
    if group not in GATE_FIELDS:
        raise ValueError(f"not a tallied gate: {group!r}")
    return group


def _rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with default_connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [tuple(row) for row in cursor.fetchall()]


def judgment_counts(job: int | None, blind: bool, group: str) -> list[tuple[Any, ...]]:
    """(verifier, judge verdict, scorer verdict, judgment, `group`'s value, judgments): the
    judgment tally (`JudgmentTally`, or the job's `JobJudgmentTally`) summed by the gates,
    the judgment and one breakdown gate. One query."""
    key = f"verifier, judge_verdict, scorer_verdict, judgment, {_group_column(group)}"
    return _summed("review_judgmenttally", "review_jobjudgmenttally", job, blind, key)


def multi_rated_counts(job: int | None, blind: bool, group: str) -> list[tuple[Any, ...]]:
    """(verifier, judge verdict, scorer verdict, `group`'s value, passes, fails, trials):
    the tally of trials with two or more pass / fail judgments (`MultiRatedTally`, or the
    job's `JobMultiRatedTally`) summed by the gates, one breakdown gate and what each trial
    adds. One query."""
    key = f"verifier, judge_verdict, scorer_verdict, {_group_column(group)}, passes, fails"
    return _summed("review_multiratedtally", "review_jobmultiratedtally", job, blind, key)


def _summed(every: str, per_job: str, job: int | None, blind: bool, key: str) -> list[Any]:
    """A tally's counts summed by the columns `key` lists: of every trial (table `every`) or
    of one job's (`per_job`)."""
    table = every if job is None else per_job
    where, params = _where(job, blind)
    return _rows(
        f"SELECT {key}, SUM(n) FROM {table} WHERE {where} GROUP BY {key}",  # noqa: S608 (our table and column names)
        params,
    )


def pair_counts(job: int | None, blind: bool) -> list[tuple[Any, ...]]:
    """(reviewer a, reviewer b, their usernames, a's judgment, b's judgment, raters on the
    trial, trials): the pair tally (`PairTally`, or the job's `JobPairTally`) with the
    reviewers' names. One query."""
    table = "review_pairtally" if job is None else "review_jobpairtally"
    users = default_connection.ops.quote_name(User._meta.db_table)
    where, params = _where(job, blind, "p")
    return _rows(
        f"""SELECT p.reviewer_a_id, p.reviewer_b_id, ua.username, ub.username, p.judgment_a,
            p.judgment_b, p.raters, p.n
        FROM {table} p
        JOIN {users} ua ON ua.id = p.reviewer_a_id
        JOIN {users} ub ON ub.id = p.reviewer_b_id
        WHERE {where}""",  # noqa: S608 (our table and column names)
        params,
    )
