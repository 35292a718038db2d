"""`/api/trials`: the explorer's filter and keyset pages, one trial's bundle, its annotations
and step comments."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal, cast
from uuid import UUID

from django import forms
from django.http import Http404, HttpRequest
from ninja import Field, Query, Router, Schema, Status
from ninja.errors import ValidationError

from review.api.ninja import (
    DEFAULT_PAGE,
    ERRORS,
    MAX_PAGE,
    ErrorOut,
    StrictIn,
    annotate_auth,
    browse_auth,
    user_of,
)
from review.exports import with_annotations
from review.filtering.fields import MAX_JUDGED, MAX_JUDGED_LENGTH, JudgedField
from review.filtering.form import TrialFilterForm
from review.filtering.paging import CursorError, decode_cursor
from review.forms import MAX_CATEGORIES, MAX_CATEGORY_LENGTH, AnnotationForm, StepCommentForm
from review.models import (
    MAX_COMMENT_RANGE,
    Annotation,
    CommentTargetError,
    FindingReview,
    ReviewerProfile,
    StepComment,
    add_annotation,
    add_step_comment,
)
from review.pages.integrity import label_of
from rewards.export import bundle_queryset
from rewards.models import IntegrityFinding, Trial
from rewards.schemas import TrialBundle


class TrialListItem(Schema):
    """One trial as the explorer lists it: the summary columns, never a blob."""

    id: int
    uid: UUID
    job_id: int
    job: str
    task: str
    task_source: str
    name: str
    agent: str
    agent_version: str
    model: str
    status: str
    reward: float
    is_valid: bool
    scorer_verdict: str = Field(description="PASS, FAIL, or empty when no scorer ran")
    scorer_mean: float | None
    judge_verdict: str = Field(description="PASS, FAIL, UNPARSEABLE, or empty: no judge")
    failure_mode: str
    run_badge: str = Field(description="PASS, FAIL, or empty while running")
    gate_disagreement: str
    human_judgment: str = Field(description="pass, fail, defer, mixed, or empty: unreviewed")
    human_disagreement: str
    integrity: str = Field(
        description="reward-integrity findings: flagged (unsettled), confirmed (a person "
        "confirmed one), dismissed (all dismissed), or empty: none"
    )
    annotation_count: int
    started_at: datetime | None
    finished_at: datetime | None

    # Where each field comes from on a trial (a related name through "__"): `of` reads
    # these and the list view loads just these columns.
    SOURCES: ClassVar[dict[str, str]] = {
        "job": "job__name",
        "task": "task__name",
        "task_source": "task__source",
        "agent": "agent_name",
        "model": "model_name",
    }

    @classmethod
    def columns(cls) -> list[str]:
        """The trial columns `of` reads (the rest of the row is never loaded)."""
        return [cls.SOURCES.get(name, name) for name in cls.model_fields]

    @classmethod
    def of(cls, trial: Trial) -> TrialListItem:
        values = {}
        for name, path in zip(cls.model_fields, cls.columns(), strict=True):
            value: Any = trial
            for part in path.split("__"):
                value = getattr(value, part)
            values[name] = value
        return cls(**values)


class TrialPage(Schema):
    items: list[TrialListItem]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last page."
    )


class TrialOut(Schema):
    id: int
    bundle: TrialBundle = Field(
        description="The trial as a TrialBundle, annotations included: POST it to "
        "/api/ingest to store it elsewhere."
    )


class PageQuery(Schema):
    limit: int = Field(DEFAULT_PAGE, ge=1, le=MAX_PAGE, description="Trials per page.")
    cursor: str | None = Field(
        None, max_length=2000, description="`next_cursor` of the previous page."
    )


class AnnotationOut(Schema):
    id: int
    trial_id: int
    reviewer: str
    reviewer_discipline: str
    created_at: datetime
    judgment: str
    categories: list[str]
    notes: str
    reward_seen: float | None
    judge_verdict_seen: str
    blind: bool = Field(description="made in blind review, before anything was revealed")
    seconds_to_review: int | None = Field(
        description="seconds from the queue handing the trial out to this annotation"
    )
    guideline_version: str | None = Field(
        description="the queue's guidelines it was made under (`guide-` and 12 hex digits)"
    )

    @classmethod
    def of(cls, annotation: Annotation) -> AnnotationOut:
        return cls(
            id=annotation.pk,
            trial_id=annotation.trial_id,
            reviewer=annotation.reviewer.get_username(),
            reviewer_discipline=annotation.reviewer_discipline,
            created_at=annotation.created_at,
            judgment=annotation.judgment,
            categories=list(annotation.categories),
            notes=annotation.notes,
            reward_seen=annotation.reward_seen,
            judge_verdict_seen=annotation.judge_verdict_seen,
            blind=annotation.blind,
            seconds_to_review=annotation.seconds_to_review,
            guideline_version=annotation.guideline_version,
        )


class FindingReviewOut(Schema):
    reviewer: str
    created_at: datetime
    decision: str = Field(description="confirmed or dismissed")
    rationale: str


class FindingOut(Schema):
    id: int
    detector: str
    label: str = Field(description="what the detector looks for")
    step: int | None = Field(description="the trajectory step (1-based); null: workspace diff")
    matched: str = Field(description="the command or diff text the detector matched")
    status: str = Field(description="open, or the latest review's decision")
    reviews: list[FindingReviewOut] = Field(description="oldest first; append-only")


class AnnotationIn(StrictIn):
    """A judgment by the token's user; the reviewer and their discipline are never sent."""

    judgment: Literal["pass", "fail", "defer"]
    categories: Annotated[
        list[Annotated[str, Field(max_length=MAX_CATEGORY_LENGTH, pattern=r"^[^,]*$")]],
        Field(max_length=MAX_CATEGORIES),
    ] = []
    notes: Annotated[str, Field(max_length=20000)] = ""


