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

import hashlib
import json
import secrets
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.db.models import F, OuterRef, Q, Subquery
from django.utils import timezone

from rewards import reports
from rewards.cache import forget_left_out
from rewards.models import IntegrityFinding, Trial, TrialDetail

# The gates a judgment is tallied under, in the order of the tally's key columns: the
# trial's judge and scorer verdicts, its verifier (PASS when the reward reaches the task's
# pass threshold, else FAIL), failure mode, task source and judge model.
GATE_FIELDS = (
    "judge_verdict",
    "scorer_verdict",
    "verifier",
    "failure_mode",
    "source",
    "judge_model",
)


class AppendOnlyError(Exception):
    """Raised on any attempt to change or remove a record of an append-only table."""


class AppendOnlyQuerySet[M: models.Model](models.QuerySet[M]):
    """A record is corrected by a newer row, never changed or removed: bulk updates and
    deletes are refused here, and by the database's triggers (`rewards.append_only`) for
    every other writer."""

    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyError(_refused(self.model, "update"))

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError(_refused(self.model, "delete"))

    def bulk_update(self, objs: Any, fields: Any, batch_size: int | None = None) -> int:
        raise AppendOnlyError(_refused(self.model, "update"))


class AppendOnlyModel(models.Model):
    """A model whose rows are a record: saved once, never updated or deleted (`RECORDS`
    names them in the refusal)."""

    RECORDS = "records"

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError(_refused(type(self), "update"))
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError(_refused(type(self), "delete"))


def _refused(model: type[models.Model], action: str) -> str:
    records = getattr(model, "RECORDS", "records")
    if action == "delete":
        return f"{records} are append-only: they cannot be deleted"
    return f"{records} are append-only: add a newer one instead"


class AnnotationQuerySet(AppendOnlyQuerySet["Annotation"]):
    def for_trial(self, trial: Trial) -> AnnotationQuerySet:
        return self.filter(trial=trial)

    def history(self) -> AnnotationQuerySet:
        """Oldest first, with the reviewer, as the trial page lists them."""
        return self.select_related("reviewer").order_by(*Annotation.HISTORY)

    def latest_per_reviewer(self, *, blind_only: bool = False) -> AnnotationQuerySet:
        """Each reviewer's latest annotation of each trial (DESIGN §3: the one that counts).

        Read from `LatestJudgment`, which holds it; with `blind_only`, the latest of the
        reviewer's blind annotations: what they judged before anything was revealed to them.
        """
        latest = "latest_blind_of" if blind_only else "latest_of"
        return self.filter(**{f"{latest}__isnull": False})


class Annotation(AppendOnlyModel):
    RECORDS = "annotations"

    class Judgment(models.TextChoices):
        PASS = "pass", "pass"
        FAIL = "fail", "fail"
        DEFER = "defer", "defer"

    # A trial's annotations as its page lists them: oldest first.
    HISTORY = ("created_at", "id")

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
    # Seconds from the queue handing the trial to the reviewer to this annotation; None when
    # it was not made from the queue (the trial page, the API, an ingested bundle).
    seconds_to_review = models.PositiveIntegerField(null=True, blank=True)
    # The guidelines the reviewer worked under: the queue's saved view's `guideline_version`;
    # None when there were none. Both columns are nullable so that SQLite adds them in place:
    # rebuilding this table would drop its append-only and tally triggers.
    guideline_version = models.CharField(max_length=40, null=True, blank=True)  # noqa: DJ001

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


class GateColumns(models.Model):
    """A trial's gates as agreement compares and groups judgments by them (`tallies`)."""

    judge_verdict = models.CharField(max_length=12, blank=True)
    scorer_verdict = models.CharField(max_length=12, blank=True)
    verifier = models.CharField(max_length=4)
    failure_mode = models.CharField(max_length=255, blank=True)
    source = models.CharField(max_length=255, blank=True)
    judge_model = models.CharField(max_length=255, blank=True)

    class Meta:
        abstract = True


