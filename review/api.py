"""The JSON API (DESIGN §6): trials, jobs, annotations and ingest, for pipelines and analysts.

Mounted at `/api/`; OpenAPI at `/api/openapi.json`, Swagger UI at `/api/docs` (ninja's bundled
copy, served from our static files, so the Content Security Policy holds).

- Auth is a bearer token only (`review.tokens`): no session, so no CSRF to think about. The
  token's user's roles apply (`review.roles`): browsing needs `can_browse`, annotating
  `can_annotate`, ingesting staff. No or a bad token → 401, the wrong role → 403; both are
  decided before the body is read.
- Endpoints are thin: the explorer's `TrialFilterForm` filters and pages trials, the export's
  bundles come from `rewards.export` and `review.exports`, annotations are made only by
  `review.models.add_annotation`, and bundles are stored only by `BundleWriter`.
- Every answer from `/api/`, errors included, is JSON `{"detail": …}`. Validation errors give
  field paths and messages, never the values sent: a bundle's text was written by an agent.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from functools import wraps
from typing import Annotated, Any, Literal, cast
from uuid import UUID

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.urls import URLPattern, URLResolver, re_path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe
from ninja import Field, NinjaAPI, Query, Router, Schema, Status, Swagger
from ninja.errors import AuthenticationError, AuthorizationError, HttpError, ValidationError
from ninja.openapi.views import openapi_view
from ninja.security.http import HttpBearer
from pydantic import ConfigDict, TypeAdapter, ValidationError as PydanticValidationError

from review import agreement, compare, figures, tokens
from review.exports import with_annotations
from review.filters import CursorError, TrialFilterForm, decode_cursor, encode_cursor
from review.forms import MAX_CATEGORIES, MAX_CATEGORY_LENGTH, AnnotationForm
from review.models import Annotation, ReviewerProfile, add_annotation
from review.roles import can_annotate, can_browse, can_ingest
from review.stats import Summary, job_breakdown, jobs_page
from review.views.agreement import AgreementForm
from review.views.compare import CompareForm
from rewards.export import bundle_queryset
from rewards.ingest.bundles import ENVELOPE_DEPTH
from rewards.ingest.files import ArtifactError, Limits, loads_json
from rewards.ingest.writer import BundleWriter
from rewards.models import Job, Trial
from rewards.schemas import TrialBundle

log = logging.getLogger(__name__)

MAX_PAGE = 200
DEFAULT_PAGE = 50
MAX_BUNDLES = 1000
# At most this many validation errors are listed; the rest are counted.
MAX_ERRORS = 20


# --- auth ------------------------------------------------------------------------------------
class TokenAuth(HttpBearer):
    """`Authorization: Bearer <token>`; the token's user must pass `allowed`.

    Returns the user (ninja stores it as `request.auth`); `request.user` is never consulted,
    so a browser's session cookie grants nothing here.
    """

    def __init__(self, allowed: Callable[[AbstractBaseUser | AnonymousUser], bool]) -> None:
        self.allowed = allowed
        super().__init__()

    def __call__(self, request: HttpRequest) -> User | None:
        # ninja's own HttpBearer logs an unexpected header in DEBUG, token included.
        scheme, _, token = request.headers.get(self.header, "").partition(" ")
        if scheme.lower() != "bearer":
            return None
        return self.authenticate(request, token.strip())

    def authenticate(self, request: HttpRequest, token: str) -> User | None:
        row = tokens.verify_token(token)
        if row is None:
            return None
        user = row.user
        if not self.allowed(user):
            raise AuthorizationError(message="Your role does not allow this.")
        return user


browse_auth = TokenAuth(can_browse)
annotate_auth = TokenAuth(can_annotate)
staff_auth = TokenAuth(can_ingest)


def user_of(request: HttpRequest) -> User:
    return cast(User, request.auth)  # type: ignore[attr-defined]


# --- the API and its error answers -----------------------------------------------------------
def _login_for_the_docs_page(view: Callable[..., Any]) -> Callable[..., Any]:
    """Ninja passes both its schema and its docs page through this: the docs are a page, and
    every page needs a login; the schema stays readable by pipelines and tools."""
    if getattr(view, "func", None) is openapi_view:
        return login_required(view)
    return view


api = NinjaAPI(
    title="Trialdesk API",
    version="1",
    description=(
        "Trials, jobs, annotations and ingest. Authenticate with `Authorization: Bearer "
        "<token>`; make a token with `manage.py create_token USER`."
    ),
    urls_namespace="api",
    # validatorUrl: Swagger UI would otherwise send the schema to an outside validator.
    docs=Swagger(settings={"validatorUrl": None}),
    docs_decorator=_login_for_the_docs_page,
)


def error_response(status: int, detail: Any, headers: dict[str, str] | None = None) -> HttpResponse:
    return JsonResponse({"detail": detail}, status=status, headers=headers)


# A field path names fields, but an unknown key sent in a body lands in it too: a key that
# does not look like a field name is shown as "*", so no sent text is echoed.
_FIELD_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _loc_part(part: Any) -> str | int:
    if isinstance(part, int) and not isinstance(part, bool):
        return part
    text = str(part)
    return text if _FIELD_NAME.fullmatch(text) else "*"


def clean_errors(errors: Sequence[Any], prefix: tuple[str | int, ...] = ()) -> list[dict[str, Any]]:
    """Field path, message and type of each error; the input and its context are dropped."""
    cleaned = [
        {
            "loc": [*prefix, *(_loc_part(p) for p in error["loc"])],
            "msg": error["msg"],
            "type": error["type"],
        }
        for error in errors[:MAX_ERRORS]
    ]
    if len(errors) > MAX_ERRORS:
        cleaned.append(
            {"loc": list(prefix), "msg": f"and {len(errors) - MAX_ERRORS} more", "type": "more"}
        )
    return cleaned


@api.exception_handler(ValidationError)
def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    errors = []
    for error in exc.errors:
        loc = tuple(error["loc"])
        # ninja names a body parameter in the path (`body.body.judgment`); the body is enough.
        if loc[:2] == ("body", "body"):
            loc = loc[1:]
        errors.append({**error, "loc": loc})
    return error_response(422, clean_errors(errors))


@api.exception_handler(AuthenticationError)
def on_authentication_error(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return error_response(
        401,
        "A valid API token is required: send `Authorization: Bearer <token>`.",
        headers={"WWW-Authenticate": 'Bearer realm="trialdesk"'},
    )


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return error_response(exc.status_code, exc.message)


@api.exception_handler(Http404)
def on_not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return error_response(404, "Not found.")


@api.exception_handler(RequestDataTooBig)
def on_too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return error_response(
        413,
        f"The request body is larger than the {limit}-byte limit; send fewer bundles per request.",
    )


@api.exception_handler(SuspiciousOperation)
def on_suspicious(request: HttpRequest, exc: SuspiciousOperation) -> HttpResponse:
    return error_response(400, "Bad request.")


@api.exception_handler(Exception)
def on_server_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    log.exception("API error on %s %s", request.method, request.path)
    return error_response(500, "Internal server error.")


def _json_errors(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Errors ninja answers outside an operation (405, the API root) as JSON too.

    CSRF exempt, as ninja makes its operations: nothing under /api/ reads a session or a
    cookie, so a forged cross-site request carries no authority (and Django's CSRF failure
    page would be HTML).
    """

    @csrf_exempt
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        try:
            response = view(request, *args, **kwargs)
        except Http404:
            return error_response(404, "Not found.")
        except Exception:
            log.exception("API error on %s %s", request.method, request.path)
            return error_response(500, "Internal server error.")
        content_type = response.get("Content-Type", "")
        if response.status_code >= 400 and not content_type.startswith("application/json"):
            replaced = error_response(response.status_code, response.reason_phrase)
            if "Allow" in response:
                replaced["Allow"] = response["Allow"]
            return replaced
        return response

    return wrapped