class StepCommentOut(Schema):
    id: int
    uid: UUID
    trial_id: int
    author: str
    created_at: datetime
    step: int = Field(description="the step's 1-based position in the trajectory")
    part: str = Field(description="message, tool_call, observation or reasoning")
    part_index: int = Field(description="which part of that kind in the step, from 0")
    start: int | None = Field(description="first character of the range; null: the whole part")
    end: int | None
    quote: str = Field(description="the text the range covered when the comment was made")
    text: str
    supersedes: UUID | None = Field(description="uid of the earlier comment this one corrects")

    @classmethod
    def of(cls, comment: StepComment) -> StepCommentOut:
        return cls(
            id=comment.pk,
            uid=comment.uid,
            trial_id=comment.trial_id,
            author=comment.author.get_username(),
            created_at=comment.created_at,
            step=comment.step,
            part=comment.part,
            part_index=comment.part_index,
            start=comment.start,
            end=comment.end,
            quote=comment.quote,
            text=comment.text,
            supersedes=comment.supersedes.uid if comment.supersedes else None,
        )


class StepCommentIn(StrictIn):
    """A comment by the token's user on a step, a part of it, or a range of that part's
    text: give `quote` (the text, found in the part nearest `start`) or `start` and `end`."""

    step: int = Field(ge=1)
    part: Literal["message", "tool_call", "observation", "reasoning"]
    part_index: int = Field(0, ge=0, le=32767)
    start: int | None = Field(None, ge=0)
    end: int | None = Field(None, ge=1)
    quote: Annotated[str, Field(max_length=MAX_COMMENT_RANGE)] = ""
    text: Annotated[str, Field(min_length=1, max_length=20000)]
    supersedes: int | None = Field(
        None, ge=1, description="id of the token user's own comment that this one corrects"
    )


# --- trials ----------------------------------------------------------------------------------
router = Router(tags=["trials"], auth=browse_auth)


