"""Two runs (jobs) compared task by task: paired outcomes, flips, deltas and McNemar's test.

A task is paired when both runs have a decided outcome for it. With several trials of a task
in one run, the task passes in that run when more than half of its decided trials pass and
fails when fewer than half do; a tie (exactly half, 1 of 2 say) decides nothing: the task is
left out of that outcome's pairing and counted apart (`PairedResult.tied`), never taken for a
fail. Three outcomes are compared, each on its own pairing, so each has its own number of
paired tasks:

- verifier: reward ≥ the task's pass threshold (every trial decides);
- judge: the shown judge verdict, PASS or FAIL (no judge or UNPARSEABLE does not decide);
- human: the trial's human judgment, pass or fail (unreviewed, defer or mixed does not).

The database does the counting, from the runs' kept tallies (review.science.job_tallies): one GROUP
BY job and task over them gives each task's counts in both runs, and Python reads each
task's outcomes and pairs them (a row per task, never per trial). The flipped tasks are a
bounded list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Sum

from review.models import JobTally
from review.science.exclusions import Exclusions
from rewards import agreement
from rewards.agreement import Degenerate, Interval, McNemar, NoInterval, PairedCounts
from rewards.models import Job

# Flipped tasks listed each way; the rest are counted.
MAX_FLIPS = 50


@dataclass(frozen=True)
class Outcome:
    key: str
    label: str
    decided: str  # the kept counter of trials that decided (review.science.job_tallies)
    passed: str  # and of those that passed


OUTCOMES = (
    Outcome("verifier", "Verifier outcome", "trials", "verifier_pass"),
    Outcome("judge", "Judge verdict", "judge_decided", "judge_pass"),
    Outcome("human", "Human judgment", "human_decided", "human_pass"),
)


# Fewer paired tasks than this: Δ has no interval (rewards.agreement.delta_refusal).
MIN_TASKS = agreement.MIN_UNITS
# Why Δ has no interval, in the page's words.
_NO_INTERVAL = {
    Degenerate.EMPTY: "no paired task",
    Degenerate.TOO_FEW: f"fewer than {MIN_TASKS} paired tasks",
    Degenerate.NO_CHANGE: "no task changed outcome",
    Degenerate.ONE_CELL: "every paired task in one cell",
    Degenerate.NO_SPREAD: "every resample gives the same Δ",
}
# McNemar's switch (rewards.agreement.mcnemar), worded as it is implemented.
EXACT_BELOW = agreement.EXACT_BELOW
METHODS = {"exact": "exact binomial", "chi2": "χ², continuity-corrected"}


@dataclass(frozen=True)
class PairedResult:
    outcome: Outcome
    counts: PairedCounts
    interval: Interval | None
    test: McNemar | None  # None when no task was decided by both runs: nothing to test
    tied: int = 0  # tasks both runs decided or tied, a tie in either: not paired
    no_interval: str = ""  # why Δ has no interval ('' when it has one)

    @property
    def method(self) -> str:
        """How McNemar's p was computed, in words."""
        return METHODS[self.test.method] if self.test else ""

    def as_dict(self) -> dict[str, Any]:
        c = self.counts
        return {
            "tasks": c.n,
            "both_pass": c.both_pass,
            "a_only": c.a_only,
            "b_only": c.b_only,
            "neither": c.neither,
            "a_pass_rate": c.a_rate,
            "b_pass_rate": c.b_rate,
            "delta": c.delta,
            "delta_ci": [self.interval.low, self.interval.high] if self.interval else None,
            "delta_no_interval": self.no_interval or None,
            "tied_tasks": self.tied,
            "mcnemar_p": self.test.p_value if self.test else None,
            "mcnemar_method": self.test.method if self.test else None,
        }


@dataclass(frozen=True)
class Flip:
    task_id: int
    task: str
    source: str
    a_trial: int
    b_trial: int


@dataclass(frozen=True)
class Comparison:
    a: Job
    b: Job
    results: list[PairedResult]
    only_a: int  # tasks run only in A
    only_b: int
    regressions: list[Flip]  # verifier: passed in A, failed in B
    improvements: list[Flip]  # verifier: failed in A, passed in B

    @property
    def flip_lists(self) -> list[tuple[str, list[Flip], int]]:
        verifier = self.results[0].counts
        return [
            ("Passed in A, failed in B", self.regressions, verifier.a_only),
            ("Failed in A, passed in B", self.improvements, verifier.b_only),
        ]


