"""What the review app does when the rewards app writes: a bundle's annotations and step
comments.

`store_bundle_annotations` stores the annotations a TrialBundle carries when the rewards
writer stores the bundle. `bundle_written` is sent inside the trial's transaction, so these
rows commit or roll back with the trial. Reviewers are matched by username; a reviewer we
do not know is created inactive (no password, cannot log in) so the record keeps its
author. Re-sending the same bundle adds nothing: an annotation with the same reviewer, time
and judgment is skipped, and so is a step comment whose uid is already stored.

Agreement's tallies need no receiver: database triggers keep them whichever way a trial or
an annotation is written (review.science.tallies).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib.auth import get_user_model
from django.dispatch import receiver

from review.models import Annotation, StepComment, refresh_human_summary
from rewards.ingest.writer import BundleWriter, bundle_written
from rewards.models import Trial
from rewards.schemas import StepComment as StepCommentRecord, TrialBundle, utc


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
