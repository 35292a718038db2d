"""`/api/jobs`: jobs by keyset with their summaries, and one job by task and by agent."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import Http404, HttpRequest
from ninja import Field, Query, Router, Schema
from ninja.errors import ValidationError

from review.api.figures import SWITCH_PARAMETERS
from review.api.ninja import (
    DEFAULT_PAGE,
    ERRORS,
    MAX_PAGE,
    ErrorOut,
    browse_auth,
)
from review.filtering.paging import CursorError, decode_cursor, encode_cursor
from review.science import exclusions
from review.science.stats import Summary, job_breakdown, jobs_page
from rewards.models import Job


class JobOut(Schema):
    id: int
    name: str
    started_at: datetime | None
    finished_at: datetime | None
    imported_at: datetime
    source_path: str
    summary: Summary


class JobPage(Schema):
    items: list[JobOut]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last page."
    )


class JobPageQuery(Schema):
    limit: int = Field(DEFAULT_PAGE, ge=1, le=MAX_PAGE, description="Jobs per page.")
    cursor: str | None = Field(
        None, max_length=200, description="`next_cursor` of the previous page."
    )


class TaskBreakdown(Schema):
    task: str
    source: str
    summary: Summary


class AgentBreakdown(Schema):
    agent: str
    model: str
    summary: Summary


class JobDetailOut(JobOut):
    config: dict[str, Any]
    stats: dict[str, Any]
    by_task: list[TaskBreakdown]
    by_agent: list[AgentBreakdown]


# --- jobs ------------------------------------------------------------------------------------
router = Router(tags=["jobs"], auth=browse_auth)
# Job cursors are trial-style cursors on the id, newest first.
JOBS_CURSOR_SORT = "-id"


def _job_out(job: Job, summary: Summary) -> dict[str, Any]:
    return {
        "id": job.pk,
        "name": job.name,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
        "imported_at": job.imported_at,
        "source_path": job.source_path,
        "summary": summary,
    }


def _included(request: HttpRequest) -> frozenset[str]:
    """The reasons whose trials the figures count (`?include_defective=1`); by default the
    trials they name are left out, as on the jobs pages."""
    return exclusions.SwitchForm(request.GET).included()


@router.get(
    "/jobs",
    response={200: JobPage, **ERRORS},
    openapi_extra={"parameters": SWITCH_PARAMETERS},
    summary="Jobs with trial counts",
)
def list_jobs(request: HttpRequest, page: Query[JobPageQuery]) -> JobPage:
    """Jobs by start, newest first, with trial counts and gate pass rates, a keyset page at a time
    (two queries per page: the jobs, then their kept tallies); walk with `cursor`."""
    after = None
    if page.cursor:
        try:
            _, after = decode_cursor(page.cursor, JOBS_CURSOR_SORT)
        except CursorError as exc:
            raise ValidationError(
                [{"loc": ("query", "cursor"), "msg": str(exc), "type": "invalid"}]
            ) from exc
    rows = jobs_page(after, page.limit, with_facts=False, included=_included(request))
    return JobPage(
        items=[JobOut(**_job_out(job, summary)) for job, summary, _ in rows.rows],
        next_cursor=None
        if rows.next_after is None
        else encode_cursor(JOBS_CURSOR_SORT, rows.next_after, rows.next_after),
    )


@router.get(
    "/jobs/{int:job_id}",
    response={200: JobDetailOut, 404: ErrorOut, **ERRORS},
    openapi_extra={"parameters": SWITCH_PARAMETERS},
    summary="One job, by task and by agent",
)
def get_job(request: HttpRequest, job_id: int) -> JobDetailOut:
    """One job: its summary, and the same per task and per agent and model."""
    job = Job.objects.filter(pk=job_id).first()
    if job is None:
        raise Http404
    breakdown = job_breakdown(job, _included(request))
    return JobDetailOut(
        **_job_out(job, breakdown.summary),
        config=job.config,
        stats=job.stats,
        by_task=[
            TaskBreakdown(task=task, source=source, summary=summary)
            for task, source, summary in breakdown.by_task
        ],
        by_agent=[
            AgentBreakdown(agent=agent, model=model, summary=summary)
            for agent, model, summary in breakdown.by_agent
        ],
    )
