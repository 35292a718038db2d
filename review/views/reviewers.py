"""The reviewers page: accuracy against gold trials, agreement with peers, time to review and
throughput (review.science.reviewers). Experts and staff see everyone; a reviewer sees
their own row."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from review.http import HttpRequest, with_query
from review.models import GoldLabel
from review.roles import annotate_required, can_adjudicate, can_ingest
from review.science.reviewers import reviewers_report
from rewards.models import HumanJudgment

# Trials whose reviewers' latest judgments differ, each waiting for a third reviewer.
LOW_AGREEMENT_REVIEWERS = 3
# Gold trials listed for staff on the page (newest labels first).
GOLD_LISTED = 200


def low_agreement_query() -> QueryDict:
    query = QueryDict(mutable=True)
    query["human_judgment"] = HumanJudgment.MIXED
    query["overlap"] = str(LOW_AGREEMENT_REVIEWERS)
    return query


@require_GET
@login_required
@annotate_required
def reviewers_page(request: HttpRequest) -> HttpResponse:
    everyone = can_adjudicate(request.user)
    report = reviewers_report(None if everyone else request.user.pk)
    staff = can_ingest(request.user)
    gold = (
        list(
            GoldLabel.objects.current()
            .select_related("trial", "author")
            .only("trial__name", "author__username", "reference", "rationale", "created_at")
            .order_by("-created_at", "-id")[:GOLD_LISTED]
        )
        if staff
        else []
    )
    context = {
        "report": report,
        "everyone": everyone,
        "staff": staff,
        "gold": gold,
        "low_agreement_url": with_query(reverse("review:queue"), low_agreement_query()),
        "low_agreement_reviewers": LOW_AGREEMENT_REVIEWERS,
    }
    return render(request, "review/reviewers.html", context)
