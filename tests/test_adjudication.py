"""Adjudication: conflicting trials wait for an expert's final verdict, an append-only record."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import DatabaseError, connection, transaction
from django.test import Client
from pytest_django import DjangoAssertNumQueries

from review import adjudication
from review.models import Adjudication, Annotation, AppendOnlyError, add_annotation
from rewards.models import Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def people() -> dict[str, User]:
    return {
        "rita": f.make_user("rita", "reviewer"),
        "sam": f.make_user("sam", "expert"),
        "eve": f.make_user("eve", "expert"),
    }


@pytest.fixture
def split(people: dict[str, User]) -> Trial:
    """rita says pass, then fail, then pass; sam says fail: reviewer against reviewer."""
    trial = f.make_trial(name="split", judges=[f.judge("PASS")])
    add_annotation(trial_id=trial.pk, reviewer=people["rita"], judgment="fail")
    add_annotation(trial_id=trial.pk, reviewer=people["rita"], judgment="pass")
    add_annotation(trial_id=trial.pk, reviewer=people["sam"], judgment="fail")
    return trial


@pytest.fixture
def against_judge(people: dict[str, User]) -> Trial:
    """Both humans say pass; the judge says FAIL."""
    trial = f.make_trial(name="against-judge", judges=[f.judge("FAIL", failure_mode="units")])
    add_annotation(trial_id=trial.pk, reviewer=people["rita"], judgment="pass")
    add_annotation(trial_id=trial.pk, reviewer=people["sam"], judgment="pass")
    return trial


def _waiting(*kinds: str) -> list[str]:
    return sorted(f.names(adjudication.awaiting(list(kinds))))


def test_conflicts_enter_the_queue_as_configured(split: Trial, against_judge: Trial) -> None:
    f.make_trial(name="agreed", judges=[f.judge("PASS")])
    assert _waiting("human") == ["split"]
    assert _waiting("judge") == ["against-judge"]
    assert _waiting("human", "judge") == ["against-judge", "split"]
    assert adjudication.conflicts_of(split) == ["human"]
    assert adjudication.conflicts_of(against_judge) == ["judge"]


def test_a_verdict_names_the_annotations_it_settles_and_leaves_them_unchanged(
    people: dict[str, User], split: Trial
) -> None:
    before = list(Annotation.objects.filter(trial=split).values_list("id", "judgment"))
    verdict = adjudication.adjudicate(
        trial_id=split.pk, adjudicator=people["eve"], verdict="pass", rationale="Units match."
    )
    latest = Annotation.objects.filter(trial=split).latest_per_reviewer()
    assert sorted(verdict.settled) == sorted(latest.values_list("id", flat=True))
    assert len(verdict.settled) == 2  # rita's latest and sam's, not rita's first
    assert verdict.annotation_count == 3
    assert verdict.conflict == "human"
    assert list(Annotation.objects.filter(trial=split).values_list("id", "judgment")) == before
    assert _waiting("human") == []


def test_a_newer_annotation_reopens_a_settled_trial(people: dict[str, User], split: Trial) -> None:
    adjudication.adjudicate(
        trial_id=split.pk, adjudicator=people["eve"], verdict="fail", rationale="Off by 10x."
    )
    add_annotation(trial_id=split.pk, reviewer=people["rita"], judgment="pass")
    assert _waiting("human") == ["split"]


def test_an_adjudicator_who_reviewed_the_trial_is_refused(
    people: dict[str, User], split: Trial
) -> None:
    with pytest.raises(adjudication.AdjudicationError, match="another adjudicator"):
        adjudication.adjudicate(
            trial_id=split.pk, adjudicator=people["sam"], verdict="fail", rationale="Mine."
        )
    assert not Adjudication.objects.exists()


def test_adjudications_are_append_only_in_code_and_in_the_database(
    people: dict[str, User], split: Trial
) -> None:
    verdict = adjudication.adjudicate(
        trial_id=split.pk, adjudicator=people["eve"], verdict="pass", rationale="Fine."
    )
    with pytest.raises(AppendOnlyError):
        Adjudication.objects.all().update(verdict="fail")
    with pytest.raises(AppendOnlyError):
        verdict.delete()
    verdict.rationale = "changed"
    with pytest.raises(AppendOnlyError):
        verdict.save()
    for sql in (
        "UPDATE review_adjudication SET verdict = 'fail'",
        "DELETE FROM review_adjudication",
    ):
        with (
            pytest.raises(DatabaseError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql)
    assert Adjudication.objects.get().verdict == "pass"


def test_the_queue_lists_waiting_trials_in_a_fixed_number_of_queries(
    client: Client,
    people: dict[str, User],
    split: Trial,
    against_judge: Trial,
    django_assert_num_queries: DjangoAssertNumQueries,
) -> None:
    client.force_login(people["eve"])
    # the user, their role groups, one page of waiting trials newest run first (a page the
    # started trials do not fill reads the unstarted ones next: two queries), which of them
    # the user reviewed (those offer no "Adjudicate").
    with django_assert_num_queries(5):
        response = client.get("/adjudication/?conflict=human&conflict=judge")
    html = response.content.decode()
    assert response.status_code == 200
    assert "split" in html
    assert "against-judge" in html
    assert f"/trials/{split.pk}/adjudicate/?conflict=human&amp;conflict=judge" in html
    only_human = client.get("/adjudication/").content.decode()
    assert "against-judge" not in only_human


def test_an_expert_records_a_verdict_through_the_page(
    client: Client, people: dict[str, User], split: Trial
) -> None:
    client.force_login(people["eve"])
    page = client.get(f"/trials/{split.pk}/adjudicate/").content.decode()
    assert "Reviewer against reviewer" in page
    assert page.count("<li>#") == 3  # every annotation stays visible
    response = client.post(
        f"/trials/{split.pk}/adjudicate/?conflict=human",
        {"verdict": "fail", "rationale": "The drop is 3.2 mV, not V."},
    )
    assert response.status_code == 302
    assert response["Location"] == "/adjudication/"
    verdict = Adjudication.objects.get()
    assert (verdict.adjudicator, verdict.verdict) == (people["eve"], "fail")
    after = client.get(f"/trials/{split.pk}/adjudicate/").content.decode()
    assert "The drop is 3.2 mV, not V." in after


def test_a_verdict_without_rationale_or_by_a_party_is_refused_with_a_reason(
    client: Client, people: dict[str, User], split: Trial
) -> None:
    client.force_login(people["eve"])
    response = client.post(f"/trials/{split.pk}/adjudicate/", {"verdict": "pass", "rationale": " "})
    assert response.status_code == 400
    assert "Give a rationale." in response.content.decode()
    client.force_login(people["sam"])
    response = client.post(f"/trials/{split.pk}/adjudicate/", {"verdict": "pass", "rationale": "x"})
    assert response.status_code == 400
    assert "another adjudicator must settle it" in response.content.decode()
    assert not Adjudication.objects.exists()


@pytest.mark.parametrize("url", ["/adjudication/", "/trials/{pk}/adjudicate/"])
def test_only_experts_and_staff_adjudicate(
    client: Client, people: dict[str, User], split: Trial, url: str
) -> None:
    url = url.format(pk=split.pk)
    assert client.get(url).status_code == 302
    client.force_login(people["rita"])
    assert client.get(url).status_code == 403
    f.login(client, "ann", "analyst")
    assert client.get(url).status_code == 403
    f.login(client, "boss", staff=True)
    assert client.get(url).status_code == 200


def test_adjudicating_needs_a_csrf_token(people: dict[str, User], split: Trial) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(people["eve"])
    response = client.post(f"/trials/{split.pk}/adjudicate/", {"verdict": "pass", "rationale": "x"})
    assert response.status_code == 403
    assert not Adjudication.objects.exists()


def test_hostile_notes_are_escaped_on_the_adjudicate_page(
    client: Client, people: dict[str, Any]
) -> None:
    trial = f.write(f.hostile_bundle())[0]
    add_annotation(trial_id=trial.pk, reviewer=people["rita"], judgment="pass", notes=f.HOSTILE)
    client.force_login(people["eve"])
    html = client.get(f"/trials/{trial.pk}/adjudicate/").content.decode()
    assert "<script>window.__pwned" not in html
    assert "&lt;script&gt;window.__pwned" in html


def test_the_adjudicate_page_runs_a_fixed_number_of_queries(
    client: Client,
    people: dict[str, User],
    split: Trial,
    django_assert_num_queries: DjangoAssertNumQueries,
) -> None:
    client.force_login(people["eve"])
    # the user, their role groups, the trial, each reviewer's latest, every
    # annotation, earlier verdicts, the current conflicts.
    with django_assert_num_queries(7):
        assert client.get(f"/trials/{split.pk}/adjudicate/").status_code == 200


# --- the final verdict is the trial's human judgment -----------------------------------------
def _human(trial: Trial) -> tuple[str, str]:
    trial.refresh_from_db()
    return trial.human_judgment, trial.human_disagreement


def test_the_final_verdict_becomes_the_trials_human_judgment(
    people: dict[str, User], split: Trial
) -> None:
    # reward 0.9 passes the threshold: a "fail" verdict disagrees with the automated outcome.
    assert _human(split) == ("mixed", "")
    adjudication.adjudicate(
        trial_id=split.pk, adjudicator=people["eve"], verdict="fail", rationale="Off by 10x."
    )
    assert _human(split) == ("fail", "human_fail_automated_pass")
    assert _waiting("human", "verifier") == []  # settled at its annotation count


def test_a_newer_annotation_counts_beside_the_verdict(
    people: dict[str, User], split: Trial
) -> None:
    adjudication.adjudicate(
        trial_id=split.pk, adjudicator=people["eve"], verdict="fail", rationale="Off by 10x."
    )
    tom = f.make_user("tom", "reviewer")
    add_annotation(trial_id=split.pk, reviewer=tom, judgment="fail")
    assert _human(split)[0] == "fail"  # tom agrees with the verdict
    # rita changes her mind again: her newer pass is not what the verdict settled.
    add_annotation(trial_id=split.pk, reviewer=people["rita"], judgment="pass")
    assert _human(split)[0] == "mixed"
    assert _waiting("human") == ["split"]
    # A second verdict settles everyone's latest again, and stands in for them.
    adjudication.adjudicate(
        trial_id=split.pk, adjudicator=people["eve"], verdict="pass", rationale="Re-checked."
    )
    assert _human(split) == ("pass", "")


def test_a_verdict_against_the_judge_is_the_human_judgment_the_compare_page_reads(
    people: dict[str, User], against_judge: Trial
) -> None:
    assert _human(against_judge)[0] == "pass"
    adjudication.adjudicate(
        trial_id=against_judge.pk, adjudicator=people["eve"], verdict="fail", rationale="Units."
    )
    assert _human(against_judge)[0] == "fail"
    assert Trial.objects.filter(human_judgment="fail").get() == against_judge


def test_the_trial_page_shows_each_verdict_with_what_it_settled_and_marks_blind_annotations(
    client: Client, people: dict[str, User]
) -> None:
    trial = f.make_trial(name="blinded", judges=[f.judge("PASS")])
    add_annotation(trial_id=trial.pk, reviewer=people["rita"], judgment="fail", blind=True)
    add_annotation(trial_id=trial.pk, reviewer=people["sam"], judgment="pass")
    adjudication.adjudicate(
        trial_id=trial.pk,
        adjudicator=people["eve"],
        verdict="pass",
        rationale='<script>alert("x")</script> checked the units',
    )
    client.force_login(people["rita"])
    html = client.get(f"/trials/{trial.pk}/").content.decode()
    verdicts = html[
        html.index('id="verdicts-title"') : html.index(
            "</section>", html.index('id="verdicts-title"')
        )
    ]
    assert "Final verdict by eve" in verdicts
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; checked the units" in verdicts
    assert "<script>alert" not in html
    assert "rita's fail" in verdicts
    assert "sam's pass" in verdicts
    assert "This verdict is the trial's human judgment." in verdicts
    history = html[
        html.index(
            '<ol class="history">', html.index("</section>", html.index('id="verdicts-title"'))
        ) :
    ]
    rita_item = history[history.index("rita") :]
    rita_item = rita_item[: rita_item.index("</li>")]
    assert "Judged in blind review" in rita_item
    assert "Saw reward" not in rita_item
    sam_item = history[history.index("sam") :]
    assert "Saw reward" in sam_item[: sam_item.index("</li>")]
    # The human gate shows the verdict.
    gate = html[html.index('id="human-gate"') :]
    assert "pass" in gate[: gate.index("</div>")]


def test_the_queue_offers_adjudicate_only_on_trials_the_user_may_settle(
    client: Client, people: dict[str, User], split: Trial, against_judge: Trial
) -> None:
    """sam reviewed both trials: neither is his to settle; eve reviewed neither."""
    url = "/adjudication/?conflict=human&conflict=judge"
    client.force_login(people["sam"])
    html = client.get(url).content.decode()
    assert f"/trials/{split.pk}/adjudicate/" not in html
    assert f"/trials/{against_judge.pk}/adjudicate/" not in html
    assert html.count("You reviewed it") == 2
    client.force_login(people["eve"])
    html = client.get(url).content.decode()
    assert f"/trials/{split.pk}/adjudicate/" in html
    assert f"/trials/{against_judge.pk}/adjudicate/" in html
    assert "You reviewed it" not in html


def test_a_recorded_verdict_is_confirmed_on_the_queue(
    client: Client, people: dict[str, User], split: Trial
) -> None:
    client.force_login(people["eve"])
    response = client.post(
        f"/trials/{split.pk}/adjudicate/?conflict=human",
        {"verdict": "fail", "rationale": "Off by 10x."},
        follow=True,
    )
    html = response.content.decode()
    assert response.redirect_chain[-1][0].startswith("/adjudication/")
    assert "Final verdict recorded for split: fail, settling 2 annotations." in html
