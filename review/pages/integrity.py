"""The trial page's reward-integrity card: each finding with the step it points at and the
people who settled it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.urls import reverse

from review.forms import FindingReviewForm
from review.models import FindingReview
from review.pages.navigation import TrialNav
from review.roles import can_adjudicate
from rewards.integrity.detectors import DETECTORS
from rewards.models import IntegrityFinding, Trial


@dataclass(frozen=True)
class FindingRow:
    finding: IntegrityFinding
    label: str  # what the detector looks for, in a reviewer's words
    where: str  # "step 3", or "workspace diff"
    url: str  # the step in the trajectory tab, or the diff tab
    reviews: list[FindingReview]
    action_url: str  # where a confirmation or dismissal is posted


def label_of(detector: str) -> str:
    known = DETECTORS.get(detector)
    return known.label if known else detector


def finding_rows(trial: Trial, trajectory_url: str, diff_url: str) -> list[FindingRow]:
    """The trial's findings in step order: one query, and one more for their reviews when
    any was settled (an open finding has none)."""
    findings = list(IntegrityFinding.objects.filter(trial=trial).order_by("step", "id"))
    reviews: dict[int, list[FindingReview]] = {}
    if any(f.status != IntegrityFinding.Status.OPEN for f in findings):
        for review in (
            FindingReview.objects.filter(finding__trial=trial)
            .select_related("reviewer")
            .order_by("created_at", "id")
        ):
            reviews.setdefault(review.finding_id, []).append(review)
    return [
        FindingRow(
            finding=f,
            label=label_of(f.detector),
            where=f"step {f.step}" if f.step else "workspace diff",
            url=f"{trajectory_url}#step-{f.step}" if f.step else f"{diff_url}#tabs",
            reviews=reviews.get(f.pk, []),
            action_url=reverse("review:review-finding", args=[trial.pk, f.pk]),
        )
        for f in findings
    ]


def integrity_context(
    trial: Trial,
    nav: TrialNav,
    user: AbstractBaseUser | AnonymousUser,
    form: FindingReviewForm | None = None,
    form_for: int | None = None,
) -> dict[str, Any]:
    """The card's context; no query for a trial without findings (its `integrity` column
    says so). `form` is a rejected review of finding `form_for`, shown with its errors."""
    if not trial.integrity:
        return {"integrity_rows": []}
    page_url = reverse("review:trial-detail", args=[trial.pk])
    return {
        "integrity_rows": finding_rows(
            trial, nav.tab_url(page_url, "trajectory"), nav.tab_url(page_url, "diff")
        ),
        # Experts and staff settle findings, as they adjudicate (review.roles).
        "can_settle": can_adjudicate(user),
        "finding_form": form,
        "form_for": form_for,
        "nav_query": nav.page_query.urlencode(),
    }
