"""Judge calibration: each judge version against the humans, and the rule that admits it."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from review.forms import CalibrationRuleForm
from review.http import HttpRequest, path_of, with_query
from review.models import CalibrationRule
from review.pages.exclusion_note import labelled_note
from review.roles import calibration_required, can_ingest, staff_required
from review.science import calibration, exclusions, figures


def _report(request: HttpRequest) -> calibration.Report:
    """The report, leaving out what the exclusion reasons name unless the query's switches
    (`include_defective=1`, `include_hacks=1`) count it."""
    return calibration.report(included=exclusions.SwitchForm(request.GET).included())


def _page(
    request: HttpRequest, form: CalibrationRuleForm | None, status: int = 200
) -> HttpResponse:
    result = _report(request)
    if form is None and can_ingest(request.user):
        form = CalibrationRuleForm(instance=result.rule)
    note = labelled_note(result, request.GET)
    return render(
        request,
        "review/calibration.html",
        {
            "report": result,
            "rule": result.rule,
            "form": form,
            "note": note,
            # The CSV carries the page's switches, so that it holds the figures shown.
            "csv_url": with_query(path_of("review:calibration-csv"), note.switched),
        },
        status=status,
    )


@require_GET
@login_required
@calibration_required
def calibration_page(request: HttpRequest) -> HttpResponse:
    return _page(request, None)


@require_POST
@login_required
@staff_required
def calibration_rule(request: HttpRequest) -> HttpResponse:
    """Staff change the admission rule; the split's salt is not theirs to change."""
    rule = CalibrationRule.current()
    form = CalibrationRuleForm(request.POST, instance=rule)
    if not form.is_valid():
        return _page(request, form, status=400)
    changed = form.save(commit=False)
    changed.updated_by = request.user
    changed.updated_at = timezone.now()
    changed.save()
    return redirect("review:calibration")


@require_GET
@login_required
@calibration_required
def calibration_csv(request: HttpRequest) -> HttpResponse:
    """The page's figures: one row per judge version and part, under the same switches."""
    result = _report(request)
    response = HttpResponse(
        figures.to_csv(calibration.CSV_COLUMNS, calibration.csv_rows(result)),
        content_type="text/csv; charset=utf-8",
    )
    response["Content-Disposition"] = 'attachment; filename="trialdesk-calibration.csv"'
    return response
