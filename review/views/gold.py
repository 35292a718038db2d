"""Gold trials: staff set a trial's reference judgment (or retire it) from its page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from review.forms import GoldLabelForm
from review.http import HttpRequest
from review.models import GoldLabel
from review.roles import staff_required
from rewards.models import Trial


@require_POST
@login_required
@staff_required
def mark_gold(request: HttpRequest, pk: int) -> HttpResponse:
    """Add a gold label to the trial; append-only, the newest is the reference."""
    trial = get_object_or_404(Trial.objects.only("pk"), pk=pk)
    form = GoldLabelForm(request.POST)
    if form.is_valid():
        label = GoldLabel.objects.create(
            trial=trial,
            reference=form.cleaned_data["reference"],
            rationale=form.cleaned_data["rationale"],
            author=request.user,
        )
        if label.reference == GoldLabel.Reference.RETIRED:
            messages.success(request, "The trial is no longer a gold trial.")
        else:
            messages.success(request, f"Gold trial: the reference judgment is {label.reference}.")
    else:
        problems = "; ".join(str(e) for errors in form.errors.values() for e in errors)
        messages.error(request, f"The gold label was not saved: {problems}")
    return redirect(f"{reverse('review:trial-detail', args=[trial.pk])}#gold")
