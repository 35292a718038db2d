"""Aggregates for the jobs pages: trial counts, mean reward, each gate's pass rate, review progress.

Both jobs pages add up the jobs' kept tallies (review.science.job_tallies): the list per job, one
job's page in total, per task and per agent and model. Each page runs a fixed number of
queries whatever the number of trials.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.db.models import Subquery, Sum

from review.models import JobFacts, JobTally, job_facts
from review.science import exclusions, job_tallies
from review.science.exclusions import Exclusions
from rewards.models import Job

# Jobs per page of the jobs list (each job's figures are its kept tally rows, added up).
JOBS_PAGE = 20


def _rate(part: int | None, whole: int | None) -> float | None:
    return (part or 0) / whole if whole else None


@dataclass(frozen=True)
class Summary:
    """One row of aggregates with its rates; a rate is None when its gate never ran."""

    trial_count: int
    mean_reward: float | None
    valid_rate: float | None
    scorer_rate: float | None
    scorer_ran: int
    judge_rate: float | None
    judge_decided: int
    judge_unparseable: int
    run_rate: float | None
    run_done: int
    reviewed: int
    review_rate: float | None
    gate_disagreements: int
    human_disagreements: int

    @classmethod
    def of(cls, row: Any) -> Summary:
        get = row.get if isinstance(row, dict) else lambda name: getattr(row, name)
        total = get("trial_count") or 0
        return cls(
            trial_count=total,
            mean_reward=get("mean_reward"),
            valid_rate=_rate(get("valid_count"), total),
            scorer_rate=_rate(get("scorer_pass"), get("scorer_ran")),
            scorer_ran=get("scorer_ran") or 0,
            judge_rate=_rate(get("judge_pass"), get("judge_decided")),
            judge_decided=get("judge_decided") or 0,
            judge_unparseable=get("judge_unparseable") or 0,
            run_rate=_rate(get("run_pass"), get("run_done")),
            run_done=get("run_done") or 0,
            reviewed=get("reviewed") or 0,
            review_rate=_rate(get("reviewed"), total),
            gate_disagreements=get("gate_disagreements") or 0,
            human_disagreements=get("human_disagreements") or 0,
        )


@dataclass(frozen=True)
class JobsPage:
    rows: list[tuple[Job, Summary, JobFacts]]  # each job with its summary and facts
    next_after: int | None  # the id to pass as `after` for the next page; None at the end
    left_out: Exclusions | None = None  # the trials the summaries leave out


def jobs_page(
    after: int | None = None,
    size: int = JOBS_PAGE,
    with_facts: bool = True,
    included: frozenset[str] = frozenset(),
) -> JobsPage:
    """Jobs by start, newest first (`Job.objects.by_start`), `size` of them after the job
    `after`, each with its summary and facts (agents, models, datasets).

    Three queries whatever the jobs' sizes: the page of jobs by keyset, then their kept
    tally rows (`review.science.job_tallies`, a few dozen a job) added up per job in SQL,
    then the same rows' agents, models and datasets (unless `with_facts` is false). The
    trials left out by default (`review.science.exclusions`, unless `included`) are
    subtracted: one more query when the jobs have any.
    """
    jobs = Job.objects.defer("config", "stats").by_start()
    if after is not None:
        # Resumed after the job `after`, at its place in the order (a subquery: one query).
        place = Job.objects.filter(pk=after).values(when=Job.ran_at())[:1]
        jobs = jobs.started_before(Subquery(place), after)
    page = list(jobs[: size + 1])
    shown = page[:size]
    counters = {
        row[0]: _summed([row[1:]])
        for row in JobTally.objects.filter(job__in=[job.pk for job in shown])
        .order_by()
        .values("job_id")
        .annotate(*(Sum(name) for name in job_tallies.COUNTER_NAMES))
        .values_list("job_id", *(f"{name}__sum" for name in job_tallies.COUNTER_NAMES))
    }
    left_out = exclusions.for_jobs([job.pk for job in shown], included)
    if left_out.left_out:
        counters = {job.pk: _without(counters.get(job.pk), job.pk, left_out) for job in shown}
    facts = job_facts([job.pk for job in shown]) if with_facts else {}
    rows = [
        (job, Summary.of(counters.get(job.pk) or _summed([])), facts.get(job.pk, JobFacts()))
        for job in shown
    ]
    return JobsPage(rows, shown[-1].pk if len(page) > size else None, left_out)


def _without(totals: dict[str, Any] | None, job_id: int, left_out: Exclusions) -> dict[str, Any]:
    """A job's summed counters with the trials left out taken off."""
    kept = [tuple(totals[name] for name in job_tallies.COUNTER_NAMES)] if totals else []
    return _summed(kept + [row[5:] for row in left_out.job_rows(job_id)])


