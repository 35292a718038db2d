"""Re-judging from the app (seed 003): staff ask the judge again about a trial or a filter.

The new verdict is added beside the older ones, which are kept; the latest is shown. A
re-judge is a grading batch (`rewards.scoring.batches`) that task workers judge: the request
only creates it and answers at once, with the batch's page, where staff watch it and cancel it.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from review import grading
from review.filtering.form import TrialFilterForm, filter_errors
from review.grading import BATCHES_SHOWN, FAILURES_SHOWN
from review.http import HttpRequest, wants_fragment
from review.roles import staff_required
from rewards.models import GradingBatch, GradingItem, Trial
from rewards.scoring import batches, judge
from rewards.scoring.tasks import start_batch


def _not_configured(request: HttpRequest) -> bool:
    if judge.is_configured():
        return False
    messages.error(
        request,
        "The judge is not configured: set TRIALDESK_JUDGE_BASE_URL and TRIALDESK_JUDGE_MODEL.",
    )
    return True


@require_POST
@login_required
@staff_required
def rejudge_one(request: HttpRequest, pk: int) -> HttpResponse:
    trial = get_object_or_404(Trial, pk=pk)
    back = reverse("review:trial-detail", args=[trial.pk]) + "#judge"
    if _not_configured(request):
        return redirect(back)
    batch = start_batch([trial.pk], user=request.user, trial=trial)
    messages.success(
        request,
        "Re-judge queued: the new verdict appears on the trial's page when a worker has judged "
        "it. Earlier verdicts are kept.",
    )
    return redirect("review:batch-detail", batch.pk)


@require_POST
@login_required
@staff_required
def rejudge_filter(request: HttpRequest) -> HttpResponse:
    """ "Grade these": the judge grades every trial of an explorer filter (the query string,
    as the explorer's), as a batch for the task workers; the answer is the batch's page."""
    form = TrialFilterForm(request.GET)
    if errors := filter_errors(form):
        return HttpResponse(
            "The filter is not valid:\n" + "\n".join(errors),
            status=400,
            content_type="text/plain; charset=utf-8",
        )
    query = form.canonical_query()
    back = reverse("review:explorer") + (f"?{query.urlencode()}" if query else "")
    if _not_configured(request):
        return redirect(back)
    # The trials are listed by a worker: the answer comes at once, whatever the filter matches.
    batch = grading.start_filter_batch(form, request.user)
    messages.success(
        request,
        "Grading queued: a worker lists the filter's trials, then their verdicts appear as "
        "they are judged (earlier verdicts are kept).",
    )
    return redirect("review:batch-detail", batch.pk)


# --- grading batches ---------------------------------------------------------------------------
def _unfinished(batch: GradingBatch) -> bool:
    # `with_counts` annotates the counts by state.
    return batch.listing or bool(getattr(batch, "queued", 0) or getattr(batch, "running", 0))


@require_GET
@login_required
@staff_required
@vary_on_headers("HX-Request")
def batch_list(request: HttpRequest) -> HttpResponse:
    """The newest batches with their progress; for htmx, the table alone (it polls itself
    while a batch is unfinished)."""
    shown = list(GradingBatch.objects.with_counts().select_related("created_by")[:BATCHES_SHOWN])
    context = {"batches": shown, "polling": any(_unfinished(b) for b in shown)}
    if wants_fragment(request):
        return render(request, "review/batch_list.html#batches", context)
    return render(request, "review/batch_list.html", context)


@require_GET
@login_required
@staff_required
@vary_on_headers("HX-Request")
def batch_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """One batch: its counts, progress and failures; for htmx, the progress region alone."""
    batch = get_object_or_404(
        GradingBatch.objects.with_counts().select_related("created_by"), pk=pk
    )
    failures = list(
        batch.items.filter(state=GradingItem.State.FAILED)
        .select_related("trial")
        .only("id", "batch_id", "reason", "finished_at", "trial_id", "trial__name")
        .order_by("id")[:FAILURES_SHOWN]
    )
    context = {"batch": batch, "failures": failures, "polling": _unfinished(batch)}
    if wants_fragment(request):
        return render(request, "review/batch_detail.html#progress", context)
    return render(request, "review/batch_detail.html", context)


@require_POST
@login_required
@staff_required
def batch_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    batch = get_object_or_404(GradingBatch, pk=pk)
    listing = batch.listing
    cancelled = batches.cancel(batch)
    messages.success(
        request,
        "Batch cancelled before its trials were listed: nothing will be judged."
        if listing
        else f"Batch cancelled: {cancelled} queued trials will not be judged; "
        "a trial being judged finishes.",
    )
    return redirect("review:batch-detail", batch.pk)
