"""Re-judging from the app (seed 003): staff ask the judge again about a trial or a filter.

The new verdict is added beside the older ones, which are kept; the latest is shown. Each
trial is one `rejudge_trial` task (`rewards.scoring.tasks`), run by a task worker: the request
only enqueues, and answers at once.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from review.filtering.form import TrialFilterForm
from review.http import HttpRequest
from review.roles import staff_required
from review.views.exports import filter_errors, filtered_trials
from rewards.models import Trial
from rewards.scoring import judge
from rewards.scoring.tasks import rejudge_trial

# A filter re-judge asks the judge once per trial: beyond this many, narrow the filter.
MAX_FILTER_TRIALS = 200


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
    rejudge_trial.enqueue(trial.pk)
    messages.success(
        request,
        "Re-judge queued: the new verdict appears here when a worker has judged it. "
        "Earlier verdicts are kept.",
    )
    return redirect(back)


@require_POST
@login_required
@staff_required
def rejudge_filter(request: HttpRequest) -> HttpResponse:
    """Re-judge every trial of an explorer filter (the query string, as the explorer's)."""
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
    ids = list(filtered_trials(form).values_list("pk", flat=True)[: MAX_FILTER_TRIALS + 1])
    if len(ids) > MAX_FILTER_TRIALS:
        messages.error(
            request,
            f"This filter matches more than {MAX_FILTER_TRIALS} trials: narrow it to re-judge.",
        )
        return redirect(back)
    for pk in ids:
        rejudge_trial.enqueue(pk)
    messages.success(
        request,
        f"Re-judge of {len(ids)} trials queued: new verdicts appear as a worker judges them.",
    )
    return redirect(back)
