"""Per-request lists kept between requests: the explorer's job <select>.

The jobs change only when a job is ingested or deleted, yet every explorer page lists them.
The newest `JOB_CHOICES_LIMIT` (id, name) pairs are cached; saving or deleting a Job drops
the cache at once in this process, and the entry expires after `JOB_CHOICES_TTL` seconds so
that jobs written elsewhere (the ingest writer bulk-creates them, another worker process
with a per-process cache) show up within that time. With a shared cache (CACHES), one
process's save reaches every process.
"""

from __future__ import annotations

from typing import Any

from django.core.cache import cache
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from rewards.models import Job

JOB_CHOICES_LIMIT = 200
JOB_CHOICES_TTL = 60
_KEY = "review:job-choices:v1"


def job_choices() -> list[tuple[str, str]]:
    """(id, name) of the newest jobs, newest first, at most JOB_CHOICES_LIMIT + 1 of them.

    One more than the limit is kept so that the select can tell it was cut.
    """
    choices: list[tuple[str, str]] | None = cache.get(_KEY)
    if choices is None:
        choices = [
            (str(pk), name)
            for pk, name in Job.objects.order_by("-id").values_list("id", "name")[
                : JOB_CHOICES_LIMIT + 1
            ]
        ]
        cache.set(_KEY, choices, JOB_CHOICES_TTL)
    return choices


def newest_job_name(pk: str) -> str | None:
    """The name of job `pk` (its id as the select writes it) when it is among the cached
    newest jobs; None otherwise (an older job, or one not seen yet)."""
    return next((name for value, name in job_choices() if value == pk), None)


@receiver(post_save, sender=Job, dispatch_uid="review.forget_job_choices_on_save")
@receiver(post_delete, sender=Job, dispatch_uid="review.forget_job_choices_on_delete")
def forget_job_choices(**kwargs: Any) -> None:
    cache.delete(_KEY)
