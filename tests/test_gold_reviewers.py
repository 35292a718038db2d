"""Gold trials, the queue mixing them in, time to review, queue guidelines and the reviewers
page (issue: trust, measured — gold trials and reviewer quality, guidelines where the work is)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import IntegrityError, connection, transaction
from django.test import Client, override_settings
from django.utils import timezone

from review.forms import GuidelinesForm
from review.models import Annotation, AppendOnlyError, Claim, GoldLabel, SavedView, add_annotation
from review.science.proportions import wilson_interval
from review.science.reviewers import reviewers_report
from rewards.models import Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def _claimed_pk(response: Any) -> int:
    assert response.status_code == 302, response.content[:300]
    location = urlsplit(response["Location"])
    assert location.path.startswith("/trials/"), response["Location"]
    return int(location.path.split("/")[2])


def _gold(trial: Trial, reference: str = "pass", by: str = "boss") -> GoldLabel:
    author = f.make_user(by, staff=True) if not _exists(by) else _user(by)
    return GoldLabel.objects.create(
        trial=trial, reference=reference, rationale="checked by hand", author=author
    )


def _exists(username: str) -> bool:
    from django.contrib.auth.models import User

    return User.objects.filter(username=username).exists()


def _user(username: str) -> Any:
    from django.contrib.auth.models import User

    return User.objects.get(username=username)


# --- the interval ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        # Reference values: Wilson's score interval at z = 1.96 (e.g. Newcombe 1998, table I;
        # statsmodels' proportion_confint(method="wilson") gives the same to 4 places).
        (5, 10, 0.2366, 0.7634),
        (10, 10, 0.7225, 1.0),
        (0, 10, 0.0, 0.2775),
        (81, 263, 0.2553, 0.3662),
        (1, 1, 0.2065, 1.0),
    ],
)
def test_wilson_interval_matches_reference_values(
    successes: int, n: int, low: float, high: float
) -> None:
    interval = wilson_interval(successes, n)
    assert interval is not None
    assert interval == pytest.approx((low, high), abs=5e-5)


def test_wilson_interval_of_nothing_is_none_and_of_an_impossible_count_an_error() -> None:
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match="11 successes in 10"):
        wilson_interval(11, 10)


# --- gold labels -------------------------------------------------------------------------------
def test_gold_labels_are_append_only_in_code_and_in_the_database() -> None:
    label = _gold(f.make_trial(name="g"))
    with pytest.raises(AppendOnlyError):
        label.save()
    with pytest.raises(AppendOnlyError):
        GoldLabel.objects.all().delete()
    with pytest.raises(AppendOnlyError):
        GoldLabel.objects.update(reference="fail")
    for sql in (
        "UPDATE review_goldlabel SET reference = 'fail'",
        "DELETE FROM review_goldlabel",
    ):
        with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql)
    assert GoldLabel.objects.get().reference == "pass"


def test_the_newest_label_is_the_reference_and_retired_takes_a_trial_out() -> None:
    kept, retired = f.make_trial(name="kept"), f.make_trial(name="retired")
    _gold(kept, "pass")
    _gold(kept, "fail")
    _gold(retired, "pass")
    _gold(retired, "retired")
    assert dict(GoldLabel.objects.current().values_list("trial__name", "reference")) == {
        "kept": "fail"
    }


def test_staff_mark_a_trial_gold_from_its_page_and_only_staff_see_the_card(
    client: Client,
) -> None:
    trial = f.make_trial(name="t")
    f.login(client, "boss", staff=True)
    page = client.get(f"/trials/{trial.pk}/").content.decode()
    assert 'id="gold"' in page
    assert "Not a gold trial" in page

    response = client.post(
        f"/trials/{trial.pk}/gold/", {"reference": "fail", "rationale": "the test is the spec"}
    )
    assert response.status_code == 302
    assert response["Location"].endswith("#gold")
    label = GoldLabel.objects.get()
    assert (label.reference, label.rationale, label.author.username) == (
        "fail",
        "the test is the spec",
        "boss",
    )
    page = client.get(f"/trials/{trial.pk}/").content.decode()
    assert "the test is the spec" in page

    # A rationale is required; nothing is stored without one.
    client.post(f"/trials/{trial.pk}/gold/", {"reference": "pass", "rationale": " "})
    assert GoldLabel.objects.count() == 1

    reviewer = Client()
    f.login(reviewer, "rita", "reviewer")
    assert (
        reviewer.post(
            f"/trials/{trial.pk}/gold/", {"reference": "pass", "rationale": "x"}
        ).status_code
        == 403
    )
    page = reviewer.get(f"/trials/{trial.pk}/").content.decode()
    assert 'id="gold"' not in page
    assert "the test is the spec" not in page
    assert "gold" not in page.lower().replace("golden", "")


def test_marking_gold_needs_the_csrf_token(client: Client) -> None:
    trial = f.make_trial(name="t")
    csrf = Client(enforce_csrf_checks=True)
    f.login(csrf, "boss", staff=True)
    response = csrf.post(f"/trials/{trial.pk}/gold/", {"reference": "pass", "rationale": "x"})
    assert response.status_code == 403
    assert not GoldLabel.objects.exists()


# --- the queue mixes gold in -------------------------------------------------------------------
@override_settings(TRIALDESK_GOLD_RATE=1.0)
def test_the_queue_offers_a_gold_trial_first_even_when_others_reviewed_it(
    client: Client,
) -> None:
    fresh = f.make_trial(name="fresh")
    gold = f.make_trial(name="picked-one")
    add_annotation(trial_id=gold.pk, reviewer=f.make_user("sam", "reviewer"), judgment="pass")
    _gold(gold, "pass")
    f.login(client, "rita", "reviewer")

    first = _claimed_pk(client.post("/queue/claim/"))
    assert first == gold.pk
    # Asking again while reviewing it returns the same trial (its lease is live).
    assert _claimed_pk(client.post("/queue/claim/")) == gold.pk
    assert client.get("/queue/").context["claim"].trial_id == gold.pk
    page = client.get(f"/trials/{gold.pk}/?queue=1").content.decode()
    assert "gold" not in page.lower()

    client.post(f"/trials/{gold.pk}/annotations/?queue=1", {"judgment": "fail"})
    # Judged: the gold trial is never offered to this reviewer again; the queue goes on.
    assert _claimed_pk(client.post("/queue/claim/")) == fresh.pk


@override_settings(TRIALDESK_GOLD_RATE=0.0)
def test_with_no_gold_rate_a_reviewed_gold_trial_is_never_handed_out(client: Client) -> None:
    gold = f.make_trial(name="picked-one")
    add_annotation(trial_id=gold.pk, reviewer=f.make_user("sam", "reviewer"), judgment="pass")
    _gold(gold)
    f.login(client, "rita", "reviewer")
    response = client.post("/queue/claim/")
    assert response.status_code == 302
    assert response["Location"].startswith("/queue/")


@override_settings(TRIALDESK_GOLD_RATE=1.0)
def test_gold_trials_outside_the_queue_filter_are_not_mixed_in(client: Client) -> None:
    inside = f.make_trial(name="inside", job="nightly-1")
    outside = f.make_trial(name="outside", job="nightly-2")
    _gold(outside)
    f.login(client, "rita", "reviewer")
    job = inside.job_id
    assert _claimed_pk(client.post(f"/queue/claim/?job={job}")) == inside.pk


# --- time to review ----------------------------------------------------------------------------
def test_an_annotation_from_the_queue_records_its_time_to_review(client: Client) -> None:
    trial = f.make_trial(name="t")
    other = f.make_trial(name="u")
    rita = f.login(client, "rita", "reviewer")
    pk = _claimed_pk(client.post("/queue/claim/"))
    assert pk in {trial.pk, other.pk}
    # The lease was taken 95 seconds ago.
    Claim.objects.filter(reviewer=rita).update(claimed_at=timezone.now() - timedelta(seconds=95))
    client.post(f"/trials/{pk}/annotations/?queue=1", {"judgment": "pass"})
    made = Annotation.objects.get(trial_id=pk)
    assert made.seconds_to_review is not None
    assert 95 <= made.seconds_to_review < 120
    assert "Reviewed in 1 min 3" in client.get(f"/trials/{pk}/").content.decode()

    # Outside the queue there is no lease, so no time is recorded.
    rest = other.pk if pk == trial.pk else trial.pk
    Claim.objects.filter(reviewer=rita).delete()
    client.post(f"/trials/{rest}/annotations/", {"judgment": "fail"})
    assert Annotation.objects.get(trial_id=rest).seconds_to_review is None


# --- guidelines --------------------------------------------------------------------------------
def test_guidelines_form_reads_category_definitions_and_refuses_bad_lines() -> None:
    form = GuidelinesForm(
        {"guidelines": "# Rules", "category_definitions": "units: wrong unit\n\nscope: too broad"}
    )
    assert form.is_valid(), form.errors
    assert form.cleaned_data["category_definitions"] == [
        ["units", "wrong unit"],
        ["scope", "too broad"],
    ]
    for bad, message in (
        ("no colon here", "Line 1 is not"),
        ("a: x\na: y", "defined twice"),
        (": nothing", "Line 1 is not"),
    ):
        form = GuidelinesForm({"guidelines": "", "category_definitions": bad})
        assert not form.is_valid()
        assert message in str(form.errors)


def test_a_queue_from_a_saved_view_shows_its_guidelines_and_stamps_their_version(
    client: Client,
) -> None:
    trial = f.make_trial(name="t")
    rita = f.login(client, "rita", "reviewer")
    client.post("/views/new/", {"name": "mine", "query": "q=t"})
    view = SavedView.objects.get()
    response = client.post(
        f"/views/{view.pk}/guidelines/",
        {
            f"view-{view.pk}-guidelines": "**Fail** a trial that edits tests. <script>x()</script>",
            f"view-{view.pk}-category_definitions": "tests-edited: the agent changed a test",
        },
    )
    assert response.status_code == 302
    view.refresh_from_db()
    version = view.guideline_version
    assert version.startswith("guide-")
    assert len(version) == 18

    listing = client.get("/views/").content.decode()
    queue_url = listing.split('href="/queue/?')[1].split('"')[0].replace("&amp;", "&")
    assert parse_qs(queue_url)["view"] == [str(view.pk)]

    pk = _claimed_pk(client.post(f"/queue/claim/?{queue_url}"))
    assert pk == trial.pk
    page = client.get(f"/trials/{pk}/?{queue_url}&queue=1").content.decode()
    assert "<strong>Fail</strong> a trial that edits tests." in page
    assert "<script>x()</script>" not in page
    assert "tests-edited" in page
    assert "the agent changed a test" in page

    client.post(f"/trials/{pk}/annotations/?{queue_url}&queue=1", {"judgment": "fail"})
    made = Annotation.objects.get(reviewer=rita)
    assert made.guideline_version == version
    assert f"under guidelines {version}" in client.get(f"/trials/{pk}/").content.decode()

    # Changing the guidelines changes the version the next annotation records.
    client.post(
        f"/views/{view.pk}/guidelines/",
        {f"view-{view.pk}-guidelines": "New rules", f"view-{view.pk}-category_definitions": ""},
    )
    view.refresh_from_db()
    assert view.guideline_version not in {"", version}


def test_only_the_owner_sets_guidelines_and_a_private_view_guides_no_one_else(
    client: Client,
) -> None:
    trial = f.make_trial(name="t")
    owner = f.make_user("olga", "reviewer")
    view = SavedView.objects.create(
        owner=owner, name="private", query_string="", guidelines="secret rules"
    )
    f.login(client, "rita", "reviewer")
    response = client.post(
        f"/views/{view.pk}/guidelines/", {f"view-{view.pk}-guidelines": "mine now"}
    )
    assert response.status_code == 404  # not visible to her at all
    page = client.get(f"/trials/{trial.pk}/?queue=1&view={view.pk}").content.decode()
    assert "secret rules" not in page
    client.post(f"/trials/{trial.pk}/annotations/?queue=1&view={view.pk}", {"judgment": "pass"})
    assert Annotation.objects.get().guideline_version is None


# --- the reviewers page ------------------------------------------------------------------------
@pytest.fixture
def graded() -> dict[str, Any]:
    """Four gold trials and two reviewers: rita right on 3 of 4, sam right on 1 with a defer;
    one shared non-gold trial where they disagree."""
    trials = [f.make_trial(name=f"g{i}") for i in range(4)]
    shared = f.make_trial(name="shared")
    references = ["pass", "pass", "fail", "fail"]
    for trial, reference in zip(trials, references, strict=True):
        _gold(trial, reference)
    rita = f.make_user("rita", "reviewer")
    sam = f.make_user("sam", "reviewer")
    for trial, judgment in zip(trials, ["pass", "pass", "fail", "pass"], strict=True):
        add_annotation(trial_id=trial.pk, reviewer=rita, judgment=judgment, seconds_to_review=60)
    # sam's first judgment of g0 was wrong; his latest is right: the latest counts.
    add_annotation(trial_id=trials[0].pk, reviewer=sam, judgment="fail", seconds_to_review=10)
    add_annotation(trial_id=trials[0].pk, reviewer=sam, judgment="pass", seconds_to_review=30)
    add_annotation(trial_id=trials[1].pk, reviewer=sam, judgment="defer")
    add_annotation(trial_id=trials[2].pk, reviewer=sam, judgment="pass", seconds_to_review=50)
    add_annotation(trial_id=shared.pk, reviewer=rita, judgment="pass", seconds_to_review=120)
    add_annotation(trial_id=shared.pk, reviewer=sam, judgment="fail")
    return {"rita": rita, "sam": sam}


def test_reviewer_figures_are_computed_by_their_rules(graded: dict[str, Any]) -> None:
    report = reviewers_report()
    assert report.gold_trials == 4
    rows = {row.username: row for row in report.rows}
    rita, sam = rows["rita"], rows["sam"]
    assert (rita.gold_right, rita.gold_wrong, rita.gold_deferred) == (3, 1, 0)
    assert rita.accuracy == 0.75
    assert rita.accuracy_interval == pytest.approx(wilson_interval(3, 4))
    assert (sam.gold_right, sam.gold_wrong, sam.gold_deferred) == (1, 1, 1)
    # Shared pass / fail pairs: g0 (pass, pass), g2 (fail, pass), shared (pass, fail).
    assert (rita.peer_pairs, rita.peer_agreeing) == (3, 1)
    assert (sam.peer_pairs, sam.peer_agreeing) == (3, 1)
    assert rita.median_seconds == 60
    assert rita.queue_reviews == 5
    assert sam.median_seconds == 30
    assert sam.queue_reviews == 3
    assert rita.annotations == 5
    assert sam.annotations == 5
    assert rita.weekly[-1] == 5
    assert sum(rita.weekly) == 5


def test_experts_see_every_reviewer_a_reviewer_only_themselves_an_analyst_nothing(
    client: Client, graded: dict[str, Any]
) -> None:
    client.force_login(graded["rita"])
    page = client.get("/reviewers/").content.decode()
    assert "rita" in page
    assert ">sam<" not in page
    assert "75%" in page  # her accuracy
    assert "Gold trials</h2>" not in page  # the gold list is staff's

    expert = Client()
    f.login(expert, "erin", "expert")
    page = expert.get("/reviewers/").content.decode()
    assert ">rita<" in page
    assert ">sam<" in page

    boss = Client()
    f.login(boss, "boss2", staff=True)
    page = boss.get("/reviewers/").content.decode()
    assert "Gold trials</h2>" in page
    assert "checked by hand" in page

    analyst = Client()
    f.login(analyst, "ana", "analyst")
    assert analyst.get("/reviewers/").status_code == 403
    assert Client().get("/reviewers/").status_code == 302  # to the login page


def test_the_reviewers_page_runs_a_fixed_number_of_queries(
    client: Client, graded: dict[str, Any], django_assert_max_num_queries: Callable[..., Any]
) -> None:
    f.login(client, "erin", "expert")
    client.get("/reviewers/")  # warm the role cache and the session
    with django_assert_max_num_queries(12) as few:
        client.get("/reviewers/")
    trial = Trial.objects.get(name="shared")
    for i in range(5):
        reviewer = f.make_user(f"extra{i}", "reviewer")
        add_annotation(trial_id=trial.pk, reviewer=reviewer, judgment="pass")
    with django_assert_max_num_queries(len(few.captured_queries)):
        client.get("/reviewers/")


def test_the_low_agreement_queue_hands_out_split_trials_to_a_third_reviewer(
    client: Client, graded: dict[str, Any]
) -> None:
    f.login(client, "erin", "expert")
    page = client.get("/reviewers/").content.decode()
    link = page.split("Queue of low-agreement trials")[0].rsplit('href="', 1)[1].split('"')[0]
    link = link.replace("&amp;", "&")
    assert parse_qs(urlsplit(link).query) == {"human_judgment": ["mixed"], "overlap": ["3"]}
    with override_settings(TRIALDESK_GOLD_RATE=0.0):
        pk = _claimed_pk(client.post(link.replace("/queue/", "/queue/claim/")))
    assert Trial.objects.get(pk=pk).human_judgment == "mixed"


def test_the_gold_rate_decides_each_hand_out(monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    from review import claims

    # The queue draws with the standard library's generator (a mix, not a secret).
    monkeypatch.setattr(random, "random", lambda: 0.25)
    with override_settings(TRIALDESK_GOLD_RATE=0.3):
        assert claims._offers_gold()
    with override_settings(TRIALDESK_GOLD_RATE=0.2):
        assert not claims._offers_gold()
    with override_settings(TRIALDESK_GOLD_RATE=0.0):
        assert not claims._offers_gold()
