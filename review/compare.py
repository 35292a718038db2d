"""Two runs (jobs) compared task by task: paired outcomes, flips, deltas and McNemar's test.

A task is paired when both runs have a decided outcome for it. With several trials of a task
in one run, the task passes in that run when more than half of its decided trials pass (a
tie fails). Three outcomes are compared, each on its own pairing:

- verifier: reward ≥ the task's pass threshold (every trial decides);
- judge: the shown judge verdict, PASS or FAIL (no judge or UNPARSEABLE does not decide);
- human: the trial's human judgment, pass or fail (unreviewed, defer or mixed does not).

The database does the counting: one GROUP BY task gives each task's counts in both runs, and
the paired 2x2 table of every outcome is an aggregate over that grouped query (a subquery),
so nothing loops over trials or tasks in Python. The flipped tasks are a bounded list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Case, Count, F, IntegerField, Min, Q, Value, When

from rewards import agreement
from rewards.agreement import Interval, McNemar, PairedCounts
from rewards.models import Job, Trial

# Flipped tasks listed each way; the rest are counted.
MAX_FLIPS = 50


@dataclass(frozen=True)
class Outcome:
    key: str
    label: str
    decided: Q
    passed: Q


OUTCOMES = (
    Outcome("verifier", "Verifier outcome", Q(), Q(reward__gte=F("task__pass_threshold"))),
    Outcome(
        "judge",
        "Judge verdict",
        Q(judge_verdict__in=["PASS", "FAIL"]),
        Q(judge_verdict="PASS"),
    ),
    Outcome(
        "human",
        "Human judgment",
        Q(human_judgment__in=["pass", "fail"]),
        Q(human_judgment="pass"),
    ),
)


@dataclass(frozen=True)
class PairedResult:
    outcome: Outcome
    counts: PairedCounts
    interval: Interval | None
    test: McNemar

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
            "mcnemar_p": self.test.p_value,
            "mcnemar_method": self.test.method,
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


def _task_outcome(side: str, outcome: Outcome) -> Case:
    """1 when the task passed in that run, 0 when it failed, NULL when nothing decided."""
    n, passed = F(f"{side}_{outcome.key}_n"), F(f"{side}_{outcome.key}_pass")
    return Case(
        When(**{f"{side}_{outcome.key}_n": 0}, then=Value(None)),
        When(Q(**{f"{side}_{outcome.key}_pass__gt": n - passed}), then=Value(1)),
        default=Value(0),
        output_field=IntegerField(),
    )


def per_task(a: Job, b: Job) -> Any:
    """One row per task of either run (a values() queryset): counts and outcome in A and B."""
    counts: dict[str, Any] = {}
    for side, job in (("a", a), ("b", b)):
        in_run = Q(job=job)
        for outcome in OUTCOMES:
            counts[f"{side}_{outcome.key}_n"] = Count("id", filter=in_run & outcome.decided)
            counts[f"{side}_{outcome.key}_pass"] = Count(
                "id", filter=in_run & outcome.decided & outcome.passed
            )
        counts[f"{side}_trial"] = Min("id", filter=in_run)
    tasks = (
        Trial.objects.filter(job__in=[a, b])
        .order_by()
        .values("task_id", "task__name", "task__source")
        .annotate(**counts)
    )
    return tasks.annotate(
        **{
            f"{side}_{outcome.key}": _task_outcome(side, outcome)
            for side in ("a", "b")
            for outcome in OUTCOMES
        }
    )


def compare(a: Job, b: Job) -> Comparison:
    tasks = per_task(a, b)
    cells: dict[str, Any] = {
        "only_a": Count("task_id", filter=Q(b_trial__isnull=True)),
        "only_b": Count("task_id", filter=Q(a_trial__isnull=True)),
    }
    for outcome in OUTCOMES:
        a_out, b_out = f"a_{outcome.key}", f"b_{outcome.key}"
        for name, (x, y) in {
            "both_pass": (1, 1),
            "a_only": (1, 0),
            "b_only": (0, 1),
            "neither": (0, 0),
        }.items():
            cells[f"{outcome.key}_{name}"] = Count("task_id", filter=Q(**{a_out: x, b_out: y}))
    totals = tasks.aggregate(**cells)
    results = []
    for outcome in OUTCOMES:
        counts = PairedCounts(
            **{
                name: totals[f"{outcome.key}_{name}"] or 0
                for name in ("both_pass", "a_only", "b_only", "neither")
            }
        )
        results.append(
            PairedResult(
                outcome=outcome,
                counts=counts,
                interval=agreement.delta_interval(counts),
                test=agreement.mcnemar(counts.a_only, counts.b_only),
            )
        )
    return Comparison(
        a=a,
        b=b,
        results=results,
        only_a=totals["only_a"] or 0,
        only_b=totals["only_b"] or 0,
        regressions=flips(tasks, passed_in_a=True),
        improvements=flips(tasks, passed_in_a=False),
    )


def flips(tasks: Any, *, passed_in_a: bool) -> list[Flip]:
    """Tasks whose verifier outcome flipped between the runs, by task name; at most MAX_FLIPS."""
    before, after = (1, 0) if passed_in_a else (0, 1)
    rows = tasks.filter(a_verifier=before, b_verifier=after).order_by(
        "task__source", "task__name", "task_id"
    )[:MAX_FLIPS]
    return [
        Flip(
            task_id=row["task_id"],
            task=row["task__name"],
            source=row["task__source"],
            a_trial=row["a_trial"],
            b_trial=row["b_trial"],
        )
        for row in rows
    ]
