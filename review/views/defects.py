"""The defective-task ledger: the list of reported tasks, a task's history, and the report
form (reached from a trial's page and a job's)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods
from django.views.decorators.vary import vary_on_headers

from review import defects, roles
from review.forms import DefectEntryForm
from review.http import HttpRequest, wants_fragment
from review.models import DefectEntry, JobTally
from review.roles import annotate_required, browse_required
from rewards.models import Job, Task, Trial

# A task's long columns stay behind wherever tasks are listed or chosen.
_TASK_BLOBS = ("instruction", "output_schema", "scorer_specs")


class LedgerFilterForm(forms.Form):
    state = forms.ChoiceField(
        choices=[("", "every state"), *DefectEntry.State.choices], required=False
    )


def _tasks() -> QuerySet[Task]:
    return Task.objects.defer(*_TASK_BLOBS)


def _states(request: HttpRequest) -> list[str]:
    """What the user may record on a task not confirmed yet (a reviewer cannot touch a
    confirmed one: `defects.record` refuses)."""
    return defects.allowed_states(can_settle=roles.can_settle_defects(request.user), current=None)


@require_GET
@login_required
@vary_on_headers("HX-Request")
@browse_required
def defect_ledger(request: HttpRequest) -> HttpResponse:
    """Every task with a ledger entry and where it stands, confirmed first."""
    form = LedgerFilterForm(request.GET)
    state = form.cleaned_data["state"] if form.is_valid() else ""
    context = {"rows": defects.ledger(state), "form": form, "state": state}
    if wants_fragment(request):
        return render(request, "review/defect_ledger.html#ledger-rows", context)
    return render(request, "review/defect_ledger.html", context)


@require_GET
@login_required
@browse_required
def defect_task(request: HttpRequest, pk: int) -> HttpResponse:
    """One task's ledger history, oldest first, and the form for a newer entry."""
    task = get_object_or_404(_tasks(), pk=pk)
    history = defects.history(task)
    current = history[-1].state if history else None
    context: dict[str, Any] = {"task": task, "history": history, "current": current}
    if roles.can_propose_defects(request.user):
        states = defects.allowed_states(
            can_settle=roles.can_settle_defects(request.user), current=current
        )
        if states:
            context["form"] = DefectEntryForm(
                tasks=_tasks().filter(pk=task.pk),
                states=states,
                initial={"task": task.pk, "state": states[0]},
            )
    return render(request, "review/defect_task.html", context)


def _report_page(
    request: HttpRequest, form: DefectEntryForm, origin: dict[str, Any], status: int = 200
) -> HttpResponse:
    return render(request, "review/defect_report.html", {"form": form, **origin}, status=status)


@require_http_methods(["GET", "POST"])
@login_required
@annotate_required
def defect_report(request: HttpRequest) -> HttpResponse:
    """Report a task as defective: from a trial (its task, the trial as evidence) or a job
    (one of its tasks, the job as evidence). Posting records the entry."""
    if request.method == "POST":
        return _record(request)
    origin: dict[str, Any] = {}
    tasks = _tasks().none()
    evidence = ""
    if trial_id := _positive(request.GET.get("trial")):
        trial = get_object_or_404(
            Trial.objects.only("id", "name", "task_id", "job_id"), pk=trial_id
        )
        tasks = _tasks().filter(pk=trial.task_id)
        evidence = f"/trials/{trial.pk}/"
        origin["trial"] = trial
    elif job_id := _positive(request.GET.get("job")):
        job = get_object_or_404(Job.objects.only("id", "name"), pk=job_id)
        # The job's tasks, from its kept tally rows (a few dozen), not its trials.
        tasks = _tasks().filter(
            pk__in=JobTally.objects.filter(job=job, trials__gt=0).values("task_id")
        )
        evidence = f"/jobs/{job.pk}/"
        origin["job"] = job
    states = _states(request)
    form = DefectEntryForm(
        tasks=tasks, states=states, initial={"evidence": evidence, "state": states[0]}
    )
    return _report_page(request, form, origin)


def _positive(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() and 0 < int(value) < 2**63 else None


def _record(request: HttpRequest) -> HttpResponse:
    form = DefectEntryForm(
        request.POST, tasks=_tasks(), states=_states(request), host=request.get_host()
    )
    if not form.is_valid():
        return _report_page(request, form, {}, status=400)
    task: Task = form.cleaned_data["task"]
    try:
        entry = defects.record(
            task_id=task.pk,
            author=request.user,
            can_settle=roles.can_settle_defects(request.user),
            state=form.cleaned_data["state"],
            category=form.cleaned_data["category"],
            rationale=form.cleaned_data["rationale"],
            evidence=form.cleaned_data["evidence"],
        )
    except defects.LedgerRefused as exc:
        form.add_error("state", str(exc))
        return _report_page(request, form, {}, status=403)
    messages.success(request, f"Recorded: {task} is {entry.get_state_display()}.")
    return redirect("review:defect-task", pk=task.pk)