@csrf_exempt
def _not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    return error_response(404, "Not found.")


# --- schemas ---------------------------------------------------------------------------------
class StrictIn(Schema):
    model_config = ConfigDict(extra="forbid")


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
    annotation_count: int
    started_at: datetime | None
    finished_at: datetime | None

    @classmethod
    def of(cls, trial: Trial) -> TrialListItem:
        return cls(
            id=trial.pk,
            uid=trial.uid,
            job_id=trial.job_id,
            job=trial.job.name,
            task=trial.task.name,
            task_source=trial.task.source,
            name=trial.name,
            agent=trial.agent_name,
            agent_version=trial.agent_version,
            model=trial.model_name,
            status=trial.status,
            reward=trial.reward,
            is_valid=trial.is_valid,
            scorer_verdict=trial.scorer_verdict,
            scorer_mean=trial.scorer_mean,
            judge_verdict=trial.judge_verdict,
            failure_mode=trial.failure_mode,
            run_badge=trial.run_badge,
            gate_disagreement=trial.gate_disagreement,
            human_judgment=trial.human_judgment,
            human_disagreement=trial.human_disagreement,
            annotation_count=trial.annotation_count,
            started_at=trial.started_at,
            finished_at=trial.finished_at,
        )


# What a TrialListItem reads: the trial row and two names, nothing deferred is touched.
SUMMARY_FIELDS = (
    "id",
    "uid",
    "job_id",
    "job__name",
    "task__name",
    "task__source",
    "name",
    "agent_name",
    "agent_version",
    "model_name",
    "status",
    "reward",
    "is_valid",
    "scorer_verdict",
    "scorer_mean",
    "judge_verdict",
    "failure_mode",
    "run_badge",
    "gate_disagreement",
    "human_judgment",
    "human_disagreement",
    "annotation_count",
    "started_at",
    "finished_at",
)


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
        )


