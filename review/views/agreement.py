"""Agreement: how far the humans agree with the judge, the verifier and the scorers, and with
each other, over any explorer filter."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from review.filtering.form import TrialFilterForm, filter_errors
from review.forms import AgreementForm
from review.http import HttpRequest, with_query
from review.roles import browse_required
from review.science import agreement, figures


@require_GET
@login_required
@browse_required
def agreement_page(request: HttpRequest) -> HttpResponse:
    form = TrialFilterForm(request.GET)
    page = AgreementForm(request.GET)
    result = agreement.report(form, page.dimension)
    query = form.canonical_query()
    query.pop("sort", None)
    dimensions = []
    for key, dimension in agreement.DIMENSIONS.items():
        by_query = query.copy()
        by_query["by"] = key
        dimensions.append((dimension, by_query.urlencode(), key == result.dimension.key))
    counted = []
    for value, label in (("", "Every reviewer's latest"), ("blind", "Blind annotations only")):
        counted_query = query.copy()
        counted_query.pop("counted", None)
        if value:
            counted_query["counted"] = value
        counted_query["by"] = result.dimension.key
        counted.append((label, counted_query.urlencode(), form.blind_only == bool(value)))
    return render(
        request,
        "review/agreement.html",
        {
            "form": form,
            "report": result,
            "active_filters": form.active_filters(),
            "dimensions": dimensions,
            "counted": counted,
            "csv_query": next(q for _, q, current in dimensions if current),
            "explorer_url": with_query(reverse("review:explorer"), query.urlencode()),
            "query": query.urlencode(),
            "min_units": agreement.MIN_TRIALS,
        },
    )


@require_GET
@login_required
@browse_required
def agreement_csv(request: HttpRequest) -> HttpResponse:
    """The page's figures, one row per matrix; an invalid filter is refused, not ignored."""
    form = TrialFilterForm(request.GET)
    page = AgreementForm(request.GET)
    errors = filter_errors(form) + [
        f"{name}: {message}" for name, messages in page.errors.items() for message in messages
    ]
    if errors:
        return HttpResponse(
            "The filter is not valid:\n" + "\n".join(errors),
            status=400,
            content_type="text/plain; charset=utf-8",
        )
    report = agreement.report(form, page.dimension)
    response = HttpResponse(
        figures.to_csv(figures.AGREEMENT_COLUMNS, figures.agreement_rows(report)),
        content_type="text/csv; charset=utf-8",
    )
    response["Content-Disposition"] = 'attachment; filename="trialdesk-agreement.csv"'
    return response