def filter_parameters() -> list[dict[str, Any]]:
    """The explorer's filters as OpenAPI query parameters, read off TrialFilterForm."""
    parameters = []
    for name, field in TrialFilterForm.base_fields.items():
        if name == "after":  # the API calls it `cursor`
            continue
        if name == "view":  # the queue's saved view: a page's setting, not a filter
            continue
        schema: dict[str, Any]
        if isinstance(field, forms.ModelChoiceField):
            schema = {"type": "integer", "minimum": 1}
        elif isinstance(field, forms.FloatField):
            schema = {"type": "number", "minimum": field.min_value, "maximum": field.max_value}
        elif isinstance(field, forms.ChoiceField):
            values: list[str] = []
            for value, label in cast(Iterable[tuple[Any, Any]], field.choices):
                group = label if isinstance(label, list | tuple) else [(value, label)]
                values.extend(str(v) for v, _ in group)
            schema = {"type": "string", "enum": values}
        elif isinstance(field, forms.DateField):
            schema = {"type": "string", "format": "date"}
        elif isinstance(field, JudgedField):
            item = {
                "type": "string",
                "pattern": "^(.+:)?(pass|fail|defer)$",
                "maxLength": MAX_JUDGED_LENGTH,
            }
            schema = {"type": "array", "items": item, "maxItems": MAX_JUDGED}
        else:
            schema = {"type": "string", "maxLength": field.max_length}  # type: ignore[attr-defined]
        parameter = {
            "name": name,
            "in": "query",
            "required": False,
            "schema": schema,
            "description": str(field.label or name),
        }
        if schema["type"] == "array":  # repeated: ?judged=rita:pass&judged=sam:fail
            parameter.update(style="form", explode=True)
        parameters.append(parameter)
    return parameters


@router.get(
    "/trials",
    response={200: TrialPage, 422: ErrorOut, **ERRORS},
    openapi_extra={"parameters": filter_parameters()},
    summary="List trials (the explorer's filters, keyset pages)",
)
def list_trials(request: HttpRequest, page: Query[PageQuery]) -> TrialPage:
    """The Data Explorer's rows: filter with its query parameters, walk with `cursor`."""
    data = request.GET.copy()
    data.pop("after", None)
    if page.cursor:
        data["after"] = page.cursor
    form = TrialFilterForm(data)
    if not form.is_valid():
        raise ValidationError(
            [
                {
                    "loc": ("query", "cursor" if name == "after" else name),
                    "msg": msg,
                    "type": "invalid",
                }
                for name, messages in form.errors.items()
                for msg in messages
            ]
        )
    if page.cursor:
        try:
            decode_cursor(page.cursor, form.current_sort)
        except CursorError as exc:
            raise ValidationError(
                [{"loc": ("query", "cursor"), "msg": str(exc), "type": "invalid"}]
            ) from exc
    rows = form.page(Trial.objects.list_columns().only(*TrialListItem.columns()), page.limit)
    return TrialPage(items=[TrialListItem.of(t) for t in rows.rows], next_cursor=rows.next_cursor)


def _trial_or_404(pk: int) -> Trial:
    trial = Trial.objects.filter(pk=pk).only("id").first()
    if trial is None:
        raise Http404
    return trial


@router.get(
    "/trials/{int:trial_id}",
    response={200: TrialOut, 404: ErrorOut, **ERRORS},
    summary="One trial as a TrialBundle",
)
def get_trial(request: HttpRequest, trial_id: int) -> TrialOut:
    """One trial as a TrialBundle, with every result, scorer, verdict, tag and annotation."""
    trial = bundle_queryset(Trial.objects.filter(pk=trial_id)).first()
    if trial is None:
        raise Http404
    bundle = next(with_annotations([trial]))
    return TrialOut(id=trial.pk, bundle=bundle)


@router.get(
    "/trials/{int:trial_id}/annotations",
    response={200: list[AnnotationOut], 404: ErrorOut, **ERRORS},
    summary="A trial's annotations",
)
def list_annotations(request: HttpRequest, trial_id: int) -> list[AnnotationOut]:
    """Every annotation of the trial, oldest first (append-only: none is ever changed)."""
    trial = _trial_or_404(trial_id)
    return [AnnotationOut.of(a) for a in Annotation.objects.for_trial(trial).history()]