class AnnotationIn(StrictIn):
    """A judgment by the token's user; the reviewer and their discipline are never sent."""

    judgment: Literal["pass", "fail", "defer"]
    categories: Annotated[
        list[Annotated[str, Field(max_length=MAX_CATEGORY_LENGTH, pattern=r"^[^,]*$")]],
        Field(max_length=MAX_CATEGORIES),
    ] = []
    notes: Annotated[str, Field(max_length=20000)] = ""


class IngestCounts(Schema):
    ingested: int
    unchanged: int
    updated: int
    invalid: int


class IngestResult(Schema):
    status: Literal["ingested", "unchanged", "updated", "invalid"]
    job: str
    trial: str
    trial_id: int | None
    reason: str


class IngestOut(Schema):
    counts: IngestCounts
    results: list[IngestResult]


class ErrorOut(Schema):
    detail: Any


ERRORS: dict[int, type[Schema]] = {401: ErrorOut, 403: ErrorOut}


# --- trials ----------------------------------------------------------------------------------
trials = Router(tags=["trials"], auth=browse_auth)


def _filter_parameters() -> list[dict[str, Any]]:
    """The explorer's filters as OpenAPI query parameters, read off TrialFilterForm."""
    parameters = []
    for name, field in TrialFilterForm.base_fields.items():
        if name == "after":  # the API calls it `cursor`
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
        else:
            schema = {"type": "string", "maxLength": field.max_length}  # type: ignore[attr-defined]
        parameters.append(
            {
                "name": name,
                "in": "query",
                "required": False,
                "schema": schema,
                "description": str(field.label or name),
            }
        )
    return parameters


