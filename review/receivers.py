"""What the review app does when the rewards app writes: a bundle's annotations, step
comments, finding reviews and ledger entries.

`store_bundle_annotations` stores the annotations a TrialBundle carries when the rewards
writer stores the bundle. `bundle_written` is sent inside the trial's transaction, so these
rows commit or roll back with the trial. Reviewers are matched by username; a reviewer we
do not know is created inactive (no password, cannot log in) so the record keeps its
author. Re-sending the same bundle adds nothing: an annotation with the same reviewer, time
and judgment is skipped, and so is a step comment whose uid is already stored.

`store_bundle_settlements` stores the reviews of the trial's integrity findings (each
finding named by detector, step and matched text; one the trial does not hold yet is stored
first) and its task's ledger entries, with their authors, times and rationales as they were
(an evidence link to a trial points at the same trial here, by its uid, once it is stored).
A review already held (same finding, reviewer, time, decision and rationale) is skipped, and
so is a ledger entry (same task, author, time, state and rationale). A finding's status is
its latest review by time; ledger entries are appended in the bundle's order after any the
task already has, so a task stands where the bundle's last entry put it.

Agreement's tallies need no receiver: database triggers keep them whichever way a trial or
an annotation is written (review.science.tallies).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib.auth import get_user_model
from django.dispatch import receiver

from review import defects
from review.models import (
    Annotation,
    DefectEntry,
    FindingReview,
    StepComment,
    refresh_human_summary,
    settle_from_reviews,
)
from rewards.cache import forget_left_out
from rewards.ingest.writer import BundleWriter, bundle_written
from rewards.integrity.store import held_findings
from rewards.models import Task, Trial
from rewards.schemas import (
    DefectEntry as DefectEntryRecord,
    IntegrityFinding as FindingRecord,
    StepComment as StepCommentRecord,
    TrialBundle,
    utc,
)


@receiver(bundle_written, sender=BundleWriter, dispatch_uid="review.store_bundle_annotations")
def store_bundle_annotations(
    sender: object, *, trial_id: int, bundle: TrialBundle, **kwargs: Any
) -> None:
    if not bundle.annotations and not bundle.step_comments:
        return
    usernames = {a.reviewer_id for a in bundle.annotations}
    usernames |= {c.author_id for c in bundle.step_comments}
    users = _users_by_name(usernames)
    if bundle.step_comments:
        _store_step_comments(trial_id, bundle.step_comments, users)
    if not bundle.annotations:
        return
    trial = Trial.objects.select_related("task").get(pk=trial_id)

    existing = set(
        Annotation.objects.filter(trial=trial).values_list(
            "reviewer__username", "created_at", "judgment"
        )
    )
    new = []
    for record in bundle.annotations:
        created_at = utc(record.timestamp)
        key = (record.reviewer_id, created_at, record.judgment)
        if key in existing:
            continue
        existing.add(key)
        new.append(
            Annotation(
                trial=trial,
                reviewer=users[record.reviewer_id],
                reviewer_discipline=record.reviewer_discipline or "",
                created_at=created_at,
                judgment=record.judgment,
                categories=list(record.categories),
                notes=record.notes or "",
                reward_seen=record.reward_seen,
                judge_verdict_seen=record.judge_verdict_seen,
                seconds_to_review=record.seconds_to_review,
                guideline_version=record.guideline_version,
            )
        )
    if new:
        Annotation.objects.bulk_create(new)
        refresh_human_summary(trial)


def _users_by_name(usernames: set[str]) -> dict[str, Any]:
    """The users by username; one we do not know is created inactive (module docstring)."""
    User = get_user_model()
    users = {u.get_username(): u for u in User.objects.filter(username__in=usernames)}
    for username in sorted(usernames - users.keys()):
        user = User(username=username, is_active=False)
        user.set_unusable_password()
        user.save()
        users[username] = user
    return users


def _store_step_comments(
    trial_id: int, records: list[StepCommentRecord], users: dict[str, Any]
) -> None:
    """The comments not yet stored, oldest first, each correction pointing at the comment
    it supersedes (by uid: stored before, or earlier in the bundle)."""
    named = {r.supersedes for r in records if r.supersedes is not None}
    rows = StepComment.objects.filter(uid__in={r.uid for r in records} | named)
    taken = set()  # a uid is stored once, whichever trial holds it
    on_trial: dict[UUID, int] = {}  # what a correction may supersede: this trial's
    for uid, pk, of_trial in rows.values_list("uid", "pk", "trial_id"):
        taken.add(uid)
        if of_trial == trial_id:
            on_trial[uid] = pk
    for record in sorted(records, key=lambda r: utc(r.timestamp)):
        if record.uid in taken:
            continue
        comment = StepComment.objects.create(
            uid=record.uid,
            trial_id=trial_id,
            author=users[record.author_id],
            created_at=utc(record.timestamp),
            step=record.step,
            part=record.part,
            part_index=record.part_index,
            start=record.start,
            end=record.end,
            quote=record.quote,
            text=record.text,
            supersedes_id=on_trial.get(record.supersedes) if record.supersedes else None,
        )
        taken.add(record.uid)
        on_trial[record.uid] = comment.pk


@receiver(bundle_written, sender=BundleWriter, dispatch_uid="review.store_bundle_settlements")
def store_bundle_settlements(
    sender: object, *, trial_id: int, bundle: TrialBundle, **kwargs: Any
) -> None:
    reviewed = [f for f in bundle.integrity_findings if f.reviews]
    if reviewed:
        reviewed = _reviews_not_held(trial_id, reviewed)
    entries = _entries_not_held(trial_id, bundle.defect_entries) if bundle.defect_entries else []
    # Every trial of a task carries its ledger: most bundles bring nothing new, which one
    # query each (above) says; only something new takes the locks and the users.
    if not reviewed and not entries:
        return
    usernames = {r.reviewer_id for f in reviewed for r in f.reviews}
    usernames |= {e.author_id for e in entries}
    users = _users_by_name(usernames)
    if reviewed:
        _store_finding_reviews(trial_id, reviewed, users)
    if entries:
        _store_defect_entries(trial_id, entries, users)


def _reviews_not_held(trial_id: int, findings: list[FindingRecord]) -> list[FindingRecord]:
    """The findings with the reviews the trial does not hold yet (those with none left out)."""
    held = set(
        FindingReview.objects.filter(finding__trial_id=trial_id).values_list(
            "finding__detector",
            "finding__step",
            "finding__matched",
            "reviewer__username",
            "created_at",
            "decision",
            "rationale",
        )
    )
    left = []
    for record in findings:
        reviews = [
            r
            for r in record.reviews
            if (*record.key, r.reviewer_id, utc(r.timestamp), r.decision, r.rationale) not in held
        ]
        if reviews:
            left.append(record.model_copy(update={"reviews": reviews}))
    return left


def _entries_not_held(trial_id: int, records: list[DefectEntryRecord]) -> list[DefectEntryRecord]:
    """The ledger entries the trial's task does not hold yet, in the bundle's order."""
    held = set(
        DefectEntry.objects.filter(task__trials=trial_id).values_list(
            "author__username", "created_at", "state", "rationale"
        )
    )
    return [r for r in records if (r.author_id, utc(r.timestamp), r.state, r.rationale) not in held]


def _store_finding_reviews(
    trial_id: int, findings: list[FindingRecord], users: dict[str, Any]
) -> None:
    # The trial row locked first, as `review_finding` does.
    trial = Trial.objects.select_for_update(of=("self",)).get(pk=trial_id)
    held = held_findings(trial, [f.key for f in findings])
    existing = set(
        FindingReview.objects.filter(finding__trial=trial).values_list(
            "finding_id", "reviewer__username", "created_at", "decision", "rationale"
        )
    )
    new = []
    for record in findings:
        finding = held[record.key]
        for review in record.reviews:
            created_at = utc(review.timestamp)
            key = (finding.pk, review.reviewer_id, created_at, review.decision, review.rationale)
            if key in existing:
                continue
            existing.add(key)
            new.append(
                FindingReview(
                    finding=finding,
                    reviewer=users[review.reviewer_id],
                    created_at=created_at,
                    decision=review.decision,
                    rationale=review.rationale,
                )
            )
    if new:
        FindingReview.objects.bulk_create(sorted(new, key=lambda r: r.created_at))
        settle_from_reviews(trial, sorted({r.finding_id for r in new}))


def _store_defect_entries(
    trial_id: int, records: list[DefectEntryRecord], users: dict[str, Any]
) -> None:
    # The task row locked first, as `review.defects.record` does.
    task = Task.objects.select_for_update(of=("self",)).only("pk").get(trials__pk=trial_id)
    existing = set(
        DefectEntry.objects.filter(task=task).values_list(
            "author__username", "created_at", "state", "rationale"
        )
    )
    # Evidence links to trials point at the same trials here, found by uid.
    named = {int(old): uid for record in records for old, uid in record.evidence_trials.items()}
    here = (
        dict(Trial.objects.filter(uid__in=set(named.values())).values_list("uid", "pk"))
        if named
        else {}
    )
    ids = {old: here[uid] for old, uid in named.items() if uid in here}
    added = False
    # One at a time, in the bundle's order (the order they were made): a task's entries are
    # ordered by id (`DefectEntry`).
    for record in records:
        created_at = utc(record.timestamp)
        key = (record.author_id, created_at, record.state, record.rationale)
        if key in existing:
            continue
        existing.add(key)
        DefectEntry.objects.create(
            task=task,
            author=users[record.author_id],
            created_at=created_at,
            state=record.state,
            category=record.category,
            rationale=record.rationale,
            evidence=defects.relinked(record.evidence, ids),
        )
        added = True
    if added:
        forget_left_out()
