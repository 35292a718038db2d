"""Adjudication: trials whose latest judgments conflict wait for an adjudicator's verdict.

Which conflicts send a trial to adjudication is the queue's setting (`conflict` in its URL):

- human: the reviewers' latest judgments disagree (one says pass, another fail: the trial's
  human judgment is "mixed");
- judge / scorers: the humans agree on pass or fail and the gate says the opposite;
- verifier: the humans disagree with the automated outcome (reward ≥ the pass threshold).

A trial waits while it conflicts and no adjudication was made at its current annotation
count (annotations are append-only, so a newer one changes the count and reopens it). Both
tests read the trial row and one indexed probe, so the queue is a keyset walk like the
explorer's.

Who adjudicates: experts and staff (`review.roles.can_adjudicate`), and never someone whose
own annotation is among those being settled (an adjudicator is independent of the conflict).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, Q

from review.models import Adjudication, Annotation, refresh_human_summary
from rewards.models import Trial, TrialQuerySet

CONFLICTS = {
    "human": ("Reviewer against reviewer", Q(human_judgment="mixed")),
    "judge": (
        "Humans against the judge",
        Q(human_judgment="pass", judge_verdict="FAIL")
        | Q(human_judgment="fail", judge_verdict="PASS"),
    ),
    "scorers": (
        "Humans against the scorers",
        Q(human_judgment="pass", scorer_verdict="FAIL")
        | Q(human_judgment="fail", scorer_verdict="PASS"),
    ),
    "verifier": ("Humans against the verifier outcome", ~Q(human_disagreement="")),
}
DEFAULT_CONFLICTS = ("human",)


class AdjudicationError(ValueError):
    """A verdict that may not be recorded; the message is for the adjudicator."""


def conflicting(kinds: tuple[str, ...] | list[str]) -> Q:
    condition = Q(pk__in=[])
    for kind in kinds:
        condition |= CONFLICTS[kind][1]
    return condition


def conflicts_of(trial: Trial) -> list[str]:
    """The conflict kinds the trial shows now, by key (one query, the same conditions)."""
    flags = (
        Trial.objects.filter(pk=trial.pk)
        .values(
            **{
                f"conflict_{key}": ExpressionWrapper(condition, output_field=BooleanField())
                for key, (_, condition) in CONFLICTS.items()
            }
        )
        .first()
    )
    return [key for key in CONFLICTS if flags and flags[f"conflict_{key}"]]


def settled_now() -> Exists:
    """The outer trial has an adjudication made at its current annotation count."""
    return Exists(
        Adjudication.objects.filter(
            trial=OuterRef("pk"), annotation_count=OuterRef("annotation_count")
        )
    )


def awaiting(kinds: tuple[str, ...] | list[str]) -> TrialQuerySet:
    """Trials that conflict in one of `kinds` and are not settled at their annotation count."""
    return Trial.objects.filter(conflicting(kinds)).exclude(settled_now())


@dataclass(frozen=True)
class Settled:
    """What an adjudication settles: each reviewer's latest annotation, when it is made."""

    annotations: list[Annotation]

    @property
    def ids(self) -> list[int]:
        return [a.pk for a in self.annotations]

    @property
    def reviewer_ids(self) -> set[int]:
        return {a.reviewer_id for a in self.annotations}


@dataclass(frozen=True)
class Verdict:
    """An adjudication as the trial page shows it: with the annotations it settled."""

    adjudication: Adjudication
    settled: list[Annotation]
    stands: bool  # the latest verdict: it stands for the annotations it settled

    @property
    def reopened(self) -> bool:
        """Annotations were added after it, so the trial may conflict again."""
        return (
            self.stands
            and self.adjudication.annotation_count != self.adjudication.trial.annotation_count
        )


def verdicts(trial: Trial, annotations: list[Annotation]) -> list[Verdict]:
    """The trial's adjudications, oldest first, each with its settled annotations (one query).

    `annotations` is the trial's history, already read: the settled ones are found in it.
    """
    by_id = {annotation.pk: annotation for annotation in annotations}
    rows = list(
        Adjudication.objects.filter(trial=trial)
        .select_related("adjudicator")
        .order_by("created_at", "id")
    )
    for row in rows:
        row.trial = trial
    return [
        Verdict(
            adjudication=row,
            settled=[by_id[pk] for pk in row.settled if pk in by_id],
            stands=i == len(rows) - 1,
        )
        for i, row in enumerate(rows)
    ]


def latest_annotations(trial: Trial) -> Settled:
    rows = (
        Annotation.objects.filter(trial=trial)
        .latest_per_reviewer()
        .select_related("reviewer")
        .order_by("created_at", "id")
    )
    return Settled(list(rows))


def adjudicate(*, trial_id: int, adjudicator: User, verdict: str, rationale: str) -> Adjudication:
    """Record the final verdict on a trial, naming the annotations it settles.

    The trial row is locked first (as `add_annotation` does) so that an annotation cannot
    land between reading the latest judgments and recording what was settled. The verdict
    becomes the trial's human judgment in the same transaction (`refresh_human_summary`).
    """
    with transaction.atomic():
        trial = (
            Trial.objects.select_for_update(of=("self",)).select_related("task").get(pk=trial_id)
        )
        settled = latest_annotations(trial)
        if not settled.annotations:
            raise AdjudicationError("This trial has no annotation to settle.")
        if adjudicator.pk in settled.reviewer_ids:
            raise AdjudicationError(
                "You reviewed this trial yourself: another adjudicator must settle it."
            )
        made = Adjudication.objects.create(
            trial=trial,
            adjudicator=adjudicator,
            verdict=verdict,
            rationale=rationale,
            settled=settled.ids,
            annotation_count=trial.annotation_count,
            conflict=", ".join(conflicts_of(trial)),
        )
        refresh_human_summary(trial)
        return made
