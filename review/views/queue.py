"""The review queue: the next unreviewed trial under a filter, leased to one reviewer.

GET /queue/ only reads (progress, the reviewer's current lease). Taking a trial is a POST
(`queue-claim`, `queue-skip`), so a prefetching browser or a crawler never claims anything.
The filter rides in the query string of every URL, exactly as the explorer writes it.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from review import claims
from review.filtering.form import TrialFilterForm
from review.forms import QueueSkipForm
from review.http import HttpRequest, with_query
from review.models import Claim
from review.pages.trial_list import sorted_by
from review.roles import annotate_required

# Trials this session passed over; never handed to it again until it asks for them back.
SKIPPED_KEY = "queue_skipped"
# Bounded so the session row stays small; the oldest skips come back first.
MAX_SKIPPED = 200


def _skipped(request: HttpRequest) -> list[int]:
    raw = request.session.get(SKIPPED_KEY, [])
    return [pk for pk in raw if isinstance(pk, int)] if isinstance(raw, list) else []


def _to_claim(request: HttpRequest, claim: Claim | None, form: TrialFilterForm) -> HttpResponse:
    """The claimed trial's page in queue mode, or back to the queue when nothing is left."""
    query = form.canonical_query()
    if claim is None:
        messages.info(
            request,
            "Nothing left to hand out under this filter: every unreviewed trial is reviewed, "
            "skipped or held by another reviewer.",
        )
        return redirect(with_query(reverse("review:queue"), query))
    query["queue"] = "1"
    return redirect(with_query(reverse(_review_page(form), args=[claim.trial_id]), query))


def _review_page(form: TrialFilterForm) -> str:
    """Where a claimed trial is reviewed: the blind page in blind review, else the trial page."""
    return "review:blind-review" if form.blind_review else "review:trial-detail"


@require_GET
@login_required
@annotate_required
def queue(request: HttpRequest) -> HttpResponse:
    form = TrialFilterForm(request.GET)
    skipped = _skipped(request)
    query = form.canonical_query()
    claim = claims.current_claim(request.user, form, skipped)
    context = {
        "form": form,
        "query": query,
        "active_filters": form.active_filters(),
        "sorted_by": sorted_by(form.current_sort),
        "claim": claim,
        "blind": form.blind_review,
        "review_url": (
            f"{reverse(_review_page(form), args=[claim.trial_id])}?{_queue_trial_query(query)}"
            if claim
            else ""
        ),
        "progress": claims.progress(form),
        "skipped_count": len(skipped),
        "claim_minutes": int(claims.CLAIM_TTL.total_seconds() // 60),
        "list_url": with_query(reverse("review:explorer"), query),
        "claim_url": with_query(reverse("review:queue-claim"), query),
        "skip_url": with_query(reverse("review:queue-skip"), query),
        "unskip_url": with_query(reverse("review:queue-unskip"), query),
        "trial_query": _queue_trial_query(query),
        "reviewers_per_trial": form.reviewers_per_trial,
        "overlap_hidden": [
            (name, value) for name, values in query.lists() if name != "overlap" for value in values
        ],
    }
    return render(request, "review/queue.html", context)


def _queue_trial_query(query: QueryDict) -> str:
    trial_query = query.copy()
    trial_query["queue"] = "1"
    return trial_query.urlencode()


@require_POST
@login_required
@annotate_required
def queue_claim(request: HttpRequest) -> HttpResponse:
    """Start (or go on) reviewing: the reviewer's live lease again, or the next trial."""
    form = TrialFilterForm(request.GET)
    claim = claims.claim_next(request.user, form, skip=_skipped(request))
    return _to_claim(request, claim, form)


@require_POST
@login_required
@annotate_required
def queue_skip(request: HttpRequest) -> HttpResponse:
    """Pass a trial over: its lease is released (others may take it) and the next comes."""
    form = TrialFilterForm(request.GET)
    skip = QueueSkipForm(request.POST)
    if not skip.is_valid():
        messages.error(request, "Which trial to skip was not understood; nothing was skipped.")
        return redirect(with_query(reverse("review:queue"), form.canonical_query()))
    trial_id: int = skip.cleaned_data["trial"]
    claims.release(request.user, trial_id)
    skipped = [pk for pk in _skipped(request) if pk != trial_id]
    skipped = [*skipped, trial_id][-MAX_SKIPPED:]
    request.session[SKIPPED_KEY] = skipped
    claim = claims.claim_next(request.user, form, skip=skipped)
    return _to_claim(request, claim, form)


@require_POST
@login_required
@annotate_required
def queue_unskip(request: HttpRequest) -> HttpResponse:
    """Hand this session's skipped trials out again."""
    form = TrialFilterForm(request.GET)
    request.session.pop(SKIPPED_KEY, None)
    messages.success(request, "Skipped trials are back in your queue.")
    return redirect(with_query(reverse("review:queue"), form.canonical_query()))
