"""Agent Trace: one trial with its three gates, cards, tabs and annotations."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.http import content_disposition_header, urlencode
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from review import adjudication, guidelines
from review.filtering.form import TrialFilterForm
from review.forms import (
    DEFAULT_TAB,
    STEP_KIND_CHOICES,
    TAB_CHOICES,
    AnnotationForm,
    GoldLabelForm,
    ScorerRowForm,
    StepCommentForm,
    TrialFileForm,
    TrialPageForm,
)
from review.guidelines import ReviewStamp
from review.http import HttpRequest, wants_fragment
from review.models import (
    Annotation,
    CommentTargetError,
    GoldLabel,
    ReviewerProfile,
    StepComment,
    add_annotation,
    add_step_comment,
)
from review.pages import presenters, steps
from review.pages.integrity import integrity_context
from review.pages.navigation import TrialNav, trial_url
from review.roles import (
    annotate_required,
    browse_required,
    can_annotate,
    can_browse,
    can_ingest,
)
from rewards import reports
from rewards.cache import fingerprint, trial_version
from rewards.ingest.files import ArtifactError
from rewards.ingest.trial_files import TrialFolder, TrialFolderGone, step_order
from rewards.models import (
    ErrorTag,
    EvaluationResult,
    JudgeVerdict,
    ScorerResult,
    Trial,
    TrialDetail,
)

TEMPLATE = "review/trial.html"

# What each tab reads from the trial's blob table; nothing else of it is loaded.
TAB_DETAIL_FIELDS = {
    # Left out when its steps are kept presented (review.pages.steps).
    "trajectory": ("trajectory",),
    "diff": ("workspace_diff",),
    "output": ("command", "exit_code", "stdout_tail", "stderr_tail", "final_response"),
    "verifier": ("verifier_stdout", "ctrf"),
    "exception": ("exception_traceback",),
    # Read from the trial's folder when opened (rewards.ingest.trial_files).
    "agent-logs": (),
    "trial-log": (),
    "artifacts": (),
    "analysis": (),
}
DETAIL_BLOBS = frozenset(
    field.name
    for field in TrialDetail._meta.concrete_fields
    if not field.primary_key and field.name != "trial"
)
# Columns of the trial's job, task and scenario that the page never shows: JSON blobs that
# would only be read and decoded.
PAGE_UNUSED_COLUMNS = (
    "job__config",
    "job__stats",
    "task__output_schema",
    "task__scorer_specs",
    "task__scenario_version__scorer_specs",
    "task__scenario_version__scenario__description",
)


def _get_trial_for(
    request: HttpRequest,
    pk: int,
    around: TrialFilterForm | None = None,
    tab: str | None = None,
) -> Trial:
    """The one way a page or partial finds its trial: the role first, then the row.

    Every browsing role may read every trial today; a per-job restriction goes here. With
    `around`, the trial's neighbours in that filter (`previous_id`, `next_id`) are read
    in the same SELECT, as two keyset subqueries. With `tab`, so are that tab's blobs and
    the ingestion problems (`trial.detail`, a LEFT JOIN on the one-to-one row; nothing else
    of it is loaded), but for the trajectory's tab not the trajectory when its presented
    steps are kept (review.pages.steps).
    """
    if not can_browse(request.user):
        raise PermissionDenied
    queryset = (
        Trial.objects.list_columns()
        .select_related("task__scenario_version__scenario")
        .defer(*PAGE_UNUSED_COLUMNS)
    )
    if around is not None and not around.sorts_by_name:
        queryset = queryset.annotate(**around.neighbours())
    kept = steps.kept_head(pk) if tab == "trajectory" else None
    if tab is not None:
        wanted = {*TAB_DETAIL_FIELDS[tab], "ingest_problems"}
        if kept is not None:
            wanted.discard("trajectory")
        queryset = queryset.select_related("detail").defer(
            *(f"detail__{name}" for name in DETAIL_BLOBS - wanted)
        )
    trial = get_object_or_404(queryset, pk=pk)
    # The kept head of its presented steps, found before the trial was read
    # (`steps_window`): its trajectory is read only if that head is not this version's.
    setattr(trial, "kept_steps", kept)  # noqa: B010
    if around is not None and around.sorts_by_name:
        # As `neighbours()` annotates them for the other sorts.
        previous_id, next_id = around.neighbour_ids(trial)
        setattr(trial, "previous_id", previous_id)  # noqa: B010
        setattr(trial, "next_id", next_id)  # noqa: B010
    return trial


def _detail_of(trial: Trial) -> TrialDetail | None:
    """The blobs `_get_trial_for(…, tab=…)` read with the trial; None when it has none."""
    detail: TrialDetail | None = getattr(trial, "detail", None)
    return detail


# --- context builders -----------------------------------------------------------------------
def _scorer_links(
    trial: Trial, rows: list[presenters.ScorerRow], query: QueryDict
) -> list[presenters.ScorerRow]:
    """The rows with their two links, carrying the page's query (its list and tab): the page
    with the row flipped in `open`, and the row's fragment in its other state. The card
    reverses each URL once and encodes the query once, whatever its number of rows."""
    page = reverse("review:trial-detail", args=[trial.pk])
    # The row URL around a placeholder position, filled in per row.
    before, after = reverse("review:scorer-row", args=[trial.pk, 0]).rsplit("0", 1)
    fragment_query = query.copy()
    fragment_query.pop("expanded", None)
    toggle_query = fragment_query.copy()
    toggle_query.pop("open", None)
    fragment_rest, toggle_rest = (
        f"{q.urlencode()}&" if q else "" for q in (fragment_query, toggle_query)
    )
    return [
        replace(
            row,
            toggle_url=f"{page}?{toggle_rest}{urlencode({'open': row.toggle_open})}#{row.anchor}",
            fragment_url=f"{before}{row.scorer.position}{after}?{fragment_rest}"
            f"expanded={'0' if row.expanded else '1'}",
        )
        for row in rows
    ]


def _tab_context(
    trial: Trial,
    state: TrialPageForm,
    nav: TrialNav,
    comments: Sequence[StepComment] = (),
    window: Opened | None = None,
) -> dict[str, Any]:
    """The open tab's context; the trajectory shows `comments` beside their steps (its
    chunk of steps, `window`, read here unless the view read it already)."""
    tab = state.current_tab
    detail = _detail_of(trial)
    page_url = reverse("review:trial-detail", args=[trial.pk])
    context: dict[str, Any] = {
        "tab": tab,
        "tabs": [(value, label, nav.tab_url(page_url, value)) for value, label in TAB_CHOICES],
        "detail": detail,
        "nav": nav,
        "exception_url": nav.tab_url(page_url, "exception"),
    }
    if tab == "trajectory":
        context.update(_trajectory_context(trial, state, nav, comments, window))
        context["agent_logs_url"] = nav.tab_url(page_url, "agent-logs")
    elif tab == "diff":
        context["diff"] = presenters.diff(detail.workspace_diff if detail else "")
    elif tab == "exception":
        context["occurred_at"] = presenters.exception_time(trial.timings)
    if tab in FOLDER_TABS:
        context.update(_folder_context(trial, tab))
    if tab == "verifier":
        context["ctrf"] = reports.ctrf(detail.ctrf if detail else None)
        current = (
            EvaluationResult.objects.filter(trial=trial, is_current=True)
            .only("raw_artifacts")
            .first()
        )
        context["raw_files"] = presenters.raw_artifact_files(
            current.raw_artifacts if current else None
        )
    return context


def _raw_trajectory(trial: Trial) -> Callable[[], Any]:
    def read() -> Any:
        # Read with the trial, unless its kept steps left it out: then a query (deferred).
        detail = _detail_of(trial)
        return detail.trajectory if detail else None

    return read


# A chunk of steps and the followed citation's marks (read once for the chunk's choice).
Opened = tuple[steps.Window, presenters.Marks | None]


def steps_window(trial: Trial, state: TrialPageForm, step: int | None = None) -> Opened:
    """The chunk of the trajectory's steps the page shows: the one holding `step`, else
    `?at=`, else the followed citation's first step, else the step the comment form is
    opened on, else the first."""
    cited = state.cited
    marks = cited_marks(trial, *cited) if cited else None
    at = (
        step
        or state.at_step
        or (min(number for number, _ in marks) if marks else state.commenting_step)
    )
    head: steps.Head | None = getattr(trial, "kept_steps", None)
    window = steps.window(trial, _raw_trajectory(trial), at, steps.PER_CHUNK, head)
    return window, marks


def _trajectory_context(
    trial: Trial,
    state: TrialPageForm,
    nav: TrialNav,
    comments: Sequence[StepComment],
    opened: Opened | None = None,
) -> dict[str, Any]:
    """The trajectory's chunk of steps with their comments, the links to the chunks either
    side, and what the rendered chunk is kept under."""
    window, marks = opened or steps_window(trial, state)
    kinds = state.step_kinds
    trajectory = steps.ShownChunk(window, kinds, marks, comments)
    page_url = reverse("review:trial-detail", args=[trial.pk])
    query = nav.page_query
    query["tab"] = "trajectory"
    if state.is_filtered:
        query["filtered"] = "1"
        query.setlist("show", kinds)
    if state.cited:
        query["cite"] = "{}.{}".format(*state.cited)

    return {
        "trajectory": trajectory,
        **steps.chunk_links(
            window, query, page_url, reverse("review:trial-steps", args=[trial.pk])
        ),
        # What the chunk's rendering shows (its links aside: the template adds them).
        "steps_fingerprint": fingerprint(
            window.head.key, window.number, kinds, state.cited, [c.pk for c in trajectory.comments]
        ),
        "step_filters": [
            {
                "value": value,
                "label": label,
                "checked": value in kinds,
                "count": trajectory.counts.get(value, 0),
            }
            for value, label in STEP_KIND_CHOICES
        ],
    }


def opening_tab(trial: Trial, window: steps.Window) -> str:
    """The tab a trial page opens on when none was asked for: the trajectory, or, for a
    trial without one (half of Harbor's trials), the agent's logs, else Harbor's trial log,
    so the page opens on evidence. `window` is the trajectory's first chunk (kept, or read
    with the trial); the logs come from its folder, no row more."""
    if window.head.total_steps or window.head.unreadable:
        return DEFAULT_TAB  # steps, or something to show as it is
    try:
        folder = TrialFolder(trial.source_path, step_order=step_order(trial.timings))
    except TrialFolderGone:
        return DEFAULT_TAB  # the tab says there is none and where the logs would be
    if folder.agent_logs():
        return "agent-logs"
    if folder.trial_log() is not None:
        return "trial-log"
    return DEFAULT_TAB


# The tabs that read the trial's folder, and what each reads of it.
FOLDER_TABS = {
    "agent-logs": lambda folder: {"sections": folder.agent_logs()},
    "verifier": lambda folder: {"sections": folder.verifier_logs()},
    "trial-log": lambda folder: {"trial_log": folder.trial_log()},
    "artifacts": lambda folder: {"sections": folder.artifacts()},
    "analysis": lambda folder: {"analysis": folder.analysis()},
}


def _folder_context(trial: Trial, tab: str) -> dict[str, Any]:
    """What the open tab shows of the trial's folder, or why the folder cannot be read."""
    try:
        folder = TrialFolder(trial.source_path, step_order=step_order(trial.timings))
    except TrialFolderGone as gone:
        return {"folder_gone": str(gone)}
    context: dict[str, Any] = FOLDER_TABS[tab](folder)
    return context