@trials.get(
    "/trials",
    response={200: TrialPage, 422: ErrorOut, **ERRORS},
    openapi_extra={"parameters": _filter_parameters()},
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
    rows = form.page(Trial.objects.list_columns().only(*SUMMARY_FIELDS), page.limit)
    return TrialPage(items=[TrialListItem.of(t) for t in rows.rows], next_cursor=rows.next_cursor)


def _trial_or_404(pk: int) -> Trial:
    trial = Trial.objects.filter(pk=pk).only("id").first()
    if trial is None:
        raise Http404
    return trial


@trials.get(
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


@trials.get(
    "/trials/{int:trial_id}/annotations",
    response={200: list[AnnotationOut], 404: ErrorOut, **ERRORS},
    summary="A trial's annotations",
)
def list_annotations(request: HttpRequest, trial_id: int) -> list[AnnotationOut]:
    """Every annotation of the trial, oldest first (append-only: none is ever changed)."""
    trial = _trial_or_404(trial_id)
    return [AnnotationOut.of(a) for a in Annotation.objects.for_trial(trial).history()]


@trials.post(
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


# --- jobs ------------------------------------------------------------------------------------
jobs = Router(tags=["jobs"], auth=browse_auth)
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


@jobs.get("/jobs", response={200: JobPage, **ERRORS}, summary="Jobs with trial counts")
def list_jobs(request: HttpRequest, page: Query[JobPageQuery]) -> JobPage:
    """Jobs newest first with trial counts and gate pass rates, a keyset page at a time
    (one query per page); walk with `cursor`."""
    after = None
    if page.cursor:
        try:
            _, after = decode_cursor(page.cursor, JOBS_CURSOR_SORT)
        except CursorError as exc:
            raise ValidationError(
                [{"loc": ("query", "cursor"), "msg": str(exc), "type": "invalid"}]
            ) from exc
    rows = jobs_page(after, page.limit)
    return JobPage(
        items=[JobOut(**_job_out(job, Summary.of(job))) for job in rows.jobs],
        next_cursor=None
        if rows.next_after is None
        else encode_cursor(JOBS_CURSOR_SORT, rows.next_after, rows.next_after),
    )


@jobs.get(
    "/jobs/{int:job_id}",
    response={200: JobDetailOut, 404: ErrorOut, **ERRORS},
    summary="One job, by task and by agent",
)
def get_job(request: HttpRequest, job_id: int) -> JobDetailOut:
    """One job: its summary, and the same per task and per agent and model."""
    job = Job.objects.filter(pk=job_id).first()
    if job is None:
        raise Http404
    breakdown = job_breakdown(job)
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


# --- agreement and comparison ----------------------------------------------------------------
figures_router = Router(tags=["figures"], auth=browse_auth)


def _form_errors(errors: Any) -> ValidationError:
    return ValidationError(
        [
            {"loc": ("query", name), "msg": msg, "type": "invalid"}
            for name, messages in errors.items()
            for msg in messages
        ]
    )


@figures_router.get(
    "/agreement",
    response={200: dict[str, Any], 422: ErrorOut, **ERRORS},
    openapi_extra={
        "parameters": [
            *_filter_parameters(),
            {
                "name": "by",
                "in": "query",
                "required": False,
                "schema": {"type": "string", "enum": list(agreement.DIMENSIONS)},
                "description": "the breakdown dimension",
            },
        ]
    },
    summary="Agreement: gates against humans, and reviewers against each other",
)
def get_agreement(request: HttpRequest) -> dict[str, Any]:
    """The agreement page's figures under the explorer's filters: confusion matrices (rows
    PASS / FAIL of the gate, columns pass / fail of the human), Cohen's kappa with a 95%
    bootstrap interval, the breakdown, reviewer pairs and Krippendorff's alpha."""
    form = TrialFilterForm(request.GET)
    page = AgreementForm(request.GET)
    if not form.is_valid():
        raise _form_errors(form.errors)
    if not page.is_valid():
        raise _form_errors(page.errors)
    return figures.agreement_dict(agreement.report(form, page.dimension))


@figures_router.get(
    "/compare",
    response={200: dict[str, Any], 422: ErrorOut, **ERRORS},
    openapi_extra={
        "parameters": [
            {"name": side, "in": "query", "required": True, "schema": {"type": "integer"}}
            for side in ("a", "b")
        ]
    },
    summary="Compare two runs task by task",
)
def get_comparison(request: HttpRequest) -> dict[str, Any]:
    """Paired task outcomes of jobs `a` and `b` (verifier, judge, human): counts, pass rates,
    the delta with a paired bootstrap interval, McNemar's test and the flipped tasks."""
    form = CompareForm(request.GET)
    if not form.is_valid():
        raise _form_errors(form.errors)
    return figures.compare_dict(compare.compare(form.cleaned_data["a"], form.cleaned_data["b"]))


# --- ingest ----------------------------------------------------------------------------------
ingest = Router(tags=["ingest"], auth=staff_auth)

_ONE = TypeAdapter(TrialBundle)
_MANY = TypeAdapter(Annotated[list[TrialBundle], Field(min_length=1, max_length=MAX_BUNDLES)])

# The body is read and validated here, not by ninja, to validate exactly as `ingest` reads a
# .jsonl line (strict JSON mode); so its schema is written out. TrialBundle's own schema is
# in the components because GET /api/trials/{id} returns one.
_BUNDLE_REF = {"$ref": "#/components/schemas/TrialBundle"}
INGEST_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "oneOf": [
                        _BUNDLE_REF,
                        {
                            "type": "array",
                            "items": _BUNDLE_REF,
                            "minItems": 1,
                            "maxItems": MAX_BUNDLES,
                        },
                    ]
                }
            }
        },
    }
}


