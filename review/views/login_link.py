"""The one-time login link `trialdesk serve` prints (`review.login_links`)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import login
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from review import login_links
from review.http import HttpRequest


@require_http_methods(["GET", "POST"])
def login_link(request: HttpRequest, token: str) -> HttpResponse:
    """GET shows a button; its POST (CSRF-checked) logs the link's user in, once."""
    user = login_links.user_for(token)
    if user is None:
        return render(request, "registration/login_link.html", {"expired": True}, status=400)
    if request.method == "POST":
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return HttpResponseRedirect(settings.LOGIN_REDIRECT_URL)
    return render(request, "registration/login_link.html", {"user_name": user.get_username()})
