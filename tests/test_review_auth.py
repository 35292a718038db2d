"""The authentication backend reads the session user's roles with the user, in one query;
the session store reads the session in one statement written once."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.utils import timezone

from review.auth import RoleBackend
from review.roles import can_annotate, can_browse, can_export, roles_of
from review.sessions import SessionStore
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


# --- the session store (review.sessions): Django's database sessions, read by one statement --
def _session(data: dict[str, Any], *, expires_in: timedelta) -> str:
    from django.contrib.sessions.models import Session

    store = SessionStore()
    store.update(data)
    store.create()
    Session.objects.filter(session_key=store.session_key).update(
        expire_date=timezone.now() + expires_in
    )
    assert store.session_key is not None
    return store.session_key


def test_a_live_session_is_read_in_one_query(
    django_assert_num_queries: Callable[..., Any],
) -> None:
    key = _session({"answer": 42, "nested": {"a": [1, 2]}}, expires_in=timedelta(hours=1))
    store = SessionStore(key)
    with django_assert_num_queries(1):
        assert dict(store.items()) == {"answer": 42, "nested": {"a": [1, 2]}}
    assert store.session_key == key


@pytest.mark.parametrize("supplied", ["expired", "unknown", "malformed"])
def test_an_expired_unknown_or_malformed_key_reads_empty_and_is_never_adopted(
    supplied: str, django_assert_num_queries: Callable[..., Any]
) -> None:
    """As Django's own store: the key a cookie named is dropped, so saving the session makes
    a new one (no one can fix a victim's session key in advance)."""
    keys: dict[str, Callable[[], str]] = {
        "expired": lambda: _session({"answer": 42}, expires_in=-timedelta(seconds=1)),
        "unknown": lambda: "a" * 32,
        "malformed": lambda: "short",
    }
    key = keys[supplied]()
    store = SessionStore(key)
    with django_assert_num_queries(0 if supplied == "malformed" else 1):
        assert dict(store.items()) == {}
    assert store.session_key is None
    store["fresh"] = True
    store.save()
    assert store.session_key not in (None, key)
    assert SessionStore(store.session_key).get("fresh") is True


def test_a_logged_in_client_goes_through_this_store(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    assert isinstance(client.session, SessionStore)
    assert client.get("/").status_code == 200
    key = client.session.session_key
    client.post("/accounts/logout/")
    # Logging out deletes the session: its key no longer reads as one.
    assert SessionStore(key).load() == {}
    assert client.get("/").status_code == 302