def _comment_form_context(
    request: HttpRequest,
    trial: Trial,
    state: TrialPageForm,
    nav: TrialNav,
    form: StepCommentForm | None = None,
    comments: Sequence[StepComment] = (),
) -> dict[str, Any]:
    """The step-comment form, for those who may comment, and what links to it.

    Not while the trial runs: its tabs are polled (the form would be swapped away while
    being written) and its trajectory is still growing.
    """
    if not can_annotate(request.user) or trial.is_running:
        return {}
    if form is None:
        # A comment's plain "Correct" link names one of the reviewer's own (`comments`).
        own = [c for c in comments if c.pk == state.correcting and c.author_id == request.user.pk]
        form = (
            StepCommentForm.correcting(own[0])
            if own
            else StepCommentForm(initial={"step": state.commenting_step, "part": "message"})
        )
    page_query = nav.page_query
    page_query["tab"] = "trajectory"
    page_query.pop("comment_step", None)
    page_query.pop("correct", None)
    action = reverse("review:step-comment", args=[trial.pk])
    return {
        "comment_form": form,
        # What an unbound form's fields show: their kept rendering's key.
        "comment_fields_key": None if form.is_bound else fingerprint(sorted(form.initial.items())),
        "comment_url": f"{action}?{nav.annotate_url_query}",
        # The steps' plain "Comment" links: the page again, its form set to that step.
        "comment_query": f"{page_query.urlencode()}&",
    }


