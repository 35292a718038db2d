"""What the review app does when the rewards app writes: a bundle's annotations.

`store_bundle_annotations` stores the annotations a TrialBundle carries when the rewards
writer stores the bundle. `bundle_written` is sent inside the trial's transaction, so these
rows commit or roll back with the trial. Reviewers are matched by username; a reviewer we
do not know is created inactive (no password, cannot log in) so the record keeps its
author. Re-sending the same bundle adds nothing: an annotation with the same reviewer, time
and judgment is skipped.

Agreement's tallies need no receiver: database triggers keep them whichever way a trial or
an annotation is written (review.science.tallies).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.dispatch import receiver

from review.models import Annotation, refresh_human_summary
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
                seconds_to_review=record.seconds_to_review,
                guideline_version=record.guideline_version,
            )
        )
    if new:
        Annotation.objects.bulk_create(new)
        refresh_human_summary(trial)