@dataclass(frozen=True)
class TaskOutcomes:
    """One task of either run: whether it passed in A and in B, per outcome (None when the
    run decided nothing for it, or did not run it)."""

    task_id: int
    task: str
    source: str
    in_a: bool  # the task has trials in A
    in_b: bool
    a: dict[str, bool | None]  # outcome key → passed in A (None: undecided or tied)
    b: dict[str, bool | None]
    tied_a: frozenset[str] = frozenset()  # the outcomes A's trials tied on
    tied_b: frozenset[str] = frozenset()


def _passed(decided: int, passed: int) -> bool | None:
    """More than half of the decided trials passed: True; fewer than half: False; exactly
    half (a tie) or nothing decided: None. A tie is no pass and no fail."""
    if not decided or 2 * passed == decided:
        return None
    return 2 * passed > decided


def _tied(row: dict[str, Any] | None) -> frozenset[str]:
    """The outcomes whose decided trials split exactly in half in this run."""
    if row is None:
        return frozenset()
    return frozenset(
        o.key for o in OUTCOMES if row[o.decided] and 2 * row[o.passed] == row[o.decided]
    )


def per_task(a: Job, b: Job, left_out: Exclusions | None = None) -> list[TaskOutcomes]:
    """Every task of either run with its outcomes in A and B, by source and name.

    One query: the two jobs' kept tallies (`JobTally`, a few dozen rows per job) summed per
    job and task by the database, never their trials; the outcomes are read off those sums.
    Trials `left_out` (`review.science.exclusions`) are taken off those sums; a task left
    with no trial in a run was not run there.
    """
    counters = sorted({"trials", *(c for o in OUTCOMES for c in (o.decided, o.passed))})
    rows = (
        JobTally.objects.filter(job__in=[a, b], trials__gt=0)
        .order_by()
        .values("job_id", "task_id", "task__name", "task__source")
        .annotate(**{c: Sum(c) for c in counters})
    )
    sides: dict[int, dict[int, dict[str, Any]]] = {a.pk: {}, b.pk: {}}
    names: dict[int, tuple[str, str]] = {}
    for row in rows:
        sides[row["job_id"]][row["task_id"]] = dict(row)
        names[row["task_id"]] = (row["task__source"], row["task__name"])
    if left_out is not None:
        _take_out(sides, left_out, counters)

    def outcomes(row: dict[str, Any] | None) -> dict[str, bool | None]:
        return {o.key: _passed(row[o.decided], row[o.passed]) if row else None for o in OUTCOMES}

    return [
        TaskOutcomes(
            task_id=task_id,
            task=name,
            source=source,
            in_a=task_id in sides[a.pk],
            in_b=task_id in sides[b.pk],
            a=outcomes(sides[a.pk].get(task_id)),
            b=outcomes(sides[b.pk].get(task_id)),
            tied_a=_tied(sides[a.pk].get(task_id)),
            tied_b=_tied(sides[b.pk].get(task_id)),
        )
        for task_id, (source, name) in sorted(names.items(), key=lambda t: (t[1], t[0]))
        if task_id in sides[a.pk] or task_id in sides[b.pk]
    ]


def _take_out(
    sides: dict[int, dict[int, dict[str, Any]]], left_out: Exclusions, counters: list[str]
) -> None:
    """Subtract the trials left out from each job's task sums; drop a task with none left."""
    for (job_id, task_id), removed in left_out.by_job_task().items():
        row = sides.get(job_id, {}).get(task_id)
        if row is None:
            continue
        for name in counters:
            row[name] += removed[name]
        if not row["trials"]:
            del sides[job_id][task_id]


def paired(tasks: list[TaskOutcomes], key: str) -> PairedCounts:
    """The paired 2x2 table of one outcome over the tasks both runs decided."""
    cells = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for task in tasks:
        in_a, in_b = task.a[key], task.b[key]
        if in_a is not None and in_b is not None:
            cells[in_a, in_b] += 1
    return PairedCounts(
        both_pass=cells[True, True],
        a_only=cells[True, False],
        b_only=cells[False, True],
        neither=cells[False, False],
    )


def tied(tasks: list[TaskOutcomes], key: str) -> int:
    """The tasks one outcome leaves out of its pairing for a tie: both runs decided or tied
    it, and at least one tied."""
    return sum(
        1
        for task in tasks
        if (key in task.tied_a or key in task.tied_b)
        and (task.a[key] is not None or key in task.tied_a)
        and (task.b[key] is not None or key in task.tied_b)
    )


