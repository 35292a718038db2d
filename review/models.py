"""Human review: annotations beside the automated reward, reviewer profiles, saved views, claims.

Annotations are append-only (DESIGN §3): a reviewer changes their mind by adding a newer
annotation, and the latest per reviewer is the one that counts. The rule is enforced here in
code (`save` refuses updates, `delete` and the queryset's bulk writes refuse) and in the
database by triggers (migration 0002) that raise on UPDATE and DELETE of a row.

Consequence, by choice: a trial or a user with annotations cannot be deleted (the foreign keys
PROTECT, and the trigger would refuse the cascade anyway). Reviews are a record; a trial that
was reviewed stays. Re-ingesting a trial never deletes it, so ingestion is unaffected.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from rewards.models import Trial


class AppendOnlyError(Exception):
    """Raised on any attempt to change or remove an annotation."""


class AnnotationQuerySet(models.QuerySet["Annotation"]):
    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyError("annotations are append-only: add a newer one instead of updating")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("annotations are append-only: they cannot be deleted")

    def bulk_update(self, objs: Any, fields: Any, batch_size: int | None = None) -> int:
        raise AppendOnlyError("annotations are append-only: add a newer one instead of updating")

    def for_trial(self, trial: Trial) -> AnnotationQuerySet:
        return self.filter(trial=trial)

    def history(self) -> AnnotationQuerySet:
        """Oldest first, with the reviewer, as the trial page lists them."""
        return self.select_related("reviewer").order_by("created_at", "id")

    def latest_per_reviewer(self, *, blind_only: bool = False) -> AnnotationQuerySet:
        """Each reviewer's latest annotation of each trial (DESIGN §3: the one that counts).

        In SQL, not Python: an annotation counts unless a newer one (by created_at, then id)
        of the same reviewer on the same trial exists (NOT EXISTS, served by
        `annotation_trial_time_idx`). With `blind_only`, the latest of the reviewer's blind
        annotations: what they judged before anything was revealed to them.
        """
        queryset = self.filter(blind=True) if blind_only else self
        newer = self.model.objects.filter(trial=OuterRef("trial"), reviewer=OuterRef("reviewer"))
        if blind_only:
            newer = newer.filter(blind=True)
        newer = newer.filter(
            Q(created_at__gt=OuterRef("created_at"))
            | Q(created_at=OuterRef("created_at"), id__gt=OuterRef("id"))
        )
        return queryset.filter(~Exists(newer))


class Annotation(models.Model):
    class Judgment(models.TextChoices):
        PASS = "pass", "pass"
        FAIL = "fail", "fail"
        DEFER = "defer", "defer"

    # PROTECT: reviews are a record; see the module docstring.
    trial = models.ForeignKey(Trial, on_delete=models.PROTECT, related_name="annotations")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="annotations"
    )
    reviewer_discipline = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    judgment = models.CharField(max_length=8, choices=Judgment.choices)
    categories = models.JSONField(default=list, blank=True)
    notes = models.TextField(blank=True)
    # What the reviewer saw when they judged (read from the trial row at that moment).
    reward_seen = models.FloatField(null=True, blank=True)
    judge_verdict_seen = models.CharField(max_length=12, blank=True)
    # Made in blind review: the reward, the judge verdict and other reviewers' annotations
    # were hidden until it was submitted (so reward_seen and judge_verdict_seen are empty).
    blind = models.BooleanField(default=False)

    objects = AnnotationQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(judgment__in=["pass", "fail", "defer"]),
                name="annotation_judgment_valid",
            ),
        ]
        indexes = [
            # Trial page history and the latest-per-reviewer summary, oldest first.
            models.Index(fields=["trial", "created_at", "id"], name="annotation_trial_time_idx"),
            # A reviewer's own history ("what did I review?"), newest first.
            models.Index(fields=["reviewer", "-created_at"], name="annotation_reviewer_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.judgment} on trial {self.trial_id} by {self.reviewer_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError("annotations are append-only: add a newer one instead")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("annotations are append-only: they cannot be deleted")


def latest_judgments(trial: Trial) -> tuple[list[str], int]:
    """The latest judgment of each reviewer and the number of annotations, in one query."""
    latest: dict[int, str] = {}
    count = 0
    rows = Annotation.objects.filter(trial=trial).order_by("created_at", "id")
    for reviewer_id, judgment in rows.values_list("reviewer_id", "judgment"):
        latest[reviewer_id] = judgment
        count += 1
    return list(latest.values()), count


def refresh_human_summary(trial: Trial) -> None:
    """Write the trial's human summary columns from its annotations (caller holds the lock)."""
    judgments, count = latest_judgments(trial)
    trial.record_human_summary(judgments, count)


