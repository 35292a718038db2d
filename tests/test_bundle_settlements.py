"""Integrity findings, their reviews and the task's defect ledger travel in the JSONL bundle:
an export ingested into an empty database gives back every finding, who confirmed or
dismissed it, when and why, and every ledger entry, so the pass rates leave out what they
left out before."""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from review import defects
from review.models import DefectEntry, FindingReview, review_finding
from review.science import exclusions
from rewards.ingest.writer import BundleWriter
from rewards.models import Integrity, IntegrityFinding, Trial
from rewards.schemas import TrialBundle
from tests import review_factories as f
from tests.conftest import purge_review_data
from tests.test_api import call, make_token
from tests.test_integrity_review import HACK

pytestmark = pytest.mark.django_db
PEOPLE = ["ed", "sam", "rita"]


def _job() -> dict[str, Trial]:
    """A job with a confirmed hack, a finding confirmed then dismissed, a clean trial, and
    a task proposed then confirmed defective."""
    hacked, dismissed, clean, broken = f.write(
        f.bundle(name="t-hack", job="run-a", task="sound", reward=1.0, detail=HACK),
        f.bundle(name="t-dismissed", job="run-a", task="sound", reward=0.9, detail=HACK),
        f.bundle(name="t-clean", job="run-a", task="sound", reward=0.0),
        f.bundle(name="t-broken", job="run-a", task="broken", reward=0.0),
    )
    ed, sam = f.make_user("ed", "expert"), f.make_user("sam", staff=True)
    review_finding(
        finding_id=hacked.integrity_findings.get().pk,
        trial_id=hacked.pk,
        reviewer=ed,
        decision="confirmed",
        rationale="wrote reward.txt itself",
    )
    for reviewer, decision, rationale in (
        (sam, "confirmed", "looks like a hack"),
        (ed, "dismissed", "the task's own setup writes it; <b>harmless</b>"),
    ):
        review_finding(
            finding_id=dismissed.integrity_findings.get().pk,
            trial_id=dismissed.pk,
            reviewer=reviewer,
            decision=decision,
            rationale=rationale,
        )
    defects.record(
        task_id=broken.task_id,
        author=f.make_user("rita", "reviewer"),
        can_settle=False,
        state="proposed",
        category="broken_test",
        rationale="The test asserts the wrong unit.",
        evidence=[f"/trials/{broken.pk}/#step-2"],
    )
    defects.record(
        task_id=broken.task_id,
        author=ed,
        can_settle=True,
        state="confirmed",
        category="broken_test",
        rationale="Confirmed: mV against V.",
    )
    return {t.name: t for t in (hacked, dismissed, clean, broken)}


def _without_ids(value: Any) -> Any:
    """A manifest with the database's ids left out (an empty database numbers anew)."""
    if isinstance(value, dict):
        return {
            k: _without_ids(v)
            for k, v in value.items()
            if k not in ("id", "trial_id", "task_id", "generated_at")
        }
    if isinstance(value, list):
        return [_without_ids(v) for v in value]
    return value


def _portable(links: list[str], uids: dict[str, Any] | None = None) -> list[str]:
    """Evidence links with each trial named by its uid rather than its id (`uids`: by id,
    the stored trials' when not given)."""
    if uids is None:
        uids = {str(pk): uid for pk, uid in Trial.objects.values_list("pk", "uid")}
    known = uids
    return [re.sub(r"^/trials/(\d+)/", lambda m: f"/trials/{known[m[1]]}/", x) for x in links]


def _portable_line(line: str) -> dict[str, Any]:
    """An exported line with its evidence links' trials named by uid (the line says which)."""
    data: dict[str, Any] = json.loads(line)
    for entry in data["defect_entries"]:
        entry["evidence"] = _portable(entry["evidence"], entry.pop("evidence_trials"))
    return data


def _state() -> dict[str, Any]:
    """Everything the round trip must keep, by names and uids rather than ids."""
    return {
        "trials": sorted(Trial.objects.values_list("name", "reward", "integrity")),
        "findings": list(
            IntegrityFinding.objects.order_by("trial__name", "step", "id").values_list(
                "trial__name", "detector", "step", "matched", "status", "created_at"
            )
        ),
        "reviews": list(
            FindingReview.objects.order_by("finding__trial__name", "created_at", "id").values_list(
                "finding__trial__name",
                "finding__detector",
                "finding__step",
                "finding__matched",
                "reviewer__username",
                "created_at",
                "decision",
                "rationale",
            )
        ),
        "ledger": [
            (*row[:-1], _portable(row[-1]))
            for row in DefectEntry.objects.order_by("id").values_list(
                "task__name",
                "author__username",
                "created_at",
                "state",
                "category",
                "rationale",
                "evidence",
            )
        ],
        "standing": sorted(DefectEntry.objects.current().values_list("task__name", "state")),
        "manifest": _without_ids(
            exclusions.manifest(Trial.objects.all(), "", datetime(2026, 11, 27, tzinfo=UTC))
        ),
    }


