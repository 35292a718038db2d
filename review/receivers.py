"""What the review app does when the rewards app writes: bundle annotations, changed gates.

`store_bundle_annotations` stores the annotations a TrialBundle carries when the rewards
writer stores the bundle. `bundle_written` is sent inside the trial's transaction, so these
rows commit or roll back with the trial. Reviewers are matched by username; a reviewer we
do not know is created inactive (no password, cannot log in) so the record keeps its
author. Re-sending the same bundle adds nothing: an annotation with the same reviewer, time
and judgment is skipped.

`retally_changed_gates`: a trial saved with a gate field (a re-ingest, a re-judge) moves its
latest judgments' agreement tallies to its new gates (`review.models.retally`), in the
saving transaction. Only `save()` sends the signal; rewards writes gate fields in no other
way once a trial has judgments (new trials, written in bulk, have none yet).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models.signals import post_save
from django.dispatch import receiver

from review.models import Annotation, refresh_human_summary, retally
from review.science import tallies
from rewards.ingest.writer import BundleWriter, bundle_written
from rewards.models import Trial
from rewards.schemas import TrialBundle, utc


@receiver(bundle_written, sender=BundleWriter, dispatch_uid="review.store_bundle_annotations")
def store_bundle_annotations(
    sender: object, *, trial_id: int, bundle: TrialBundle, **kwargs: Any
) -> None:
    if not bundle.annotations:
        return
    User = get_user_model()
    trial = Trial.objects.select_related("task").get(pk=trial_id)

    usernames = {a.reviewer_id for a in bundle.annotations}
    users = {u.get_username(): u for u in User.objects.filter(username__in=usernames)}
    for username in sorted(usernames - users.keys()):
        user = User(username=username, is_active=False)
        user.set_unusable_password()
        user.save()
        users[username] = user

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
            )
        )
    if new:
        Annotation.objects.bulk_create(new)
        refresh_human_summary(trial)


@receiver(post_save, sender=Trial, dispatch_uid="review.retally_changed_gates")
def retally_changed_gates(
    sender: object,
    *,
    instance: Trial,
    created: bool,
    update_fields: frozenset[str] | None,
    **kwargs: Any,
) -> None:
    if created or (update_fields is not None and not update_fields & tallies.TRIAL_FIELDS):
        return
    retally(instance)
