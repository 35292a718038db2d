"""API tokens: each user creates and revokes their own (review.tokens makes and checks them)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from review import tokens
from review.http import HttpRequest
from review.models import ApiToken
from review.roles import browse_required

TEMPLATE = "review/tokens.html"


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100,
        required=False,
        label="Name",
        help_text="What uses it, e.g. “nightly pipeline”.",
    )


def _page(
    request: HttpRequest, form: TokenForm, new_token: str = "", status: int = 200
) -> HttpResponse:
    context = {"form": form, "tokens": tokens.tokens_of(request.user), "new_token": new_token}
    return render(request, TEMPLATE, context, status=status)


@require_http_methods(["GET", "POST"])
@login_required
@browse_required
@never_cache  # a new token is on the page once: no cache may keep it
def token_list(request: HttpRequest) -> HttpResponse:
    """The user's tokens; a POST makes one and shows it, this once (only its hash is kept)."""
    if request.method != "POST":
        return _page(request, TokenForm())
    form = TokenForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    _, token = tokens.create_token(request.user, form.cleaned_data["name"])
    return _page(request, TokenForm(), new_token=token)


@require_POST
@login_required
@browse_required
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    # Scoped to the user's own live tokens: another user's token is a 404.
    row = get_object_or_404(ApiToken, pk=pk, user=request.user, revoked_at__isnull=True)
    tokens.revoke_token(row.prefix)
    messages.success(request, f"Token {row.prefix} revoked: it no longer opens the API.")
    return redirect("review:tokens")