def _annotations_context(
    request: HttpRequest,
    trial: Trial,
    nav: TrialNav,
    form: AnnotationForm | None = None,
    saved: bool = False,
    comments: Sequence[StepComment] = (),
) -> dict[str, Any]:
    allowed = can_annotate(request.user)
    # The trial keeps its annotation count (kept with every annotation added): most trials
    # have none, and then neither annotations nor adjudications (which settle annotations)
    # are read.
    reviewed = trial.annotation_count > 0
    annotations = annotation_history(trial.pk) if reviewed else []
    if allowed and form is None:
        discipline = (
            ReviewerProfile.objects.filter(user=request.user)
            .values_list("discipline", flat=True)
            .first()
        )
        form = AnnotationForm(initial={"reviewer_discipline": discipline or ""})
    return {
        "trial": trial,
        "annotations": annotations,
        "verdicts": adjudication.verdicts(trial, annotations) if reviewed else [],
        "annotation_form": form if allowed else None,
        "annotation_fields_key": fingerprint(sorted(form.initial.items()))
        if allowed and form is not None and not form.is_bound
        else None,
        "guide": guidelines.guide(request.user, nav.view) if allowed else None,
        "can_annotate": allowed,
        "saved": saved,
        "nav": nav,
        "step_comments": comments,
        "step_comments_fingerprint": fingerprint([c.pk for c in comments]),
        "superseded_comments": {c.supersedes_id for c in comments if c.supersedes_id},
        "steps_url": nav.tab_url(reverse("review:trial-detail", args=[trial.pk]), "trajectory"),
    }


