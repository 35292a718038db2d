"""Jobs and their summary: counts, mean reward, gate pass rates, review progress."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from review import plots
from review.http import HttpRequest
from review.roles import browse_required
from review.stats import Summary, summary_aggregates
from rewards.models import Job, Trial


@require_GET
@login_required
@browse_required
def job_list(request: HttpRequest) -> HttpResponse:
    jobs = (
        Job.objects.defer("config", "stats")
        .annotate(**summary_aggregates("trials__"))
        .order_by("-id")
    )
    rows = [(job, Summary.of(job)) for job in jobs]
    return render(request, "review/job_list.html", {"rows": rows})


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
