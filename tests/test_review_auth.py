"""Django's own backend and cached database sessions; a user's roles read once per request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.contrib.sessions.backends.cached_db import SessionStore
from django.test import Client

from review.roles import can_adjudicate, can_annotate, can_browse, can_export, roles_of
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def test_sessions_and_users_are_djangos_own() -> None:
    assert settings.SESSION_ENGINE == "django.contrib.sessions.backends.cached_db"
    assert settings.AUTHENTICATION_BACKENDS == ["django.contrib.auth.backends.ModelBackend"]


def test_a_users_roles_are_read_in_one_query_however_often_they_are_asked_for(
    django_assert_num_queries: Callable[..., Any],
) -> None:
    rita = f.make_user("rita", "reviewer", "analyst")
    f.make_user("olga", "expert")
    user = ModelBackend().get_user(rita.pk)
    assert user is not None
    with django_assert_num_queries(1):  # the user's role group names
        assert roles_of(user) == frozenset({"reviewer", "analyst"})
        assert can_browse(user)
        assert can_annotate(user)
        assert can_export(user)
        assert not can_adjudicate(user)


def test_a_user_in_no_role_group_has_no_role() -> None:
    nobody = f.make_user("nobody")
    nobody.groups.add(Group.objects.create(name="not-a-role"))
    user = ModelBackend().get_user(nobody.pk)
    assert user is not None
    assert roles_of(user) == frozenset()
    assert not can_browse(user)


def test_an_inactive_user_has_no_role_and_cannot_log_in(client: Client) -> None:
    gone = f.make_user("gone", "reviewer")
    gone.is_active = False
    gone.save()
    assert roles_of(gone) == frozenset()
    assert not can_browse(gone)
    assert ModelBackend().get_user(gone.pk) is None
    response = client.post("/accounts/login/", {"username": "gone", "password": f.PASSWORD})
    assert response.status_code == 200  # the form again, not a redirect


def test_a_role_taken_away_counts_from_the_next_request(client: Client) -> None:
    rita = f.login(client, "rita", "reviewer")
    assert client.get("/queue/").status_code == 200
    rita.groups.clear()
    assert client.get("/queue/").status_code == 403
    assert client.get("/").status_code == 403


def test_the_users_roles_are_read_once_then_kept_in_the_cache(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    f.login(client, "rita", "reviewer", "analyst")
    f.make_trial()
    # The session from the cache, then: the user, their role groups (once, however many
    # checks the page makes), the explorer's rows (newest run first, then, the page not
    # being full, those without a start), their count, the newest jobs and their agents,
    # models and datasets.
    with django_assert_num_queries(7):
        assert client.get("/").status_code == 200
    # The next page: the user, the rows (two queries) and their count; the roles and the
    # jobs come from the cache.
    with django_assert_num_queries(4):
        assert client.get("/").status_code == 200


def test_a_group_renamed_or_deleted_reaches_its_members_next_request(client: Client) -> None:
    from django.contrib.auth.models import Group

    f.login(client, "rita", "reviewer")
    assert client.get("/queue/").status_code == 200
    reviewers = Group.objects.get(name="reviewer")
    reviewers.name = "former reviewers"
    reviewers.save()
    assert client.get("/queue/").status_code == 403
    f.login(client, "olga", "expert")
    assert client.get("/queue/").status_code == 200
    Group.objects.get(name="expert").delete()
    assert client.get("/queue/").status_code == 403


def test_logging_in_with_a_password_goes_through_the_model_backend(client: Client) -> None:
    f.make_user("rita", "reviewer")
    response = client.post("/accounts/login/", {"username": "rita", "password": f.PASSWORD})
    assert response.status_code == 302
    assert client.get("/").status_code == 200
    assert client.session["_auth_user_backend"] == "django.contrib.auth.backends.ModelBackend"
    wrong = Client().post("/accounts/login/", {"username": "rita", "password": "wrong"})
    assert wrong.status_code == 200


def test_a_logged_in_client_uses_the_cached_database_store_and_logout_ends_it(
    client: Client,
) -> None:
    from django.contrib.sessions.models import Session

    f.login(client, "rita", "reviewer")
    assert isinstance(client.session, SessionStore)
    key = client.session.session_key
    assert Session.objects.filter(session_key=key).exists()  # kept in the database too
    assert client.get("/").status_code == 200
    client.post("/accounts/logout/")
    # Logging out deletes the session from the cache and the database.
    assert SessionStore(key).load() == {}
    assert not Session.objects.filter(session_key=key).exists()
    assert client.get("/").status_code == 302
