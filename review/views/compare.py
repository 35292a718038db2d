"""Compare runs: two jobs task by task, and two trials of a task side by side."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from review.forms import STEP_KINDS, CompareForm
from review.http import HttpRequest
from review.pages import presenters
from review.pages.exclusion_note import exclusion_note
from review.roles import browse_required
from review.science import compare, exclusions, figures
from rewards.models import Job, JudgeVerdict, ScorerResult, Trial, TrialDetail


@require_GET
@login_required
@browse_required
def compare_runs(request: HttpRequest) -> HttpResponse:
    form = CompareForm(request.GET or None)
    result, note = None, None
    if form.is_valid():
        a, b = form.cleaned_data["a"], form.cleaned_data["b"]
        left_out = _left_out(request, a, b)
        result = compare.compare(a, b, left_out)
        note = exclusion_note(left_out, request.GET)
    return render(
        request,
        "review/compare.html",
        {"form": form, "result": result, "max_flips": compare.MAX_FLIPS, "note": note},
    )


def _left_out(request: HttpRequest, a: Job, b: Job) -> exclusions.Exclusions:
    """The trials of either run left out of the comparison unless the page's switch says."""
    return exclusions.for_jobs([a.pk, b.pk], exclusions.SwitchForm(request.GET).included())


def _column(
    trial: Trial,
    details: dict[int, TrialDetail],
    scorers: list[ScorerResult],
    judges: list[JudgeVerdict],
) -> dict[str, Any]:
    detail = details.get(trial.pk)
    own_scorers = [s for s in scorers if s.trial_id == trial.pk]
    own_judges = [j for j in judges if j.trial_id == trial.pk]
    return {
        "trial": trial,
        "scorers": own_scorers,
        "judge": own_judges[0] if own_judges else None,
        "trajectory": presenters.trajectory(detail.trajectory if detail else None, STEP_KINDS),
        "diff": presenters.diff(detail.workspace_diff if detail else ""),
    }


@require_GET
@login_required
@browse_required
def compare_trials(request: HttpRequest, a: int, b: int) -> HttpResponse:
    """Two trials side by side: header, gates, scorers, judge, trajectory and diff."""
    trials = Trial.objects.list_columns().defer("job__config", "job__stats").in_bulk([a, b])
    if a not in trials or b not in trials:
        raise Http404
    details = {
        d.trial_id: d
        for d in TrialDetail.objects.filter(trial__in=[a, b]).only(
            "trial_id", "trajectory", "workspace_diff"
        )
    }
    scorers = list(ScorerResult.objects.filter(trial__in=[a, b]).order_by("trial", "position"))
    judges = list(
        JudgeVerdict.objects.filter(trial__in=[a, b]).order_by(*JudgeVerdict.LATEST_FIRST)
    )
    columns = [_column(trials[pk], details, scorers, judges) for pk in (a, b)]
    return render(request, "review/compare_trials.html", {"columns": columns})


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
