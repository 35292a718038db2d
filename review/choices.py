"""Per-request lists kept between requests: the explorer's job <select>.

The jobs change only when a job is ingested or deleted, yet every explorer page lists them.
The newest `JOB_CHOICES_LIMIT` (id, name) pairs are kept in the shared cache under
`rewards.cache.JOB_CHOICES`, which names what drops them (a Job saved or deleted, jobs
created by an ingest) and how long they are kept at most.
"""

from __future__ import annotations

from django.core.cache import cache

from rewards.cache import JOB_CHOICES, JOB_CHOICES_TTL
from rewards.models import Job

JOB_CHOICES_LIMIT = 200


def job_choices() -> list[tuple[str, str]]:
    """(id, name) of the newest jobs, newest first, at most JOB_CHOICES_LIMIT + 1 of them.

    One more than the limit is kept so that the select can tell it was cut.
    """
    choices: list[tuple[str, str]] | None = cache.get(JOB_CHOICES)
    if choices is None:
        choices = [
            (str(pk), name)
            for pk, name in Job.objects.order_by("-id").values_list("id", "name")[
                : JOB_CHOICES_LIMIT + 1
            ]
        ]
        cache.set(JOB_CHOICES, choices, JOB_CHOICES_TTL)
    return choices


def newest_job_name(pk: str) -> str | None:
    """The name of job `pk` (its id as the select writes it) when it is among the cached
    newest jobs; None otherwise (an older job, or one not seen yet)."""
    return next((name for value, name in job_choices() if value == pk), None)