# The page's lists of the trial's rows: one query each.
def results_of(trial_id: int) -> list[EvaluationResult]:
    """Every result the trial was ingested with, the current one first; the raw artifacts
    (the files verbatim) are read only by the verifier tab."""
    return list(
        EvaluationResult.objects.filter(trial_id=trial_id)
        .defer("raw_artifacts")
        .order_by("-is_current", "-created_at", "-id")
    )


def scorers_of(trial_id: int) -> list[ScorerResult]:
    return list(ScorerResult.objects.filter(trial_id=trial_id).order_by("position"))


def verdicts_of(trial_id: int) -> list[JudgeVerdict]:
    """The trial's judge verdicts, the shown (latest) one first."""
    return list(JudgeVerdict.objects.filter(trial_id=trial_id).order_by(*JudgeVerdict.LATEST_FIRST))


def cited_marks(trial: Trial, verdict_id: int, index: int) -> presenters.Marks:
    """What the trajectory marks for `?cite=`: the quotes of one fact check of one of this
    trial's verdicts (another trial's verdict marks nothing)."""
    fact_checks = (
        JudgeVerdict.objects.filter(trial_id=trial.pk, pk=verdict_id)
        .order_by()
        .values_list("fact_checks", flat=True)
        .first()
    )
    return presenters.citation_marks(fact_checks, index)


