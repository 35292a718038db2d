"""Compare runs: two jobs task by task, and two trials of a task side by side."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from review.forms import AlignedPageForm, CompareForm
from review.http import HttpRequest
from review.pages import presenters
from review.pages.exclusion_note import exclusion_note
from review.roles import browse_required
from review.science import calibration, compare, exclusions, figures
from rewards import alignment
from rewards.models import Job, JudgeVerdict, ScorerResult, Trial, TrialDetail


@require_GET
@login_required
@browse_required
def compare_runs(request: HttpRequest) -> HttpResponse:
    form = CompareForm(request.GET or None)
    result, note, corrected = None, None, {}
    if form.is_valid():
        a, b = form.cleaned_data["a"], form.cleaned_data["b"]
        left_out = _left_out(request, a, b)
        result = compare.compare(a, b, left_out)
        note = exclusion_note(left_out, request.GET)
        # Under the same switches as the comparison.
        corrected = calibration.job_corrected_rates([result.a, result.b], left_out)
    return render(
        request,
        "review/compare.html",
        {
            "form": form,
            "result": result,
            "max_flips": compare.MAX_FLIPS,
            "note": note,
            "corrected": [
                (job, corrected[job.pk]) for job in ((result.a, result.b) if result else ())
            ],
            "min_tasks": compare.MIN_TASKS,
            "exact_below": compare.EXACT_BELOW,
        },
    )


def _left_out(request: HttpRequest, a: Job, b: Job) -> exclusions.Exclusions:
    """The trials of either run left out of the comparison unless the page's switch says."""
    return exclusions.for_jobs([a.pk, b.pk], exclusions.SwitchForm(request.GET).included())


# Aligned steps shown per page: a 2,000-step pair is ten pages, none reading a trajectory.
ALIGNED_ROWS_PER_PAGE = 200
# Other trials of a task offered for a side-by-side view, the latest first.
OTHER_TRIALS_LISTED = 100


def _column(
    trial: Trial,
    diffs: dict[int, str],
    scorers: list[ScorerResult],
    judges: list[JudgeVerdict],
) -> dict[str, Any]:
    own_scorers = [s for s in scorers if s.trial_id == trial.pk]
    own_judges = [j for j in judges if j.trial_id == trial.pk]
    return {
        "trial": trial,
        "scorers": own_scorers,
        "judge": own_judges[0] if own_judges else None,
        "diff": presenters.diff(diffs.get(trial.pk, "")),
    }


def _aligned_context(request: HttpRequest, a: Trial, b: Trial) -> dict[str, Any]:
    """A page of the two trajectories' aligned steps, and where the first divergence is."""
    wanted = AlignedPageForm(request.GET).page_number
    page = alignment.alignment_for(a, b, wanted, ALIGNED_ROWS_PER_PAGE)
    head = page.head
    divergence = head.divergence
    first_row = (page.number - 1) * ALIGNED_ROWS_PER_PAGE
    divergence_page = divergence // ALIGNED_ROWS_PER_PAGE + 1 if divergence is not None else None
    return {
        "aligned": head,
        # Read when the page's kept rendering is missing: a callable the template calls.
        "aligned_rows": lambda: page.rows,
        "aligned_page": page.number,
        "aligned_pages": head.pages(ALIGNED_ROWS_PER_PAGE),
        # The divergence's position among this page's rows (None when it is on another page).
        "divergence_here": divergence - first_row
        if divergence is not None and divergence_page == page.number
        else None,
        "divergence_page": divergence_page,
        "divergence_row": divergence + 1 if divergence is not None else None,
    }


@require_GET
@login_required
@browse_required
def compare_trials(request: HttpRequest, a: int, b: int) -> HttpResponse:
    """Two trials side by side: header, gates, scorers, judge, their trajectories aligned
    step by step (a page at a time) and their diffs."""
    trials = Trial.objects.list_columns().defer("job__config", "job__stats").in_bulk([a, b])
    if a not in trials or b not in trials:
        raise Http404
    diffs = dict(
        TrialDetail.objects.filter(trial__in=[a, b]).values_list("trial_id", "workspace_diff")
    )
    scorers = list(ScorerResult.objects.filter(trial__in=[a, b]).order_by("trial", "position"))
    judges = list(
        JudgeVerdict.objects.filter(trial__in=[a, b]).order_by(*JudgeVerdict.LATEST_FIRST)
    )
    columns = [_column(trials[pk], diffs, scorers, judges) for pk in (a, b)]
    return render(
        request,
        "review/compare_trials.html",
        {"columns": columns, **_aligned_context(request, trials[a], trials[b])},
    )


@require_GET
@login_required
@browse_required
def other_trials(request: HttpRequest, pk: int) -> HttpResponse:
    """The other trials of a trial's task, each a link to the two side by side."""
    trial = get_object_or_404(Trial.objects.select_related("task").only("name", "task"), pk=pk)
    others = list(
        Trial.objects.filter(task_id=trial.task_id)
        .exclude(pk=trial.pk)
        .select_related("job")
        .only(
            "name",
            "agent_name",
            "model_name",
            "reward",
            "judge_verdict",
            "started_at",
            "job__name",
        )
        .order_by("-id")[:OTHER_TRIALS_LISTED]
    )
    return render(
        request,
        "review/other_trials.html",
        {"trial": trial, "others": others, "limit": OTHER_TRIALS_LISTED},
    )


@require_GET
@login_required
@browse_required
def compare_csv(request: HttpRequest) -> HttpResponse:
    form = CompareForm(request.GET)
    if not form.is_valid():
        errors = [f"{name}: {m}" for name, messages in form.errors.items() for m in messages]
        return HttpResponse(
            "The runs are not valid:\n" + "\n".join(errors),
            status=400,
            content_type="text/plain; charset=utf-8",
        )
    a, b = form.cleaned_data["a"], form.cleaned_data["b"]
    result = compare.compare(a, b, _left_out(request, a, b))
    response = HttpResponse(
        figures.to_csv(figures.COMPARE_COLUMNS, figures.compare_rows(result)),
        content_type="text/csv; charset=utf-8",
    )
    response["Content-Disposition"] = 'attachment; filename="trialdesk-compare.csv"'
    return response
