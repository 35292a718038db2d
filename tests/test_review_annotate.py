"""Posting an annotation: htmx and plain, roles, and what a reviewer can never change."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import Resolver404, resolve

from review.models import Annotation, add_annotation
from rewards.models import Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


@pytest.fixture
def trial() -> Trial:
    return f.make_trial(reward=0.9, pass_threshold=0.5)


def _post(client: Client, trial: Trial, data: dict[str, Any], **kwargs: Any) -> Any:
    return client.post(f"/trials/{trial.pk}/annotations/", data, **kwargs)


def test_an_htmx_post_swaps_in_the_card_with_the_new_annotation(
    client: Client, trial: Trial
) -> None:
    reviewer = f.login(client, "rita", "reviewer")
    response = _post(
        client,
        trial,
        {"judgment": "fail", "categories": "units, units , tool failure", "notes": "V vs mV"},
        headers=HX,
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert f.is_fragment(html)
    assert html.lstrip().startswith('<section id="annotations"')
    assert "Annotation saved." in html
    assert "V vs mV" in html
    # The human gate is swapped out of band: it now says fail and names the disagreement.
    assert '<div id="human-gate" class="gate gate-human" hx-swap-oob="true">' in html
    assert "Human fail, automated pass" in html
    annotation = Annotation.objects.get()
    assert annotation.reviewer == reviewer
    assert annotation.categories == ["units", "tool failure"]
    trial.refresh_from_db()
    assert (trial.human_judgment, trial.annotation_count) == ("fail", 1)


def test_a_plain_post_saves_and_redirects_back_to_the_card(client: Client, trial: Trial) -> None:
    f.login(client, "rita", "reviewer")
    response = _post(client, trial, {"judgment": "pass"})
    assert response.status_code == 302
    assert response["Location"] == f"/trials/{trial.pk}/#annotations"
    page = client.get(response["Location"]).content.decode()
    assert "Annotation saved." in page
    assert Annotation.objects.get().judgment == "pass"


def test_an_invalid_post_shows_the_errors_and_saves_nothing(client: Client, trial: Trial) -> None:
    f.login(client, "rita", "reviewer")
    fragment = _post(client, trial, {"judgment": "maybe"}, headers=HX).content.decode()
    assert "Select a valid choice" in fragment
    page = _post(client, trial, {"notes": "forgot the judgment"})
    assert page.status_code == 200
    assert "This field is required" in page.content.decode()
    assert "forgot the judgment" in page.content.decode()
    assert not Annotation.objects.exists()


def test_annotating_answers_only_post(client: Client, trial: Trial) -> None:
    f.login(client, "rita", "reviewer")
    url = f"/trials/{trial.pk}/annotations/"
    assert client.get(url).status_code == 405
    assert client.put(url).status_code == 405
    assert client.patch(url).status_code == 405
    assert client.delete(url).status_code == 405


def test_an_anonymous_post_is_sent_to_login_and_saves_nothing(client: Client, trial: Trial) -> None:
    response = _post(client, trial, {"judgment": "pass"})
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert not Annotation.objects.exists()


@pytest.mark.parametrize("roles", [("analyst",), ()])
def test_an_analyst_or_a_user_without_a_role_may_not_annotate(
    client: Client, trial: Trial, roles: tuple[str, ...]
) -> None:
    f.login(client, "ann", *roles)
    assert _post(client, trial, {"judgment": "pass"}).status_code == 403
    assert _post(client, trial, {"judgment": "pass"}, headers=HX).status_code == 403
    assert not Annotation.objects.exists()


@pytest.mark.parametrize(
    ("roles", "staff"), [(("reviewer",), False), (("expert",), False), ((), True)]
)
def test_reviewers_experts_and_staff_may_annotate(
    client: Client, trial: Trial, roles: tuple[str, ...], staff: bool
) -> None:
    f.login(client, "someone", *roles, staff=staff)
    assert _post(client, trial, {"judgment": "defer"}).status_code == 302
    assert Annotation.objects.count() == 1


def test_posting_for_a_missing_trial_is_not_found(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    assert client.post("/trials/999999/annotations/", {"judgment": "pass"}).status_code == 404


def test_a_reviewer_cannot_post_as_someone_else(client: Client, trial: Trial) -> None:
    victim = f.make_user("victim", "reviewer")
    me = f.login(client, "rita", "reviewer")
    _post(
        client,
        trial,
        {
            "judgment": "fail",
            "reviewer": victim.pk,
            "reviewer_id": victim.pk,
            "created_at": "2020-01-01T00:00:00Z",
            "reward_seen": "0.0",
            "judge_verdict_seen": "FAIL",
        },
    )
    annotation = Annotation.objects.get()
    assert annotation.reviewer == me
    assert annotation.created_at.year >= 2026
    assert annotation.reward_seen == pytest.approx(0.9)
    assert annotation.judge_verdict_seen == "PASS"


def test_posting_a_reward_never_changes_the_automated_result(client: Client, trial: Trial) -> None:
    f.login(client, "rita", "reviewer")
    _post(client, trial, {"judgment": "fail", "reward": "0.0", "judge_verdict": "FAIL"})
    client.post(f"/trials/{trial.pk}/", {"reward": "0.0"})
    trial.refresh_from_db()
    assert trial.reward == pytest.approx(0.9)
    assert trial.judge_verdict == "PASS"
    assert trial.results.get(is_current=True).reward == pytest.approx(0.9)


@pytest.mark.parametrize(
    "path",
    [
        "/annotations/1/",
        "/annotations/1/edit/",
        "/annotations/1/delete/",
        "/trials/1/annotations/1/",
        "/trials/1/annotations/1/delete/",
        "/trials/1/reward/",
        "/trials/1/edit/",
    ],
)
def test_no_url_edits_or_deletes_an_annotation_or_a_reward(path: str) -> None:
    with pytest.raises(Resolver404):
        resolve(path)


def test_staff_cannot_change_or_delete_annotations_in_the_admin(
    client: Client, trial: Trial
) -> None:
    reviewer = f.make_user("rita", "reviewer")
    annotation = add_annotation(trial_id=trial.pk, reviewer=reviewer, judgment="pass")
    admin = User.objects.create_superuser("root", "root@example.com", f.PASSWORD)
    client.force_login(admin)
    base = f"/admin/review/annotation/{annotation.pk}"
    assert client.get("/admin/review/annotation/").status_code == 200
    assert client.post(f"{base}/delete/", {"post": "yes"}).status_code == 403
    assert client.post(f"{base}/change/", {"judgment": "fail"}).status_code == 403
    assert client.get("/admin/review/annotation/add/").status_code == 403
    annotation.refresh_from_db()
    assert annotation.judgment == "pass"


def test_the_form_is_prefilled_with_the_experts_discipline(client: Client, trial: Trial) -> None:
    f.login(client, "erin", "expert", discipline="power systems")
    html = client.get(f"/trials/{trial.pk}/").content.decode()
    assert 'value="power systems"' in html
    _post(client, trial, {"judgment": "pass", "reviewer_discipline": "power systems"})
    assert Annotation.objects.get().reviewer_discipline == "power systems"


def test_the_history_lists_every_annotation_with_what_the_reviewer_saw(
    client: Client, trial: Trial
) -> None:
    f.login(client, "rita", "reviewer")
    _post(client, trial, {"judgment": "fail", "notes": "first look"})
    _post(client, trial, {"judgment": "pass", "notes": "second look"})
    html = client.get(f"/trials/{trial.pk}/").content.decode()
    assert html.index("first look") < html.index("second look")
    assert html.count("Saw reward 0.90") == 2
    assert Annotation.objects.count() == 2
    trial.refresh_from_db()
    assert trial.human_judgment == "pass"
