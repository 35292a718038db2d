"""The one-time login link `trialdesk serve` prints (review.login_links)."""

from __future__ import annotations

from unittest import mock

import pytest
from django.test import Client
from django.urls import reverse

from review import login_links
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def _link(username: str = "local") -> str:
    user = f.make_user(username, staff=True)
    return reverse("login-link", args=[login_links.make_token(user)])


def test_the_link_shows_a_button_whose_post_logs_in_once() -> None:
    link = _link()
    client = Client(enforce_csrf_checks=True)
    page = client.get(link)
    assert page.status_code == 200
    html = page.content.decode()
    assert "local" in html
    assert client.get("/").status_code == 302  # the GET alone logged nobody in
    token = client.cookies["csrftoken"].value
    answer = client.post(link, {"csrfmiddlewaretoken": token})
    assert answer.status_code == 302
    assert answer["Location"] == "/"
    assert client.get("/").status_code == 200

    # Spent: the login moved the user's last_login, which the token was signed with.
    again = Client()
    assert again.get(link).status_code == 400
    assert again.post(link).status_code == 400
    assert again.get("/").status_code == 302


def test_the_post_needs_its_csrf_token() -> None:
    link = _link()
    client = Client(enforce_csrf_checks=True)
    client.get(link)
    assert client.post(link).status_code == 403
    assert client.get("/").status_code == 302


def test_a_stale_tampered_or_foreign_token_logs_nobody_in(client: Client) -> None:
    link = _link()
    with mock.patch("django.core.signing.time.time", return_value=10**10):
        assert client.post(link).status_code == 400
    assert client.post(link[:-3] + "xx/").status_code == 400
    assert client.post(reverse("login-link", args=["<script>"])).status_code == 400
    assert client.get("/").status_code == 302


def test_an_inactive_user_cannot_use_a_link(client: Client) -> None:
    user = f.make_user("gone", staff=True)
    link = reverse("login-link", args=[login_links.make_token(user)])
    user.is_active = False
    user.save()
    assert client.post(link).status_code == 400


def test_other_methods_are_refused(client: Client) -> None:
    assert client.put(_link()).status_code == 405
