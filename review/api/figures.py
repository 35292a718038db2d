"""`/api/agreement` and `/api/compare`: the review-science figures as JSON."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router
from ninja.errors import ValidationError

from review.api.ninja import (
    ERRORS,
    ErrorOut,
    browse_auth,
    calibration_auth,
)
from review.api.trials import filter_parameters
from review.filtering.form import TrialFilterForm
from review.forms import AgreementForm, CompareForm
from review.science import agreement, calibration, compare, exclusions, figures

# --- agreement and comparison ----------------------------------------------------------------
router = Router(tags=["figures"], auth=browse_auth)

# Trials left out by default (review.science.exclusions), each reason with its switch.
SWITCH_PARAMETERS = [
    {
        "name": reason.param,
        "in": "query",
        "required": False,
        "schema": {"type": "boolean"},
        "description": f"count the trials of {reason.label} (left out by default)",
    }
    for reason in exclusions.REASONS
]


def _form_errors(errors: Any) -> ValidationError:
    return ValidationError(
        [
            {"loc": ("query", name), "msg": msg, "type": "invalid"}
            for name, messages in errors.items()
            for msg in messages
        ]
    )


@router.get(
    "/agreement",
    response={200: dict[str, Any], 422: ErrorOut, **ERRORS},
    openapi_extra={
        "parameters": [
            *filter_parameters(),
            {
                "name": "by",
                "in": "query",
                "required": False,
                "schema": {"type": "string", "enum": list(agreement.DIMENSIONS)},
                "description": "the breakdown dimension",
            },
            *SWITCH_PARAMETERS,
        ]
    },
    summary="Agreement: gates against humans, and reviewers against each other",
)
def get_agreement(request: HttpRequest) -> dict[str, Any]:
    """The agreement page's figures under the explorer's filters: confusion matrices (rows
    PASS / FAIL of the gate, columns pass / fail of the human, counts of judgments), Cohen's
    kappa with a 95% bootstrap interval over trials (`kappa_ci`; null with the reason in
    `kappa_no_interval` under 10 trials or for a degenerate table), the breakdown (task
    source by default), reviewer pairs and Krippendorff's alpha."""
    form = TrialFilterForm(request.GET)
    page = AgreementForm(request.GET)
    if not form.is_valid():
        raise _form_errors(form.errors)
    if not page.is_valid():
        raise _form_errors(page.errors)
    _, _, active = exclusions.chosen(exclusions.SwitchForm(request.GET).included())
    left_out = exclusions.trials_of(active) if active else None
    return figures.agreement_dict(agreement.report(form, page.dimension, left_out))


@router.get(
    "/compare",
    response={200: dict[str, Any], 422: ErrorOut, **ERRORS},
    openapi_extra={
        "parameters": [
            *(
                {"name": side, "in": "query", "required": True, "schema": {"type": "integer"}}
                for side in ("a", "b")
            ),
            *SWITCH_PARAMETERS,
        ]
    },
    summary="Compare two runs task by task",
)
def get_comparison(request: HttpRequest) -> dict[str, Any]:
    """Paired task outcomes of jobs `a` and `b` (verifier, judge, human): counts, pass rates,
    the delta with a paired bootstrap interval over tasks (`delta_ci`; null with the reason
    in `delta_no_interval`), the tasks a tie left unpaired (`tied_tasks`), McNemar's test
    (`exact` below 25 changed tasks, else `chi2` with continuity correction) and the flipped
    tasks."""
    form = CompareForm(request.GET)
    if not form.is_valid():
        raise _form_errors(form.errors)
    a, b = form.cleaned_data["a"], form.cleaned_data["b"]
    left_out = exclusions.for_jobs([a.pk, b.pk], exclusions.SwitchForm(request.GET).included())
    return figures.compare_dict(compare.compare(a, b, left_out))


@router.get(
    "/calibration",
    auth=calibration_auth,
    response={200: dict[str, Any], **ERRORS},
    openapi_extra={"parameters": SWITCH_PARAMETERS},
    summary="Judge calibration: each judge version against the humans",
)
def get_calibration(request: HttpRequest) -> dict[str, Any]:
    """Per judge model and rubric version, on the calibration and test parts of the labelled
    trials: the confusion counts, TPR and TNR with 95% Wilson intervals, and the status under
    the admission rule (decided on the test part). The labelled trials of tasks confirmed
    defective and those with a confirmed reward hack are left out unless the switches count
    them; `left_out` says how many the reasons name. Experts and staff."""
    included = exclusions.SwitchForm(request.GET).included()
    return calibration.report_dict(calibration.report(included=included))
