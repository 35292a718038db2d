"""`/api/batches`: grading batches for pipelines: grade stored trials (one, an explorer filter,
a job), watch the batch, cancel it.

Staff only, as in the app. Starting a batch only enqueues (the task workers judge), so the
answer comes at once; poll `GET /api/batches/{id}` for its progress.
"""

from __future__ import annotations

from datetime import datetime

from django.http import Http404, HttpRequest, QueryDict
from django.shortcuts import get_object_or_404
from ninja import Field, Query, Router, Schema, Status
from ninja.errors import HttpError, ValidationError
from pydantic import model_validator

from review.api.ninja import DEFAULT_PAGE, ERRORS, MAX_PAGE, ErrorOut, staff_auth, user_of
from review.filtering.form import TrialFilterForm, filter_errors
from review.grading import FAILURES_SHOWN, MAX_FILTER_TRIALS, filter_trial_ids, job_query
from rewards.models import GradingBatch, GradingItem, Trial
from rewards.scoring import batches, judge
from rewards.scoring.tasks import start_batch

router = Router(tags=["grading batches"], auth=staff_auth)


class BatchIn(Schema):
    trial: int | None = Field(None, description="Grade this stored trial.")
    query: str | None = Field(
        None,
        max_length=4000,
        description="Grade the stored trials of this explorer filter (its query string; '' "
        f"for every trial), at most {MAX_FILTER_TRIALS}.",
    )
    job: str | None = Field(
        None,
        max_length=255,
        description=f"Grade the stored trials of this job (its name or id), at most "
        f"{MAX_FILTER_TRIALS}.",
    )

    @model_validator(mode="after")
    def _one_of(self) -> BatchIn:
        if sum(value is not None for value in (self.trial, self.query, self.job)) != 1:
            raise ValueError("give one of `trial`, `query` or `job`")
        return self


class Counts(Schema):
    total: int
    queued: int
    running: int
    done: int
    failed: int
    cancelled: int


class FailureOut(Schema):
    trial: int
    reason: str
    finished_at: datetime | None


class BatchOut(Schema):
    id: int
    trial: int | None = Field(description="The trial re-judged, for a batch of one.")
    query: str = Field(description="The explorer filter re-judged ('' with `trial`).")
    created_by: str | None
    created_at: datetime
    cancelled_at: datetime | None
    finished: bool = Field(description="No item is queued or running.")
    counts: Counts

    @classmethod
    def of(cls, batch: GradingBatch) -> BatchOut:
        counts = Counts(
            total=getattr(batch, "total", 0),
            **{state.value: getattr(batch, state.value, 0) for state in GradingItem.State},
        )
        return cls(
            id=batch.pk,
            trial=batch.trial_id,
            query=batch.query,
            created_by=batch.created_by.get_username() if batch.created_by else None,
            created_at=batch.created_at,
            cancelled_at=batch.cancelled_at,
            finished=not (counts.queued or counts.running),
            counts=counts,
        )


class BatchDetailOut(BatchOut):
    failures: list[FailureOut] = Field(description=f"The first {FAILURES_SHOWN} failures.")


class BatchListQuery(Schema):
    limit: int = Field(DEFAULT_PAGE, ge=1, le=MAX_PAGE, description="Newest batches to list.")


def _detail(pk: int) -> BatchDetailOut:
    batch = get_object_or_404(
        GradingBatch.objects.with_counts().select_related("created_by"), pk=pk
    )
    failures = batch.items.filter(state=GradingItem.State.FAILED).order_by("id")[:FAILURES_SHOWN]
    return BatchDetailOut(
        **BatchOut.of(batch).model_dump(),
        failures=[
            FailureOut(trial=i.trial_id, reason=i.reason, finished_at=i.finished_at)
            for i in failures
        ],
    )


@router.get("/batches", response={200: list[BatchOut], **ERRORS}, summary="Newest grading batches")
def list_batches(request: HttpRequest, page: Query[BatchListQuery]) -> list[BatchOut]:
    shown = GradingBatch.objects.with_counts().select_related("created_by")[: page.limit]
    return [BatchOut.of(b) for b in shown]


@router.get(
    "/batches/{int:batch_id}",
    response={200: BatchDetailOut, 404: ErrorOut, **ERRORS},
    summary="One grading batch: its counts and failures",
)
def get_batch(request: HttpRequest, batch_id: int) -> BatchDetailOut:
    return _detail(batch_id)


@router.post(
    "/batches",
    response={201: BatchDetailOut, 404: ErrorOut, 422: ErrorOut, 409: ErrorOut, **ERRORS},
    summary="Grade stored trials: one, an explorer filter or a job (enqueued; answers at once)",
)
def create_batch(request: HttpRequest, body: BatchIn) -> Status[BatchDetailOut]:
    if not judge.is_configured():
        raise HttpError(
            409,  # not a server error: the deployment has no judge to ask
            "The judge is not configured: set TRIALDESK_JUDGE_BASE_URL and TRIALDESK_JUDGE_MODEL.",
        )
    user = user_of(request)
    if body.trial is not None:
        trial = Trial.objects.filter(pk=body.trial).only("id").first()
        if trial is None:
            raise Http404
        batch = start_batch([trial.pk], user=user, trial=trial)
        return Status(201, _detail(batch.pk))
    if body.job is not None:
        query = job_query(body.job)
        if query is None:
            raise Http404
        where = "job"
    else:
        query, where = QueryDict(body.query or ""), "query"
    form = TrialFilterForm(query)
    if errors := filter_errors(form):
        raise ValidationError(
            [{"loc": ("body", where), "msg": e, "type": "invalid"} for e in errors]
        )
    ids = filter_trial_ids(form)
    if ids is None:
        raise ValidationError(
            [
                {
                    "loc": ("body", where),
                    "msg": f"matches more than {MAX_FILTER_TRIALS} trials: narrow it",
                    "type": "invalid",
                }
            ]
        )
    if not ids:
        raise ValidationError(
            [{"loc": ("body", where), "msg": "matches no trials", "type": "invalid"}]
        )
    batch = start_batch(ids, user=user, query=form.canonical_query().urlencode())
    return Status(201, _detail(batch.pk))


@router.post(
    "/batches/{int:batch_id}/cancel",
    response={200: BatchDetailOut, 404: ErrorOut, **ERRORS},
    summary="Cancel a batch's queued items (a running one finishes)",
)
def cancel_batch(request: HttpRequest, batch_id: int) -> BatchDetailOut:
    batches.cancel(get_object_or_404(GradingBatch, pk=batch_id))
    return _detail(batch_id)
