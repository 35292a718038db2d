"""Reviewer quality: accuracy against gold trials, agreement with peers, time to review and
throughput, one row per reviewer (the reviewers page).

- Accuracy: each reviewer's latest judgment of each current gold trial (review.models.GoldLabel)
  against its reference. A defer is neither right nor wrong: it is counted apart and left out
  of the rate. The interval is Wilson's (review.science.proportions).
- Agreement with peers: of the pass / fail judgment pairs a reviewer shares a trial with
  another reviewer (each reviewer's latest judgment), the share that match. Read from the
  kept reviewer-pair tallies (PairTally), so it costs one small query.
- Time to review: the median of `Annotation.seconds_to_review`, from the queue handing the
  trial out to the annotation; trials reviewed outside the queue have none.
- Throughput: annotations per week, the last THROUGHPUT_WEEKS weeks.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.contrib.auth import get_user_model
from django.db.models import Count, Q
from django.db.models.functions import TruncDate
from django.utils import timezone

from review.models import Annotation, GoldLabel, PairTally
from review.science.proportions import wilson_interval

THROUGHPUT_WEEKS = 8


@dataclass
class ReviewerQuality:
    username: str
    annotations: int = 0
    gold_right: int = 0
    gold_wrong: int = 0
    gold_deferred: int = 0
    peer_pairs: int = 0
    peer_agreeing: int = 0
    review_seconds: list[int] = field(default_factory=list)
    weekly: list[int] = field(default_factory=lambda: [0] * THROUGHPUT_WEEKS)

    @property
    def gold_judged(self) -> int:
        """Gold trials judged pass or fail (the accuracy's denominator)."""
        return self.gold_right + self.gold_wrong

    @property
    def accuracy(self) -> float | None:
        return self.gold_right / self.gold_judged if self.gold_judged else None

    @property
    def accuracy_interval(self) -> tuple[float, float] | None:
        return wilson_interval(self.gold_right, self.gold_judged)

    @property
    def peer_agreement(self) -> float | None:
        return self.peer_agreeing / self.peer_pairs if self.peer_pairs else None

    @property
    def peer_interval(self) -> tuple[float, float] | None:
        # Pairs sharing a trial are not independent of each other; the interval is a guide.
        return wilson_interval(self.peer_agreeing, self.peer_pairs)

    @property
    def median_seconds(self) -> float | None:
        return statistics.median(self.review_seconds) if self.review_seconds else None

    @property
    def queue_reviews(self) -> int:
        return len(self.review_seconds)

    @property
    def weekly_peak(self) -> int:
        return max(self.weekly)


@dataclass(frozen=True)
class ReviewersReport:
    rows: list[ReviewerQuality]
    week_starts: list[date]
    gold_trials: int


def _week_starts(today: date) -> list[date]:
    """Mondays of the last THROUGHPUT_WEEKS weeks, oldest first (this week last)."""
    monday = today - timedelta(days=today.weekday())
    return [monday - timedelta(weeks=k) for k in range(THROUGHPUT_WEEKS - 1, -1, -1)]


def reviewers_report(
    only_user_id: int | None = None, now: datetime | None = None
) -> ReviewersReport:
    """Every reviewer's figures (or one reviewer's, `only_user_id`); a fixed number of queries."""
    now = now or timezone.now()
    weeks = _week_starts(timezone.localdate(now))
    rows: dict[int, ReviewerQuality] = {}
    users = get_user_model().objects.filter(annotations__isnull=False).distinct()
    if only_user_id is not None:
        users = users.filter(pk=only_user_id)
    for pk, username in users.order_by("username").values_list("pk", "username"):
        rows[pk] = ReviewerQuality(username=username)
    ids = list(rows)

    for pk, n in (
        Annotation.objects.filter(reviewer_id__in=ids)
        .order_by()
        .values_list("reviewer_id")
        .annotate(n=Count("id"))
    ):
        rows[pk].annotations = n

    references = dict(GoldLabel.objects.current().values_list("trial_id", "reference"))
    for pk, trial_id, judgment in (
        Annotation.objects.latest_per_reviewer()
        .filter(reviewer_id__in=ids, trial_id__in=list(references))
        .values_list("reviewer_id", "trial_id", "judgment")
    ):
        row = rows[pk]
        if judgment == Annotation.Judgment.DEFER:
            row.gold_deferred += 1
        elif judgment == references[trial_id]:
            row.gold_right += 1
        else:
            row.gold_wrong += 1

    # Each reviewer pair's pass / fail judgments of shared trials (revealed and blind alike:
    # `blind=False` tallies every latest judgment).
    pairs: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for a, b, judgment_a, judgment_b, n in PairTally.objects.filter(
        Q(reviewer_a_id__in=ids) | Q(reviewer_b_id__in=ids), blind=False
    ).values_list("reviewer_a_id", "reviewer_b_id", "judgment_a", "judgment_b", "n"):
        for reviewer in (a, b):
            if reviewer in rows:
                pairs[reviewer][0] += n
                pairs[reviewer][1] += n if judgment_a == judgment_b else 0
    for pk, (n, agreeing) in pairs.items():
        rows[pk].peer_pairs, rows[pk].peer_agreeing = n, agreeing

    for pk, seconds in (
        Annotation.objects.filter(reviewer_id__in=ids, seconds_to_review__isnull=False)
        .order_by()
        .values_list("reviewer_id", "seconds_to_review")
    ):
        rows[pk].review_seconds.append(int(seconds or 0))

    since = datetime.combine(weeks[0], datetime.min.time(), tzinfo=timezone.get_current_timezone())
    for pk, day, n in (
        Annotation.objects.filter(reviewer_id__in=ids, created_at__gte=since)
        .annotate(day=TruncDate("created_at"))
        .order_by()
        .values_list("reviewer_id", "day")
        .annotate(n=Count("id"))
        .values_list("reviewer_id", "day", "n")
    ):
        week = (day - weeks[0]).days // 7
        if 0 <= week < THROUGHPUT_WEEKS:
            rows[pk].weekly[week] += n

    return ReviewersReport(rows=list(rows.values()), week_starts=weeks, gold_trials=len(references))