def compare(a: Job, b: Job, left_out: Exclusions | None = None) -> Comparison:
    tasks = per_task(a, b, left_out)
    results = []
    for outcome in OUTCOMES:
        counts = paired(tasks, outcome.key)
        interval = agreement.delta_interval(counts)
        results.append(
            PairedResult(
                outcome=outcome,
                counts=counts,
                interval=interval if isinstance(interval, Interval) else None,
                # No paired task: the test has no data, and p = 1.0 would read as "no change".
                test=agreement.mcnemar(counts.a_only, counts.b_only) if counts.n else None,
                tied=tied(tasks, outcome.key),
                no_interval=(
                    _NO_INTERVAL[interval.reason] if isinstance(interval, NoInterval) else ""
                ),
            )
        )
    regressed = [t for t in tasks if t.a["verifier"] is True and t.b["verifier"] is False]
    improved = [t for t in tasks if t.a["verifier"] is False and t.b["verifier"] is True]
    listed = [*regressed[:MAX_FLIPS], *improved[:MAX_FLIPS]]
    trials = representative_trials(a, b, [t.task_id for t in listed])
    return Comparison(
        a=a,
        b=b,
        results=results,
        only_a=sum(1 for t in tasks if not t.in_b),
        only_b=sum(1 for t in tasks if not t.in_a),
        regressions=_flips(regressed, trials, a_passed=True),
        improvements=_flips(improved, trials, a_passed=False),
    )


@dataclass(frozen=True)
class Representatives:
    """A task's first passing and first failing trial in each run (None: it has none)."""

    a_pass: int | None
    a_fail: int | None
    b_pass: int | None
    b_fail: int | None


def representative_trials(a: Job, b: Job, task_ids: list[int]) -> dict[int, Representatives]:
    """Each task's first passing and first failing trial in A and in B, by the verifier
    outcome (reward against the task's pass threshold): what a flipped task's side-by-side
    opens, a pass next to a fail.

    One query, per task four probes of the job's trials in id order (`_REPRESENTATIVES`:
    written as SQL, as the ORM took ten times as long to build it as the database to run it).
    """
    if not task_ids:
        return {}
    tasks = ", ".join(["%s"] * len(task_ids))
    sql = _REPRESENTATIVES.format(tasks=tasks)  # placeholders only: the ids are parameters
    with connection.cursor() as cursor:
        cursor.execute(sql, [a.pk, a.pk, b.pk, b.pk, *task_ids])
        return {row[0]: Representatives(*row[1:]) for row in cursor.fetchall()}


# A job's (a parameter) first trial of task k passing, then failing, by its reward against the
# task's pass threshold: for A, then for B.
_REPRESENTATIVES = """
SELECT k.id,
    (SELECT t.id FROM rewards_trial t WHERE t.job_id = %s AND t.task_id = k.id
        AND t.reward >= k.pass_threshold ORDER BY t.id LIMIT 1),
    (SELECT t.id FROM rewards_trial t WHERE t.job_id = %s AND t.task_id = k.id
        AND t.reward < k.pass_threshold ORDER BY t.id LIMIT 1),
    (SELECT t.id FROM rewards_trial t WHERE t.job_id = %s AND t.task_id = k.id
        AND t.reward >= k.pass_threshold ORDER BY t.id LIMIT 1),
    (SELECT t.id FROM rewards_trial t WHERE t.job_id = %s AND t.task_id = k.id
        AND t.reward < k.pass_threshold ORDER BY t.id LIMIT 1)
FROM rewards_task k WHERE k.id IN ({tasks})
"""


def _flips(
    tasks: list[TaskOutcomes], trials: dict[int, Representatives], a_passed: bool
) -> list[Flip]:
    """At most MAX_FLIPS of the tasks (already by source and name), each with a trial of
    the side that passed next to one of the side that failed. A run's outcome is its
    trials' majority, so each side has a trial of its own outcome."""
    flips = []
    for t in tasks[:MAX_FLIPS]:
        found = trials[t.task_id]
        a_trial = found.a_pass if a_passed else found.a_fail
        b_trial = found.b_fail if a_passed else found.b_pass
        if a_trial is not None and b_trial is not None:
            flips.append(Flip(t.task_id, t.task, t.source, a_trial, b_trial))
    return flips