def parse_bundles(raw: bytes) -> list[TrialBundle]:
    """The body as bundles; ninja's ValidationError (422) naming the field paths if not."""
    limits = Limits.from_settings()
    try:
        # Depth and NaN checks first, as for a .jsonl line; one more level for the list.
        data = loads_json(raw, limits.max_depth + ENVELOPE_DEPTH + 1)
    except ArtifactError as exc:
        raise ValidationError([{"loc": ("body",), "msg": str(exc), "type": "invalid"}]) from exc
    except ValueError as exc:
        raise ValidationError(
            [{"loc": ("body",), "msg": "not valid JSON", "type": "json_invalid"}]
        ) from exc
    try:
        if isinstance(data, list):
            return _MANY.validate_json(raw, strict=True)
        return [_ONE.validate_json(raw, strict=True)]
    except PydanticValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False, include_context=False)
        raise ValidationError(clean_errors(errors, ("body",))) from exc
    except ArithmeticError as exc:
        # A validator that converts a value (a datetime at year 1 with an offset, moved to
        # UTC) can overflow; pydantic passes that through instead of naming the field.
        raise ValidationError(
            [{"loc": ("body",), "msg": "a date or number is out of range", "type": "value_error"}]
        ) from exc


@ingest.post(
    "/ingest",
    response={200: IngestOut, 413: ErrorOut, 422: ErrorOut, **ERRORS},
    openapi_extra=INGEST_BODY,
    summary="Store TrialBundles (staff)",
)
def ingest_bundles(request: HttpRequest) -> IngestOut:
    """One TrialBundle or a list of up to 1000, stored as `manage.py ingest` stores a .jsonl
    file: atomic per trial and idempotent (the same bundle again is `unchanged`)."""
    outcomes = BundleWriter().write_many(parse_bundles(request.body))
    counts = Counter(o.status for o in outcomes)
    return IngestOut(
        counts=IngestCounts(
            ingested=counts["ingested"],
            unchanged=counts["unchanged"],
            updated=counts["updated"],
            invalid=counts["invalid"],
        ),
        results=[
            IngestResult(
                status=o.status, job=o.job, trial=o.trial, trial_id=o.trial_id, reason=o.reason
            )
            for o in outcomes
        ],
    )


api.add_router("", trials)
api.add_router("", jobs)
api.add_router("", figures_router)
api.add_router("", ingest)


# ninja's own views (schema, docs, API root) answer any method; they are read-only.
_READ_ONLY_VIEWS = {"openapi-json", "openapi-view", "api-root"}


def urls() -> tuple[list[URLPattern | URLResolver], str, str]:
    """What config/urls.py mounts at `api/`: ninja's URLs, errors as JSON, and a JSON 404
    for every other path under /api/."""
    patterns, app_name, namespace = api.urls
    for pattern in patterns:
        if isinstance(pattern, URLPattern):
            view = pattern.callback
            if pattern.name in _READ_ONLY_VIEWS:
                view = require_safe(view)
            pattern.callback = _json_errors(view)
    return [*patterns, re_path(r"", _not_found, name="not-found")], app_name, namespace
