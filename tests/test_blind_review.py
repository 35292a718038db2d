"""Blind review: hidden values never reach the page before submit; blind annotations counted."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import DjangoAssertNumQueries

from review.filtering.form import TrialFilterForm
from review.models import Annotation, add_annotation
from review.science import agreement
from rewards.models import Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db

# Values that appear nowhere else on a page, so their absence means they were not sent.
SECRETS = ("0.731", "SECRET-JUDGE-REASONING", "secret-failure-mode", "SECRET-OTHER-NOTES", "otto")


def secret_trial() -> Trial:
    trial = f.make_trial(
        name="blind-one",
        reward=0.731,
        judges=[
            f.judge("FAIL", failure_mode="secret-failure-mode", reasoning="SECRET-JUDGE-REASONING")
        ],
    )
    add_annotation(
        trial_id=trial.pk,
        reviewer=f.make_user("otto", "reviewer"),
        judgment="fail",
        notes="SECRET-OTHER-NOTES",
    )
    return trial


@pytest.fixture
def rita() -> User:
    return f.make_user("rita", "reviewer")


def test_the_blind_queue_hands_out_the_blind_page_which_carries_nothing_hidden(
    client: Client, rita: User
) -> None:
    trial = secret_trial()
    client.force_login(rita)
    response = client.post("/queue/claim/?blind=1&overlap=2")
    assert response["Location"] == f"/trials/{trial.pk}/blind/?overlap=2&blind=1&queue=1"
    queue_page = client.get("/queue/?blind=1&overlap=2").content.decode()
    page = client.get(response["Location"])
    html = page.content.decode()
    assert page.status_code == 200
    for secret in SECRETS:
        assert secret not in html
        assert secret not in queue_page
    assert "I will compute it." in html  # the trajectory is there to judge
    assert "Submit and reveal" in html


def test_submitting_records_a_blind_annotation_and_reveals_the_trial(
    client: Client, rita: User
) -> None:
    trial = secret_trial()
    client.force_login(rita)
    response = client.post(
        f"/trials/{trial.pk}/blind/?overlap=2&blind=1&queue=1",
        {"judgment": "pass", "notes": "looks right"},
    )
    assert response.status_code == 302
    assert response["Location"] == f"/trials/{trial.pk}/?overlap=2&blind=1&queue=1"
    annotation = Annotation.objects.get(reviewer=rita)
    assert annotation.blind is True
    assert annotation.reward_seen is None
    assert annotation.judge_verdict_seen == ""
    revealed = client.get(response["Location"]).content.decode()
    assert "0.731" in revealed
    assert "SECRET-OTHER-NOTES" in revealed


def test_a_reviewer_who_already_judged_the_trial_sees_it_in_full_and_is_not_blind(
    client: Client, rita: User
) -> None:
    trial = secret_trial()
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment="fail")
    client.force_login(rita)
    response = client.get(f"/trials/{trial.pk}/blind/")
    assert response.status_code == 302
    assert response["Location"].startswith(f"/trials/{trial.pk}/?")
    client.post(f"/trials/{trial.pk}/blind/", {"judgment": "pass"})
    assert Annotation.objects.filter(reviewer=rita).latest("id").blind is False


def test_an_invalid_blind_submission_keeps_the_page_blind_and_says_why(
    client: Client, rita: User
) -> None:
    trial = secret_trial()
    client.force_login(rita)
    response = client.post(f"/trials/{trial.pk}/blind/", {"judgment": "maybe", "notes": "kept"})
    html = response.content.decode()
    assert response.status_code == 400
    assert "Select a valid choice" in html
    assert "kept" in html  # nothing typed is lost
    for secret in SECRETS:
        assert secret not in html


def test_blind_review_needs_an_annotating_role_and_csrf(rita: User) -> None:
    trial = secret_trial()
    client = Client()
    assert client.get(f"/trials/{trial.pk}/blind/").status_code == 302
    f.login(client, "ann", "analyst")
    assert client.get(f"/trials/{trial.pk}/blind/").status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(rita)
    assert strict.post(f"/trials/{trial.pk}/blind/", {"judgment": "pass"}).status_code == 403
    assert not Annotation.objects.filter(reviewer=rita).exists()
    assert strict.get("/trials/999999/blind/").status_code == 404


def test_agreement_can_count_blind_annotations_only(rita: User) -> None:
    trial = f.make_trial(judges=[f.judge("PASS")])
    # rita judged blind (fail), then, having seen the judge, changed her mind (pass).
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment="fail", blind=True)
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment="pass")
    every = agreement.report(TrialFilterForm({})).comparisons[0].overall
    blind = agreement.report(TrialFilterForm({"counted": "blind"})).comparisons[0].overall
    assert every.counts == [[1, 0], [0, 0]]
    assert blind.counts == [[0, 1], [0, 0]]
    # The blind cell links to the trials whose latest blind judgment is fail.
    assert "counted=blind" in blind.urls[0][1]


def test_the_blind_page_runs_a_fixed_number_of_queries(
    client: Client, rita: User, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    trial = secret_trial()
    client.force_login(rita)
    # the user, their role groups, the blind record of the trial, "already
    # reviewed?", the reviewer's discipline, the trial's artifacts, the reviewer's own
    # step comments.
    with django_assert_num_queries(7):
        assert client.get(f"/trials/{trial.pk}/blind/").status_code == 200
