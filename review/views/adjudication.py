"""Adjudication queue and the adjudicate page (experts and staff)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from review import adjudication
from review.filtering.form import TrialFilterForm
from review.http import HttpRequest
from review.models import Adjudication, Annotation
from review.pages.trial_list import ROW_FIELDS
from review.roles import adjudicate_required
from rewards.models import Trial


class ConflictForm(forms.Form):
    """The adjudication queue's setting: which conflicts send a trial to it."""

    conflict = forms.MultipleChoiceField(
        choices=[(key, label) for key, (label, _) in adjudication.CONFLICTS.items()],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Conflicts",
    )

    @property
    def kinds(self) -> list[str]:
        if self.is_valid() and self.cleaned_data["conflict"]:
            return list(self.cleaned_data["conflict"])
        return list(adjudication.DEFAULT_CONFLICTS)


class AdjudicationForm(forms.Form):
    verdict = forms.ChoiceField(
        choices=Adjudication.Verdict.choices, widget=forms.RadioSelect, label="Final verdict"
    )
    rationale = forms.CharField(
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Why this verdict: it is kept with the annotations it settles.",
        error_messages={"required": "Give a rationale."},
    )


def _queue_query(request: HttpRequest, form: TrialFilterForm | None = None) -> QueryDict:
    """The queue's filter and conflict setting, to carry to the adjudicate page and back;
    `form` is the request's filter when the view has built it already."""
    query = (form or TrialFilterForm(request.GET)).canonical_query()
    kinds = ConflictForm(request.GET).kinds
    if kinds != list(adjudication.DEFAULT_CONFLICTS):
        query.setlist("conflict", kinds)
    return query


@require_GET
@login_required
@adjudicate_required
def adjudication_queue(request: HttpRequest) -> HttpResponse:
    form = TrialFilterForm(request.GET)
    conflicts = ConflictForm(request.GET)
    base = (
        adjudication.awaiting(conflicts.kinds).list_columns().only(*ROW_FIELDS, "annotation_count")
    )
    page = form.page(base)
    # A reviewer of a trial may not settle it (review.adjudication): their rows offer no
    # "Adjudicate". One query for the page's rows.
    reviewed = set(
        Annotation.objects.filter(
            trial_id__in=[trial.pk for trial in page.rows], reviewer=request.user
        ).values_list("trial_id", flat=True)
    )
    query = _queue_query(request, form)
    next_query = query.copy()
    if page.next_cursor:
        next_query["after"] = page.next_cursor
    return render(
        request,
        "review/adjudication_queue.html",
        {
            "form": form,
            "conflicts": conflicts,
            "kinds": conflicts.kinds,
            "page": page,
            "reviewed": reviewed,
            "active_filters": form.active_filters(),
            "query": query.urlencode(),
            "next_query": next_query.urlencode(),
            "hidden_filters": [
                (name, value) for name, values in form.canonical_query().lists() for value in values
            ],
        },
    )


def _page(
    request: HttpRequest, trial: Trial, form: AdjudicationForm, status: int = 200
) -> HttpResponse:
    settled = adjudication.latest_annotations(trial)
    context: dict[str, Any] = {
        "trial": trial,
        "form": form,
        "latest": settled.annotations,
        "history": list(Annotation.objects.for_trial(trial).history()),
        "adjudications": list(
            Adjudication.objects.filter(trial=trial).select_related("adjudicator")
        ),
        "conflicts": [adjudication.CONFLICTS[key][0] for key in adjudication.conflicts_of(trial)],
        "party": request.user.pk in settled.reviewer_ids,
        "query": _queue_query(request).urlencode(),
    }
    return render(request, "review/adjudicate.html", context, status=status)


@require_http_methods(["GET", "POST"])
@login_required
@adjudicate_required
def adjudicate(request: HttpRequest, pk: int) -> HttpResponse:
    """The trial's judgments and earlier verdicts, and the form for the final verdict."""
    trial = get_object_or_404(
        Trial.objects.list_columns().defer("job__config", "job__stats"), pk=pk
    )
    if request.method != "POST":
        return _page(request, trial, AdjudicationForm())
    form = AdjudicationForm(request.POST)
    if not form.is_valid():
        return _page(request, trial, form, status=400)
    try:
        recorded = adjudication.adjudicate(
            trial_id=trial.pk,
            adjudicator=request.user,
            verdict=form.cleaned_data["verdict"],
            rationale=form.cleaned_data["rationale"],
        )
    except adjudication.AdjudicationError as exc:
        form.add_error(None, str(exc))
        return _page(request, trial, form, status=400)
    messages.success(
        request,
        f"Final verdict recorded for {trial.name}: {recorded.get_verdict_display()}, "
        f"settling {len(recorded.settled)} annotation{'' if len(recorded.settled) == 1 else 's'}.",
    )
    query = _queue_query(request).urlencode()
    url = reverse("review:adjudication-queue")
    return redirect(f"{url}?{query}" if query else url)