def error_tags_of(trial_id: int) -> list[ErrorTag]:
    return list(ErrorTag.objects.filter(trial_id=trial_id).order_by("id"))


def step_comments_of(trial_id: int) -> list[StepComment]:
    """The trial's step comments, oldest first, with their authors: beside the steps and in
    the annotations panel alike."""
    return list(StepComment.objects.filter(trial_id=trial_id).history())


def annotation_history(trial_id: int) -> list[Annotation]:
    """The trial's annotations, oldest first, with their reviewers."""
    return list(
        Annotation.objects.filter(trial_id=trial_id)
        .select_related("reviewer")
        .order_by(*Annotation.HISTORY)
    )


class StoredOutcome:
    """The trial's stored outcome as its cards show it: its evaluation results, scorer
    results, judge verdicts and error tags, each read when a card first asks for it. The
    cards are kept rendered (`{% cache %}` under `key`, rewards.cache), so a page whose cards
    are all kept reads none of them."""

    def __init__(self, trial: Trial, state: TrialPageForm, query: QueryDict) -> None:
        self.trial = trial
        self.state = state
        self.query = query
        # Everything the cards show comes from these rows and the trial's columns, and every
        # writer of the rows saves the trial (`trial_version`); the judge's and the results'
        # times are shown in the current time zone.
        self.key = fingerprint(trial.pk, trial_version(trial), timezone.get_current_timezone_name())
        # The scorer rows' links carry the page's query, and `?open=` expands rows.
        self.scorers_key = fingerprint(self.key, sorted(query.lists()))

    @cached_property
    def results(self) -> list[EvaluationResult]:
        return results_of(self.trial.pk)

    @cached_property
    def current(self) -> EvaluationResult | None:
        return next((r for r in self.results if r.is_current), None)

    @cached_property
    def earlier_results(self) -> list[EvaluationResult]:
        return [r for r in self.results if not r.is_current]

    @cached_property
    def breakdown(self) -> list[presenters.BreakdownRow]:
        current = self.current
        return presenters.breakdown_rows(current.breakdown if current else None)

    @cached_property
    def metrics(self) -> list[tuple[str, str]]:
        current = self.current
        return presenters.metric_rows(current.metrics if current else None)

    @cached_property
    def scorers(self) -> list[ScorerResult]:
        return scorers_of(self.trial.pk)

    @cached_property
    def scorer_rows(self) -> list[presenters.ScorerRow]:
        rows = presenters.scorer_rows(self.scorers, self.state.open_positions)
        return _scorer_links(self.trial, rows, self.query)

    @cached_property
    def applicable_count(self) -> int:
        return sum(1 for s in self.scorers if s.verdict != "NA")

    @cached_property
    def verdicts(self) -> list[JudgeVerdict]:
        # The trial keeps its latest judge verdict: without one, there is none to read.
        return verdicts_of(self.trial.pk) if self.trial.judge_verdict else []

    @cached_property
    def judge(self) -> JudgeVerdict | None:
        return self.verdicts[0] if self.verdicts else None

    @cached_property
    def earlier_verdicts(self) -> list[JudgeVerdict]:
        return self.verdicts[1:]

    @cached_property
    def fact_checks(self) -> list[presenters.FactCheckRow]:
        judge = self.judge
        return presenters.fact_check_rows(
            judge.fact_checks if judge else None,
            reverse("review:trial-detail", args=[self.trial.pk]),
            judge.pk if judge else None,
        )

    @cached_property
    def tag_groups(self) -> list[tuple[str, list[ErrorTag]]]:
        # The trial keeps its error categories: without any, there is no tag to read.
        if not self.trial.error_categories:
            return []
        return presenters.tags_by_source(error_tags_of(self.trial.pk))


