"""Agreement: how far the humans agree with the judge, the verifier and the scorers, and with
each other, over any explorer filter."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from review.filtering.form import TrialFilterForm, filter_errors
from review.forms import AgreementForm
from review.http import HttpRequest, with_query
from review.pages.exclusion_note import judgment_note
from review.roles import browse_required
from review.science import agreement, exclusions, figures


@require_GET
@login_required
@browse_required
def agreement_page(request: HttpRequest) -> HttpResponse:
    form = TrialFilterForm(request.GET)
    page = AgreementForm(request.GET)
    left_out, applied, named = _left_out(request)
    result = agreement.report(form, page.dimension, left_out)
    # How many judgments the switch puts back: left out, the report says; else one count.
    named_judgments = (
        result.left_out
        if left_out is not None
        else agreement.left_out_count(form, named)
        if named is not None
        else 0
    )
    query = form.canonical_query()
    query.pop("sort", None)
    # The page's own links keep its switches (the explorer's does not: it has none).
    switched = query.copy()
    for a in applied:
        if a.included:
            switched[a.reason.param] = "1"
    dimensions = []
    for key, dimension in agreement.DIMENSIONS.items():
        by_query = switched.copy()
        by_query["by"] = key
        dimensions.append((dimension, by_query.urlencode(), key == result.dimension.key))
    counted = []
    for value, label in (("", "Every reviewer's latest"), ("blind", "Blind annotations only")):
        counted_query = switched.copy()
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
            "note": judgment_note(applied, named_judgments, request.GET),
        },
    )


def _left_out(request: HttpRequest) -> tuple[Q | None, list[exclusions.Applied], Q | None]:
    """The trials left out of the figures unless the page's switch says (a condition, or
    None when nothing is), the reasons applied, and every trial they name (or None)."""
    applied, named, active = exclusions.chosen(exclusions.SwitchForm(request.GET).included())
    return (
        exclusions.trials_of(active) if active else None,
        applied,
        exclusions.trials_of(named) if named else None,
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
    report = agreement.report(form, page.dimension, _left_out(request)[0])
    response = HttpResponse(
        figures.to_csv(figures.AGREEMENT_COLUMNS, figures.agreement_rows(report)),
        content_type="text/csv; charset=utf-8",
    )
    response["Content-Disposition"] = 'attachment; filename="trialdesk-agreement.csv"'
    return response
