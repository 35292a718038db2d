"""Exports of the explorer's current filter, streamed (memory flat in the number of rows)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, StreamingHttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from review.exports import FORMATS
from review.filtering.form import TrialFilterForm, filter_errors, filtered_trials
from review.http import HttpRequest
from review.roles import export_required


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