def add_annotation(
    *,
    trial_id: int,
    reviewer: Any,
    judgment: str,
    categories: Sequence[str] = (),
    notes: str = "",
    reviewer_discipline: str = "",
    blind: bool = False,
) -> Annotation:
    """Record one reviewer's judgment and bring the trial's human summary up to date.

    One transaction: the annotation and the summary commit together. The trial row is locked
    first (SELECT … FOR UPDATE on PostgreSQL; SQLite's IMMEDIATE transactions already
    serialise writers) so two reviewers saving at once each recompute the summary with the
    other's row visible, and the last writer's summary includes both.
    """
    with transaction.atomic():
        trial = (
            Trial.objects.select_for_update(of=("self",)).select_related("task").get(pk=trial_id)
        )
        annotation = Annotation.objects.create(
            trial=trial,
            reviewer=reviewer,
            reviewer_discipline=reviewer_discipline,
            judgment=judgment,
            categories=list(categories),
            notes=notes,
            # A blind reviewer saw neither.
            reward_seen=None if blind else trial.reward,
            judge_verdict_seen="" if blind else trial.judge_verdict,
            blind=blind,
        )
        refresh_human_summary(trial)
    return annotation


class AdjudicationQuerySet(models.QuerySet["Adjudication"]):
    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyError("adjudications are append-only: add a newer one instead")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("adjudications are append-only: they cannot be deleted")

    def bulk_update(self, objs: Any, fields: Any, batch_size: int | None = None) -> int:
        raise AppendOnlyError("adjudications are append-only: add a newer one instead")


class Adjudication(models.Model):
    """An adjudicator's final verdict on a trial whose latest judgments conflicted.

    Append-only like Annotation, in code and by database triggers (migration 0005). It names
    the annotations it settled (each reviewer's latest when it was made) and never changes or
    hides them. `annotation_count` is the trial's annotation count at that moment: a newer
    annotation makes the counts differ, and the trial can conflict (and be adjudicated) again.
    """

    class Verdict(models.TextChoices):
        PASS = "pass", "pass"
        FAIL = "fail", "fail"

    trial = models.ForeignKey(Trial, on_delete=models.PROTECT, related_name="adjudications")
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="adjudications"
    )
    created_at = models.DateTimeField(default=timezone.now)
    verdict = models.CharField(max_length=4, choices=Verdict.choices)
    rationale = models.TextField()
    settled = models.JSONField(default=list, blank=True)  # ids of the settled annotations
    annotation_count = models.PositiveIntegerField()
    conflict = models.CharField(max_length=100, blank=True)  # the conflicts it settled

    objects = AdjudicationQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(verdict__in=["pass", "fail"]), name="adjudication_verdict_valid"
            ),
            models.CheckConstraint(
                condition=~Q(rationale=""), name="adjudication_rationale_required"
            ),
        ]
        indexes = [
            # Adjudication queue: "is this trial settled at its current annotation count?"
            models.Index(fields=["trial", "annotation_count"], name="adjudication_trial_count_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.verdict} on trial {self.trial_id} by {self.adjudicator_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError("adjudications are append-only: add a newer one instead")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("adjudications are append-only: they cannot be deleted")


class ReviewerProfile(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reviewer_profile"
    )
    discipline = models.CharField(max_length=100, blank=True)

    def __str__(self) -> str:
        return f"{self.user} ({self.discipline or 'no discipline'})"


class SavedView(models.Model):
    """A named explorer filter: the query string as the explorer's URL holds it."""

    name = models.CharField(max_length=100)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_views"
    )
    query_string = models.TextField(blank=True)
    shared = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "name"], name="savedview_unique_name_per_owner"
            ),
        ]
        indexes = [
            # The views menu: everything shared, by name.
            models.Index(fields=["name"], name="savedview_shared_idx", condition=Q(shared=True)),
        ]

    def __str__(self) -> str:
        return self.name


class Claim(models.Model):
    """A queue lease: while it has not expired, the trial is not offered to anyone else."""

    trial = models.ForeignKey(Trial, on_delete=models.CASCADE, related_name="claims")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="claims"
    )
    claimed_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            # One lease row per trial; an expired lease is taken over, not duplicated.
            models.UniqueConstraint(fields=["trial"], name="claim_one_per_trial"),
        ]
        indexes = [
            # Queue: skip trials whose lease has not yet expired.
            models.Index(fields=["expires_at"], name="claim_expires_idx"),
            # "My claims" and releasing them on logout.
            models.Index(fields=["reviewer", "expires_at"], name="claim_reviewer_idx"),
        ]

    def __str__(self) -> str:
        return f"trial {self.trial_id} claimed by {self.reviewer_id} until {self.expires_at}"


class ApiToken(models.Model):
    """A per-user bearer token for the JSON API (`review.tokens` makes and checks them).

    Only the token's sha256 is stored: the secret is shown once, when it is made, and a
    database dump cannot be replayed against the API. `prefix` is public (it is part of the
    token and printed by `create_token --list`) so a token can be named and revoked
    without the secret. A revoked token is kept, not deleted, as a record of who had access.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16)
    digest = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # Every request looks its token up by digest; unique, so the index serves it.
            models.UniqueConstraint(fields=["digest"], name="apitoken_unique_digest"),
            # `create_token --revoke PREFIX` names exactly one token.
            models.UniqueConstraint(fields=["prefix"], name="apitoken_unique_prefix"),
        ]
        indexes = [
            # `create_token --list USER`: a user's tokens, newest first.
            models.Index(fields=["user", "-created_at"], name="apitoken_user_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.prefix} ({self.name or 'unnamed'}) of {self.user_id}"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
