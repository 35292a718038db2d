"""Agreement's tallies: what one trial's latest judgments add to the counts, as plain values.

The agreement page over every trial would otherwise group every latest judgment on every
request (hundreds of thousands at a million trials). Instead `JudgmentTally` and
`PairTally` (review.models) hold those grouped counts, and each change to a trial's
judgments or gates adds the difference between the trial's tally before and after. This
module computes a trial's tally from its latest judgments; review.models stores and applies
it, in the transaction that changed the trial.

A trial's tally:
- per latest judgment, one count under its trial's gates (`Gates`) and its judgment, and
  one more under `blind=True` with its latest blind judgment, if it has one;
- per unordered pair of its reviewers who both judged pass or fail (reviewer ids ascending),
  one count under their two judgments and the number of such reviewers on the trial (what
  Krippendorff's alpha weighs a pair by), for every judgment and for blind judgments alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import astuple, dataclass
from typing import Any

from rewards.models import Trial

DECIDED = ("pass", "fail")
# The gates a judgment is tallied under, in the order of the tally's key columns.
GATE_FIELDS = (
    "judge_verdict",
    "scorer_verdict",
    "verifier",
    "failure_mode",
    "source",
    "judge_model",
)
# The trial fields the gates are read from: a save that changes none of them changes no tally.
TRIAL_FIELDS = frozenset(
    {"judge_verdict", "scorer_verdict", "reward", "failure_mode", "judge_model", "task"}
)

# (blind, *gates, judgment) and (blind, reviewer a, reviewer b, a's judgment, b's, raters)
JudgmentKey = tuple[bool, str, str, str, str, str, str, str]
PairKey = tuple[bool, int, int, str, str, int]


@dataclass(frozen=True)
class Gates:
    """What agreement compares a judgment with, and groups it by, read off its trial."""

    judge_verdict: str
    scorer_verdict: str
    verifier: str  # PASS when the reward reaches the task's pass threshold, else FAIL
    failure_mode: str
    source: str
    judge_model: str

    @classmethod
    def of(cls, trial: Trial) -> Gates:
        return cls(
            judge_verdict=trial.judge_verdict,
            scorer_verdict=trial.scorer_verdict,
            verifier="PASS" if trial.automated_pass else "FAIL",
            failure_mode=trial.failure_mode,
            source=trial.task.source,
            judge_model=trial.judge_model,
        )

    def as_dict(self) -> dict[str, str]:
        return dict(zip(GATE_FIELDS, astuple(self), strict=True))


@dataclass(frozen=True)
class Judged:
    """One reviewer's latest judgment of the trial, as tallied."""

    reviewer_id: int
    judgment: str
    blind_judgment: str  # '' when the reviewer made no blind annotation of the trial
    gates: Gates


@dataclass
class Tally:
    judgments: Counter[JudgmentKey]
    pairs: Counter[PairKey]

    def minus(self, other: Tally) -> Tally:
        """The change from `other` to this tally: positive and negative counts, no zeros."""
        return Tally(
            _difference(self.judgments, other.judgments), _difference(self.pairs, other.pairs)
        )


def _difference[K](new: Counter[K], old: Counter[K]) -> Counter[K]:
    changed: Counter[K] = Counter()
    for key in new.keys() | old.keys():
        if n := new[key] - old[key]:
            changed[key] = n
    return changed


def tally(rows: Iterable[Judged]) -> Tally:
    """The counts one trial's latest judgments contribute."""
    judgments: Counter[JudgmentKey] = Counter()
    pairs: Counter[PairKey] = Counter()
    ordered = sorted(rows, key=lambda row: row.reviewer_id)
    for blind in (False, True):
        counted = [
            (row.reviewer_id, row.blind_judgment if blind else row.judgment, row.gates)
            for row in ordered
        ]
        for _, judgment, gates in counted:
            if judgment:
                judgments[(blind, *astuple(gates), judgment)] += 1
        decided = [(reviewer, judgment) for reviewer, judgment, _ in counted if judgment in DECIDED]
        for i, (a, a_judgment) in enumerate(decided):
            for b, b_judgment in decided[i + 1 :]:
                pairs[(blind, a, b, a_judgment, b_judgment, len(decided))] += 1
    return Tally(judgments, pairs)


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


def rebuild(connection: Any) -> None:
    """Recount the latest judgments and every agreement tally (of all trials and per job)
    from the annotations.

    For data written around the application (raw SQL, a restored dump): the application
    keeps all of them itself. `manage.py retally` runs it, with the job tallies'.
    """
    tables = (
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
    )
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"DELETE FROM {table}")  # noqa: S608 (our table names)
        for statement in statements:
            cursor.execute(statement)
