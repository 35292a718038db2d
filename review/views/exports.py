"""Exports of the explorer's current filter, streamed (memory flat in the number of rows),
and their manifest: what the pass rates leave out of them, and why (`exclusions.manifest`).

Every export names its manifest in a `Link: <…>; rel="describedby"` header (the same filter
at `export/manifest.json`); a Parquet file also carries it in its key-value metadata under
`trialdesk.manifest`.
"""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET

from review.exports import FORMATS, export_stream
from review.filtering.form import TrialFilterForm, filter_errors, filtered_trials
from review.http import HttpRequest
from review.roles import export_required
from review.science import exclusions


def _refused(errors: list[str]) -> HttpResponse:
    # An export of "everything" because a filter value was mistyped would be a surprise:
    # refuse with the reasons instead (plain text, never HTML, so nothing is interpreted).
    return HttpResponse(
        "The filter is not valid:\n" + "\n".join(errors),
        status=400,
        content_type="text/plain; charset=utf-8",
    )


@require_GET
@login_required
@export_required
def export(request: HttpRequest, fmt: str) -> HttpResponse | StreamingHttpResponse:
    export_format = FORMATS[fmt]
    form = TrialFilterForm(request.GET)
    if errors := filter_errors(form):
        return _refused(errors)
    trials = filtered_trials(form)
    # The manifest is read before the rows stream: one moment's ledger for both.
    manifest = exclusions.manifest(trials, request.GET.urlencode(), timezone.now())
    response = StreamingHttpResponse(
        export_stream(fmt, trials, json.dumps(manifest)), content_type=export_format.content_type
    )
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response["Content-Disposition"] = (
        f'attachment; filename="trialdesk-{stamp}.{export_format.extension}"'
    )
    response["X-Content-Type-Options"] = "nosniff"
    manifest_url = reverse("review:export-manifest")
    query = request.GET.urlencode()
    response["Link"] = f'<{manifest_url}{"?" if query else ""}{query}>; rel="describedby"'
    return response


@require_GET
@login_required
@export_required
def export_manifest(request: HttpRequest) -> HttpResponse:
    """The manifest of the export of this filter: which tasks (and trials) the pass rates
    leave out and why, and the ledger's confirmed entries."""
    form = TrialFilterForm(request.GET)
    if errors := filter_errors(form):
        return _refused(errors)
    manifest = exclusions.manifest(filtered_trials(form), request.GET.urlencode(), timezone.now())
    response = JsonResponse(manifest, json_dumps_params={"indent": 2})
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response["Content-Disposition"] = f'attachment; filename="trialdesk-{stamp}.manifest.json"'
    return response