class LatestJudgment(GateColumns):
    """Each reviewer's latest judgment of a trial, and their latest blind one: what counts.

    Derived from the append-only annotations (DESIGN §3: a reviewer's latest annotation is
    the one that counts) and kept by database triggers (review migration 0009, `tallies`):
    an annotation inserted rewrites its trial's rows, in the inserting transaction.
    Agreement, its reviewer pairs and the explorer's reviewer filters group and probe these
    rows (one per trial and reviewer) instead of looking for the latest among all annotations.

    Each row also holds the gates of its trial it was tallied under (`GATE_FIELDS`),
    moved by the same triggers when the trial's or its task's gates change: the filtered
    agreement page groups these columns without reading the wide trial rows.
    """

    # No index of their own: the unique constraint leads with the trial and the reviewer
    # index with the reviewer.
    trial = models.ForeignKey(
        Trial, on_delete=models.CASCADE, related_name="latest_judgments", db_index=False
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    annotation = models.OneToOneField(
        Annotation, on_delete=models.PROTECT, related_name="latest_of"
    )
    judgment = models.CharField(max_length=8, choices=Annotation.Judgment.choices)
    # The reviewer's latest blind annotation of the trial (agreement's "blind annotations
    # only"); none and '' when every annotation of theirs was made with the trial revealed.
    blind_annotation = models.OneToOneField(
        Annotation, on_delete=models.PROTECT, null=True, blank=True, related_name="latest_blind_of"
    )
    blind_judgment = models.CharField(max_length=8, choices=Annotation.Judgment.choices, blank=True)

    class Meta:
        constraints = [
            # One row per reviewer of a trial (the upsert's conflict target); its index also
            # serves the filtered agreement page's semi-join on the trial and the reviewer
            # pairs' self-join, in trial order.
            models.UniqueConstraint(
                fields=["trial", "reviewer"], name="latestjudgment_trial_reviewer_uniq"
            ),
        ]
        indexes = [
            # Explorer: "reviewer X's latest judgment is J" (the pair cells' links).
            models.Index(
                fields=["reviewer", "judgment", "trial"], name="latestjudgment_reviewer_idx"
            ),
            # Explorer: "a reviewer's latest judgment is J", whoever the reviewer: each trial
            # walked is probed, and the match count's probe reads the trials in id order,
            # from the index alone.
            models.Index(fields=["judgment", "trial"], name="latestjudgment_judgment_idx"),
            # Agreement over blind annotations only: just the rows that have one.
            models.Index(
                fields=["trial", "reviewer", "blind_judgment"],
                name="latestjudgment_blind_idx",
                condition=~Q(blind_judgment=""),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judgment} on trial {self.trial_id} by {self.reviewer_id} (latest)"


class JudgmentTally(GateColumns):
    """Latest judgments counted by everything agreement groups them by (`tallies`).

    The agreement page over every trial reads these few rows instead of grouping every
    latest judgment. Kept by database triggers with `LatestJudgment` (review migration
    0009). `n` counts judgments; a key whose judgments all moved away keeps 0.
    """

    blind = models.BooleanField()  # blind judgments only ("blind annotations only")
    judgment = models.CharField(max_length=8, choices=Annotation.Judgment.choices)
    n = models.IntegerField(default=0)

    KEY = ("blind", *GATE_FIELDS, "judgment")  # its columns, in the key's order

    class Meta:
        constraints = [
            # The tally's key: adding to it is an upsert on this constraint.
            models.UniqueConstraint(
                fields=["blind", *GATE_FIELDS, "judgment"], name="judgmenttally_key"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.n} {self.judgment} (judge {self.judge_verdict or '-'})"


class PairTally(models.Model):
    """Pairs of reviewers' pass / fail judgments of the same trials, counted (`tallies`)."""

    blind = models.BooleanField()
    reviewer_a = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    reviewer_b = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    judgment_a = models.CharField(max_length=8)
    judgment_b = models.CharField(max_length=8)
    raters = models.PositiveSmallIntegerField()  # reviewers with pass / fail on the trials
    n = models.IntegerField(default=0)

    # Its columns, in the key's order.
    KEY = ("blind", "reviewer_a_id", "reviewer_b_id", "judgment_a", "judgment_b", "raters")

    class Meta:
        constraints = [
            # The tally's key: adding to it is an upsert on this constraint.
            models.UniqueConstraint(
                fields=["blind", "reviewer_a", "reviewer_b", "judgment_a", "judgment_b", "raters"],
                name="pairtally_key",
            ),
        ]

    def __str__(self) -> str:
        pair = f"{self.reviewer_a_id}, {self.reviewer_b_id}"
        return f"{self.n} x {self.judgment_a}/{self.judgment_b} ({pair})"


class JobJudgmentTally(GateColumns):
    """`JudgmentTally` for one job's trials: the agreement page filtered to a job alone."""

    job = models.ForeignKey("rewards.Job", on_delete=models.CASCADE, related_name="+")
    blind = models.BooleanField()
    judgment = models.CharField(max_length=8, choices=Annotation.Judgment.choices)
    n = models.IntegerField(default=0)

    KEY = ("job_id", *JudgmentTally.KEY)

    class Meta:
        constraints = [
            # The tally's key: adding to it is an upsert on this constraint; led by the job,
            # its index also serves reading one job's rows.
            models.UniqueConstraint(
                fields=["job", "blind", *GATE_FIELDS, "judgment"],
                name="jobjudgmenttally_key",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.n} {self.judgment} in job {self.job_id}"


class JobPairTally(models.Model):
    """`PairTally` for one job's trials."""

    job = models.ForeignKey("rewards.Job", on_delete=models.CASCADE, related_name="+")
    blind = models.BooleanField()
    reviewer_a = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    reviewer_b = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    judgment_a = models.CharField(max_length=8)
    judgment_b = models.CharField(max_length=8)
    raters = models.PositiveSmallIntegerField()
    n = models.IntegerField(default=0)

    KEY = ("job_id", *PairTally.KEY)

    class Meta:
        constraints = [
            # The tally's key, led by the job (reading one job's rows).
            models.UniqueConstraint(
                fields=[
                    "job",
                    "blind",
                    "reviewer_a",
                    "reviewer_b",
                    "judgment_a",
                    "judgment_b",
                    "raters",
                ],
                name="jobpairtally_key",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.n} x {self.judgment_a}/{self.judgment_b} in job {self.job_id}"


class MultiRatedTally(GateColumns):
    """Trials with two or more pass / fail latest judgments, counted by their gates and how
    many of those judgments pass and fail (`tallies`): the units agreement's cluster
    bootstrap draws (`review.science.agreement.multi_rated`).

    Kept by database triggers with `LatestJudgment` (review migration 0018), blind judgments
    apart like `JudgmentTally`. `n` counts trials; a key whose trials all moved away keeps 0.
    """

    blind = models.BooleanField()
    passes = models.PositiveSmallIntegerField()
    fails = models.PositiveSmallIntegerField()
    n = models.IntegerField(default=0)

    KEY = ("blind", *GATE_FIELDS, "passes", "fails")  # its columns, in the key's order

    class Meta:
        constraints = [
            # The tally's key: adding to it is an upsert on this constraint.
            models.UniqueConstraint(
                fields=["blind", *GATE_FIELDS, "passes", "fails"], name="multiratedtally_key"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.n} trials of {self.passes} pass, {self.fails} fail"


class JobMultiRatedTally(GateColumns):
    """`MultiRatedTally` for one job's trials."""

    # No index of its own: the key leads with the job.
    job = models.ForeignKey(
        "rewards.Job", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    blind = models.BooleanField()
    passes = models.PositiveSmallIntegerField()
    fails = models.PositiveSmallIntegerField()
    n = models.IntegerField(default=0)

    KEY = ("job_id", *MultiRatedTally.KEY)

    class Meta:
        constraints = [
            # The tally's key, led by the job (reading one job's rows).
            models.UniqueConstraint(
                fields=["job", "blind", *GATE_FIELDS, "passes", "fails"],
                name="jobmultiratedtally_key",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.n} trials of {self.passes} pass, {self.fails} fail in job {self.job_id}"


class JobTally(models.Model):
    """A job's trials counted by task, agent, model and failure mode (`review.science.job_tallies`).

    Kept by database triggers on the trials (review migration 0008), so every way of
    writing or deleting a trial keeps it; the job page, its plots and compare read a job's
    few dozen rows instead of its trials. A key whose trials all went keeps zeros.
    """

    job = models.ForeignKey("rewards.Job", on_delete=models.CASCADE, related_name="+")
    task = models.ForeignKey("rewards.Task", on_delete=models.CASCADE, related_name="+")
    agent_name = models.CharField(max_length=255, blank=True)
    model_name = models.CharField(max_length=255, blank=True)
    failure_mode = models.CharField(max_length=255, blank=True)
    trials = models.IntegerField(default=0)
    # Kept sums are whole units of 1e-9 (job_tallies.SCALE), so they stay exact.
    reward_units = models.BigIntegerField(default=0)
    valid = models.IntegerField(default=0)
    scorer_pass = models.IntegerField(default=0)
    scorer_ran = models.IntegerField(default=0)
    judge_pass = models.IntegerField(default=0)
    judge_decided = models.IntegerField(default=0)
    judge_unparseable = models.IntegerField(default=0)
    run_pass = models.IntegerField(default=0)
    run_done = models.IntegerField(default=0)
    reviewed = models.IntegerField(default=0)  # trials with at least one annotation
    gate_disagreements = models.IntegerField(default=0)
    human_disagreements = models.IntegerField(default=0)
    verifier_pass = models.IntegerField(default=0)  # reward ≥ the task's pass threshold
    human_pass = models.IntegerField(default=0)
    human_decided = models.IntegerField(default=0)
    # The reward histogram: bin i holds rewards in [i/10, (i+1)/10), the last one 1.0 too.
    bin0 = models.IntegerField(default=0)
    bin1 = models.IntegerField(default=0)
    bin2 = models.IntegerField(default=0)
    bin3 = models.IntegerField(default=0)
    bin4 = models.IntegerField(default=0)
    bin5 = models.IntegerField(default=0)
    bin6 = models.IntegerField(default=0)
    bin7 = models.IntegerField(default=0)
    bin8 = models.IntegerField(default=0)
    bin9 = models.IntegerField(default=0)
    cost_units = models.BigIntegerField(default=0)  # nano-dollars
    cost_n = models.IntegerField(default=0)  # trials that recorded a cost (a counted one)
    tokens_sum = models.BigIntegerField(default=0)
    tokens_n = models.IntegerField(default=0)  # trials that recorded both token counts

    class Meta:
        constraints = [
            # The tally's key: the triggers' upserts conflict on it; its index, led by the
            # job, serves every read (one job's rows, or two jobs' for compare).
            models.UniqueConstraint(
                fields=["job", "task", "agent_name", "model_name", "failure_mode"],
                name="jobtally_key",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.trials} trials of task {self.task_id} in job {self.job_id}"


@dataclass(frozen=True)
class JobFacts:
    """What a list of jobs says of each: who ran it on what, and how many trials."""

    trials: int = 0
    agents: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()


def job_facts(job_ids: Sequence[int]) -> dict[int, JobFacts]:
    """Each job's agents, models, datasets (task sources) and trial count, from its kept
    tally rows (a few dozen a job): one query."""
    rows = (
        JobTally.objects.filter(job_id__in=list(job_ids), trials__gt=0)
        .order_by()
        .values_list("job_id", "agent_name", "model_name", "task__source", "trials")
    )
    gathered: dict[int, tuple[int, set[str], set[str], set[str]]] = {}
    for job_id, agent, model, source, trials in rows:
        count, agents, models_, sources = gathered.get(job_id, (0, set(), set(), set()))
        agents.add(agent)
        models_.add(model)
        sources.add(source)
        gathered[job_id] = (count + trials, agents, models_, sources)
    return {
        job_id: JobFacts(
            trials=count,
            agents=tuple(sorted(a for a in agents if a)),
            models=tuple(sorted(m for m in models_ if m)),
            datasets=tuple(sorted(d for d in sources if d)),
        )
        for job_id, (count, agents, models_, sources) in gathered.items()
    }


class TrialReviewed(models.Model):
    """When a trial was first annotated (kept by a trigger on annotations, migration 0008)."""

    trial = models.OneToOneField(
        Trial, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    # No index of its own: the job index below leads with it.
    job = models.ForeignKey(
        "rewards.Job", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    first_at = models.DateTimeField()

    class Meta:
        indexes = [
            # The job page's review progress: one job's first annotations grouped by day,
            # read from the index alone.
            models.Index(fields=["job", "first_at"], name="trialreviewed_job_idx"),
        ]

    def __str__(self) -> str:
        return f"trial {self.trial_id} first reviewed {self.first_at:%Y-%m-%d}"


def refresh_human_summary(trial: Trial) -> None:
    """Bring the trial's human summary up to date with its annotations.

    The caller holds the trial's lock, and its task is loaded. One read of the trial's
    annotations, oldest first, gives each reviewer's latest judgment; the human judgment is
    their consensus, except that the latest adjudication's verdict stands in for the
    annotations it settled (a newer annotation counts beside it). The latest judgments'
    rows and agreement's tallies are the database's to keep (`tallies`): they were
    updated when the annotations were inserted.
    """
    latest: dict[int, tuple[int, str]] = {}
    rows = Annotation.objects.filter(trial=trial).order_by("created_at", "id")
    count = 0
    for pk, reviewer_id, judgment in rows.values_list("pk", "reviewer_id", "judgment"):
        latest[reviewer_id] = (pk, judgment)
        count += 1
    judgments = [judgment for _, judgment in latest.values()]
    final = (
        Adjudication.objects.filter(trial=trial)
        .order_by("-created_at", "-id")
        .values_list("verdict", "settled")
        .first()
    )
    if final is not None:
        verdict, settled = final[0], set(final[1])
        judgments = [verdict, *(j for pk, j in latest.values() if pk not in settled)]
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
    seconds_to_review: int | None = None,
    guideline_version: str | None = None,
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
            seconds_to_review=seconds_to_review,
            guideline_version=guideline_version,
        )
        refresh_human_summary(trial)
    return annotation


class StepCommentQuerySet(AppendOnlyQuerySet["StepComment"]):
    def history(self) -> StepCommentQuerySet:
        """Oldest first, with their authors, as the trial page lists them."""
        return self.select_related("author").order_by(*StepComment.HISTORY)


class StepComment(AppendOnlyModel):
    """A reviewer's comment on one step of a trial's trajectory, or on a range of its text.

    The step is its 1-based position in the trajectory's steps; the part is which field of
    the step (`rewards.reports.STEP_PART_KINDS`) and `part_index` which one of that kind
    (a step can make several tool calls); `start` / `end` a character range of that part's
    text, `quote` the text it covered when the comment was made. Append-only like
    Annotation, in code and by database triggers (review migration 0012): a correction is a
    newer comment that names the one it `supersedes`.
    """

    RECORDS = "step comments"

    class Part(models.TextChoices):
        MESSAGE = "message", "Message"
        TOOL_CALL = "tool_call", "Tool call"
        OBSERVATION = "observation", "Observation"
        REASONING = "reasoning", "Reasoning"

    # A trial's comments as its page lists them: oldest first.
    HISTORY = ("created_at", "id")

    # Stable across databases: a bundle names a comment (and what it supersedes) by it.
    uid = models.UUIDField(default=uuid.uuid4, editable=False)
    # PROTECT: comments are a record, as annotations are (module docstring).
    trial = models.ForeignKey(
        Trial, on_delete=models.PROTECT, related_name="step_comments", db_index=False
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="step_comments"
    )
    created_at = models.DateTimeField(default=timezone.now)
    step = models.PositiveIntegerField()
    part = models.CharField(max_length=16, choices=Part.choices)
    part_index = models.PositiveSmallIntegerField(default=0)
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    quote = models.TextField(blank=True)
    text = models.TextField()
    supersedes = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    objects = StepCommentQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["uid"], name="stepcomment_unique_uid"),
            models.CheckConstraint(condition=Q(step__gte=1), name="stepcomment_step_positive"),
            models.CheckConstraint(
                condition=Q(part__in=["message", "tool_call", "observation", "reasoning"]),
                name="stepcomment_part_valid",
            ),
            # A range has both ends, in order, or neither (a comment on the whole part).
            models.CheckConstraint(
                condition=Q(start__isnull=True, end__isnull=True)
                | Q(start__isnull=False, end__isnull=False, start__lt=F("end")),
                name="stepcomment_range_valid",
            ),
            models.CheckConstraint(condition=~Q(text=""), name="stepcomment_text_required"),
        ]
        indexes = [
            # The trial page: a trial's comments, oldest first, in one query.
            models.Index(fields=["trial", "created_at", "id"], name="stepcomment_trial_time_idx"),
        ]

    def __str__(self) -> str:
        return f"comment on step {self.step} of trial {self.trial_id} by {self.author_id}"

    @property
    def anchor(self) -> str:
        return f"comment-{self.pk}"


class CommentTargetError(ValueError):
    """The step, part or range a comment names is not in the trial's trajectory."""


# A range longer than this is a comment on the whole part.
MAX_COMMENT_RANGE = 20_000


@dataclass(frozen=True)
class CommentTarget:
    step: int
    part: str
    part_index: int = 0
    start: int | None = None
    end: int | None = None
    quote: str = ""


def part_text(trajectory: Any, step: int, part: str, part_index: int) -> str:
    """The whole text of a step's part, as the trajectory view shows it (`rewards.reports`)."""
    steps = reports.steps(trajectory)
    if steps is None or not 1 <= step <= len(steps):
        raise CommentTargetError(f"The trajectory has no step {step}.")
    same_kind = [p for p in reports.step_parts(steps[step - 1]) if p.kind == part]
    if not 0 <= part_index < len(same_kind):
        raise CommentTargetError(f"Step {step} has no such {part.replace('_', ' ')}.")
    return same_kind[part_index].text


def resolve_target(trajectory: Any, target: CommentTarget) -> CommentTarget:
    """The target checked against the trajectory, its range fitted to the part's text.

    The browser counts characters in the text as shown, which may differ from the stored
    text (rendered markdown, terminal colours): the quote it sends wins, and the range is
    moved to the occurrence of the quote nearest to where the browser placed it. A quote
    that is not in the part is refused, never stored against the wrong text.
    """
    text = part_text(trajectory, target.step, target.part, target.part_index)
    if target.quote:
        quote, hint = target.quote, target.start or 0
        if text.startswith(quote, hint):
            start = hint
        else:
            found = list(_occurrences(text, quote))
            if not found:
                raise CommentTargetError("The selected text is not in that part of the step.")
            start = min(found, key=lambda at: abs(at - hint))
    elif target.start is not None and target.end is not None:
        start = target.start
        if not 0 <= start < target.end <= len(text):
            raise CommentTargetError("The range is outside that part's text.")
        quote = text[start : target.end]
    else:
        return CommentTarget(target.step, target.part, target.part_index)
    if len(quote) > MAX_COMMENT_RANGE:
        raise CommentTargetError(
            f"Select at most {MAX_COMMENT_RANGE} characters, or comment on the whole part."
        )
    return CommentTarget(
        target.step, target.part, target.part_index, start, start + len(quote), quote
    )


def _occurrences(text: str, quote: str) -> Iterator[int]:
    at = text.find(quote)
    while at != -1:
        yield at
        at = text.find(quote, at + 1)


def add_step_comment(
    *,
    trial_id: int,
    author: Any,
    target: CommentTarget,
    text: str,
    supersedes: StepComment | None = None,
) -> StepComment:
    """Check the target against the trial's trajectory, then record the comment."""
    trajectory = (
        TrialDetail.objects.filter(trial_id=trial_id).values_list("trajectory", flat=True).first()
    )
    resolved = resolve_target(trajectory, target)
    if supersedes is not None and supersedes.trial_id != trial_id:
        raise CommentTargetError("A comment can only correct a comment on the same trial.")
    return StepComment.objects.create(
        trial_id=trial_id,
        author=author,
        step=resolved.step,
        part=resolved.part,
        part_index=resolved.part_index,
        start=resolved.start,
        end=resolved.end,
        quote=resolved.quote,
        text=text,
        supersedes=supersedes,
    )


class AdjudicationQuerySet(AppendOnlyQuerySet["Adjudication"]):
    """Bulk updates and deletes refused (`AppendOnlyQuerySet`)."""


class Adjudication(AppendOnlyModel):
    """An adjudicator's final verdict on a trial whose latest judgments conflicted.

    Append-only like Annotation, in code and by database triggers (migration 0005). It names
    the annotations it settled (each reviewer's latest when it was made) and never changes or
    hides them. `annotation_count` is the trial's annotation count at that moment: a newer
    annotation makes the counts differ, and the trial can conflict (and be adjudicated) again.
    """

    RECORDS = "adjudications"

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


class ReviewerProfile(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reviewer_profile"
    )
    discipline = models.CharField(max_length=100, blank=True)

    def __str__(self) -> str:
        return f"{self.user} ({self.discipline or 'no discipline'})"


class SavedView(models.Model):
    """A named explorer filter: the query string as the explorer's URL holds it.

    A saved view is also a review queue; its owner may give it guidelines (markdown, shown
    sanitised in the review pane) and category definitions. Each annotation made in the queue
    is stamped with `guideline_version`, so a later change of the guidelines is visible in
    the record.
    """

    name = models.CharField(max_length=100)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_views"
    )
    query_string = models.TextField(blank=True)
    shared = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    guidelines = models.TextField(blank=True)
    # [[category, definition], ...] in the order the review pane lists them.
    category_definitions = models.JSONField(default=list, blank=True)

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

    @property
    def guideline_version(self) -> str:
        """`guide-<sha256[:12]>` of the guidelines and definitions; "" when there are none."""
        if not self.guidelines.strip() and not self.category_definitions:
            return ""
        content = json.dumps([self.guidelines, self.category_definitions], sort_keys=True)
        return "guide-" + hashlib.sha256(content.encode()).hexdigest()[:12]


class GoldLabelQuerySet(AppendOnlyQuerySet["GoldLabel"]):
    def current(self) -> GoldLabelQuerySet:
        """Each gold trial's latest label, retired ones left out: the reference that counts."""
        latest = (
            GoldLabel.objects.filter(trial=OuterRef("trial"))
            .order_by("-created_at", "-id")
            .values("pk")[:1]
        )
        return self.filter(pk=Subquery(latest)).exclude(reference=GoldLabel.Reference.RETIRED)


class GoldLabel(AppendOnlyModel):
    """A gold trial: staff's reference judgment, with its rationale.

    Reviewers are measured against it (review.science.reviewers) and the queue mixes gold
    trials in without saying which (review.claims). Append-only like annotations: a newer
    label changes the reference, a `retired` one takes the trial out of the gold set.
    """

    RECORDS = "gold labels"

    class Reference(models.TextChoices):
        PASS = "pass", "pass"
        FAIL = "fail", "fail"
        RETIRED = "retired", "no longer gold"

    trial = models.ForeignKey(Trial, on_delete=models.PROTECT, related_name="gold_labels")
    reference = models.CharField(max_length=8, choices=Reference.choices)
    rationale = models.TextField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="gold_labels"
    )
    created_at = models.DateTimeField(default=timezone.now)

    objects = GoldLabelQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(reference__in=["pass", "fail", "retired"]),
                name="goldlabel_reference_valid",
            ),
            models.CheckConstraint(condition=~Q(rationale=""), name="goldlabel_rationale_required"),
        ]
        indexes = [
            # A trial's latest label (the current reference), newest first.
            models.Index(fields=["trial", "-created_at", "-id"], name="goldlabel_trial_idx"),
        ]

    def __str__(self) -> str:
        return f"gold {self.reference} on trial {self.trial_id}"


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


class CalibrationRule(models.Model):
    """The staff-set rule that admits a judge version (`review.science.calibration`).

    One row (pk 1). A judge version (judge model and rubric version) is admitted when, on the
    test part of its labelled trials, the lower bounds of its true positive and true negative
    rates reach these thresholds and it has at least `min_labelled` human-pass and as many
    human-fail trials. `split_salt` decides which part each labelled trial is in: it is made
    once, the first time the rule is read, and never changes (no form offers it), so a
    trial's part never changes either.
    """

    min_tpr_lower = models.FloatField(default=0.8)
    min_tnr_lower = models.FloatField(default=0.8)
    min_labelled = models.PositiveIntegerField(default=20)
    split_salt = models.CharField(max_length=64)
    updated_at = models.DateTimeField(default=timezone.now)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(id=1), name="calibrationrule_single_row"),
            models.CheckConstraint(
                condition=Q(min_tpr_lower__gte=0, min_tpr_lower__lte=1)
                & Q(min_tnr_lower__gte=0, min_tnr_lower__lte=1),
                name="calibrationrule_thresholds_in_unit_range",
            ),
            models.CheckConstraint(condition=~Q(split_salt=""), name="calibrationrule_salt_set"),
        ]

    def __str__(self) -> str:
        return (
            f"TPR ≥ {self.min_tpr_lower}, TNR ≥ {self.min_tnr_lower}, "
            f"{self.min_labelled} of each label"
        )

    @classmethod
    def current(cls) -> CalibrationRule:
        """The rule, made with its defaults and a new salt the first time (one query after)."""
        rule, _ = cls.objects.get_or_create(pk=1, defaults={"split_salt": secrets.token_hex(16)})
        return rule


class DefectEntryQuerySet(AppendOnlyQuerySet["DefectEntry"]):
    def current(self) -> DefectEntryQuerySet:
        """Each task's latest entry: the one that says where the task stands.

        Latest is the highest id: entries are only ever inserted, so the id is their order.
        """
        latest = DefectEntry.objects.filter(task=models.OuterRef("task")).order_by("-id")
        return self.filter(pk=models.Subquery(latest.values("pk")[:1]))

    def confirmed(self) -> DefectEntryQuerySet:
        """The entries of the tasks that are confirmed defective now."""
        return self.current().filter(state=DefectEntry.State.CONFIRMED)


class DefectEntry(AppendOnlyModel):
    """One entry of the defective-task ledger: a task proposed, confirmed or cleared as
    defective, with a category, a rationale and evidence links inside Trialdesk.

    Append-only like Annotation, in code and by database triggers (migration 0012): the
    newest entry of a task says where it stands (a newer one reopens or clears it), and the
    older ones stay as its history. Reviewers propose; experts and staff confirm or clear
    (`review.defects`). While a task's newest entry is `confirmed`, its trials are left out of
    pass rates by default (`review.science.exclusions`); the stored rewards never change.
    """

    RECORDS = "defect ledger entries"

    class State(models.TextChoices):
        PROPOSED = "proposed", "proposed"
        CONFIRMED = "confirmed", "confirmed"
        CLEARED = "cleared", "cleared"

    class Category(models.TextChoices):
        BROKEN_TEST = "broken_test", "broken test"
        UNDERSPECIFIED = "underspecified", "underspecified instruction"
        ENVIRONMENT = "environment", "environment"
        WRONG_REFERENCE = "wrong_reference", "wrong reference"

    # PROTECT: the ledger is a record, like annotations (see the module docstring).
    task = models.ForeignKey(
        "rewards.Task", on_delete=models.PROTECT, related_name="defect_entries", db_index=False
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="defect_entries"
    )
    created_at = models.DateTimeField(default=timezone.now)
    state = models.CharField(max_length=10, choices=State.choices)
    category = models.CharField(max_length=20, choices=Category.choices)
    rationale = models.TextField()
    # Links inside Trialdesk, each a path with an optional fragment (`/trials/12/#step-3`),
    # checked when the entry is made (`review.defects.clean_evidence`).
    evidence = models.JSONField(default=list, blank=True)

    objects = DefectEntryQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(state__in=["proposed", "confirmed", "cleared"]),
                name="defectentry_state_valid",
            ),
            models.CheckConstraint(
                condition=Q(
                    category__in=["broken_test", "underspecified", "environment", "wrong_reference"]
                ),
                name="defectentry_category_valid",
            ),
            models.CheckConstraint(
                condition=~Q(rationale=""), name="defectentry_rationale_required"
            ),
        ]
        indexes = [
            # A task's latest entry (the ledger's current state) and its history, in order.
            models.Index(fields=["task", "-id"], name="defectentry_task_idx"),
        ]

    def __str__(self) -> str:
        return f"task {self.task_id} {self.state} ({self.category}) by {self.author_id}"


