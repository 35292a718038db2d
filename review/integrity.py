"""Confirmed reward-integrity findings as an export's manifest lists them.

The export manifest (which tasks and trials a headline number leaves out, and why) names
every confirmed finding of the exported trials with who confirmed it and why, so an analyst
can reproduce a pass rate that excludes confirmed hacks.
"""

from __future__ import annotations

from typing import Any

from django.db.models import OuterRef, QuerySet, Subquery

from review.models import FindingReview
from rewards.models import Integrity, IntegrityFinding, Trial


def confirmed_findings(trials: QuerySet[Trial]) -> list[dict[str, Any]]:
    """The confirmed findings of `trials` (any filter of them), in trial and step order, each
    with its latest review (the confirmation that stands): one query."""
    latest = FindingReview.objects.filter(finding=OuterRef("pk")).order_by("-created_at", "-id")
    rows = (
        IntegrityFinding.objects.filter(
            status=IntegrityFinding.Status.CONFIRMED,
            # Only the few trials with a confirmed finding are looked at (trial_integrity_idx).
            trial__in=trials.filter(integrity=Integrity.CONFIRMED).values("pk"),
        )
        .annotate(
            confirmed_by=Subquery(latest.values("reviewer__username")[:1]),
            confirmed_at=Subquery(latest.values("created_at")[:1]),
            rationale=Subquery(latest.values("rationale")[:1]),
        )
        .order_by("trial_id", "step", "id")
        .values(
            "trial_id",
            "trial__name",
            "trial__job__name",
            "trial__task__name",
            "detector",
            "step",
            "matched",
            "confirmed_by",
            "confirmed_at",
            "rationale",
        )
    )
    return [
        {
            "trial_id": row["trial_id"],
            "job": row["trial__job__name"],
            "task": row["trial__task__name"],
            "trial": row["trial__name"],
            "detector": row["detector"],
            "step": row["step"] or None,
            "matched": row["matched"],
            "confirmed_by": row["confirmed_by"],
            "confirmed_at": row["confirmed_at"].isoformat() if row["confirmed_at"] else None,
            "rationale": row["rationale"],
        }
        for row in rows
    ]
