"""The review queue: leases, progress, skip, roles, CSRF and query budgets."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from review import claims
from review.filtering.form import TrialFilterForm
from review.models import Claim, add_annotation
from rewards.models import Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def _claim(client: Client, query: str = "") -> Any:
    return client.post(f"/queue/claim/{'?' + query if query else ''}")


def _claimed_pk(response: Any) -> int:
    """The trial a claim redirected to (asserting it is the trial page in queue mode)."""
    assert response.status_code == 302, response.content[:300]
    location = urlsplit(response["Location"])
    assert location.path.startswith("/trials/"), response["Location"]
    assert parse_qs(location.query)["queue"] == ["1"]
    return int(location.path.split("/")[2])


def _form(query: str = "") -> TrialFilterForm:
    from django.http import QueryDict

    return TrialFilterForm(QueryDict(query))


@pytest.fixture
def trials() -> list[Trial]:
    """Six trials, newest last: three judged FAIL, three PASS."""
    return [
        f.make_trial(name=f"t{i}", judges=[f.judge("FAIL" if i % 2 else "PASS")]) for i in range(6)
    ]


# --- the page ----------------------------------------------------------------------------
def test_the_queue_page_shows_the_filter_progress_and_a_start_button(
    client: Client, trials: list[Trial]
) -> None:
    reviewer = f.login(client, "rita", "reviewer")
    add_annotation(trial_id=trials[1].pk, reviewer=reviewer, judgment="fail")
    response = client.get("/queue/?judge_verdict=FAIL&job=")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Review queue" in html
    assert '<span class="filter-chip-label">Judge</span> FAIL' in html
    # Under judge FAIL: t1 (reviewed), t3, t5 waiting.
    assert "<dt>Reviewed</dt><dd>1</dd>" in html
    assert "<dt>Waiting</dt><dd>2</dd>" in html
    assert "<dt>Total</dt><dd>3</dd>" in html
    assert "33%" in html
    assert 'action="/queue/claim/?judge_verdict=FAIL"' in html
    assert "Start reviewing" in html
    assert 'href="/?judge_verdict=FAIL">Change it in the explorer' in html


def test_the_nav_shows_the_queue_only_to_those_who_may_annotate(
    client: Client, trials: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    assert 'href="/queue/"' in client.get("/").content.decode()
    f.login(client, "ann", "analyst")
    assert 'href="/queue/"' not in client.get("/").content.decode()


def test_the_explorer_offers_its_list_as_a_queue(client: Client, trials: list[Trial]) -> None:
    f.login(client, "rita", "reviewer")
    html = client.get("/?judge_verdict=FAIL").content.decode()
    assert 'href="/queue/?judge_verdict=FAIL"' in html


def test_an_empty_queue_says_everything_is_reviewed(client: Client) -> None:
    reviewer = f.login(client, "rita", "reviewer")
    trial = f.make_trial()
    add_annotation(trial_id=trial.pk, reviewer=reviewer, judgment="pass")
    html = client.get("/queue/").content.decode()
    assert "All caught up" in html
    assert "Start reviewing" not in html
    assert "100%" in html


def test_the_queue_page_shows_the_reviewers_current_claim(
    client: Client, trials: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    pk = _claimed_pk(_claim(client, "judge_verdict=FAIL"))
    html = client.get("/queue/?judge_verdict=FAIL").content.decode()
    assert "You are reviewing" in html
    assert f'href="/trials/{pk}/?judge_verdict=FAIL&amp;queue=1"' in html
    assert f'<input type="hidden" name="trial" value="{pk}">' in html
    assert "Continue reviewing" in html


def test_queue_page_answers_only_get(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    assert client.post("/queue/").status_code == 405
    assert client.get("/queue/claim/").status_code == 405
    assert client.get("/queue/skip/").status_code == 405
    assert client.get("/queue/skipped/clear/").status_code == 405


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/queue/"),
        ("post", "/queue/claim/"),
        ("post", "/queue/skip/"),
        ("post", "/queue/skipped/clear/"),
    ],
)
def test_the_queue_sends_anonymous_visitors_to_the_login_page(
    client: Client, method: str, url: str
) -> None:
    response = getattr(client, method)(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("roles", [("analyst",), ()])
def test_only_those_who_may_annotate_may_use_the_queue(
    client: Client, trials: list[Trial], roles: tuple[str, ...]
) -> None:
    f.login(client, "ann", *roles)
    assert client.get("/queue/").status_code == 403
    assert _claim(client).status_code == 403
    assert client.post("/queue/skip/", {"trial": trials[0].pk}).status_code == 403
    assert client.post("/queue/skipped/clear/").status_code == 403
    assert not Claim.objects.exists()


def test_an_expert_and_staff_may_claim(client: Client, trials: list[Trial]) -> None:
    f.login(client, "eve", "expert")
    _claimed_pk(_claim(client))
    f.login(client, "sam", staff=True)
    _claimed_pk(_claim(client))


def test_a_claim_without_a_csrf_token_is_refused(trials: list[Trial]) -> None:
    client = Client(enforce_csrf_checks=True)
    f.login(client, "rita", "reviewer")
    assert client.post("/queue/claim/").status_code == 403
    assert client.post("/queue/skip/", {"trial": trials[0].pk}).status_code == 403
    assert not Claim.objects.exists()


# --- handing out ----------------------------------------------------------------------------
def test_start_reviewing_leases_the_first_waiting_trial_for_fifteen_minutes(
    client: Client, trials: list[Trial]
) -> None:
    reviewer = f.login(client, "rita", "reviewer")
    before = timezone.now()
    response = _claim(client, "judge_verdict=FAIL")
    pk = _claimed_pk(response)
    # Newest first, the explorer's default order: t5 is the newest FAIL.
    assert pk == trials[5].pk
    assert response["Location"] == f"/trials/{pk}/?judge_verdict=FAIL&queue=1"
    claim = Claim.objects.get()
    assert (claim.trial_id, claim.reviewer) == (pk, reviewer)
    assert before + claims.CLAIM_TTL <= claim.expires_at <= timezone.now() + claims.CLAIM_TTL


def test_two_reviewers_get_different_trials(client: Client, trials: list[Trial]) -> None:
    f.login(client, "rita", "reviewer")
    first = _claimed_pk(_claim(client))
    other = Client()
    f.login(other, "ruth", "reviewer")
    second = _claimed_pk(_claim(other))
    assert first != second
    assert Claim.objects.count() == 2


def test_claims_in_a_row_for_many_reviewers_never_share_a_trial(trials: list[Trial]) -> None:
    reviewers = [f.make_user(f"r{i}", "reviewer") for i in range(len(trials) + 2)]
    handed = [claims.claim_next(r, _form()) for r in reviewers]
    got = [c.trial_id for c in handed if c is not None]
    assert sorted(got) == sorted(t.pk for t in trials)
    assert handed[-2:] == [None, None]
    assert Claim.objects.count() == len(trials)


def test_a_reviewer_asking_again_gets_the_same_trial_and_a_renewed_lease(
    client: Client, trials: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    first = _claimed_pk(_claim(client))
    Claim.objects.update(expires_at=timezone.now() + timedelta(minutes=1))
    again = _claimed_pk(_claim(client))
    assert again == first
    claim = Claim.objects.get()
    assert claim.expires_at > timezone.now() + timedelta(minutes=14)


def test_an_expired_claim_is_handed_out_again(client: Client, trials: list[Trial]) -> None:
    f.login(client, "rita", "reviewer")
    first = _claimed_pk(_claim(client))
    Claim.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    other = Client()
    ruth = f.login(other, "ruth", "reviewer")
    assert _claimed_pk(_claim(other)) == first
    assert Claim.objects.get(trial_id=first).reviewer == ruth


def test_a_live_claim_of_another_reviewer_is_never_handed_out(trials: list[Trial]) -> None:
    rita, ruth = f.make_user("rita", "reviewer"), f.make_user("ruth", "reviewer")
    held = claims.claim_next(rita, _form())
    assert held is not None
    for _ in range(3):
        mine = claims.claim_next(ruth, _form())
        assert mine is not None
        assert mine.trial_id != held.trial_id


def test_the_queue_respects_the_filter_and_its_sort(client: Client, trials: list[Trial]) -> None:
    f.login(client, "rita", "reviewer")
    assert _claimed_pk(_claim(client, "judge_verdict=PASS&sort=id")) == trials[0].pk
    other = Client()
    f.login(other, "ruth", "reviewer")
    assert _claimed_pk(_claim(other, "judge_verdict=PASS&sort=id")) == trials[2].pk


def test_reviewed_trials_are_never_handed_out(client: Client, trials: list[Trial]) -> None:
    reviewer = f.login(client, "rita", "reviewer")
    for trial in trials[1:]:
        add_annotation(trial_id=trial.pk, reviewer=reviewer, judgment="pass")
    assert _claimed_pk(_claim(client)) == trials[0].pk


def test_one_trial_at_a_time_a_new_filter_gives_back_the_old_lease(
    client: Client, trials: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    fail = _claimed_pk(_claim(client, "judge_verdict=FAIL"))
    passed = _claimed_pk(_claim(client, "judge_verdict=PASS"))
    assert fail != passed
    assert list(Claim.objects.values_list("trial_id", flat=True)) == [passed]


def test_nothing_left_to_hand_out_goes_back_to_the_queue_with_a_message(
    client: Client, trials: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    response = _claim(client, "judge_verdict=UNPARSEABLE")
    assert response.status_code == 302
    assert response["Location"] == "/queue/?judge_verdict=UNPARSEABLE"
    html = client.get(response["Location"]).content.decode()
    assert "Nothing left to hand out under this filter" in html


def test_after_annotating_next_in_queue_hands_out_the_next_trial(
    client: Client, trials: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    first = _claimed_pk(_claim(client, "judge_verdict=FAIL"))
    page = client.get(f"/trials/{first}/?judge_verdict=FAIL&queue=1").content.decode()
    assert 'id="queue-bar"' in page
    assert "Skip this trial" in page
    assert "Next in queue" not in page

    response = client.post(
        f"/trials/{first}/annotations/?judge_verdict=FAIL&queue=1", {"judgment": "fail"}, headers=HX
    )
    html = response.content.decode()
    # The card offers the next trial, and the queue bar is swapped out of band to say so.
    assert 'action="/queue/claim/?judge_verdict=FAIL"' in html
    assert '<section id="queue-bar" class="queue-bar queue-bar-done"' in html
    assert 'hx-swap-oob="true"' in html

    second = _claimed_pk(_claim(client, "judge_verdict=FAIL"))
    assert second != first
    assert list(Claim.objects.values_list("trial_id", flat=True)) == [second]


def test_the_trial_page_outside_the_queue_has_no_queue_bar(
    client: Client, trials: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    assert 'id="queue-bar"' not in client.get(f"/trials/{trials[0].pk}/").content.decode()


# --- skip -------------------------------------------------------------------------------------
def test_skip_releases_the_lease_and_hands_out_the_next_trial(
    client: Client, trials: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    first = _claimed_pk(_claim(client, "judge_verdict=FAIL"))
    response = client.post("/queue/skip/?judge_verdict=FAIL", {"trial": first})
    second = _claimed_pk(response)
    assert second != first
    assert list(Claim.objects.values_list("trial_id", flat=True)) == [second]
    # Asking again does not bring the skipped trial back to this reviewer...
    assert _claimed_pk(_claim(client, "judge_verdict=FAIL")) == second
    # ...but another reviewer may take it at once.
    other = Client()
    f.login(other, "ruth", "reviewer")
    assert _claimed_pk(_claim(other, "judge_verdict=FAIL")) == first


def test_skipping_everything_empties_the_queue_until_the_skips_are_cleared(
    client: Client, trials: list[Trial]
) -> None:
    f.login(client, "rita", "reviewer")
    pk = _claimed_pk(_claim(client, "judge_verdict=FAIL"))
    for _ in range(2):
        pk = _claimed_pk(client.post("/queue/skip/?judge_verdict=FAIL", {"trial": pk}))
    last = client.post("/queue/skip/?judge_verdict=FAIL", {"trial": pk})
    assert last["Location"] == "/queue/?judge_verdict=FAIL"
    html = client.get("/queue/?judge_verdict=FAIL").content.decode()
    assert "You skipped 3 trials this session" in html

    cleared = client.post("/queue/skipped/clear/?judge_verdict=FAIL")
    assert cleared["Location"] == "/queue/?judge_verdict=FAIL"
    assert _claimed_pk(_claim(client, "judge_verdict=FAIL")) == trials[5].pk


def test_skip_never_releases_another_reviewers_lease(client: Client, trials: list[Trial]) -> None:
    ruth = f.make_user("ruth", "reviewer")
    held = claims.claim_next(ruth, _form())
    assert held is not None
    f.login(client, "rita", "reviewer")
    mine = _claimed_pk(client.post("/queue/skip/", {"trial": held.trial_id}))
    assert mine != held.trial_id
    assert Claim.objects.get(trial_id=held.trial_id).reviewer == ruth


def test_a_skip_without_a_trial_skips_nothing(client: Client, trials: list[Trial]) -> None:
    f.login(client, "rita", "reviewer")
    response = client.post("/queue/skip/?judge_verdict=FAIL", {"trial": "nope"})
    assert response["Location"] == "/queue/?judge_verdict=FAIL"
    assert not Claim.objects.exists()


# --- progress ----------------------------------------------------------------------------------
def test_progress_counts_reviewed_and_waiting_under_the_filter(trials: list[Trial]) -> None:
    reviewer: User = f.make_user("rita", "reviewer")
    for trial in trials[:4]:
        add_annotation(trial_id=trial.pk, reviewer=reviewer, judgment="pass")
    everything = claims.progress(_form())
    assert (everything.reviewed, everything.waiting, everything.total) == (4, 2, 6)
    assert everything.percent == 66
    passed = claims.progress(_form("judge_verdict=PASS"))
    assert (passed.reviewed, passed.waiting, passed.percent) == (2, 1, 66)
    none = claims.progress(_form("judge_verdict=UNPARSEABLE"))
    assert (none.total, none.percent) == (0, None)


def test_progress_counts_stop_at_the_cap(
    client: Client, trials: list[Trial], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(claims, "PROGRESS_CAP", 3)
    progress = claims.progress(_form())
    assert (progress.waiting, progress.waiting_capped, progress.percent) == (4, True, None)
    assert progress.waiting_label == "3+"
    f.login(client, "rita", "reviewer")
    html = client.get("/queue/").content.decode()
    assert "<dt>Waiting</dt><dd>3+</dd>" in html
    assert "Counts stop at 3" in html


# --- query budget ----------------------------------------------------------------------------
@pytest.mark.parametrize("size", [2, 30])
def test_the_queue_page_runs_a_fixed_number_of_queries(
    client: Client, django_assert_num_queries: Callable[..., Any], size: int
) -> None:
    f.make_trials(size, judges=[f.judge("FAIL")])
    f.login(client, "rita", "reviewer")
    _claim(client, "judge_verdict=FAIL")
    # 1 the user, 2 the reviewer's live claim with its trial, job and task, 3 reviewed
    # count, 4 waiting count (each COUNT over at most PROGRESS_CAP + 1 rows); the roles
    # from the cache (the claim read them).
    with django_assert_num_queries(4):
        assert client.get("/queue/?judge_verdict=FAIL").status_code == 200


@pytest.mark.parametrize("size", [2, 30])
def test_a_claim_runs_a_fixed_number_of_queries(
    client: Client, django_assert_num_queries: Callable[..., Any], size: int
) -> None:
    f.make_trials(size, judges=[f.judge("FAIL")])
    f.login(client, "rita", "reviewer")
    # 1 the user, 2 their role groups, 3 SAVEPOINT (the claim's transaction),
    # 4 the reviewer's live claim (none), 5 DELETE own and expired leases, 6 the first
    # waiting trial without a lease (LIMIT 1), 7 SAVEPOINT, 8 INSERT the lease, 9 RELEASE,
    # 10 RELEASE.
    with django_assert_num_queries(10):
        _claimed_pk(_claim(client, "judge_verdict=FAIL"))
    # Asking again: the user (the roles from the cache), SAVEPOINT, the live claim
    # (found), renew it, RELEASE.
    with django_assert_num_queries(5):
        _claimed_pk(_claim(client, "judge_verdict=FAIL"))


def test_a_hostile_trial_in_the_queue_is_shown_escaped(client: Client) -> None:
    # Unreviewed, so the queue hands it out (the factory's hostile trial carries a review).
    hostile = f.write(f.hostile_bundle().model_copy(update={"annotations": []}))[0]
    f.login(client, "rita", "reviewer")
    assert _claimed_pk(_claim(client)) == hostile.pk
    html = client.get("/queue/").content.decode()
    assert f.HOSTILE not in html
    assert "&lt;script&gt;window.__pwned=1" in html
    assert "<img" not in html
    bar = client.get(f"/trials/{hostile.pk}/?queue=1").content.decode()
    assert f.HOSTILE not in bar
