"""The integrity scan as background work (Django's tasks framework, run by
`manage.py grading_worker`): a job's trials scanned again on demand."""

from __future__ import annotations

from django.tasks import task

from rewards.integrity.store import rescan
from rewards.models import Trial


@task
def scan_job(job_id: int) -> int:
    """Run the detectors over the job's stored trials; returns how many changed."""
    ids = Trial.objects.filter(job_id=job_id).order_by("id").values_list("id", flat=True)
    return rescan(ids.iterator()).changed