def _page_context(
    request: HttpRequest,
    trial: Trial,
    state: TrialPageForm,
    nav: TrialNav,
    form: AnnotationForm | None = None,
    comment_form: StepCommentForm | None = None,
    window: Opened | None = None,
) -> dict[str, Any]:
    comments = step_comments_of(trial.pk)
    tabs = _tab_context(trial, state, nav, comments, window)
    return {
        "trial": trial,
        "job": trial.job,
        "task": trial.task,
        "state": state,
        "outcome": StoredOutcome(trial, state, request.GET),
        "phases": presenters.phase_timings(trial.timings),
        "wall_seconds": presenters.seconds_between(trial.started_at, trial.finished_at),
        "gate_explanation": presenters.DISAGREEMENT_EXPLANATIONS.get(trial.gate_disagreement, ""),
        "human_explanation": presenters.DISAGREEMENT_EXPLANATIONS.get(trial.human_disagreement, ""),
        **tabs,
        "ingest_problems": presenters.ingest_problems(tabs["detail"]),
        **integrity_context(trial, nav, request.user),
        **_annotations_context(request, trial, nav, form, comments=comments),
        **_comment_form_context(request, trial, state, nav, comment_form, comments),
        "gold": _gold_context(request, trial),
    }


def _gold_context(request: HttpRequest, trial: Trial) -> dict[str, Any] | None:
    """Staff's gold card: the trial's gold labels, oldest first, and the form. Nobody else
    learns whether a trial is gold (the queue mixes gold trials in unannounced)."""
    if not can_ingest(request.user):
        return None
    labels = list(
        GoldLabel.objects.filter(trial_id=trial.pk)
        .select_related("author")
        .order_by("created_at", "id")
    )
    return {"labels": labels, "form": GoldLabelForm()}


# --- views ---------------------------------------------------------------------------------
@require_GET
@login_required
@vary_on_headers("HX-Request")
@browse_required
def trial_detail(request: HttpRequest, pk: int) -> HttpResponse:
    filters = TrialFilterForm(request.GET)
    state = TrialPageForm(request.GET)
    trial = _get_trial_for(request, pk, around=filters, tab=state.current_tab)
    window = None
    if not state.tab_chosen:
        window = steps_window(trial, state)
        state.opening_tab = opening_tab(trial, window[0])
    nav = TrialNav.of(filters, state, trial)
    if wants_fragment(request):
        # The tabs are the page's only htmx GET: swap the tab strip and its panel, and the
        # previous / next links out of band, so they carry the newly opened tab.
        comments = step_comments_of(trial.pk) if state.current_tab == "trajectory" else []
        context = {
            "trial": trial,
            **_tab_context(trial, state, nav, comments, window),
            **_comment_form_context(request, trial, state, nav, comments=comments),
        }
        tabs = render_to_string(f"{TEMPLATE}#tabs", context, request)
        links = render_to_string(f"{TEMPLATE}#trial-nav", {**context, "oob": True}, request)
        return HttpResponse(tabs + links)
    return render(request, TEMPLATE, _page_context(request, trial, state, nav, window=window))


@require_GET
@login_required
@browse_required
def trial_steps(request: HttpRequest, pk: int) -> HttpResponse:
    """A chunk of the trajectory's steps (`?at=` its first), as the trial page's list ends
    with them, and the link to the next: what the page loads when its reader gets there."""
    state = TrialPageForm(request.GET)
    trial = _get_trial_for(request, pk, tab="trajectory")
    nav = TrialNav.of(TrialFilterForm(request.GET), state, trial)
    comments = step_comments_of(trial.pk)
    context = {
        "trial": trial,
        **_trajectory_context(trial, state, nav, comments),
        **_comment_form_context(request, trial, state, nav, comments=comments),
    }
    context["steps"] = context["trajectory"].steps
    return render(request, "review/includes/trajectory_steps.html#step-items", context)


