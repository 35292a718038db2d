"""Jobs and their summary: counts, mean reward, gate pass rates, review progress."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from review import plots
from review.http import HttpRequest
from review.roles import browse_required
from review.stats import Summary, jobs_page, summary_aggregates
from rewards.models import Job, Trial


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
    page = jobs_page(after)
    rows = [(job, Summary.of(job)) for job in page.jobs]
    return render(
        request,
        "review/job_list.html",
        {"rows": rows, "next_after": page.next_after, "is_continuation": after is not None},
    )


@require_GET
@login_required
@browse_required
def job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(Job.objects.defer("config"), pk=pk)
    trials = Trial.objects.filter(job=job).order_by()
    aggregates = summary_aggregates()
    summary = Summary.of(trials.aggregate(**aggregates))
    by_task = [
        (row["task__name"], row["task__source"], Summary.of(row))
        for row in trials.values("task__name", "task__source")
        .annotate(**aggregates)
        .order_by("task__source", "task__name")
    ]
    by_agent = [
        (row["agent_name"], row["model_name"], Summary.of(row))
        for row in trials.values("agent_name", "model_name")
        .annotate(**aggregates)
        .order_by("agent_name", "model_name")
    ]
    return render(
        request,
        "review/job_detail.html",
        {
            "job": job,
            "summary": summary,
            "by_task": by_task,
            "by_agent": by_agent,
            "charts": list(plots.job_plots(job, summary).values()),
        },
    )