# --- reward integrity ----------------------------------------------------------------------
class FindingReviewQuerySet(AppendOnlyQuerySet["FindingReview"]):
    """Bulk updates and deletes refused (`AppendOnlyQuerySet`)."""


class FindingReview(AppendOnlyModel):
    """An expert's or staff member's word on a reward-integrity finding: confirmed (the
    agent reached the grader) or dismissed, with the rationale.

    Append-only like Annotation, in code and by database triggers (migration
    0017_finding_reviews): a person changes their mind by adding a newer review; the latest
    review of a finding is its status (`IntegrityFinding.status`). The trial's stored reward
    never changes.
    """

    RECORDS = "finding reviews"

    class Decision(models.TextChoices):
        CONFIRMED = "confirmed", "confirm"
        DISMISSED = "dismissed", "dismiss"

    finding = models.ForeignKey(
        IntegrityFinding, on_delete=models.PROTECT, related_name="reviews", db_index=False
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="finding_reviews"
    )
    created_at = models.DateTimeField(default=timezone.now)
    decision = models.CharField(max_length=12, choices=Decision.choices)
    rationale = models.TextField()

    objects = FindingReviewQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(decision__in=["confirmed", "dismissed"]),
                name="finding_review_decision_valid",
            ),
            models.CheckConstraint(
                condition=~Q(rationale=""), name="finding_review_rationale_required"
            ),
        ]
        indexes = [
            # The trial page: a finding's reviews, oldest first.
            models.Index(fields=["finding", "created_at", "id"], name="finding_review_history_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.decision} finding {self.finding_id} by {self.reviewer_id}"


def review_finding(
    *, finding_id: int, trial_id: int, reviewer: Any, decision: str, rationale: str
) -> FindingReview:
    """Record a confirmation or dismissal and bring the finding's status and its trial's
    integrity state up to date, in one transaction. The trial row is locked first, as
    `add_annotation` does, so two reviews of one trial at once both count. The finding is
    looked up within its trial: a finding id from another trial is not found."""
    with transaction.atomic():
        trial = Trial.objects.select_for_update(of=("self",)).get(pk=trial_id)
        finding = IntegrityFinding.objects.get(pk=finding_id, trial=trial)
        review = FindingReview.objects.create(
            finding=finding, reviewer=reviewer, decision=decision, rationale=rationale
        )
        # IntegrityFinding's status is the latest review's decision (a summary column, like
        # the trial's human judgment); the history stays in FindingReview.
        IntegrityFinding.objects.filter(pk=finding.pk).update(status=decision)
        trial.record_integrity()
        forget_left_out()
    return review


def settle_from_reviews(trial: Trial, finding_ids: Sequence[int]) -> None:
    """Set each of these findings' status to its latest review's decision (latest by time,
    then id: the order `FindingReview` keeps), then the trial's integrity state: for reviews
    stored with the times they were made (a bundle's). Runs in the caller's transaction."""
    latest: dict[int, str] = {}
    for finding_id, decision in (
        FindingReview.objects.filter(finding_id__in=finding_ids)
        .order_by("finding_id", "created_at", "id")
        .values_list("finding_id", "decision")
    ):
        latest[finding_id] = decision
    for decision in sorted(set(latest.values())):
        IntegrityFinding.objects.filter(
            pk__in=[pk for pk, said in latest.items() if said == decision]
        ).update(status=decision)
    trial.record_integrity()
    forget_left_out()