@require_GET
@login_required
@vary_on_headers("HX-Request")
@browse_required
def scorer_row(request: HttpRequest, pk: int, position: int) -> HttpResponse:
    """One row of the Scorers card, expanded or collapsed (`?expanded=1`)."""
    trial = _get_trial_for(request, pk)
    scorer = get_object_or_404(ScorerResult, trial=trial, position=position)
    expanded = ScorerRowForm(request.GET).expanded_value
    if not wants_fragment(request):
        # Back to the page with the row open, in the list (filter and tab) it came from.
        state = TrialPageForm(request.GET)
        query = TrialNav.of(TrialFilterForm(request.GET), state).page_query
        query["open"] = str(position) if expanded else ""
        if "tab" in request.GET:
            query["tab"] = state.current_tab
        return redirect(trial_url(trial, f"scorer-{position}", query))
    row = presenters.ScorerRow(
        scorer=scorer, expanded=expanded, toggle_open="" if expanded else str(position)
    )
    [row] = _scorer_links(trial, [row], request.GET)
    return render(request, f"{TEMPLATE}#scorer-row", {"trial": trial, "row": row})


@require_GET
@login_required
@browse_required
def trial_file(request: HttpRequest, pk: int) -> HttpResponse:
    """A file of the trial's folder (`?path=` inside it), always as a download."""
    trial = _get_trial_for(request, pk)
    form = TrialFileForm(request.GET)
    if not form.is_valid():
        return HttpResponse(
            "Name a file of the trial folder with ?path=.", status=400, content_type="text/plain"
        )
    path = form.cleaned_data["path"]
    try:
        data, content_type = TrialFolder(trial.source_path).download(path)
    except TrialFolderGone as gone:
        raise Http404(str(gone)) from gone
    except FileNotFoundError as missing:
        raise Http404("No such file in the trial folder.") from missing
    except ArtifactError as refused:
        # The message never quotes file content (rewards.ingest.files).
        return HttpResponse(f"Not served: {refused}", status=403, content_type="text/plain")
    response = HttpResponse(data, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(
        as_attachment=True, filename=path.rsplit("/", 1)[-1]
    )
    response["X-Content-Type-Options"] = "nosniff"
    # Served from the app's origin: a file the browser did render could not run anything.
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    return response


@require_POST
@login_required
@vary_on_headers("HX-Request")
@annotate_required
def annotate(request: HttpRequest, pk: int) -> HttpResponse:
    """Add the logged-in reviewer's annotation; never edits or removes one."""
    # The form's action carries the page's filter (and queue) state in its query string, so
    # the answer goes back to the same list.
    filters = TrialFilterForm(request.GET)
    fragment = wants_fragment(request)
    state = TrialPageForm(request.GET)
    # The whole page comes back when the form is invalid: its tab is read with the trial.
    trial = _get_trial_for(
        request,
        pk,
        around=None if fragment else filters,
        tab=None if fragment else state.current_tab,
    )
    nav = TrialNav.of(filters, state, trial)
    form = AnnotationForm(request.POST)
    if not form.is_valid():
        if fragment:
            return _annotations_response(request, trial, nav, form)
        return render(request, TEMPLATE, _page_context(request, trial, state, nav, form))

    data = form.cleaned_data
    stamp = ReviewStamp.of(request.user, trial.pk, filters)
    add_annotation(
        trial_id=trial.pk,
        reviewer=request.user,
        judgment=data["judgment"],
        categories=data["categories"],
        notes=data["notes"],
        reviewer_discipline=data["reviewer_discipline"],
        seconds_to_review=stamp.seconds_to_review,
        guideline_version=stamp.guideline_version,
    )
    if not fragment:
        messages.success(request, "Annotation saved.")
        query = nav.page_query
        if "tab" in request.GET:
            query["tab"] = state.current_tab
        return HttpResponseRedirect(trial_url(trial, "annotations", query))
    trial.refresh_from_db(fields=["human_judgment", "annotation_count", "human_disagreement"])
    fresh = AnnotationForm(initial={"reviewer_discipline": data["reviewer_discipline"]})
    return _annotations_response(request, trial, nav, fresh, saved=True)


def _annotations_response(
    request: HttpRequest,
    trial: Trial,
    nav: TrialNav,
    form: AnnotationForm,
    saved: bool = False,
) -> HttpResponse:
    """The annotations card, plus the human gate swapped out of band (it may have changed),
    and, from the queue, the queue bar (a reviewed trial offers "Next in queue")."""
    comments = step_comments_of(trial.pk)
    card = render_to_string(
        f"{TEMPLATE}#annotations",
        _annotations_context(request, trial, nav, form, saved, comments),
        request,
    )
    human = render_to_string(
        f"{TEMPLATE}#human-gate",
        {
            "trial": trial,
            "oob": True,
            "human_explanation": presenters.DISAGREEMENT_EXPLANATIONS.get(
                trial.human_disagreement, ""
            ),
        },
        request,
    )
    queue_bar = ""
    if nav.in_queue:
        queue_bar = render_to_string(
            f"{TEMPLATE}#queue-bar", {"trial": trial, "nav": nav, "oob": True}, request
        )
    return HttpResponse(card + human + queue_bar)


@require_POST
@login_required
@vary_on_headers("HX-Request")
@annotate_required
def step_comment(request: HttpRequest, pk: int) -> HttpResponse:
    """Add the logged-in reviewer's comment on a step; never edits or removes one."""
    filters = TrialFilterForm(request.GET)
    fragment = wants_fragment(request)
    state = TrialPageForm(request.GET)
    trial = _get_trial_for(request, pk, around=None if fragment else filters, tab="trajectory")
    nav = TrialNav.of(filters, state, trial)
    form = StepCommentForm(request.POST)
    comment = _add_comment(request, trial, form) if form.is_valid() else None
    if comment is not None and not fragment:
        messages.success(request, "Comment saved.")
        query = nav.page_query
        query["tab"] = "trajectory"
        query["at"] = str(comment.step)  # the chunk of steps holding it
        return HttpResponseRedirect(trial_url(trial, f"step-{comment.step}", query))
    if not fragment:
        page = _page_context(request, trial, state, nav, comment_form=form)
        return render(request, TEMPLATE, page, status=400)
    # htmx: the trajectory tab again (the comment beside its step, or the form's errors) and
    # the annotations panel's list out of band.
    comments = step_comments_of(trial.pk)
    # The chunk of steps holding the step commented on.
    step = comment.step if comment else form.cleaned_data.get("step") if form.is_bound else None
    context = {
        "trial": trial,
        **_tab_context(trial, state, nav, comments, steps_window(trial, state, step)),
        **_comment_form_context(request, trial, state, nav, None if comment else form),
    }
    tabs = render_to_string(f"{TEMPLATE}#tabs", context, request)
    panel = render_to_string(
        f"{TEMPLATE}#annotations",
        {**_annotations_context(request, trial, nav, comments=comments), "oob": True},
        request,
    )
    return HttpResponse(tabs + panel)


def _add_comment(request: HttpRequest, trial: Trial, form: StepCommentForm) -> StepComment | None:
    """The form's comment recorded, or None with the reason on the form."""
    supersedes = None
    if superseded_id := form.cleaned_data.get("supersedes"):
        # A reviewer corrects their own comments, as they change their own judgment.
        supersedes = (
            StepComment.objects.filter(pk=superseded_id, trial=trial, author=request.user)
            .only("id", "trial_id")
            .first()
        )
        if supersedes is None:
            form.add_error(None, "You can correct only your own comments on this trial.")
            return None
    try:
        return add_step_comment(
            trial_id=trial.pk,
            author=request.user,
            target=form.target(),
            text=form.cleaned_data["text"],
            supersedes=supersedes,
        )
    except CommentTargetError as refused:
        form.add_error(None, str(refused))
        return None
