"""Confirming or dismissing a reward-integrity finding (experts and staff), and a job's
scan for findings run again (staff)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from review.filtering.form import TrialFilterForm
from review.forms import FindingReviewForm, TrialPageForm
from review.http import HttpRequest, wants_fragment
from review.models import review_finding as record_review
from review.pages.integrity import integrity_context
from review.pages.navigation import TrialNav, trial_url
from review.roles import adjudicate_required, staff_required
from review.views.trial import TEMPLATE, _get_trial_for
from rewards.integrity.tasks import scan_job
from rewards.models import IntegrityFinding, Job


@require_POST
@login_required
@vary_on_headers("HX-Request")
@adjudicate_required
def review_finding(request: HttpRequest, pk: int, finding_pk: int) -> HttpResponse:
    """Add the logged-in expert's confirmation or dismissal; never edits or removes one."""
    trial = _get_trial_for(request, pk)
    # Scoped to the trial: a finding id of another trial is a 404.
    finding = get_object_or_404(IntegrityFinding.objects.only("pk"), pk=finding_pk, trial=trial)
    nav = TrialNav.of(TrialFilterForm(request.GET), TrialPageForm(request.GET), trial)
    form = FindingReviewForm(request.POST)
    fragment = wants_fragment(request)
    saved = form.is_valid()
    if saved:
        record_review(
            finding_id=finding.pk,
            trial_id=trial.pk,
            reviewer=request.user,
            decision=form.cleaned_data["decision"],
            rationale=form.cleaned_data["rationale"],
        )
        trial.refresh_from_db(fields=["integrity"])
    if not fragment:
        if saved:
            messages.success(request, "Decision saved.")
        else:
            for errors in form.errors.values():
                for error in errors:
                    messages.error(request, str(error))
        return redirect(trial_url(trial, "integrity", nav.page_query))
    context = integrity_context(
        trial, nav, request.user, None if saved else form, None if saved else finding.pk
    )
    return render(request, f"{TEMPLATE}#integrity", {"trial": trial, "saved": saved, **context})


@require_POST
@login_required
@staff_required
def scan_job_findings(request: HttpRequest, pk: int) -> HttpResponse:
    """Queue the detectors over the job's stored trials (a task worker runs them)."""
    job = get_object_or_404(Job.objects.only("pk"), pk=pk)
    scan_job.enqueue(job.pk)
    messages.success(
        request, "Integrity scan queued: findings appear on the trial pages as a worker runs it."
    )
    return redirect("review:job-detail", job.pk)