def test_findings_reviews_and_the_ledger_survive_export_and_ingest_into_an_empty_database(
    tmp_path: Path,
) -> None:
    trials = _job()
    before = _state()
    assert [(r[0], r[4], r[6]) for r in before["reviews"]] == [
        ("t-dismissed", "sam", "confirmed"),
        ("t-dismissed", "ed", "dismissed"),
        ("t-hack", "ed", "confirmed"),
    ]
    assert {name: integrity for name, _, integrity in before["trials"]} == {
        "t-hack": Integrity.CONFIRMED,
        "t-dismissed": Integrity.DISMISSED,
        "t-clean": "",
        "t-broken": "",
    }
    assert before["standing"] == [("broken", "confirmed")]
    left_out = {r["reason"]: r["trials"] for r in before["manifest"]["left_out"]}
    assert left_out == {"defective_task": 1, "confirmed_hack": 1}

    exported = tmp_path / "first.jsonl"
    call_command("export", format="jsonl", output=str(exported), verbosity=0)
    lines = {
        line["trial"]["name"]: line for line in map(json.loads, exported.read_text().splitlines())
    }
    (dismissed,) = lines["t-dismissed"]["integrity_findings"]
    assert (dismissed["detector"], dismissed["step"]) == ("verifier_output_write", 2)
    assert [(r["reviewer_id"], r["decision"]) for r in dismissed["reviews"]] == [
        ("sam", "confirmed"),
        ("ed", "dismissed"),
    ]
    assert lines["t-clean"]["integrity_findings"] == []
    # Every trial of a task carries the task's ledger; the other task has none. An evidence
    # link names its trial by id, and the bundle says which trial that is by uid.
    proposed, confirmed = lines["t-broken"]["defect_entries"]
    assert (proposed["state"], confirmed["state"]) == ("proposed", "confirmed")
    assert proposed["evidence"] == [f"/trials/{trials['t-broken'].pk}/#step-2"]
    assert proposed["evidence_trials"] == {str(trials["t-broken"].pk): str(trials["t-broken"].uid)}
    assert lines["t-clean"]["defect_entries"] == []

    purge_review_data()
    User.objects.filter(username__in=PEOPLE).delete()
    assert not Trial.objects.exists()
    assert not FindingReview.objects.exists()
    call_command("ingest", str(exported), verbosity=0)

    assert _state() == before
    # The evidence link points at the same trial, under its id here.
    broken = Trial.objects.get(name="t-broken")
    assert broken.pk != trials["t-broken"].pk
    assert DefectEntry.objects.order_by("id").first().evidence == [  # type: ignore[union-attr]
        f"/trials/{broken.pk}/#step-2"
    ]
    again = tmp_path / "second.jsonl"
    call_command("export", format="jsonl", output=str(again), verbosity=0)
    # The same file, but for the ids in evidence links.
    assert [_portable_line(x) for x in again.read_text().splitlines()] == [
        _portable_line(x) for x in exported.read_text().splitlines()
    ]
    # People we did not know come back by username, inactive.
    assert not User.objects.filter(username__in=PEOPLE, is_active=True).exists()
    assert User.objects.filter(username__in=PEOPLE).count() == 3

    # Ingesting the same file again stores nothing twice.
    call_command("ingest", str(exported), verbosity=0)
    assert _state() == before


def test_a_bundle_brings_its_reviews_to_a_trial_already_stored_without_them() -> None:
    trials = _job()
    hacked = trials["t-hack"]
    line = next(iter(_bundles(hacked)))
    assert line.carries_review_records
    # A finding the detectors no longer see, settled where the bundle was made.
    old = line.integrity_findings[0].model_copy(
        update={"detector": "retired_detector", "step": 1, "matched": "cat solution.sh"}
    )
    line.integrity_findings.append(old)

    purge_review_data()
    User.objects.filter(username__in=PEOPLE).delete()
    bare = line.model_copy(update={"integrity_findings": [], "defect_entries": []})
    (trial,) = f.write(bare)
    assert trial.integrity == Integrity.FLAGGED
    assert not FindingReview.objects.exists()

    (outcome,) = BundleWriter().write_many([line])
    assert outcome.status == "unchanged"
    trial.refresh_from_db()
    assert trial.integrity == Integrity.CONFIRMED
    assert trial.reward == 1.0
    assert sorted(trial.integrity_findings.values_list("detector", "step", "status")) == [
        ("retired_detector", 1, "confirmed"),
        ("verifier_output_write", 2, "confirmed"),
    ]
    assert list(
        FindingReview.objects.order_by("finding__detector").values_list(
            "finding__detector", "reviewer__username", "rationale"
        )
    ) == [
        ("retired_detector", "ed", "wrote reward.txt itself"),
        ("verifier_output_write", "ed", "wrote reward.txt itself"),
    ]
    BundleWriter().write_many([line])
    assert FindingReview.objects.count() == 2


