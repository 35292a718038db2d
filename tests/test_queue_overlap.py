"""The queue's "reviewers per trial" setting: a trial waits for k different reviewers."""

from __future__ import annotations

import pytest
from django.http import QueryDict
from django.test import Client

from review import claims
from review.filtering.form import TrialFilterForm
from review.models import add_annotation
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def _form(query: str) -> TrialFilterForm:
    return TrialFilterForm(QueryDict(query))


def test_with_two_reviewers_per_trial_a_reviewed_trial_still_waits_for_someone_else() -> None:
    rita, sam = f.make_user("rita", "reviewer"), f.make_user("sam", "reviewer")
    trial = f.make_trial()
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment="pass")
    # Rita annotated it twice: still one reviewer.
    add_annotation(trial_id=trial.pk, reviewer=rita, judgment="fail")
    two = _form("overlap=2")
    assert claims.claim_next(rita, two) is None
    claim = claims.claim_next(sam, two)
    assert claim is not None
    assert claim.trial_id == trial.pk
    # With the default of one reviewer per trial it is no longer waiting for anyone.
    assert claims.claim_next(f.make_user("tom", "reviewer"), _form("")) is None


def test_a_trial_with_k_reviewers_is_done(client: Client) -> None:
    rita, sam = f.make_user("rita", "reviewer"), f.make_user("sam", "reviewer")
    trial, other = f.make_trials(2)
    for reviewer in (rita, sam):
        add_annotation(trial_id=trial.pk, reviewer=reviewer, judgment="pass")
    add_annotation(trial_id=other.pk, reviewer=rita, judgment="pass")
    progress = claims.progress(_form("overlap=2"))
    assert (progress.reviewed, progress.waiting) == (1, 1)
    claim = claims.claim_next(f.make_user("tom", "reviewer"), _form("overlap=2"))
    assert claim is not None
    assert claim.trial_id == other.pk
    progress = claims.progress(_form(""))
    assert (progress.reviewed, progress.waiting) == (2, 0)


def test_the_setting_rides_along_from_the_queue_to_the_trial_page(client: Client) -> None:
    f.make_trial()
    f.login(client, "rita", "reviewer")
    page = client.get("/queue/?overlap=3").content.decode()
    assert "fewer than 3 reviewers" in page
    assert 'value="3" selected' in page
    response = client.post("/queue/claim/?overlap=3")
    assert response.status_code == 302
    assert "overlap=3" in response["Location"]
    trial_page = client.get(response["Location"]).content.decode()
    assert "/queue/skip/?overlap=3" in trial_page
    assert "/queue/?overlap=3" in trial_page


def test_an_out_of_range_setting_is_reported_and_ignored(client: Client) -> None:
    f.make_trial()
    f.login(client, "rita", "reviewer")
    page = client.get("/queue/?overlap=9").content.decode()
    assert "Some filters were not applied" in page
    assert _form("overlap=9").reviewers_per_trial == 1
