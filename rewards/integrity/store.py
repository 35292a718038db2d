"""Keeping a trial's stored findings in step with what the detectors see.

Ingest stores a new trial's findings with its other rows (`rewards.ingest.mapping`); a
trial ingested again with changed artifacts, and `manage.py integrity_scan`, come here. A
finding a person has confirmed or dismissed is their record and is kept even when the
detectors no longer see it; an open one they no longer see is removed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from rewards.integrity.detectors import TaskPaths, scan
from rewards.models import IntegrityFinding, Trial, TrialDetail

Key = tuple[str, int, str]  # detector, step (0: the workspace diff), matched text


def sync_findings(trial: Trial, keys: Iterable[Key]) -> bool:
    """Store `keys` as the trial's findings and its integrity state; True if anything
    changed. Runs in the caller's transaction."""
    wanted = list(dict.fromkeys(keys))
    stored = {f.key: f for f in trial.integrity_findings.all()}
    stale = [
        f.pk
        for key, f in stored.items()
        if key not in wanted and f.status == IntegrityFinding.Status.OPEN
    ]
    new = [
        IntegrityFinding(trial=trial, detector=d, step=s, matched=m)
        for d, s, m in wanted
        if (d, s, m) not in stored
    ]
    if stale:
        IntegrityFinding.objects.filter(pk__in=stale).delete()
    IntegrityFinding.objects.bulk_create(new)
    before = trial.integrity
    trial.record_integrity()
    return bool(stale or new) or trial.integrity != before


def held_findings(trial: Trial, keys: Iterable[Key]) -> dict[Key, IntegrityFinding]:
    """The trial's findings with these keys, each stored (open) if it is not yet: where a
    bundle's finding reviews go when the trial was stored before (one query, and one insert
    for the missing). The caller brings the trial's integrity state up to date."""
    wanted = list(dict.fromkeys(keys))
    stored = {f.key: f for f in trial.integrity_findings.all()}
    missing = [
        IntegrityFinding(trial=trial, detector=d, step=s, matched=m)
        for d, s, m in wanted
        if (d, s, m) not in stored
    ]
    if missing:
        # SQLite and PostgreSQL return the new primary keys from a bulk insert.
        IntegrityFinding.objects.bulk_create(missing)
        stored.update((f.key, f) for f in missing)
    return {key: stored[key] for key in wanted}


def keys_for(trial: Trial, detail: TrialDetail | None) -> list[Key]:
    task = trial.task
    findings = scan(
        detail.trajectory if detail else None,
        detail.workspace_diff if detail else "",
        TaskPaths.of(task.verifier_script, task.reward_path, task.details_path),
    )
    return [(f.detector, f.step or 0, f.matched) for f in findings]


@dataclass
class ScanReport:
    scanned: int = 0
    changed: int = 0
    flagged: int = 0


def rescan(trials: Iterable[int]) -> ScanReport:
    """Run the detectors again over stored trials (by id), one transaction each."""
    report = ScanReport()
    for pk in trials:
        with transaction.atomic():
            trial = Trial.objects.select_related("task").filter(pk=pk).first()
            if trial is None:
                continue
            detail = (
                TrialDetail.objects.filter(trial_id=pk).only("trajectory", "workspace_diff").first()
            )
            report.scanned += 1
            report.changed += sync_findings(trial, keys_for(trial, detail))
            report.flagged += trial.integrity != ""
    return report
