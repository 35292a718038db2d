"""The review queue: hand out unreviewed trials one at a time, under a lease (Claim).

A trial is waiting when nobody has annotated it yet (`annotation_count = 0`, served by the
partial index `trial_unreviewed_idx`) and it matches the queue's filter (the explorer's
TrialFilterForm, so a queue is "the unreviewed rows of that list, in that order"). Handing
one out writes a Claim that expires after CLAIM_TTL; while it is live nobody else is given
that trial. A reviewer holds one trial at a time, and asking again returns the same one.

Gold trials (review.models.GoldLabel) are mixed in: each time a trial is handed out, with
probability `TRIALDESK_GOLD_RATE`, a gold trial under the filter that the reviewer has not
annotated comes first, whether or not others have reviewed it. Nothing on the page says which
trials are gold; the reviewers page measures each reviewer against them.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from review.filtering.form import TrialFilterForm
from review.models import Annotation, Claim, GoldLabel
from rewards.models import Trial

CLAIM_TTL = timedelta(minutes=15)
# Counting a filter over a million trials on every queue visit would be a table scan per
# visit; each progress count reads at most this many rows and the page says "10,000+".
PROGRESS_CAP = 10_000
# Under PostgreSQL a lease can lose a race at the unique constraint (see claim_next); the
# next waiting trial is tried this many times before the queue reports itself busy.
CLAIM_ATTEMPTS = 3


def reviewer_count() -> Coalesce:
    """How many distinct reviewers have annotated the outer trial."""
    reviewers = (
        Annotation.objects.filter(trial=OuterRef("pk"))
        .order_by()
        .values("trial")
        .annotate(n=Count("reviewer", distinct=True))
        .values("n")
    )
    return Coalesce(Subquery(reviewers), 0)


def waiting_trials(form: TrialFilterForm, reviewer: User | None = None) -> QuerySet[Trial]:
    """Trials still waiting under the filter, in the filter's order (the queue's order).

    With one reviewer per trial (the default) a trial waits until anyone annotates it (the
    partial index of unreviewed trials serves it). With k > 1 (the queue's "reviewers per
    trial" setting, so agreement has data) it waits until k different reviewers have, and
    never for a reviewer who already annotated it.
    """
    k = form.reviewers_per_trial
    if k <= 1:
        return form.ordered(form.filter(Trial.objects.needs_review()))
    waiting = Trial.objects.alias(reviewers=reviewer_count()).filter(reviewers__lt=k)
    if reviewer is not None:
        mine = Annotation.objects.filter(trial=OuterRef("pk"), reviewer=reviewer)
        waiting = waiting.exclude(Exists(mine))
    return form.ordered(form.filter(waiting))


def gold_for(reviewer: User, form: TrialFilterForm) -> QuerySet[Trial]:
    """Gold trials under the filter that `reviewer` has not annotated yet, in the filter's order."""
    gold = Trial.objects.filter(pk__in=GoldLabel.objects.current().values("trial"))
    mine = Annotation.objects.filter(trial=OuterRef("pk"), reviewer=reviewer)
    return form.ordered(form.filter(gold).exclude(Exists(mine)))


def _offers_gold() -> bool:
    rate = float(getattr(settings, "TRIALDESK_GOLD_RATE", 0.0))
    return rate > 0 and random.random() < rate  # noqa: S311 - a mix, not a secret


def current_claim(
    reviewer: User, form: TrialFilterForm, skip: Collection[int] = ()
) -> Claim | None:
    """The reviewer's live lease on a trial still waiting under this filter; reads only."""
    return _own_live_claim(reviewer, form, skip, timezone.now())


def _own_live_claim(
    reviewer: User, form: TrialFilterForm, skip: Collection[int], now: datetime
) -> Claim | None:
    waiting = waiting_trials(form, reviewer).exclude(pk__in=list(skip)).order_by().values("pk")
    gold = gold_for(reviewer, form).exclude(pk__in=list(skip)).order_by().values("pk")
    return (
        Claim.objects.filter(Q(trial__in=waiting) | Q(trial__in=gold))
        .filter(reviewer=reviewer, expires_at__gt=now)
        .select_related("trial__job", "trial__task")
        .defer("trial__job__config", "trial__job__stats")
        .order_by("-claimed_at", "-id")
        .first()
    )


def claim_next(reviewer: User, form: TrialFilterForm, skip: Collection[int] = ()) -> Claim | None:
    """Lease the next waiting trial to `reviewer`; None when nothing is left to hand out.

    Race safety, per engine:
    - SQLite: the settings open every transaction with BEGIN IMMEDIATE, so the whole
      function runs under the database's single write lock; two reviewers asking at once
      queue, and the second sees the first one's lease.
    - PostgreSQL: the candidate row is read with SELECT … FOR UPDATE SKIP LOCKED (on the
      trial row only: `of=("self",)`, so a joined task row never blocks a whole task), so
      concurrent claimers walk past each other's candidates instead of waiting on them.
      A claimer whose statement started just before another's commit can still pick the
      same trial; the one-lease-per-trial unique constraint then refuses the second
      insert, inside a savepoint, and the next waiting trial is tried.
    """
    now = timezone.now()
    with transaction.atomic():
        own = _own_live_claim(reviewer, form, skip, now)
        if own is not None:
            # Asking again while reviewing renews the lease rather than handing out another.
            own.expires_at = now + CLAIM_TTL
            Claim.objects.filter(pk=own.pk).update(expires_at=own.expires_at)
            return own
        # One trial at a time: whatever else this reviewer holds goes back, and leases that
        # have run out are swept, so their trials can be handed out again.
        Claim.objects.filter(Q(reviewer=reviewer) | Q(expires_at__lte=now)).delete()
        sources = [waiting_trials(form, reviewer)]
        if _offers_gold():
            sources.insert(0, gold_for(reviewer, form))
        for source in sources:
            claim = _lease_first(reviewer, source, skip, now)
            if claim is not None:
                return claim
    return None


def _lease_first(
    reviewer: User, trials: QuerySet[Trial], skip: Collection[int], now: datetime
) -> Claim | None:
    """Lease the first of `trials` that nobody holds; None when there is none."""
    candidates = trials.exclude(pk__in=list(skip)).exclude(
        Exists(Claim.objects.filter(trial=OuterRef("pk")))
    )
    if connection.features.has_select_for_update_skip_locked:
        candidates = candidates.select_for_update(skip_locked=True, of=("self",))
    refused: list[int] = []
    for _ in range(CLAIM_ATTEMPTS):
        # A model row, not values_list(): FOR UPDATE OF needs the model's columns to
        # name the trial table; without them PostgreSQL would lock the joined rows too.
        candidate = candidates.exclude(pk__in=refused).only("pk").first()
        if candidate is None:
            return None
        trial_id = candidate.pk
        try:
            with transaction.atomic():
                claim = Claim.objects.create(
                    trial_id=trial_id,
                    reviewer=reviewer,
                    claimed_at=now,
                    expires_at=now + CLAIM_TTL,
                )
        except IntegrityError:
            refused.append(trial_id)
            continue
        return claim
    return None


def seconds_since_claimed(reviewer: User, trial_id: int) -> int | None:
    """How long `reviewer` has held the queue's lease on the trial (time to review), or None
    when they are not reviewing it from the queue."""
    claimed_at = (
        Claim.objects.filter(reviewer=reviewer, trial_id=trial_id)
        .values_list("claimed_at", flat=True)
        .first()
    )
    if claimed_at is None:
        return None
    return max(0, int((timezone.now() - claimed_at).total_seconds()))


def release(reviewer: User, trial_id: int) -> bool:
    """Give back the reviewer's own lease on a trial (never anyone else's)."""
    deleted, _ = Claim.objects.filter(reviewer=reviewer, trial_id=trial_id).delete()
    return deleted > 0


@dataclass(frozen=True)
class Progress:
    reviewed: int
    waiting: int

    @property
    def reviewed_capped(self) -> bool:
        return self.reviewed > PROGRESS_CAP

    @property
    def waiting_capped(self) -> bool:
        return self.waiting > PROGRESS_CAP

    @property
    def capped(self) -> bool:
        return self.reviewed_capped or self.waiting_capped

    @property
    def total(self) -> int:
        return self.reviewed + self.waiting

    @property
    def cap_label(self) -> str:
        return f"{PROGRESS_CAP:,}"

    @staticmethod
    def _label(count: int, capped: bool) -> str:
        return f"{PROGRESS_CAP:,}+" if capped else f"{count:,}"

    @property
    def reviewed_label(self) -> str:
        return self._label(self.reviewed, self.reviewed_capped)

    @property
    def waiting_label(self) -> str:
        return self._label(self.waiting, self.waiting_capped)

    @property
    def total_label(self) -> str:
        if self.capped:
            return f"{max(self.total, PROGRESS_CAP):,}+"
        return f"{self.total:,}"

    @property
    def percent(self) -> int | None:
        """Whole percent reviewed; None when a count hit the cap (it would be a guess)."""
        if self.capped or not self.total:
            return None
        return (100 * self.reviewed) // self.total


def progress(form: TrialFilterForm) -> Progress:
    """Reviewed and waiting trials under the filter, each count bounded.

    Each count is `SELECT COUNT(*) FROM (… LIMIT PROGRESS_CAP + 1)`: it stops reading after
    the cap, so a visit to the queue costs the same over a million trials as over ten
    thousand. The waiting count reads the partial index of unreviewed trials.
    """
    matching = form.filter(Trial.objects.all()).order_by()
    k = form.reviewers_per_trial
    if k <= 1:
        reviewed = matching.filter(annotation_count__gt=0)
        waiting = matching.needs_review()
    else:
        # "Reviewed" means by k reviewers: a trial with fewer is still waiting for someone.
        counted = matching.alias(reviewers=reviewer_count())
        reviewed = counted.filter(reviewers__gte=k)
        waiting = counted.filter(reviewers__lt=k)
    return Progress(
        reviewed=reviewed[: PROGRESS_CAP + 1].count(),
        waiting=waiting[: PROGRESS_CAP + 1].count(),
    )
