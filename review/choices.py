"""Per-request lists kept between requests: the explorer's job <select>.

The jobs change only when a job is ingested or deleted, yet every explorer page lists them.
The newest `JOB_CHOICES_LIMIT` jobs by start (id, name, and a label naming the agent, model,
dataset, size and state) are kept in the shared cache under
`rewards.cache.JOB_CHOICES`, which names what drops them (a Job saved or deleted, jobs
created by an ingest, trials added to a finished job) and how long they are kept at most.
Each job's end (`finished_at`) and trial count are kept too: a job filter naming a finished
job then knows, without a query, that it is not running and how many trials it lists.
"""

from __future__ import annotations

from datetime import datetime

from django.core.cache import cache

from review.models import JobFacts, job_facts
from rewards.cache import JOB_CHOICES, JOB_CHOICES_TTL
from rewards.models import Job

JOB_CHOICES_LIMIT = 200


def _label(name: str, facts: JobFacts, finished: bool) -> str:
    """A job as a picker names it: its name, who ran it on what, its size and state."""
    parts = [name]
    for values, many in ((facts.agents, "agents"), (facts.models, "models")):
        if values:
            parts.append(values[0] if len(values) == 1 else f"{len(values)} {many}")
    if facts.datasets:
        parts.append(
            facts.datasets[0] if len(facts.datasets) == 1 else f"{len(facts.datasets)} datasets"
        )
    parts.append(f"{facts.trials} trial{'' if facts.trials == 1 else 's'}")
    parts.append("finished" if finished else "running")
    return " · ".join(parts)


type Newest = list[tuple[str, str, str, datetime | None, int]]


def _newest() -> Newest:
    """(id, name, label, finished_at, trials) of the newest jobs by start, at most JOB_CHOICES_LIMIT
    + 1 of them: two queries, then kept (one more than the limit, so that the select can tell
    it was cut)."""
    newest: Newest | None = cache.get(JOB_CHOICES)
    if newest is None:
        jobs = list(
            Job.objects.by_start().values_list("id", "name", "finished_at")[: JOB_CHOICES_LIMIT + 1]
        )
        facts = job_facts([pk for pk, _, _ in jobs])
        newest = []
        for pk, name, finished in jobs:
            fact = facts.get(pk, JobFacts())
            newest.append(
                (str(pk), name, _label(name, fact, finished is not None), finished, fact.trials)
            )
        cache.set(JOB_CHOICES, newest, JOB_CHOICES_TTL)
    return newest


def job_choices() -> list[tuple[str, str]]:
    """(id, label) of the newest jobs by start (`_newest`)."""
    return [(pk, label) for pk, _, label, _, _ in _newest()]


def newest_job(pk: str) -> tuple[str, datetime | None] | None:
    """The name and end (`finished_at`) of job `pk` (its id as the select writes it) when it
    is among the cached newest jobs; None otherwise (an older job, or one not seen yet)."""
    return next(
        ((name, finished) for value, name, _, finished, _ in _newest() if value == pk), None
    )


def finished_job_trials(pk: int) -> int | None:
    """How many trials job `pk` has, when it is finished and among the cached newest jobs
    (its count cannot change without dropping the list); None otherwise."""
    value = str(pk)
    return next(
        (trials for key, _, _, finished, trials in _newest() if key == value and finished),
        None,
    )