@router.get(
    "/trials/{int:trial_id}/findings",
    response={200: list[FindingOut], 404: ErrorOut, **ERRORS},
    summary="A trial's reward-integrity findings, with their confirmations and dismissals",
)
def list_findings(request: HttpRequest, trial_id: int) -> list[FindingOut]:
    """What the integrity detectors saw, in step order, each with the people who settled it.
    A confirmed finding never changes the stored reward."""
    trial = _trial_or_404(trial_id)
    reviews: dict[int, list[FindingReviewOut]] = {}
    for review in (
        FindingReview.objects.filter(finding__trial=trial)
        .select_related("reviewer")
        .order_by("created_at", "id")
    ):
        reviews.setdefault(review.finding_id, []).append(
            FindingReviewOut(
                reviewer=review.reviewer.get_username(),
                created_at=review.created_at,
                decision=review.decision,
                rationale=review.rationale,
            )
        )
    return [
        FindingOut(
            id=f.pk,
            detector=f.detector,
            label=label_of(f.detector),
            step=f.step or None,
            matched=f.matched,
            status=f.status,
            reviews=reviews.get(f.pk, []),
        )
        for f in IntegrityFinding.objects.filter(trial=trial).order_by("step", "id")
    ]


@router.post(
    "/trials/{int:trial_id}/annotations",
    auth=annotate_auth,
    response={201: AnnotationOut, 404: ErrorOut, 422: ErrorOut, **ERRORS},
    summary="Annotate a trial (reviewers, experts, staff)",
)
def create_annotation(
    request: HttpRequest, trial_id: int, body: AnnotationIn
) -> Status[AnnotationOut]:
    """Add the token user's judgment beside the automated reward; the reward never changes."""
    user = user_of(request)
    trial = _trial_or_404(trial_id)
    # The trial page's form, so the API and the page accept exactly the same annotations.
    form = AnnotationForm(
        {"judgment": body.judgment, "categories": ",".join(body.categories), "notes": body.notes}
    )
    if not form.is_valid():
        raise ValidationError(
            [
                {"loc": ("body", name), "msg": msg, "type": "invalid"}
                for name, messages in form.errors.items()
                for msg in messages
            ]
        )
    discipline = (
        ReviewerProfile.objects.filter(user=user).values_list("discipline", flat=True).first()
    )
    annotation = add_annotation(
        trial_id=trial.pk,
        reviewer=user,
        judgment=form.cleaned_data["judgment"],
        categories=form.cleaned_data["categories"],
        notes=form.cleaned_data["notes"],
        reviewer_discipline=discipline or "",
    )
    return Status(201, AnnotationOut.of(annotation))


@router.get(
    "/trials/{int:trial_id}/comments",
    response={200: list[StepCommentOut], 404: ErrorOut, **ERRORS},
    summary="A trial's step comments",
)
def list_step_comments(request: HttpRequest, trial_id: int) -> list[StepCommentOut]:
    """Every comment on the trial's steps, oldest first (append-only: none is ever changed)."""
    trial = _trial_or_404(trial_id)
    comments = StepComment.objects.filter(trial=trial).history().select_related("supersedes")
    return [StepCommentOut.of(c) for c in comments]


@router.post(
    "/trials/{int:trial_id}/comments",
    auth=annotate_auth,
    response={201: StepCommentOut, 404: ErrorOut, 422: ErrorOut, **ERRORS},
    summary="Comment on a step of a trial (reviewers, experts, staff)",
)
def create_step_comment(
    request: HttpRequest, trial_id: int, body: StepCommentIn
) -> Status[StepCommentOut]:
    """Add the token user's comment; its step, part and range are checked against the
    trial's trajectory, as on the trial page."""
    trial = _trial_or_404(trial_id)
    # The trial page's form, so the API and the page accept exactly the same comments.
    form = StepCommentForm(body.model_dump(exclude_none=True))
    supersedes = None
    if form.is_valid() and body.supersedes is not None:
        supersedes = StepComment.objects.filter(
            pk=body.supersedes, trial=trial, author=user_of(request)
        ).first()
        if supersedes is None:
            form.add_error("supersedes", "You can correct only your own comments on this trial.")
    if form.is_valid():
        try:
            comment = add_step_comment(
                trial_id=trial.pk,
                author=user_of(request),
                target=form.target(),
                text=form.cleaned_data["text"],
                supersedes=supersedes,
            )
        except CommentTargetError as refused:
            form.add_error(None, str(refused))
        else:
            return Status(201, StepCommentOut.of(comment))
    raise ValidationError(
        [
            {"loc": ("body", name if name != "__all__" else "step"), "msg": msg, "type": "invalid"}
            for name, messages in form.errors.items()
            for msg in messages
        ]
    )
