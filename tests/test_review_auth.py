"""The authentication backend reads the session user's roles with the user, in one query."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from review.auth import RoleBackend
from review.roles import can_annotate, can_browse, can_export, roles_of
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def test_the_session_user_comes_with_their_roles_in_one_query(
    django_assert_num_queries: Callable[..., Any],
) -> None:
    rita = f.make_user("rita", "reviewer", "analyst")
    f.make_user("olga", "expert")
    with django_assert_num_queries(1):
        user = RoleBackend().get_user(rita.pk)
        assert user is not None
        assert roles_of(user) == frozenset({"reviewer", "analyst"})
        assert can_browse(user)
        assert can_annotate(user)
        assert can_export(user)


def test_a_user_in_no_role_group_has_no_role(
    django_assert_num_queries: Callable[..., Any],
) -> None:
    nobody = f.make_user("nobody")
    nobody.groups.add(Group.objects.create(name="not-a-role"))
    with django_assert_num_queries(1):
        user = RoleBackend().get_user(nobody.pk)
        assert user is not None
        assert roles_of(user) == frozenset()
        assert not can_browse(user)


def test_an_inactive_or_missing_user_is_nobody() -> None:
    gone = f.make_user("gone", "reviewer")
    gone.is_active = False
    gone.save()
    assert RoleBackend().get_user(gone.pk) is None
    assert RoleBackend().get_user(gone.pk + 1000) is None


def test_a_role_taken_away_counts_from_the_next_request(client: Client) -> None:
    rita = f.login(client, "rita", "reviewer")
    assert client.get("/queue/").status_code == 200
    rita.groups.clear()
    assert client.get("/queue/").status_code == 403
    assert client.get("/").status_code == 403


def test_logging_in_with_a_password_goes_through_the_backend(client: Client) -> None:
    f.make_user("rita", "reviewer")
    response = client.post("/accounts/login/", {"username": "rita", "password": f.PASSWORD})
    assert response.status_code == 302
    assert client.get("/").status_code == 200
    assert client.session["_auth_user_backend"] == "review.auth.RoleBackend"
    wrong = Client().post("/accounts/login/", {"username": "rita", "password": "wrong"})
    assert wrong.status_code == 200