def _summed(rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    """Kept counters (review.science.job_tallies) added up, with the names `Summary.of` reads
    and the mean reward."""
    totals = dict.fromkeys(job_tallies.COUNTER_NAMES, 0)
    for row in rows:
        for name, value in zip(job_tallies.COUNTER_NAMES, row, strict=True):
            totals[name] += value
    n = totals["trials"]
    return {
        **totals,
        "trial_count": n,
        "valid_count": totals["valid"],
        "mean_reward": int(totals["reward_units"]) / (job_tallies.SCALE * n) if n else None,
        "cost_sum": int(totals["cost_units"]) / job_tallies.SCALE,
    }


def _grouped[K](rows: list[tuple[K, tuple[Any, ...]]]) -> dict[K, dict[str, Any]]:
    groups: dict[K, list[tuple[Any, ...]]] = defaultdict(list)
    for key, counters in rows:
        groups[key].append(counters)
    return {key: _summed(members) for key, members in groups.items()}


@dataclass(frozen=True)
class JobBreakdown:
    """One job's summary, and the same per task and per agent and model."""

    summary: Summary
    totals: dict[str, Any]  # every kept counter summed over the job (the plots read them)
    by_task: list[tuple[str, str, Summary]]  # (task, source, summary)
    by_agent: list[tuple[str, str, Summary]]  # (agent, model, summary)
    agent_totals: list[tuple[str, str, dict[str, Any]]]  # every kept counter per agent, model
    failure_modes: list[tuple[str, int]]  # trials per failure mode, most first


BREAKDOWN_COLUMNS = (
    "task__name",
    "task__source",
    "agent_name",
    "model_name",
    "failure_mode",
    *job_tallies.COUNTER_NAMES,
)


def job_tally_rows(job: Job) -> list[tuple[Any, ...]]:
    """The job's kept tally rows (a few dozen, whatever its trials): one query."""
    return list(
        JobTally.objects.filter(job=job, trials__gt=0).order_by().values_list(*BREAKDOWN_COLUMNS)
    )


def job_breakdown(job: Job, included: frozenset[str] = frozenset()) -> JobBreakdown:
    """The job's kept tally rows added up by task, by agent and model and by failure mode,
    without the trials left out by default (`review.science.exclusions`) unless `included`."""
    left_out = exclusions.for_jobs([job.pk], included)
    return breakdown_of(job_tally_rows(job) + left_out.job_rows(job.pk))


def _counted[K](groups: dict[K, dict[str, Any]]) -> dict[K, dict[str, Any]]:
    """The groups that still count a trial (rows of trials left out can empty a group:
    `review.science.exclusions`)."""
    return {key: counters for key, counters in groups.items() if counters["trials"]}


def breakdown_of(rows: list[tuple[Any, ...]]) -> JobBreakdown:
    """A job's tally rows (`job_tally_rows`) added up by task, by agent and model and by
    failure mode; rows with negative counts (`review.science.exclusions`) take trials out."""
    totals = _summed([row[5:] for row in rows])
    tasks = _counted(_grouped([((row[1], row[0]), row[5:]) for row in rows]))
    agents = _counted(_grouped([((row[2], row[3]), row[5:]) for row in rows]))
    modes = _counted(_grouped([(row[4], row[5:]) for row in rows if row[4]]))
    return JobBreakdown(
        summary=Summary.of(totals),
        totals=totals,
        by_task=[(name, source, Summary.of(tasks[source, name])) for source, name in sorted(tasks)],
        by_agent=[(a, m, Summary.of(agents[a, m])) for a, m in sorted(agents)],
        agent_totals=[(a, m, agents[a, m]) for a, m in sorted(agents)],
        failure_modes=sorted(
            ((mode, c["trials"]) for mode, c in modes.items()), key=lambda m: (-m[1], m[0])
        ),
    )
