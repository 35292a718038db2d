from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from rewards.models import Trial


@require_GET
@login_required
def explorer(request: HttpRequest) -> HttpResponse:
    trials = Trial.objects.list_columns()[:50]
    return render(request, "review/explorer.html", {"trials": trials})
