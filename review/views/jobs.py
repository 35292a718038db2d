"""Jobs and their summary: counts, mean reward, gate pass rates, review progress."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from review.http import HttpRequest, wants_fragment
from review.pages.exclusion_note import exclusion_note
from review.pages.job_figures import JobFigures
from review.roles import browse_required, can_ingest
from review.science import calibration, exclusions, plots
from review.science.stats import job_tally_rows, jobs_page
from rewards.models import Job


class JobPageForm(forms.Form):
    """The jobs list's keyset: `after` is the last job id of the previous page."""

    after = forms.IntegerField(required=False, min_value=1)


@require_GET
@login_required
@browse_required
def job_list(request: HttpRequest) -> HttpResponse:
    form = JobPageForm(request.GET)
    # A mangled `after` shows the newest jobs rather than an error.
    after = form.cleaned_data["after"] if form.is_valid() else None
    page = jobs_page(after, included=exclusions.SwitchForm(request.GET).included())
    return render(
        request,
        "review/job_list.html",
        {
            "rows": page.rows,
            "next_after": page.next_after,
            "is_continuation": after is not None,
            "note": exclusion_note(page.left_out, request.GET) if page.left_out else None,
        },
    )


@require_GET
@login_required
@vary_on_headers("HX-Request")
@browse_required
def job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    # What the page shows of the job: its config and stats (often large JSON) stay behind.
    # Whether it is still running comes with it (`Job.is_running`).
    job = get_object_or_404(
        Job.objects.with_running().only("id", "name", "started_at", "imported_at"),
        pk=pk,
    )
    # Trials left out by default (tasks confirmed defective), as rows that subtract their
    # counts from the kept ones: the ledger's confirmed tasks, then, only when this job has
    # trials of them, those trials' counts.
    left_out = exclusions.for_jobs([job.pk], exclusions.SwitchForm(request.GET).included())
    # The figures' HTML is kept under the rows they come from (JobFigures.key): a kept
    # page reads its queries' rows and computes nothing else.
    rows = job_tally_rows(job) + left_out.job_rows(job.pk)
    figures = JobFigures(job, rows, plots.reviewed_by_day(job))
    context = {
        "job": job,
        "figures": figures,
        "note": exclusion_note(left_out, request.GET),
        # Beside the judge's pass rate, corrected for its measured error (not kept with the
        # figures: a new label anywhere can change it), under the page's switches.
        "corrected_rates": calibration.job_corrected_rates([job], left_out)[job.pk],
        "can_scan": can_ingest(request.user),
    }
    if wants_fragment(request):
        # A running job's page asks again every few seconds: the figures and the state.
        return render(request, "review/job_detail.html#job-live", context)
    return render(request, "review/job_detail.html", context)
