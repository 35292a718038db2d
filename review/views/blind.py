"""Blind review: a trial shown without its reward, gates or other reviewers' annotations.

The queue's blind mode hands trials out to this page. Its context is built from a narrow
record (`BlindTrial`) and the agent's own artifacts, so nothing hidden can reach the HTML
whatever the template does; the reviewer sees everything on the trial page once they have
submitted. An annotation made here is recorded as blind.

Step comments can be written here too; the page shows the reviewer's own comments only,
as it shows no other reviewer's annotation: everyone's are on the trial page, once revealed.

The trajectory is shown a chunk of steps at a time, as on the trial page (review.pages.steps):
the chunk holding `?at=` (or the step the comment form is opened on), the next one loaded by
`blind_steps` when the reader reaches the end of the list. That partial is built from the
same narrow record, so it reveals no more than the page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from review import guidelines
from review.filtering.form import TrialFilterForm
from review.forms import STEP_KINDS, AnnotationForm, StepCommentForm, TrialPageForm
from review.guidelines import ReviewStamp
from review.http import HttpRequest
from review.models import (
    Annotation,
    CommentTargetError,
    ReviewerProfile,
    StepComment,
    add_annotation,
    add_step_comment,
)
from review.pages import presenters, steps
from review.roles import annotate_required
from rewards.ingest.trial_files import TrialFolder, TrialFolderGone, step_order
from rewards.models import UNFINISHED, Trial, TrialDetail

# What a blind reviewer may read of the trial row: nothing automated, nothing human.
BLIND_FIELDS = (
    "pk",
    "name",
    "job__name",
    "task__name",
    "task__source",
    "task__instruction",
    "agent_name",
    "model_name",
    "source_path",
    "timings",
    # What the kept steps are keyed on (rewards.cache.trial_version) and whether they grow.
    "content_digest",
    "updated_at",
    "status",
)
ARTIFACT_FIELDS = (
    "trajectory",
    "workspace_diff",
    "command",
    "exit_code",
    "stdout_tail",
    "stderr_tail",
    "final_response",
)


@dataclass(frozen=True)
class BlindTrial:
    pk: int
    name: str
    job: str
    task: str
    source: str
    instruction: str
    agent: str
    model: str
    source_path: str
    timings: Any
    content_digest: str
    updated_at: Any
    status: str

    @property
    def is_running(self) -> bool:
        return self.status in UNFINISHED


def _blind_trial(pk: int) -> BlindTrial:
    row = Trial.objects.filter(pk=pk).values_list(*BLIND_FIELDS).first()
    if row is None:
        raise Http404
    return BlindTrial(*row)


def _page_query(request: HttpRequest) -> QueryDict:
    query = TrialFilterForm(request.GET).canonical_query()
    query["queue"] = "1"
    return query


def _revealed(trial_pk: int, query: QueryDict) -> HttpResponse:
    return redirect(f"{reverse('review:trial-detail', args=[trial_pk])}?{query.urlencode()}")


@require_http_methods(["GET", "POST"])
@login_required
@annotate_required
def blind_review(request: HttpRequest, pk: int) -> HttpResponse:
    trial = _blind_trial(pk)
    query = _page_query(request)
    already = Annotation.objects.filter(trial_id=pk, reviewer=request.user).exists()
    if request.method == "POST":
        form = AnnotationForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            stamp = ReviewStamp.of(request.user, pk, TrialFilterForm(request.GET))
            add_annotation(
                trial_id=pk,
                reviewer=request.user,
                judgment=data["judgment"],
                categories=data["categories"],
                notes=data["notes"],
                reviewer_discipline=data["reviewer_discipline"],
                # A reviewer who had already judged this trial had seen it revealed.
                blind=not already,
                seconds_to_review=stamp.seconds_to_review,
                guideline_version=stamp.guideline_version,
            )
            messages.success(request, "Annotation saved. Here is everything about the trial.")
            return _revealed(pk, query)
    elif already:
        messages.info(request, "You have reviewed this trial already, so it is shown in full.")
        return _revealed(pk, query)
    else:
        discipline = (
            ReviewerProfile.objects.filter(user=request.user)
            .values_list("discipline", flat=True)
            .first()
        )
        form = AnnotationForm(initial={"reviewer_discipline": discipline or ""})
    status = 400 if request.method == "POST" else 200
    # A step's plain "Comment" link opens the form on that step.
    step = TrialPageForm(request.GET).commenting_step
    comment_form = StepCommentForm(initial={"step": step, "part": "message"})
    return _render(request, trial, query, form, comment_form, status)


@require_POST
@login_required
@annotate_required
def blind_comment(request: HttpRequest, pk: int) -> HttpResponse:
    """A step comment from blind review; back to the blind page, at the step."""
    trial = _blind_trial(pk)
    query = _page_query(request)
    form = StepCommentForm(request.POST)
    if form.is_valid():
        try:
            comment = add_step_comment(
                trial_id=pk,
                author=request.user,
                target=form.target(),
                text=form.cleaned_data["text"],
            )
        except CommentTargetError as refused:
            form.add_error(None, str(refused))
        else:
            messages.success(request, "Comment saved.")
            page = reverse("review:blind-review", args=[pk])
            query["at"] = str(comment.step)  # the chunk of steps holding it
            return redirect(f"{page}?{query.urlencode()}#step-{comment.step}")
    return _render(request, trial, query, AnnotationForm(), form, status=400)


def _render(
    request: HttpRequest,
    trial: BlindTrial,
    query: QueryDict,
    form: AnnotationForm,
    comment_form: StepCommentForm,
    status: int,
) -> HttpResponse:
    head = steps.current_head(trial)
    # The trajectory is left out when its presented steps are kept (review.pages.steps).
    fields = [name for name in ARTIFACT_FIELDS if head is None or name != "trajectory"]
    detail = TrialDetail.objects.filter(trial_id=trial.pk).only(*fields).first()
    page = TrialPageForm(request.GET)
    at = page.at_step or comment_form.initial.get("step") or _form_step(comment_form)
    context: dict[str, Any] = {
        "trial": trial,
        "form": form,
        "guide": guidelines.guide(request.user, TrialFilterForm(request.GET).cleaned_value("view")),
        "detail": detail,
        **_steps_context(request, trial, query, at, head, lambda: _trajectory_of(detail)),
        "diff": presenters.diff(detail.workspace_diff if detail else ""),
        "query": query.urlencode(),
        "skip_url": f"{reverse('review:queue-skip')}?{_filters_only(query)}",
        "comment_form": comment_form,
    }
    context.update(_logs_without_trajectory(trial, context["trajectory"]))
    return render(request, "review/blind_review.html", context, status=status)


@require_GET
@login_required
@annotate_required
def blind_steps(request: HttpRequest, pk: int) -> HttpResponse:
    """A chunk of the trajectory's steps (`?at=` its first), as the blind page's list ends
    with them: the agent's steps and the reviewer's own comments, nothing else."""
    trial = _blind_trial(pk)
    query = _page_query(request)
    context = _steps_context(
        request,
        trial,
        query,
        TrialPageForm(request.GET).at_step,
        steps.current_head(trial),
        lambda: (
            TrialDetail.objects.filter(trial_id=pk).values_list("trajectory", flat=True).first()
        ),
    )
    context["steps"] = context["trajectory"].steps
    return render(request, "review/includes/trajectory_steps.html#step-items", context)


def _trajectory_of(detail: TrialDetail | None) -> Any:
    return detail.trajectory if detail else None


def _form_step(form: StepCommentForm) -> int | None:
    """The step a bound comment form was for (a refused comment: the page shows its chunk)."""
    if not form.is_bound:
        return None
    step = getattr(form, "cleaned_data", {}).get("step")
    return step if isinstance(step, int) else None


def _steps_context(
    request: HttpRequest,
    trial: BlindTrial,
    query: QueryDict,
    at: int | None,
    head: steps.Head | None,
    raw: Callable[[], Any],
) -> dict[str, Any]:
    """The chunk of steps holding `at` with the reviewer's own comments (module docstring),
    the links to the chunks either side, and where the comment links lead."""
    window = steps.window(trial, raw, at, steps.PER_CHUNK, head)
    own = list(StepComment.objects.filter(trial_id=trial.pk, author=request.user).history())
    trajectory = steps.ShownChunk(window, STEP_KINDS, None, own)
    return {
        "trajectory": trajectory,
        **steps.chunk_links(
            window,
            query.copy(),
            reverse("review:blind-review", args=[trial.pk]),
            reverse("review:blind-steps", args=[trial.pk]),
        ),
        "comment_url": f"{reverse('review:blind-comment', args=[trial.pk])}?{query.urlencode()}",
        "comment_query": f"{query.urlencode()}&",
    }


def _logs_without_trajectory(trial: BlindTrial, trajectory: steps.ShownChunk) -> dict[str, Any]:
    """A trial with no trajectory is judged on the agent's logs and Harbor's trial log,
    read from its folder (what a reviewer would otherwise open beside the page)."""
    if trajectory.total_steps or trajectory.unreadable:
        return {}
    try:
        folder = TrialFolder(trial.source_path, step_order=step_order(trial.timings))
    except TrialFolderGone as gone:
        return {"folder_gone": str(gone)}
    return {"log_sections": folder.agent_logs(), "trial_log": folder.trial_log()}


def _filters_only(query: QueryDict) -> str:
    filters = query.copy()
    filters.pop("queue", None)
    return filters.urlencode()