def test_a_newer_local_review_stands_over_an_older_one_from_a_bundle() -> None:
    trials = _job()
    line = next(iter(_bundles(trials["t-hack"])))
    purge_review_data()
    User.objects.filter(username__in=PEOPLE).delete()
    bare = line.model_copy(update={"integrity_findings": [], "defect_entries": []})
    (trial,) = f.write(bare)
    # Dismissed here after the confirmation the bundle carries was made.
    review_finding(
        finding_id=trial.integrity_findings.get().pk,
        trial_id=trial.pk,
        reviewer=f.make_user("dora", "expert"),
        decision="dismissed",
        rationale="re-run shows the task writes it",
    )
    BundleWriter().write_many([line])
    trial.refresh_from_db()
    assert trial.integrity == Integrity.DISMISSED
    assert [r.decision for r in FindingReview.objects.order_by("created_at", "id")] == [
        "confirmed",
        "dismissed",
    ]


def test_a_bundle_with_a_review_or_a_ledger_entry_that_does_not_validate_is_refused() -> None:
    trials = _job()
    text = next(iter(_bundles(trials["t-broken"]))).model_dump(mode="json")
    text["defect_entries"][0]["state"] = "deleted"
    with pytest.raises(ValueError, match="defect_entries"):
        TrialBundle.model_validate(text)
    text = next(iter(_bundles(trials["t-hack"]))).model_dump(mode="json")
    text["integrity_findings"][0]["reviews"][0]["rationale"] = ""
    with pytest.raises(ValueError, match="rationale"):
        TrialBundle.model_validate(text)


def _bundles(*trials: Trial) -> list[TrialBundle]:
    from review.exports import with_annotations
    from rewards.export import bundle_queryset

    loaded = list(bundle_queryset(Trial.objects.filter(pk__in=[t.pk for t in trials])))
    return list(with_annotations(loaded))


def test_the_api_gives_a_trial_with_its_settled_findings_and_its_tasks_ledger(
    client: Client,
) -> None:
    trials = _job()
    token = make_token("ana", "analyst")
    body = call(client, "get", f"/api/trials/{trials['t-dismissed'].pk}", token).json()
    (finding,) = body["bundle"]["integrity_findings"]
    assert (finding["detector"], finding["step"]) == ("verifier_output_write", 2)
    assert [(r["reviewer_id"], r["decision"], r["rationale"]) for r in finding["reviews"]] == [
        ("sam", "confirmed", "looks like a hack"),
        ("ed", "dismissed", "the task's own setup writes it; <b>harmless</b>"),
    ]
    assert body["bundle"]["defect_entries"] == []
    broken = call(client, "get", f"/api/trials/{trials['t-broken'].pk}", token).json()
    assert [(e["author_id"], e["state"]) for e in broken["bundle"]["defect_entries"]] == [
        ("rita", "proposed"),
        ("ed", "confirmed"),
    ]


def test_evidence_links_follow_their_trials_by_uid_and_others_stay_as_written() -> None:
    trials = _job()
    (line,) = _bundles(trials["t-broken"])
    proposal = line.defect_entries[0]
    elsewhere = uuid.uuid4()  # a trial this database never held
    proposal.evidence += ["/trials/999999/?tab=trajectory#step-1", "/jobs/7/"]
    proposal.evidence_trials["999999"] = elsewhere
    purge_review_data()
    User.objects.filter(username__in=PEOPLE).delete()
    bare = line.model_copy(update={"integrity_findings": [], "defect_entries": []})
    (broken,) = f.write(f.bundle(name="pad", job="other"), bare)[1:]
    assert broken.pk != trials["t-broken"].pk

    f.write(line)
    stored = DefectEntry.objects.order_by("id").first()
    assert stored is not None
    assert stored.evidence == [
        f"/trials/{broken.pk}/#step-2",
        "/trials/999999/?tab=trajectory#step-1",
        "/jobs/7/",
    ]
    assert defects.relinked(["/trials/12/", "/?q=/trials/12/", "/trials/120/"], {12: 3}) == [
        "/trials/3/",
        "/?q=/trials/12/",
        "/trials/120/",
    ]
