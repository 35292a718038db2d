"""Each user creates and revokes their own API tokens on a page."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from review.models import ApiToken
from review.tokens import verify_token
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def test_a_user_creates_a_token_sees_it_once_and_it_opens_the_api(client: Client) -> None:
    f.login(client, "ann", "analyst")
    response = client.post("/tokens/", {"name": "nightly pipeline"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    token = re.search(r"<code>(tdk_[0-9a-f]{8}_[^<]+)</code>", html)
    assert token
    assert verify_token(token.group(1)) is not None
    api = client.get("/api/jobs", headers={"Authorization": f"Bearer {token.group(1)}"})
    assert api.status_code == 200
    # Listed by its public prefix only, never again in full.
    listing = client.get("/tokens/").content.decode()
    assert "nightly pipeline" in listing
    assert token.group(1) not in listing


def test_a_user_revokes_their_own_token_and_never_anothers(client: Client) -> None:
    f.login(client, "bob", "analyst")
    client.post("/tokens/", {"name": "bob's"})
    bobs = ApiToken.objects.get(user__username="bob")
    f.login(client, "ann", "analyst")
    assert client.post(f"/tokens/{bobs.pk}/revoke/").status_code == 404
    client.post("/tokens/", {"name": "mine"})
    mine = ApiToken.objects.get(user__username="ann")
    response = client.post(f"/tokens/{mine.pk}/revoke/", follow=True)
    assert "revoked" in response.content.decode()
    mine.refresh_from_db()
    bobs.refresh_from_db()
    assert mine.revoked_at is not None
    assert bobs.revoked_at is None


def test_the_tokens_page_needs_a_login_a_role_and_csrf(client: Client) -> None:
    assert client.get("/tokens/").status_code == 302
    f.login(client, "nobody")
    assert client.get("/tokens/").status_code == 403
    f.login(client, "ann", "analyst")
    assert client.get("/tokens/1/revoke/").status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(User.objects.get(username="ann"))
    assert strict.post("/tokens/", {"name": "x"}).status_code == 403
    assert not ApiToken.objects.exists()
