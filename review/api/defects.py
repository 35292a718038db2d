"""`/api/defects`: the defective-task ledger (`review.defects`), read and added to, and the
manifest of an export (what the pass rates leave out, and why)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from django.http import Http404, HttpRequest
from django.utils import timezone
from ninja import Field, Query, Router, Schema, Status
from ninja.errors import HttpError, ValidationError

from review import defects, roles
from review.api.ninja import ERRORS, ErrorOut, StrictIn, annotate_auth, browse_auth, user_of
from review.api.trials import filter_parameters
from review.filtering.form import TrialFilterForm, filtered_trials
from review.forms import DefectEntryForm
from review.models import DefectEntry
from review.science import exclusions
from rewards.models import Task

StateName = Literal["proposed", "confirmed", "cleared"]
CategoryName = Literal["broken_test", "underspecified", "environment", "wrong_reference"]


class EntryOut(Schema):
    id: int
    task_id: int
    task: str
    source: str
    checksum: str
    state: StateName
    category: CategoryName
    rationale: str
    evidence: list[str] = Field(description="paths inside Trialdesk, with their fragments")
    author: str
    created_at: datetime


class LedgerItem(Schema):
    task_id: int
    task: str
    source: str
    state: StateName = Field(description="the newest entry's: where the task stands")
    entries: int
    latest: EntryOut


class TaskLedger(Schema):
    task_id: int
    task: str
    source: str
    state: StateName | None = Field(description="the newest entry's; null when never reported")
    entries: list[EntryOut] = Field(description="oldest first; none is ever changed")


class LedgerQuery(Schema):
    state: StateName | None = Field(None, description="Only the tasks in this state.")


class EntryIn(StrictIn):
    """An entry by the token's user: reviewers propose, experts and staff also confirm and
    clear. Evidence links must point inside Trialdesk (paths, or URLs of this host)."""

    state: StateName
    category: CategoryName
    rationale: Annotated[str, Field(min_length=1, max_length=20000)]
    evidence: Annotated[
        list[Annotated[str, Field(max_length=defects.MAX_LINK_LENGTH)]],
        Field(max_length=defects.MAX_LINKS),
    ] = []


router = Router(tags=["defects"], auth=browse_auth)


def _entry_out(entry: DefectEntry) -> EntryOut:
    return EntryOut.model_validate(defects.entry_dict(entry))


@router.get(
    "/defects",
    response={200: list[LedgerItem], 422: ErrorOut, **ERRORS},
    summary="Tasks on the defect ledger, with where each stands",
)
def list_ledger(request: HttpRequest, query: Query[LedgerQuery]) -> list[LedgerItem]:
    """Every task with a ledger entry, confirmed first, with its newest entry."""
    return [
        LedgerItem(
            task_id=row.task.pk,
            task=row.task.name,
            source=row.task.source,
            state=row.entry.state,  # type: ignore[arg-type]
            entries=row.entries,
            latest=_entry_out(row.entry),
        )
        for row in defects.ledger(query.state or "")
    ]


def _task_or_404(task_id: int) -> Task:
    task = Task.objects.filter(pk=task_id).only("id", "name", "source").first()
    if task is None:
        raise Http404
    return task


@router.get(
    "/defects/{int:task_id}",
    response={200: TaskLedger, 404: ErrorOut, **ERRORS},
    summary="One task's ledger history",
)
def get_task_ledger(request: HttpRequest, task_id: int) -> TaskLedger:
    task = _task_or_404(task_id)
    history = [
        _entry_out(e)
        for e in DefectEntry.objects.filter(task=task).select_related("task", "author")
    ]
    return TaskLedger(
        task_id=task.pk,
        task=task.name,
        source=task.source,
        state=history[-1].state if history else None,
        entries=history,
    )


@router.post(
    "/defects/{int:task_id}",
    auth=annotate_auth,
    response={201: EntryOut, 404: ErrorOut, 422: ErrorOut, **ERRORS},
    summary="Add an entry to a task's ledger (reviewers propose; experts and staff settle)",
)
def create_entry(request: HttpRequest, task_id: int, body: EntryIn) -> Status[EntryOut]:
    user = user_of(request)
    task = _task_or_404(task_id)
    can_settle = roles.can_settle_defects(user)
    # The page's form, so the API and the page accept exactly the same entries.
    form = DefectEntryForm(
        {
            "task": str(task.pk),
            "state": body.state,
            "category": body.category,
            "rationale": body.rationale,
            "evidence": "\n".join(body.evidence),
        },  # type: ignore[arg-type]
        tasks=Task.objects.filter(pk=task.pk).only("id", "name", "source"),
        states=defects.allowed_states(can_settle=can_settle, current=None),
        host=request.get_host(),
    )
    if not form.is_valid():
        if "state" in form.errors:
            raise HttpError(403, "Only experts and staff can confirm or clear a task.")
        raise ValidationError(
            [
                {"loc": ("body", name), "msg": msg, "type": "invalid"}
                for name, messages in form.errors.items()
                for msg in messages
            ]
        )
    try:
        entry = defects.record(
            task_id=task.pk,
            author=user,
            can_settle=can_settle,
            state=form.cleaned_data["state"],
            category=form.cleaned_data["category"],
            rationale=form.cleaned_data["rationale"],
            evidence=form.cleaned_data["evidence"],
        )
    except defects.LedgerRefused as exc:
        raise HttpError(403, str(exc)) from exc
    entry.task = task
    entry.author = user
    return Status(201, _entry_out(entry))


@router.get(
    "/defects/manifest",
    response={200: dict[str, Any], 422: ErrorOut, **ERRORS},
    openapi_extra={"parameters": filter_parameters()},
    summary="The manifest of an export of the explorer's filter",
)
def export_manifest(request: HttpRequest) -> dict[str, Any]:
    """Which tasks (and trials) of the filter the pass rates leave out and why, and the
    ledger's confirmed entries: what an analyst needs to reproduce a headline number."""
    form = TrialFilterForm(request.GET)
    if not form.is_valid():
        raise ValidationError(
            [
                {"loc": ("query", name), "msg": msg, "type": "invalid"}
                for name, messages in form.errors.items()
                for msg in messages
            ]
        )
    return exclusions.manifest(filtered_trials(form), request.GET.urlencode(), timezone.now())
