"""Reward-integrity findings are stored at ingest and kept in step by `integrity_scan`."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from demo.loaders import seed_fast
from demo.plan import DemoPlan
from rewards.integrity.store import rescan, sync_findings
from rewards.models import Integrity, IntegrityFinding, Trial
from tests.ingest_helpers import HARBOR_FIXTURES, ingest, lay_out
from tests.review_factories import login

pytestmark = pytest.mark.django_db

HACK_JOB = HARBOR_FIXTURES / "reward_hack" / "2026-11-20__10-00-00"
HACK_TRIAL = "hello-world__Rw7Hk2Q"


@pytest.fixture
def hack_job(tmp_path: Path) -> Path:
    return Path(shutil.copytree(HACK_JOB, tmp_path / HACK_JOB.name))


def test_a_harbor_trial_writing_its_own_reward_is_flagged_at_ingest_with_its_step(
    hack_job: Path,
) -> None:
    ran = ingest(hack_job)
    assert not ran.error
    trial = Trial.objects.get(name=HACK_TRIAL)
    assert trial.reward == 1.0  # stored as Harbor recorded it: a finding never changes it
    assert trial.integrity == Integrity.FLAGGED
    findings = list(trial.integrity_findings.values_list("detector", "step", "matched", "status"))
    assert findings == [
        ("verifier_output_write", 3, "echo 1 > /logs/verifier/reward.txt", "open"),
    ]


def test_ingesting_again_adds_no_second_finding(hack_job: Path) -> None:
    ingest(hack_job)
    ingest(hack_job)
    assert IntegrityFinding.objects.count() == 1


def test_a_changed_trajectory_keeps_settled_findings_and_drops_open_ones_it_no_longer_has(
    hack_job: Path,
) -> None:
    ingest(hack_job)
    trial = Trial.objects.get(name=HACK_TRIAL)
    # A person settles the one finding; a second, open one is added by hand.
    IntegrityFinding.objects.filter(trial=trial).update(status="dismissed")
    IntegrityFinding.objects.create(trial=trial, detector="solution_read", step=2, matched="x")
    trajectory = hack_job / HACK_TRIAL / "agent" / "trajectory.json"
    trajectory.write_text(trajectory.read_text().replace("> /logs/verifier/", "> /tmp/"))
    ran = ingest(hack_job)
    assert "updated" in ran.summary()
    trial.refresh_from_db()
    assert list(trial.integrity_findings.values_list("detector", "status")) == [
        ("verifier_output_write", "dismissed")
    ]
    assert trial.integrity == Integrity.DISMISSED


def test_the_command_scans_stored_trials_again(hack_job: Path) -> None:
    ingest(hack_job)
    trial = Trial.objects.get(name=HACK_TRIAL)
    trial.integrity_findings.all().delete()
    Trial.objects.filter(pk=trial.pk).update(integrity="")
    out = io.StringIO()
    call_command("integrity_scan", "--job", hack_job.name, stdout=out)
    assert out.getvalue().strip() == "Scanned 1 trials: 1 changed, 1 with findings."
    trial.refresh_from_db()
    assert trial.integrity == Integrity.FLAGGED
    assert trial.integrity_findings.get().step == 3
    # Nothing new the second time.
    assert rescan([trial.pk]).changed == 0


def test_the_trial_state_follows_its_findings_statuses(hack_job: Path) -> None:
    ingest(hack_job)
    trial = Trial.objects.get(name=HACK_TRIAL)
    key = ("test_tampering", 2, "rm -rf tests")
    sync_findings(trial, [trial.integrity_findings.get().key, key])
    assert trial.integrity == Integrity.FLAGGED
    IntegrityFinding.objects.filter(trial=trial, detector="test_tampering").update(
        status="confirmed"
    )
    trial.record_integrity()
    assert trial.integrity == Integrity.CONFIRMED
    assert list(Trial.objects.with_confirmed_hack()) == [trial]
    IntegrityFinding.objects.filter(trial=trial).update(status="dismissed")
    trial.record_integrity()
    assert trial.integrity == Integrity.DISMISSED
    assert not Trial.objects.with_confirmed_hack().exists()
    assert list(Trial.objects.integrity_flagged()) == [trial]


def test_ordinary_trials_have_no_findings(tmp_path: Path) -> None:
    ingest(lay_out(tmp_path).root)
    assert Trial.objects.count() > 0
    assert not IntegrityFinding.objects.exists()
    assert not Trial.objects.integrity_flagged().exists()


def test_the_demos_fast_loader_stores_findings_and_flags_their_trials() -> None:
    # The fast path (COPY on PostgreSQL) writes the writer's rows without the writer.
    seed_fast(DemoPlan(seed=3, trials=200), archetypes=30, chunk=100)
    with_findings = Trial.objects.filter(integrity_findings__isnull=False).distinct()
    assert with_findings.count() > 0
    assert set(Trial.objects.integrity_flagged()) == set(with_findings)
    assert IntegrityFinding.objects.filter(detector="test_tampering", step__gt=0).exists()


def test_the_flagged_harbor_trial_page_links_the_finding_to_its_step(
    hack_job: Path, client: Client
) -> None:
    ingest(hack_job)
    trial = Trial.objects.get(name=HACK_TRIAL)
    login(client, "ann", "analyst")
    url = reverse("review:trial-detail", args=[trial.pk])
    html = client.get(url).content.decode()
    assert f'href="{url}?tab=trajectory#step-3"' in html
    steps = client.get(f"{url}?tab=trajectory").content.decode()
    anchored = steps[steps.index('id="step-3"') :]
    assert "echo 1 &gt; /logs/verifier/reward.txt" in anchored[: anchored.index("</li>")]
