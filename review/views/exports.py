"""Exports of the explorer's current filter, streamed (memory flat in the number of rows)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import HttpResponse, StreamingHttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from review.exports import FORMATS
from review.filtering.form import TrialFilterForm
from review.http import HttpRequest
from review.roles import export_required
from rewards.models import Trial


def filter_errors(form: TrialFilterForm) -> list[str]:
    """The filter's problems, one line each; empty when the filter is valid."""
    if form.is_valid():
        return []
    return [f"{name}: {message}" for name, messages in form.errors.items() for message in messages]


def filtered_trials(form: TrialFilterForm) -> QuerySet[Trial]:
    """The explorer's rows for this filter; in the explorer's order only when one was chosen.

    An export is read whole, and sorting a million rows would cost more than writing them:
    without a `sort` in the filter the database returns them in whatever order is cheapest.
    """
    trials = form.filter(Trial.objects.all())
    return form.ordered(trials) if form.cleaned_data.get("sort") else trials.order_by()


@require_GET
@login_required
@export_required
def export(request: HttpRequest, fmt: str) -> HttpResponse | StreamingHttpResponse:
    export_format = FORMATS[fmt]
    form = TrialFilterForm(request.GET)
    # An export of "everything" because a filter value was mistyped would be a surprise:
    # refuse with the reasons instead (plain text, never HTML, so nothing is interpreted).
    if errors := filter_errors(form):
        return HttpResponse(
            "The filter is not valid:\n" + "\n".join(errors),
            status=400,
            content_type="text/plain; charset=utf-8",
        )
    response = StreamingHttpResponse(
        export_format.stream(filtered_trials(form)), content_type=export_format.content_type
    )
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response["Content-Disposition"] = (
        f'attachment; filename="trialdesk-{stamp}.{export_format.extension}"'
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response
