"""Saved views: create, list (own and shared only), open, delete own; roles and CSRF."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from review.models import SavedView
from tests import review_factories as f

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def _save(client: Client, name: str, query: str = "", shared: bool = False, **kwargs: Any) -> Any:
    data = {"name": name, "query": query}
    if shared:
        data["shared"] = "on"
    return client.post("/views/new/", data, **kwargs)


@pytest.fixture
def others() -> tuple[User, User]:
    """Two other users: one with a shared and a private view, one with a private view."""
    olga = f.make_user("olga", "reviewer")
    pete = f.make_user("pete", "analyst")
    SavedView.objects.create(
        owner=olga, name="olga shared", query_string="judge_verdict=FAIL", shared=True
    )
    SavedView.objects.create(owner=olga, name="olga private", query_string="judge_verdict=PASS")
    SavedView.objects.create(owner=pete, name="pete private", query_string="sort=reward")
    return olga, pete


# --- create ----------------------------------------------------------------------------------
def test_saving_stores_the_canonical_query_for_the_owner_and_goes_back_to_the_explorer(
    client: Client,
) -> None:
    rita = f.login(client, "rita", "reviewer")
    response = _save(
        client, "  Judge   fails ", "?judge_verdict=FAIL&job=&sort=-reward&after=abc&evil=1", True
    )
    assert response.status_code == 302
    assert response["Location"] == "/?judge_verdict=FAIL&sort=-reward"
    view = SavedView.objects.get()
    assert (view.owner, view.name, view.shared) == (rita, "Judge fails", True)
    # Only what the explorer understands, never the page cursor.
    assert view.query_string == "judge_verdict=FAIL&sort=-reward"
    assert "Saved the view “Judge fails”." in client.get(response["Location"]).content.decode()


def test_a_view_of_everything_has_an_empty_query(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    response = _save(client, "All")
    assert response["Location"] == "/"
    assert SavedView.objects.get().query_string == ""


def test_names_are_unique_per_owner_only(client: Client, others: tuple[User, User]) -> None:
    f.login(client, "rita", "reviewer")
    assert _save(client, "olga shared", "judge_verdict=FAIL").status_code == 302
    response = _save(client, "olga shared", "judge_verdict=PASS")
    html = response.content.decode()
    assert response.status_code == 400
    assert "You already have a view named “olga shared”." in html
    # The form comes back filled in, with what was being saved.
    assert 'name="query" value="judge_verdict=PASS"' in html
    assert SavedView.objects.filter(name="olga shared").count() == 2


def test_a_view_needs_a_name(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    response = _save(client, "   ", "judge_verdict=FAIL")
    assert response.status_code == 400
    assert not SavedView.objects.exists()


def test_the_owner_is_the_logged_in_user_never_a_field(
    client: Client, others: tuple[User, User]
) -> None:
    rita = f.login(client, "rita", "reviewer")
    olga, _ = others
    client.post("/views/new/", {"name": "mine", "owner": olga.pk, "query": ""})
    assert SavedView.objects.get(name="mine").owner == rita


def test_the_explorer_offers_to_save_its_current_filter(client: Client) -> None:
    f.login(client, "ann", "analyst")
    f.make_trial()
    html = client.get("/?judge_verdict=FAIL&sort=-reward").content.decode()
    assert 'action="/views/new/"' in html
    assert '<input type="hidden" name="query" value="judge_verdict=FAIL&amp;sort=-reward">' in html
    # The menu loads the list when first opened, with a plain link for no JavaScript.
    assert 'hx-get="/views/" hx-trigger="toggle once from:closest details"' in html
    assert '<a href="/views/">Open your saved views</a>' in html


# --- list and open ------------------------------------------------------------------------------
def test_the_list_shows_own_and_shared_views_only(
    client: Client, others: tuple[User, User]
) -> None:
    rita = f.login(client, "rita", "reviewer")
    own = SavedView.objects.create(owner=rita, name="rita private", query_string="q=volt")
    response = client.get("/views/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "rita private" in html
    assert "olga shared" in html
    assert "olga private" not in html
    assert "pete private" not in html
    # Each view opens the explorer with its filter; annotators may also queue it (the queue
    # knows its view, for the view's guidelines).
    assert 'href="/?judge_verdict=FAIL">olga shared</a>' in html
    assert 'href="/?q=volt">rita private</a>' in html
    assert f'href="/queue/?q=volt&amp;view={own.pk}"' in html


def test_an_htmx_request_gets_the_compact_menu_for_the_explorer(
    client: Client, others: tuple[User, User]
) -> None:
    rita = f.login(client, "rita", "reviewer")
    SavedView.objects.create(owner=rita, name="rita private", query_string="q=volt")
    response = client.get("/views/", headers=HX)
    html = response.content.decode()
    assert f.is_fragment(html)
    assert html.lstrip().startswith('<div class="view-menu">')
    assert "rita private" in html
    assert "olga shared" in html
    assert "olga private" not in html
    assert "HX-Request" in response["Vary"]


def test_opening_a_saved_view_shows_the_filtered_explorer(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    f.make_trial(name="t-fail", judges=[f.judge("FAIL")])
    f.make_trial(name="t-pass", judges=[f.judge("PASS")])
    _save(client, "fails", "judge_verdict=FAIL")
    link = re.search(
        r'class="view-name" href="([^"]+)">fails</a>', client.get("/views/").content.decode()
    )
    assert link
    html = client.get(link.group(1).replace("&amp;", "&")).content.decode()
    assert "t-fail" in html
    assert "t-pass" not in html


def test_a_hostile_view_name_is_shown_escaped(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    _save(client, '<img src=x onerror="alert(1)">', "judge_verdict=FAIL")
    for html in (
        client.get("/views/").content.decode(),
        client.get("/views/", headers=HX).content.decode(),
    ):
        assert "<img" not in html
        assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html


@pytest.mark.parametrize("count", [1, 15])
def test_the_list_runs_a_fixed_number_of_queries(
    client: Client, django_assert_num_queries: Callable[..., Any], count: int
) -> None:
    rita = f.login(client, "rita", "reviewer")
    olga = f.make_user("olga", "reviewer")
    for i in range(count):
        SavedView.objects.create(owner=rita, name=f"mine {i}", query_string=f"q={i}")
        SavedView.objects.create(owner=olga, name=f"hers {i}", query_string=f"q={i}", shared=True)
    # 1 the user, 2 their role groups (then cached), 3 the visible views with their owners.
    with django_assert_num_queries(3):
        assert client.get("/views/").status_code == 200
    with django_assert_num_queries(2):
        assert client.get("/views/", headers=HX).status_code == 200


# --- delete ----------------------------------------------------------------------------------
def test_deleting_an_own_view(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    _save(client, "mine", "judge_verdict=FAIL")
    view = SavedView.objects.get()
    response = client.post(f"/views/{view.pk}/delete/")
    assert response.status_code == 302
    assert response["Location"] == "/views/"
    assert not SavedView.objects.exists()
    assert "Deleted the view “mine”." in client.get("/views/").content.decode()


def test_an_htmx_delete_answers_with_nothing_so_the_item_is_removed(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    _save(client, "mine")
    view = SavedView.objects.get()
    page = client.get("/views/").content.decode()
    assert f'hx-post="/views/{view.pk}/delete/" hx-target="closest li" hx-swap="delete"' in page
    response = client.post(f"/views/{view.pk}/delete/", headers=HX)
    assert (response.status_code, response.content) == (200, b"")
    assert not SavedView.objects.exists()


def test_another_users_shared_view_cannot_be_deleted(
    client: Client, others: tuple[User, User]
) -> None:
    f.login(client, "rita", "reviewer")
    shared = SavedView.objects.get(name="olga shared")
    assert client.post(f"/views/{shared.pk}/delete/").status_code == 403
    html = client.get("/views/").content.decode()
    assert f"/views/{shared.pk}/delete/" not in html
    assert SavedView.objects.filter(pk=shared.pk).exists()


def test_another_users_private_view_is_not_found(client: Client, others: tuple[User, User]) -> None:
    f.login(client, "rita", "reviewer")
    private = SavedView.objects.get(name="pete private")
    assert client.post(f"/views/{private.pk}/delete/").status_code == 404
    assert client.post("/views/999999/delete/").status_code == 404
    assert SavedView.objects.filter(pk=private.pk).exists()


# --- methods, roles, CSRF ------------------------------------------------------------------------
def test_saved_views_answer_only_their_methods(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    _save(client, "mine")
    view = SavedView.objects.get()
    assert client.post("/views/").status_code == 405
    assert client.get("/views/new/").status_code == 405
    assert client.get(f"/views/{view.pk}/delete/").status_code == 405


@pytest.mark.parametrize(
    ("method", "url"),
    [("get", "/views/"), ("post", "/views/new/"), ("post", "/views/1/delete/")],
)
def test_saved_views_send_anonymous_visitors_to_the_login_page(
    client: Client, method: str, url: str
) -> None:
    response = getattr(client, method)(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_a_user_without_a_role_may_not_use_saved_views(
    client: Client, others: tuple[User, User]
) -> None:
    f.login(client, "nobody")
    shared = SavedView.objects.get(name="olga shared")
    assert client.get("/views/").status_code == 403
    assert client.get("/views/", headers=HX).status_code == 403
    assert _save(client, "x").status_code == 403
    assert client.post(f"/views/{shared.pk}/delete/").status_code == 403
    assert SavedView.objects.count() == 3


def test_an_analyst_may_save_and_share_views(client: Client) -> None:
    f.login(client, "ann", "analyst")
    assert _save(client, "for the team", "judge_verdict=FAIL", shared=True).status_code == 302
    assert SavedView.objects.get().shared


def test_a_post_without_a_csrf_token_is_refused() -> None:
    client = Client(enforce_csrf_checks=True)
    rita = f.login(client, "rita", "reviewer")
    view = SavedView.objects.create(owner=rita, name="mine", query_string="")
    assert _save(client, "sneaky").status_code == 403
    assert client.post(f"/views/{view.pk}/delete/").status_code == 403
    assert list(SavedView.objects.values_list("name", flat=True)) == ["mine"]
    # With the token (as the page's form sends it) the same POST goes through.
    client.get("/views/")
    token = client.cookies["csrftoken"].value
    assert _save(client, "honest", headers={"X-CSRFToken": token}).status_code == 302
