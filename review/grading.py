"""Grading from the review app: which stored trials an explorer filter sends to the judge,
and how much of a batch the pages show (the batches themselves: rewards.scoring.batches)."""

from __future__ import annotations

from django.http import QueryDict

from review.filtering.form import TrialFilterForm, filtered_trials
from rewards.models import Job

# A filter re-judge asks the judge once per trial: beyond this many, narrow the filter.
# Enqueueing stays quick at this size (the items in one INSERT, a few runners enqueued):
# about 0.1 s for 10,000 trials.
MAX_FILTER_TRIALS = 10_000
# The batches page lists the newest this many; a batch page lists this many failures.
BATCHES_SHOWN = 50
FAILURES_SHOWN = 200


def filter_trial_ids(form: TrialFilterForm) -> list[int] | None:
    """The trials of a valid explorer filter, to re-judge; None beyond MAX_FILTER_TRIALS.
    The app, the API and `manage.py rejudge` all go by it."""
    ids = list(filtered_trials(form).values_list("pk", flat=True)[: MAX_FILTER_TRIALS + 1])
    return None if len(ids) > MAX_FILTER_TRIALS else ids


def job_query(job: str) -> QueryDict | None:
    """The explorer filter of every trial of a job given by its name (or its id); None when
    there is no such job. `manage.py grade --job`, `rejudge --job` and the API go by it."""
    found = Job.objects.filter(name=job).only("id").first()
    if found is None and job.isdigit():
        found = Job.objects.filter(pk=int(job)).only("id").first()
    if found is None:
        return None
    query = QueryDict(mutable=True)
    query["job"] = str(found.pk)
    return query
