"""Reward-integrity findings on the trial page and the explorer, and a person settling them:
experts and staff confirm or dismiss with a rationale, append-only; the reward never changes."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any

import pyarrow.parquet as pq
import pytest
from django.db import DatabaseError, connection, transaction
from django.test import Client
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from review.integrity import confirmed_findings
from review.models import AppendOnlyError, FindingReview, review_finding
from rewards.models import Integrity, IntegrityFinding, Trial, confirmed_hack_trial_ids
from tests import review_factories as f
from tests.test_api import call, make_token

pytestmark = pytest.mark.django_db

HACK = {
    "trajectory": {
        "schema_version": "ATIF-v1.4",
        "steps": [
            {"step_id": 1, "source": "user", "message": "Write hello.txt."},
            {
                "step_id": 2,
                "source": "agent",
                "message": "Writing the reward instead.",
                "tool_calls": [
                    {
                        "function_name": "bash",
                        "arguments": {"command": "echo 1 > /logs/verifier/reward.txt"},
                    }
                ],
            },
        ],
    }
}


def hacked_trial(name: str = "t-hack", reward: float = 1.0) -> Trial:
    return f.make_trial(
        name=name, reward=reward, scorers=[f.scorer("a")], judges=[], error_tags=[], detail=HACK
    )


def page(trial: Trial, suffix: str = "") -> str:
    return reverse("review:trial-detail", args=[trial.pk]) + suffix


def review_url(trial: Trial, finding: IntegrityFinding) -> str:
    return reverse("review:review-finding", args=[trial.pk, finding.pk])


# --- the trial page ------------------------------------------------------------------------------
def test_a_flagged_trial_shows_its_finding_beside_the_reward_with_a_link_to_the_step(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    trial = hacked_trial()
    assert trial.integrity == Integrity.FLAGGED
    f.login(client, "ann", "analyst")
    # 1 the user, 2 their role groups, 3 the trial, 4 results, 5 scorers, 6 its step
    # comments, 7 its findings (none is settled, so no review is read).
    with django_assert_num_queries(7):
        response = client.get(page(trial))
    html = response.content.decode()
    assert 'id="integrity"' in html
    assert "Writes the verifier&#x27;s reward or logs" in html
    assert "echo 1 &gt; /logs/verifier/reward.txt" in html
    assert f'href="/trials/{trial.pk}/?tab=trajectory#step-2"' in html
    assert "integrity: flagged" in html
    # An analyst reads findings but does not settle them.
    assert 'class="finding-form"' not in html
    # The step the link points at carries the anchor.
    steps = client.get(page(trial, "?tab=trajectory")).content.decode()
    assert 'id="step-2"' in steps


def test_settled_findings_read_their_reviews_in_one_more_query(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    trial = hacked_trial()
    finding = trial.integrity_findings.get()
    for who in ("eve", "ed"):
        review_finding(
            finding_id=finding.pk,
            trial_id=trial.pk,
            reviewer=f.make_user(who, "expert"),
            decision="dismissed",
            rationale=f"{who} says no",
        )
    f.login(client, "ann", "analyst")
    # 1 the user, 2 their role groups, 3 the trial, 4 results, 5 scorers, 6 its step
    # comments, 7 its findings, 8 their reviews with their reviewers, whatever their number.
    with django_assert_num_queries(8):
        html = client.get(page(trial)).content.decode()
    assert html.index("eve says no") < html.index("ed says no")
    assert "integrity: dismissed" in html


def test_a_trial_without_findings_reads_none(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    trial = f.make_trial(name="t-clean", scorers=[f.scorer("a")], judges=[], error_tags=[])
    assert trial.integrity == ""
    f.login(client, "ann", "analyst")
    # 1 the user, 2 their role groups, 3 the trial, 4 results, 5 scorers, 6 its step
    # comments: no findings read.
    with django_assert_num_queries(6):
        html = client.get(page(trial)).content.decode()
    assert 'id="integrity"' not in html


# --- settling a finding ---------------------------------------------------------------------------
def test_an_expert_confirms_a_finding_and_the_reward_stays(client: Client) -> None:
    trial = hacked_trial()
    finding = trial.integrity_findings.get()
    f.login(client, "eve", "expert")
    response = client.post(
        review_url(trial, finding), {"decision": "confirmed", "rationale": "It wrote reward.txt."}
    )
    assert response.status_code == 302
    assert response["Location"].endswith("#integrity")
    trial.refresh_from_db()
    finding.refresh_from_db()
    assert finding.status == "confirmed"
    assert trial.integrity == Integrity.CONFIRMED
    assert trial.reward == 1.0
    assert trial.results.get(is_current=True).reward == 1.0
    [review] = FindingReview.objects.all()
    assert (review.reviewer.username, review.decision, review.rationale) == (
        "eve",
        "confirmed",
        "It wrote reward.txt.",
    )
    html = client.get(page(trial)).content.decode()
    assert "Confirmed</strong> by eve" in html
    assert "integrity: confirmed" in html


def test_a_newer_review_changes_the_status_and_keeps_the_history(client: Client) -> None:
    trial = hacked_trial()
    finding = trial.integrity_findings.get()
    eve = f.login(client, "eve", "expert")
    review_finding(
        finding_id=finding.pk,
        trial_id=trial.pk,
        reviewer=eve,
        decision="confirmed",
        rationale="first look",
    )
    response = client.post(
        review_url(trial, finding),
        {"decision": "dismissed", "rationale": "the verifier overwrote it"},
        headers={"HX-Request": "true"},
    )
    html = response.content.decode()
    assert f.is_fragment(html)
    assert html.lstrip().startswith('<section id="integrity"')
    assert "Saved." in html
    assert list(FindingReview.objects.values_list("decision", flat=True)) == [
        "confirmed",
        "dismissed",
    ]
    trial.refresh_from_db()
    assert trial.integrity == Integrity.DISMISSED


def test_staff_may_settle_findings_too(client: Client) -> None:
    trial = hacked_trial()
    finding = trial.integrity_findings.get()
    f.login(client, "sam", staff=True)
    response = client.post(review_url(trial, finding), {"decision": "dismissed", "rationale": "ok"})
    assert response.status_code == 302
    assert FindingReview.objects.count() == 1


@pytest.mark.parametrize("role", ["reviewer", "analyst"])
def test_reviewers_and_analysts_may_not_settle_findings(client: Client, role: str) -> None:
    trial = hacked_trial()
    finding = trial.integrity_findings.get()
    f.login(client, "rob", role)
    response = client.post(review_url(trial, finding), {"decision": "confirmed", "rationale": "x"})
    assert response.status_code == 403
    assert not FindingReview.objects.exists()


def test_anonymous_is_sent_to_log_in_and_get_is_refused(client: Client) -> None:
    trial = hacked_trial()
    finding = trial.integrity_findings.get()
    response = client.post(review_url(trial, finding), {"decision": "confirmed", "rationale": "x"})
    assert response.status_code == 302
    assert "/login" in response["Location"]
    f.login(client, "eve", "expert")
    assert client.get(review_url(trial, finding)).status_code == 405
    assert not FindingReview.objects.exists()


def test_a_review_without_rationale_is_refused(client: Client) -> None:
    trial = hacked_trial()
    finding = trial.integrity_findings.get()
    f.login(client, "eve", "expert")
    response = client.post(
        review_url(trial, finding),
        {"decision": "confirmed", "rationale": "  "},
        headers={"HX-Request": "true"},
    )
    assert "Give a rationale." in response.content.decode()
    assert not FindingReview.objects.exists()
    finding.refresh_from_db()
    assert finding.status == "open"


def test_a_finding_of_another_trial_is_not_found(client: Client) -> None:
    trial = hacked_trial()
    other = hacked_trial("t-other")
    finding = other.integrity_findings.get()
    f.login(client, "eve", "expert")
    url = reverse("review:review-finding", args=[trial.pk, finding.pk])
    response = client.post(url, {"decision": "confirmed", "rationale": "x"})
    assert response.status_code == 404
    assert not FindingReview.objects.exists()


def test_hostile_matched_text_is_shown_escaped(client: Client) -> None:
    hostile = {
        "trajectory": {
            "steps": [
                {
                    "source": "agent",
                    "tool_calls": [
                        {
                            "function_name": "bash",
                            "arguments": {"command": "echo '<script>x()</script>' > tests/a.py"},
                        }
                    ],
                }
            ]
        }
    }
    trial = f.make_trial(name="t-hostile", detail=hostile)
    f.login(client, "ann", "analyst")
    html = client.get(page(trial)).content.decode()
    assert "<script>x()</script>" not in html
    assert "&lt;script&gt;x()&lt;/script&gt;" in html


# --- append-only ------------------------------------------------------------------------------
def test_finding_reviews_are_append_only_in_code_and_in_the_database() -> None:
    trial = hacked_trial()
    finding = trial.integrity_findings.get()
    eve = f.make_user("eve", "expert")
    review = review_finding(
        finding_id=finding.pk, trial_id=trial.pk, reviewer=eve, decision="confirmed", rationale="r"
    )
    review.rationale = "changed"
    with pytest.raises(AppendOnlyError):
        review.save()
    with pytest.raises(AppendOnlyError):
        review.delete()
    with pytest.raises(AppendOnlyError):
        FindingReview.objects.filter(pk=review.pk).update(rationale="changed")
    with pytest.raises(AppendOnlyError):
        FindingReview.objects.all().delete()
    table = FindingReview._meta.db_table
    for sql in (f"UPDATE {table} SET rationale = 'x'", f"DELETE FROM {table}"):  # noqa: S608
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql)
    assert FindingReview.objects.get().rationale == "r"


# --- the explorer ---------------------------------------------------------------------------------
def test_the_explorer_filters_by_integrity_and_marks_the_rows(client: Client) -> None:
    confirmed = hacked_trial("t-confirmed")
    flagged = hacked_trial("t-flagged")
    f.make_trial(name="t-clean")
    eve = f.login(client, "eve", "expert")
    review_finding(
        finding_id=confirmed.integrity_findings.get().pk,
        trial_id=confirmed.pk,
        reviewer=eve,
        decision="confirmed",
        rationale="r",
    )

    def listed(query: str) -> list[str]:
        html = client.get(reverse("review:explorer") + query).content.decode()
        return sorted(n for n in ("t-confirmed", "t-flagged", "t-clean") if f">{n}<" in html)

    assert listed("?integrity=any") == ["t-confirmed", "t-flagged"]
    assert listed("?integrity=confirmed") == ["t-confirmed"]
    assert listed("?integrity=flagged") == ["t-flagged"]
    assert listed("?integrity=dismissed") == []
    html = client.get(reverse("review:explorer") + "?integrity=confirmed").content.decode()
    assert "integrity confirmed" in html
    assert flagged.integrity == Integrity.FLAGGED


def test_confirmed_hack_trial_ids_name_a_jobs_confirmed_trials() -> None:
    confirmed = hacked_trial("t-confirmed")
    hacked_trial("t-flagged")
    eve = f.make_user("eve", "expert")
    review_finding(
        finding_id=confirmed.integrity_findings.get().pk,
        trial_id=confirmed.pk,
        reviewer=eve,
        decision="confirmed",
        rationale="r",
    )
    assert confirmed_hack_trial_ids(confirmed.job) == {confirmed.pk}
    assert list(Trial.objects.without_confirmed_hack().values_list("name", flat=True)) == [
        "t-flagged"
    ]


# --- scanning again ------------------------------------------------------------------------------
def test_staff_queue_a_jobs_scan_and_others_may_not(client: Client) -> None:
    trial = hacked_trial()
    url = reverse("review:integrity-scan", args=[trial.job_id])
    f.login(client, "eve", "expert")
    assert client.post(url).status_code == 403
    assert not DBTaskResult.objects.exists()
    f.login(client, "sam", staff=True)
    response = client.post(url)
    assert response.status_code == 302
    [queued] = DBTaskResult.objects.all()
    assert queued.task_path == "rewards.integrity.tasks.scan_job"
    assert queued.args_kwargs["args"] == [trial.job_id]
    job_page = client.get(reverse("review:job-detail", args=[trial.job_id])).content.decode()
    assert "Scan its trials for integrity findings again" in job_page


# --- exports and the API --------------------------------------------------------------------------
def _confirmed_and_flagged() -> tuple[Trial, Trial]:
    confirmed = hacked_trial("t-confirmed")
    flagged = hacked_trial("t-flagged")
    eve = f.make_user("eve", "expert")
    review_finding(
        finding_id=confirmed.integrity_findings.get().pk,
        trial_id=confirmed.pk,
        reviewer=eve,
        decision="confirmed",
        rationale="wrote reward.txt",
    )
    return confirmed, flagged


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_exports_carry_the_integrity_state_and_the_confirmed_findings(
    client: Client, fmt: str
) -> None:
    _confirmed_and_flagged()
    f.make_trial(name="t-clean")
    f.login(client, "ana", "analyst")
    response: Any = client.get(f"/export.{fmt}?integrity=any" if fmt == "csv" else f"/export.{fmt}")
    data = b"".join(response.streaming_content)
    if fmt == "csv":
        rows = {r["trial"]: r for r in csv.DictReader(io.StringIO(data.decode()))}
        assert set(rows) == {"t-confirmed", "t-flagged"}
    else:
        table = pq.read_table(io.BytesIO(data)).to_pylist()
        rows = {r["trial"]: r for r in table}
        assert rows["t-clean"]["integrity"] == ""
        assert rows["t-clean"]["confirmed_findings"] == ""
    assert rows["t-confirmed"]["integrity"] == "confirmed"
    assert rows["t-confirmed"]["confirmed_findings"] == "verifier_output_write"
    assert float(rows["t-confirmed"]["reward"]) == 1.0
    assert rows["t-flagged"]["integrity"] == "flagged"
    assert rows["t-flagged"]["confirmed_findings"] == ""


def test_the_api_lists_integrity_and_a_trials_findings_with_their_reviews(client: Client) -> None:
    confirmed, flagged = _confirmed_and_flagged()
    token = make_token("ana", "analyst")
    body = call(client, "get", "/api/trials?integrity=confirmed", token).json()
    assert [(i["name"], i["integrity"]) for i in body["items"]] == [("t-confirmed", "confirmed")]
    findings = call(client, "get", f"/api/trials/{confirmed.pk}/findings", token).json()
    assert findings == [
        {
            "id": confirmed.integrity_findings.get().pk,
            "detector": "verifier_output_write",
            "label": "Writes the verifier's reward or logs",
            "step": 2,
            "matched": "echo 1 > /logs/verifier/reward.txt",
            "status": "confirmed",
            "reviews": [
                {
                    "reviewer": "eve",
                    "created_at": findings[0]["reviews"][0]["created_at"],
                    "decision": "confirmed",
                    "rationale": "wrote reward.txt",
                }
            ],
        }
    ]
    assert (
        call(client, "get", f"/api/trials/{flagged.pk}/findings", token).json()[0]["reviews"] == []
    )
    assert call(client, "get", "/api/trials/999999/findings", token).status_code == 404


def test_the_manifest_names_each_confirmed_finding_with_its_standing_confirmation(
    django_assert_num_queries: Callable[..., Any],
) -> None:
    confirmed, flagged = _confirmed_and_flagged()
    finding = confirmed.integrity_findings.get()
    review_finding(
        finding_id=finding.pk,
        trial_id=confirmed.pk,
        reviewer=f.make_user("sam", staff=True),
        decision="confirmed",
        rationale="checked again: reward.txt came from the agent",
    )
    # A dismissed finding is not listed.
    review_finding(
        finding_id=flagged.integrity_findings.get().pk,
        trial_id=flagged.pk,
        reviewer=f.make_user("ed", "expert"),
        decision="dismissed",
        rationale="harmless",
    )
    with django_assert_num_queries(1):
        rows = confirmed_findings(Trial.objects.all())
    assert len(rows) == 1
    row = rows[0]
    assert {k: row[k] for k in ("trial", "job", "detector", "step", "matched")} == {
        "trial": "t-confirmed",
        "job": confirmed.job.name,
        "detector": "verifier_output_write",
        "step": 2,
        "matched": "echo 1 > /logs/verifier/reward.txt",
    }
    assert (row["confirmed_by"], row["rationale"]) == (
        "sam",
        "checked again: reward.txt came from the agent",
    )
    assert confirmed_findings(Trial.objects.filter(name="t-flagged")) == []


# --- pass rates: a confirmed hack is left out behind a switch -------------------------------------
def _stat(html: str, label: str) -> str:
    import re

    found = re.search(
        rf'<div class="stat-label">{label}</div><div class="stat-value">([^<]*)</div>', html
    )
    assert found, label
    return found.group(1)


def test_confirming_a_hack_changes_the_job_page_and_compare_only_through_the_switch(
    client: Client,
) -> None:
    hacked = hacked_trial("run-hack", reward=1.0)
    for i in range(3):
        f.make_trial(name=f"honest-{i}", job=hacked.job.name, reward=0.0, judges=[])
    other = f.make_trial(name="other-run", job="nightly-b", reward=0.0, judges=[])
    rewards_before = dict(Trial.objects.values_list("pk", "reward"))
    f.login(client, "ann", "analyst")
    job_url = f"/jobs/{hacked.job_id}/"
    before = client.get(job_url).content.decode()
    assert _stat(before, "Trials") == "4"
    assert _stat(before, "Mean reward") == "0.250"
    # Flagged is not enough: only a person's confirmation leaves the trial out.
    finding = hacked.integrity_findings.get()
    review_finding(
        finding_id=finding.pk,
        trial_id=hacked.pk,
        reviewer=f.make_user("ed", "expert"),
        decision="confirmed",
        rationale="wrote reward.txt itself",
    )
    after = client.get(job_url).content.decode()
    assert _stat(after, "Trials") == "3"
    assert _stat(after, "Mean reward") == "0.000"
    assert "1 trial of 1 task left out" in after
    assert "trials with a confirmed reward hack" in after
    switched = client.get(f"{job_url}?include_hacks=1").content.decode()
    assert _stat(switched, "Trials") == "4"
    assert _stat(switched, "Mean reward") == "0.250"
    assert "counted" in switched

    compare = client.get(f"/compare/?a={hacked.job_id}&b={other.job_id}").content.decode()
    assert "left out" in compare
    assert "include_hacks=1" in compare
    # The stored reward never changes.
    assert dict(Trial.objects.values_list("pk", "reward")) == rewards_before


def test_the_export_manifest_lists_a_confirmed_hack_with_who_confirmed_it(client: Client) -> None:
    hacked = hacked_trial("run-hack")
    review_finding(
        finding_id=hacked.integrity_findings.get().pk,
        trial_id=hacked.pk,
        reviewer=f.make_user("ed", "expert"),
        decision="confirmed",
        rationale="wrote reward.txt itself",
    )
    f.login(client, "ann", "analyst")
    manifest = client.get(f"/export/manifest.json?job={hacked.job_id}").json()
    hacks = next(r for r in manifest["left_out"] if r["reason"] == "confirmed_hack")
    assert hacks["trials"] == 1
    (listed,) = hacks["trial_ids"]
    assert listed["trial_id"] == hacked.pk
    assert listed["why"]["confirmed_by"] == "ed"
    assert listed["why"]["rationale"] == "wrote reward.txt itself"
    assert [e["trial_id"] for e in manifest["confirmed_entries"]] == [hacked.pk]
