"""Automated results: jobs, tasks, trials and what the verifier, scorers and judge said.

Trial carries summary columns (reward, gates, human judgment, disagreement) so the Data
Explorer reads one table; they are written only by `Trial.refresh_summary`,
`Trial.apply_summary`, `Trial.apply_verdict` and `Trial.record_human_summary`, never by a
view. Large blobs live in `TrialDetail`, a one-to-one side table that list queries never touch.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Exists, F, OuterRef, Prefetch, Q, Subquery
from django.db.models.functions import Coalesce
from django.db.models.lookups import Exact, LessThan
from django.utils import timezone
from django.utils.functional import cached_property
from pydantic import BaseModel

from rewards import rules, schemas


class _Blank:
    """What `unsaved` starts every instance of one model from."""

    def __init__(self, model: type[models.Model]) -> None:
        self.constants: dict[str, Any] = {}
        self.made: list[tuple[str, Any]] = []  # (attname, callable default)
        for f in model._meta.concrete_fields:
            if f.has_default() and callable(f.default):
                self.made.append((f.attname, f.default))
            else:
                self.constants[f.attname] = f.get_default()
        self.attnames = {f.attname for f in model._meta.concrete_fields}
        # Names a keyword may also give: a relation as an object, a property.
        self.settable = {f.name for f in model._meta.concrete_fields if f.is_relation}
        self.settable |= set(getattr(model._meta, "_property_names", ()))

    def defaults(self) -> dict[str, Any]:
        """Every column's default, by attname; a callable default called afresh."""
        values = dict(self.constants)
        for attname, make in self.made:
            values[attname] = make()
        return values


@functools.cache
def _blank(model: type[models.Model]) -> _Blank:
    return _Blank(model)


def unsaved[M: models.Model](model: type[M], **values: Any) -> M:
    """A new, unsaved instance, as `model(**values)` builds it (defaults for the fields not
    given), without Django's walk over every field for every keyword: ingest builds
    several per trial. The models here send no `pre_init`/`post_init` work."""
    blank = _blank(model)
    instance = model.__new__(model)
    instance._state = models.base.ModelState()
    state = instance.__dict__
    state.update(blank.defaults())
    for name, value in values.items():
        if name in blank.attnames:
            state[name] = value
        elif name in blank.settable:
            setattr(instance, name, value)
        else:
            raise TypeError(f"{model.__name__}() got an unexpected keyword argument {name!r}")
    return instance


def unsaved_values(model: type[models.Model], **values: Any) -> dict[str, Any]:
    """The column values `unsaved(model, **values)` would give its instance, by attname,
    without the instance: ingest inserts such rows as they are. Only columns may be given
    (a relation by its `_id`), since no instance holds a related object."""
    blank = _blank(model)
    unknown = values.keys() - blank.attnames
    if unknown:
        raise TypeError(f"{model.__name__}() got an unexpected keyword argument {min(unknown)!r}")
    state = blank.defaults()
    state.update(values)
    return state


class Verdict(models.TextChoices):
    PASS = "PASS", "PASS"
    FAIL = "FAIL", "FAIL"
    NA = "NA", "N/A"


class GateOutcome(models.TextChoices):
    """What a gate says about a trial; NONE when the gate did not run (no scorers, no judge)."""

    PASS = "PASS", "PASS"
    FAIL = "FAIL", "FAIL"
    UNPARSEABLE = "UNPARSEABLE", "Unparseable"
    NONE = "", "Not run"


class Disagreement(models.TextChoices):
    NONE = "", "None"
    JUDGE_PASS_SCORERS_FAIL = rules.JUDGE_PASS_SCORERS_FAIL, "Judge PASS, scorers FAIL"
    SCORERS_PASS_JUDGE_FAIL = rules.SCORERS_PASS_JUDGE_FAIL, "Scorers PASS, judge FAIL"
    ADVISORY_FAIL = rules.ADVISORY_FAIL, "Both PASS, advisory FAIL"


class HumanJudgment(models.TextChoices):
    NONE = "", "Unreviewed"
    PASS = "pass", "pass"
    FAIL = "fail", "fail"
    DEFER = "defer", "defer"
    MIXED = "mixed", "mixed"


class HumanDisagreement(models.TextChoices):
    NONE = "", "None"
    HUMAN_PASS_AUTOMATED_FAIL = rules.HUMAN_PASS_AUTOMATED_FAIL, "Human pass, automated fail"
    HUMAN_FAIL_AUTOMATED_PASS = rules.HUMAN_FAIL_AUTOMATED_PASS, "Human fail, automated pass"


class Integrity(models.TextChoices):
    """Where a trial's reward-integrity findings stand (`IntegrityFinding`), as one column."""

    NONE = "", "No findings"
    FLAGGED = "flagged", "flagged"  # findings nobody has settled, none confirmed
    CONFIRMED = "confirmed", "confirmed"  # a person confirmed at least one
    DISMISSED = "dismissed", "dismissed"  # every finding dismissed

    @classmethod
    def of(cls, statuses: Iterable[str]) -> Integrity:
        """A trial's state from its findings' statuses."""
        seen = set(statuses)
        if not seen:
            return cls.NONE
        if IntegrityFinding.Status.CONFIRMED in seen:
            return cls.CONFIRMED
        if seen == {IntegrityFinding.Status.DISMISSED}:
            return cls.DISMISSED
        return cls.FLAGGED


# In a job's stats when they come from Harbor's job result.json (`ingest.harbor.read_job`).
HARBOR_JOB_RESULT_KEY = "n_total_trials"


class JobQuerySet(models.QuerySet["Job"]):
    def with_running(self) -> JobQuerySet:
        """Each job with `running` (see `Job.is_running`) in the same query."""
        return self.annotate(running=_running())

    def running(self) -> JobQuerySet:
        return self.filter(_running())

    def by_start(self) -> JobQuerySet:
        """Newest run first: by when the job started (when it was imported, if it recorded no
        start: `Job.ran_at`), then by id. Jobs are few (hundreds): no index is needed."""
        return self.order_by(Job.ran_at().desc(), "-id")

    def started_before(self, ran_at: Any, pk: int) -> JobQuerySet:
        """The jobs after (`ran_at`, `pk`) in `by_start` order: a keyset page's next rows."""
        return self.filter(
            LessThan(Job.ran_at(), ran_at) | (Exact(Job.ran_at(), ran_at) & Q(id__lt=pk))
        )


def _running() -> Q:
    """`Job.is_running` as a condition on the job row."""
    unfinished = Trial.objects.unfinished().filter(job=OuterRef("pk"))
    started = Q(started_at__isnull=False, stats__has_key=HARBOR_JOB_RESULT_KEY)
    return Q(finished_at__isnull=True) & (started | Q(Exists(unfinished)))


class Job(models.Model):
    name = models.CharField(max_length=255, unique=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    config = models.JSONField(default=dict, blank=True)
    stats = models.JSONField(default=dict, blank=True)
    source_path = models.TextField(blank=True)
    imported_at = models.DateTimeField(auto_now_add=True)

    objects = JobQuerySet.as_manager()

    class Meta:
        ordering = ["-imported_at", "-id"]

    def __str__(self) -> str:
        return self.name

    @cached_property
    def is_running(self) -> bool:
        """Running until its result.json records finished_at. Harbor 0.24 writes that file
        as the job starts (started_at and the trial count, no finished_at); older releases
        only at the end, so a job without it (or any job not from Harbor) is running while
        any of its trials is unfinished. Read from `JobQuerySet.with_running` when the job
        was loaded through it."""
        annotated = self.__dict__.get("running")
        if annotated is not None:
            return bool(annotated)
        if self.finished_at is not None:
            return False
        if self.started_at is not None and HARBOR_JOB_RESULT_KEY in self.stats:
            return True
        return self.trials.unfinished().exists()

    @staticmethod
    def ran_at() -> Coalesce:
        """When the job ran: its start, or when it was imported if it recorded none."""
        return Coalesce("started_at", "imported_at")


class Task(models.Model):
    class OutputFormat(models.TextChoices):
        JSON = "json", "JSON"
        JSONL = "jsonl", "JSON Lines"
        CSV = "csv", "CSV"
        TOML = "toml", "TOML"
        YAML = "yaml", "YAML"
        TEXT = "text", "Text"
        NONE = "", "Not declared"

    class RubricStrategy(models.TextChoices):
        WEIGHTED_MEAN = "weighted_mean", "Weighted mean"
        MIN = "min", "Minimum"

    name = models.CharField(max_length=255)
    source = models.CharField(max_length=255, blank=True)
    checksum = models.CharField(max_length=128, blank=True)
    instruction = models.TextField(blank=True)
    verifier_script = models.CharField(max_length=1024, blank=True)
    expected_output_path = models.CharField(max_length=1024, blank=True)
    reward_path = models.CharField(max_length=1024, blank=True)
    details_path = models.CharField(max_length=1024, blank=True)
    output_format = models.CharField(max_length=8, choices=OutputFormat.choices, blank=True)
    output_schema = models.JSONField(null=True, blank=True)
    rubric_strategy = models.CharField(
        max_length=16, choices=RubricStrategy.choices, default=RubricStrategy.WEIGHTED_MEAN
    )
    pass_threshold = models.FloatField(default=0.5)
    # Seed 003, "Scorers freeze at seed time": the scenario's scorers as they were when the
    # task was created; later scenario edits never change them.
    scorer_specs = models.JSONField(default=list, blank=True)
    # The scenario version those scorers were copied from, when the task was seeded from one.
    scenario_version = models.ForeignKey(
        "ScenarioVersion",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="tasks",
    )

    class Meta:
        ordering = ["source", "name"]
        constraints = [
            # A task's identity includes its checksum: a changed task is a new task.
            models.UniqueConstraint(
                fields=["source", "name", "checksum"], name="task_unique_source_name_checksum"
            ),
            models.CheckConstraint(
                condition=Q(pass_threshold__gte=0) & Q(pass_threshold__lte=1),
                name="task_pass_threshold_in_unit_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source}/{self.name}" if self.source else self.name


# Trial statuses with no outcome yet.
UNFINISHED = ("pending", "running")


class TrialQuerySet(models.QuerySet["Trial"]):
    def for_job(self, job: Job) -> TrialQuerySet:
        return self.filter(job=job)

    def needs_review(self) -> TrialQuerySet:
        return self.filter(annotation_count=0)

    def with_gate_disagreement(self) -> TrialQuerySet:
        return self.exclude(gate_disagreement="")

    def with_human_disagreement(self) -> TrialQuerySet:
        return self.exclude(human_disagreement="")

    def with_ingest_problems(self) -> TrialQuerySet:
        return self.filter(problem_count__gt=0)

    def unfinished(self) -> TrialQuerySet:
        """Pending or running: no outcome yet (the job tallies leave them out)."""
        return self.filter(status__in=UNFINISHED)

    def integrity_flagged(self) -> TrialQuerySet:
        """Trials with reward-integrity findings, whatever became of them."""
        return self.exclude(integrity=Integrity.NONE)

    def with_confirmed_hack(self) -> TrialQuerySet:
        """Trials where a person confirmed an integrity finding: the reward was reached, not
        earned. Their stored reward is unchanged; a pass rate may leave them out."""
        return self.filter(integrity=Integrity.CONFIRMED)

    def without_confirmed_hack(self) -> TrialQuerySet:
        return self.exclude(integrity=Integrity.CONFIRMED)

    def list_columns(self) -> TrialQuerySet:
        """What a list needs: the trial row with its job and task, never a blob."""
        return self.select_related("job", "task")

    def for_judging(self) -> TrialQuerySet:
        """What the judge reads about each trial (`rewards.scoring.grading.judge_input_of`), in
        two queries whatever the number of trials: the columns it uses of the trial, its task
        and its blobs, the expected outcome of its latest verdict (`latest_expected_outcome`,
        None without one), then its scorers in order."""
        latest = (
            JudgeVerdict.objects.filter(trial=OuterRef("pk"))
            .order_by(*LATEST_VERDICT_FIRST)
            .values("expected_outcome")[:1]
        )
        return (
            self.select_related("task", "detail")
            .only(*JUDGED_TRIAL_COLUMNS)
            .annotate(latest_expected_outcome=Subquery(latest))
            .prefetch_related(Prefetch("scorers", ScorerResult.objects.order_by("position")))
        )

    def for_new_verdicts(self) -> TrialQuerySet:
        """What adding a verdict reads of the trial (`Trial.apply_verdict`): its scorers'
        overall verdict and the time of its latest verdict (`latest_scored_at`, None without
        one or when none has a time), to tell whether the new one is shown."""
        latest = (
            JudgeVerdict.objects.filter(trial=OuterRef("pk"))
            .order_by(*LATEST_VERDICT_FIRST)
            .values("scored_at")[:1]
        )
        return self.only("scorer_verdict").annotate(latest_scored_at=Subquery(latest))


# The columns `TrialQuerySet.for_judging` reads: the judge input's, not the summary's.
JUDGED_TRIAL_COLUMNS = (
    "reward",
    "exception_type",
    "exception_message",
    "source_path",
    "task__instruction",
    "task__scorer_specs",
    *(
        f"detail__{name}"
        for name in (
            "trajectory",
            "workspace_diff",
            "command",
            "exit_code",
            "stdout_tail",
            "stderr_tail",
            "final_response",
            "exception_traceback",
            "verifier_stdout",
            "ctrf",
        )
    ),
)


class Trial(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        COMPLETED = "completed", "completed"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    # No index of their own: the indexes below that lead with the job (trial_job_id_idx,
    # trial_unique_name_per_job) or the task (trial_task_id_idx) serve every lookup by them,
    # and each index costs every trial inserted.
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="trials", db_index=False)
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="trials", db_index=False)
    name = models.CharField(max_length=255)
    uid = models.UUIDField(default=uuid.uuid4, unique=True)
    agent_name = models.CharField(max_length=255, blank=True)
    agent_version = models.CharField(max_length=255, blank=True)
    model_name = models.CharField(max_length=255, blank=True)
    model_provider = models.CharField(max_length=255, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.COMPLETED)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    timings = models.JSONField(default=dict, blank=True)
    n_input_tokens = models.BigIntegerField(null=True, blank=True)
    n_cache_tokens = models.BigIntegerField(null=True, blank=True)
    n_output_tokens = models.BigIntegerField(null=True, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    exception_type = models.CharField(max_length=255, blank=True)
    exception_message = models.TextField(blank=True)
    source_path = models.TextField(blank=True)
    # sha256 of the bundle this trial was last written from: equal means "unchanged".
    content_digest = models.CharField(max_length=64, blank=True)
    # What the trial's folder looked like when it was read (`Folder.fingerprint`: names,
    # sizes and modification times): re-ingest skips an unchanged folder without reading it.
    # Empty for bundles that came from no folder, or a folder too large to fingerprint.
    source_fingerprint = models.CharField(max_length=64, blank=True, default="")

    # Summary columns: derived from the current result, scorers, judge and annotations.
    reward = models.FloatField(default=0.0)
    is_valid = models.BooleanField(default=False)
    scorer_verdict = models.CharField(max_length=12, choices=GateOutcome.choices, blank=True)
    scorer_mean = models.FloatField(null=True, blank=True)
    judge_verdict = models.CharField(max_length=12, choices=GateOutcome.choices, blank=True)
    failure_mode = models.CharField(max_length=255, blank=True)
    run_badge = models.CharField(max_length=12, choices=GateOutcome.choices, blank=True)
    gate_disagreement = models.CharField(max_length=32, choices=Disagreement.choices, blank=True)
    judge_task_completion = models.PositiveSmallIntegerField(null=True, blank=True)
    judge_instruction_adherence = models.PositiveSmallIntegerField(null=True, blank=True)
    judge_efficiency = models.PositiveSmallIntegerField(null=True, blank=True)
    error_categories = models.TextField(blank=True)
    judge_model = models.CharField(max_length=255, blank=True, default="")
    # The shown verdict's rubric version (`JudgeVerdict.rubric_version`), NULL when it records
    # none or there is no verdict: with `judge_model`, the judge version a job's pass rate is
    # counted under for its correction (review.science.calibration.shown_versions). Nullable
    # so that adding it did not rebuild the table on SQLite (and drop its triggers), and NULL
    # rather than '' for none, so that one value means it.
    judge_rubric_version = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    human_judgment = models.CharField(max_length=8, choices=HumanJudgment.choices, blank=True)
    human_disagreement = models.CharField(
        max_length=40, choices=HumanDisagreement.choices, blank=True
    )
    annotation_count = models.PositiveIntegerField(default=0)
    # Where its reward-integrity findings stand (`Integrity.of`), kept by
    # `Trial.record_integrity`: the explorer's "integrity" filter and the confirmed-hack
    # switch read this column alone.
    integrity = models.CharField(max_length=12, choices=Integrity.choices, blank=True, default="")
    # How many parts of the artifacts did not validate (kept raw in the detail's
    # ingest_problems): the explorer's "has ingestion problems" filter.
    problem_count = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TrialQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["job", "name"], name="trial_unique_name_per_job"),
            models.CheckConstraint(
                condition=Q(reward__gte=0) & Q(reward__lte=1), name="trial_reward_in_unit_range"
            ),
            models.CheckConstraint(
                condition=Q(scorer_mean__isnull=True)
                | (Q(scorer_mean__gte=0) & Q(scorer_mean__lte=1)),
                name="trial_scorer_mean_in_unit_range",
            ),
        ]
        indexes = [
            # Explorer: a job in ingested order (`sort=-id`), and a job's unstarted trials.
            models.Index(fields=["job", "-id"], name="trial_job_id_idx"),
            # Explorer, the default within a job: newest run first, the id as keyset
            # tie-breaker (a job is 1% of the trials: the global started index would walk
            # a hundred rows for each of the job's).
            models.Index(fields=["job", "started_at", "id"], name="trial_job_started_idx"),
            # Explorer: one job sorted by reward, the id as keyset tie-breaker.
            models.Index(fields=["job", "reward", "id"], name="trial_job_reward_idx"),
            # Explorer: sort by when the trial ran ("newest first"), the id as keyset
            # tie-breaker; trials without a start time are read by id (paging.first_rows).
            models.Index(fields=["started_at", "id"], name="trial_started_id_idx"),
            # Explorer, newest run first (the default): the trials without a start, after
            # those with one, by id; only those rows, so however few they are among many,
            # a page of them (or the trial page's next one) is one short index range.
            models.Index(
                fields=["-id"], name="trial_unstarted_idx", condition=Q(started_at__isnull=True)
            ),
            # Explorer: sort by reward with the id as keyset tie-breaker.
            models.Index(fields=["reward", "id"], name="trial_reward_id_idx"),
            # Explorer filters on a single gate, walked newest first.
            models.Index(fields=["scorer_verdict", "-id"], name="trial_scorer_verdict_idx"),
            models.Index(fields=["judge_verdict", "-id"], name="trial_judge_verdict_idx"),
            # Explorer filter "judge model" (the agreement page's breakdown links to it).
            models.Index(fields=["judge_model", "-id"], name="trial_judge_model_idx"),
            # A job's decided judge verdicts counted by judge version (the corrected pass
            # rate, review.science.calibration.shown_versions): every column the count reads,
            # so PostgreSQL reads this index alone, not the job's rows; only decided trials.
            models.Index(
                fields=["job", "judge_model", "judge_rubric_version", "judge_verdict"],
                name="trial_job_judge_version_idx",
                condition=Q(judge_verdict__in=["PASS", "FAIL"]),
            ),
            models.Index(fields=["task", "-id"], name="trial_task_id_idx"),
            models.Index(fields=["agent_name", "model_name", "-id"], name="trial_agent_model_idx"),
            # Explorer: sort by agent or by model, the id as keyset tie-breaker.
            models.Index(fields=["agent_name", "id"], name="trial_agent_id_idx"),
            models.Index(fields=["model_name", "id"], name="trial_model_id_idx"),
            # Explorer "disagreement" filter: only the few disagreeing trials are indexed.
            models.Index(
                fields=["gate_disagreement", "-id"],
                name="trial_gate_disagreement_idx",
                condition=~Q(gate_disagreement=""),
            ),
            models.Index(
                fields=["human_disagreement", "-id"],
                name="trial_human_disagreement_idx",
                condition=~Q(human_disagreement=""),
            ),
            # Explorer "has ingestion problems" filter: only the few such trials are indexed.
            models.Index(
                fields=["-id"], name="trial_ingest_problems_idx", condition=Q(problem_count__gt=0)
            ),
            # Explorer "integrity" filter and the confirmed-hack switch: only the few trials
            # with findings are indexed.
            models.Index(
                fields=["integrity", "-id"],
                name="trial_integrity_idx",
                condition=~Q(integrity=""),
            ),
            # A job's state (`Job.is_running`): its unfinished trials, a few while it runs.
            models.Index(
                fields=["job"], name="trial_unfinished_idx", condition=Q(status__in=UNFINISHED)
            ),
            # Review queue: the next unreviewed trial, newest first.
            models.Index(
                fields=["-id"], name="trial_unreviewed_idx", condition=Q(annotation_count=0)
            ),
            # Explorer sorted by when the trial ran, filtered by reviewers' latest judgments:
            # only the reviewed trials with a start are walked (`TrialFilterForm.listed`),
            # each probed in the latest judgments, instead of every trial.
            models.Index(
                fields=["started_at", "id"],
                name="trial_reviewed_started_idx",
                condition=Q(annotation_count__gt=0, started_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.job.name}/{self.name}"

    @property
    def is_running(self) -> bool:
        return self.status in UNFINISHED

    @property
    def automated_pass(self) -> bool:
        return rules.automated_pass(self.reward, self.task.pass_threshold)

    def refresh_summary(self) -> list[str]:
        """Recompute the automated summary columns from the stored rows; returns the fields.

        The caller saves (the ingest writer batches these updates).
        """
        # Only the columns the rules read: a result's raw artifacts and a verdict's raw
        # response can be large, and a re-judge runs this once per verdict.
        current = (
            self.results.filter(is_current=True)
            .only("reward", "output_parseable", "verifier_completed", "errors")
            .first()
        )
        scorers = [
            rules.ScorerOutcome(required=s.required, type=s.type, verdict=s.verdict, score=s.score)
            for s in self.scorers.only("required", "type", "verdict", "score")
        ]
        judge = (
            self.judge_verdicts.order_by(*JudgeVerdict.LATEST_FIRST)
            .only(
                "verdict",
                "failure_mode",
                "task_completion",
                "instruction_adherence",
                "efficiency",
                "judge_model",
                "rubric_version",
            )
            .first()
        )
        summary = rules.summarise(
            reward=current.reward if current else 0.0,
            is_valid=current.is_valid if current else False,
            verifier_completed=current.verifier_completed if current else False,
            scorers=scorers,
            judge_verdict=judge.verdict if judge else "",
            failure_mode=judge.failure_mode if judge else "",
            status=self.status,
            exception_type=self.exception_type,
            judge_tiles=(
                (judge.task_completion, judge.instruction_adherence, judge.efficiency)
                if judge
                else (None, None, None)
            ),
            error_categories=list(
                self.error_tags.order_by("id").values_list("category", flat=True)
            ),
            judge_model=judge.judge_model if judge else "",
            judge_rubric_version=judge.rubric_version if judge else "",
        )
        return self.apply_summary(summary)

    def apply_verdict(self, verdict: JudgeVerdict, *, advisory_failed: bool) -> dict[str, Any]:
        """Set the summary's judged columns (`rules.JUDGED_SUMMARY_FIELDS`) to this verdict's,
        now the one shown; returns them. The other columns stay as stored: every writer of
        the results, scorers and tags they come from refreshes them (under the trial's row
        lock), and a verdict changes none of them. `advisory_failed`: whether an advisory
        scorer of the trial failed (`rules.advisory_failed`)."""
        values = rules.judged_summary(
            scorer_verdict=self.scorer_verdict,
            advisory_fail=advisory_failed,
            judge_verdict=verdict.verdict,
            failure_mode=verdict.failure_mode,
            judge_tiles=(
                verdict.task_completion,
                verdict.instruction_adherence,
                verdict.efficiency,
            ),
            judge_model=verdict.judge_model,
            judge_rubric_version=verdict.rubric_version,
        )
        for name, value in values.items():
            setattr(self, name, value)
        return values

    def apply_summary(self, summary: rules.TrialSummary) -> list[str]:
        values = self.summary_values(summary, self.human_judgment, self.task.pass_threshold)
        for name, value in values.items():
            setattr(self, name, value)
        return list(values)

    @staticmethod
    def summary_values(
        summary: rules.TrialSummary, human_judgment: str, pass_threshold: float
    ) -> dict[str, Any]:
        """The summary columns `apply_summary` sets, for a trial with this human judgment
        whose task has this pass threshold."""
        values = {name: getattr(summary, name) for name in rules.SUMMARY_FIELDS}
        values["human_disagreement"] = rules.human_disagreement(
            human_judgment, summary.reward, pass_threshold
        )
        return values

    def record_human_summary(self, latest_judgments: list[str], annotation_count: int) -> None:
        """Store the human side: called by the review app whenever an annotation is added."""
        self.human_judgment = rules.human_consensus(latest_judgments)
        self.annotation_count = annotation_count
        self.human_disagreement = rules.human_disagreement(
            self.human_judgment, self.reward, self.task.pass_threshold
        )
        self.save(update_fields=["human_judgment", "annotation_count", "human_disagreement"])

    def record_integrity(self) -> None:
        """Store where the trial's findings stand: called whenever a finding is added,
        removed or settled."""
        self.integrity = Integrity.of(self.integrity_findings.values_list("status", flat=True))
        self.save(update_fields=["integrity"])


def confirmed_hack_trial_ids(job: Job | int) -> set[int]:
    """The ids of a job's trials with a confirmed integrity finding (one indexed query)."""
    return set(Trial.objects.filter(job=job).with_confirmed_hack().values_list("id", flat=True))


class IntegrityFinding(models.Model):
    """What a reward-integrity detector (`rewards.integrity.detectors`) saw in a trial: the
    detector, the trajectory step (1-based, 0 for the workspace diff) and the matched text.

    Made at ingest and by `manage.py integrity_scan`; evidence, never a verdict: the reward
    is never changed. `status` is the latest confirmation or dismissal a person recorded
    (the review app keeps the append-only history and sets it)."""

    class Status(models.TextChoices):
        OPEN = "open", "open"
        CONFIRMED = "confirmed", "confirmed"
        DISMISSED = "dismissed", "dismissed"

    # Looked up by integrity_finding_unique, which leads with the trial.
    trial = models.ForeignKey(
        Trial, on_delete=models.CASCADE, related_name="integrity_findings", db_index=False
    )
    detector = models.CharField(max_length=64)
    step = models.PositiveIntegerField(default=0)  # 0: seen in the workspace diff
    matched = models.TextField()
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.OPEN)
    # A default rather than auto_now_add: ingest builds the row before it is inserted.
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["step", "id"]
        constraints = [
            # A scan run again adds nothing it already found.
            models.UniqueConstraint(
                fields=["trial", "detector", "step", "matched"], name="integrity_finding_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.detector} at step {self.step}"

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.detector, self.step, self.matched)

    @property
    def is_confirmed(self) -> bool:
        return self.status == self.Status.CONFIRMED


class TrialDetail(models.Model):
    """The trial's large blobs, loaded only by the pages that show them."""

    trial = models.OneToOneField(Trial, on_delete=models.CASCADE, related_name="detail")
    config = models.JSONField(default=dict, blank=True)
    trajectory = models.JSONField(null=True, blank=True)
    workspace_diff = models.TextField(blank=True)
    command = models.TextField(blank=True)
    exit_code = models.IntegerField(null=True, blank=True)
    stdout_tail = models.TextField(blank=True)
    stderr_tail = models.TextField(blank=True)
    final_response = models.TextField(blank=True)
    exception_traceback = models.TextField(blank=True)
    verifier_stdout = models.TextField(blank=True)
    ctrf = models.JSONField(null=True, blank=True)
    # Parts of the artifacts that did not validate, as written (`schemas.IngestProblem`).
    ingest_problems = models.JSONField(default=list, blank=True)

    def __str__(self) -> str:
        return f"detail of trial {self.trial_id}"


class EvaluationResult(models.Model):
    # Looked up by result_unique_digest_per_trial, which leads with the trial.
    trial = models.ForeignKey(
        Trial, on_delete=models.CASCADE, related_name="results", db_index=False
    )
    reward = models.FloatField()
    metrics = models.JSONField(default=dict, blank=True)
    output_parseable = models.BooleanField()
    schema_valid = models.BooleanField()
    verifier_completed = models.BooleanField()
    errors = models.JSONField(default=list, blank=True)
    breakdown = models.JSONField(null=True, blank=True)
    confidence = models.JSONField(null=True, blank=True)
    artifact_digest = models.CharField(max_length=64)
    raw_artifacts = models.JSONField(default=dict, blank=True)
    is_current = models.BooleanField(default=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(reward__gte=0) & Q(reward__lte=1), name="result_reward_in_unit_range"
            ),
            # Seed 000: a non-zero reward for output that does not parse is invalid.
            models.CheckConstraint(
                condition=Q(output_parseable=True) | Q(reward=0),
                name="result_unparseable_output_has_zero_reward",
            ),
            models.UniqueConstraint(
                fields=["trial"], condition=Q(is_current=True), name="result_one_current_per_trial"
            ),
            # Idempotency: the same artifacts never make a second result.
            models.UniqueConstraint(
                fields=["trial", "artifact_digest"], name="result_unique_digest_per_trial"
            ),
        ]

    def __str__(self) -> str:
        return f"result {self.reward} for trial {self.trial_id}"

    @property
    def is_valid(self) -> bool:
        return rules.is_valid(self.output_parseable, self.verifier_completed, self.errors)

    # -- the bundle's record, both ways (the writer and the export use these alone) --------
    @staticmethod
    def values_of(record: schemas.ResultRecord, now: datetime) -> dict[str, Any]:
        """The columns the record gives a row (the link to its trial aside)."""
        validity = record.validity
        return {
            "reward": record.reward,
            "metrics": record.metrics,
            "output_parseable": validity.output_parseable,
            "schema_valid": validity.schema_valid,
            "verifier_completed": validity.verifier_completed,
            "errors": validity.errors,
            "breakdown": record.breakdown,
            "confidence": record.confidence.model_dump(mode="json") if record.confidence else None,
            "artifact_digest": record.artifact_digest,
            "raw_artifacts": record.raw_artifacts,
            "is_current": record.is_current,
            "created_at": schemas.utc(record.created_at) if record.created_at else now,
        }

    def to_record(self) -> schemas.ResultRecord:
        return schemas.ResultRecord(
            reward=self.reward,
            metrics=self.metrics,
            validity=schemas.ValidityCheck(
                output_parseable=self.output_parseable,
                schema_valid=self.schema_valid,
                verifier_completed=self.verifier_completed,
                errors=self.errors,
            ),
            breakdown=self.breakdown,
            confidence=(
                schemas.ConfidenceMetadata.model_validate(self.confidence)
                if self.confidence
                else None
            ),
            artifact_digest=self.artifact_digest,
            raw_artifacts=self.raw_artifacts,
            is_current=self.is_current,
            created_at=self.created_at,
        )


class ErrorTag(models.Model):
    trial = models.ForeignKey(Trial, on_delete=models.CASCADE, related_name="error_tags")
    category = models.CharField(max_length=255)
    description = models.TextField(blank=True)
    # One of `rules.ERROR_SOURCES`, or a newer pipeline's own, stored as given.
    source = models.CharField(max_length=32)

    class Meta:
        ordering = ["id"]
        indexes = [
            # Explorer filter "error category".
            models.Index(fields=["category", "trial"], name="errortag_category_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.source}: {self.category}"

    @property
    def is_known_source(self) -> bool:
        return self.source in rules.ERROR_SOURCES

    @staticmethod
    def values_of(record: schemas.ErrorTag) -> dict[str, Any]:
        """The columns the record gives a row (the link to its trial aside)."""
        return {
            "category": record.category,
            "description": record.description or "",
            "source": record.source,
        }

    def to_record(self) -> schemas.ErrorTag:
        return schemas.ErrorTag(
            category=self.category, description=self.description or None, source=self.source
        )


class ScorerResult(models.Model):
    # Looked up by scorer_unique_position, which leads with the trial.
    trial = models.ForeignKey(
        Trial, on_delete=models.CASCADE, related_name="scorers", db_index=False
    )
    position = models.PositiveIntegerField()
    name = models.CharField(max_length=255)
    # One of seed 003's catalog (`rules.SCORER_TYPES`), or a newer pipeline's type stored as
    # given and shown as unknown.
    type = models.CharField(max_length=32)
    required = models.BooleanField()
    verdict = models.CharField(max_length=4, choices=Verdict.choices)
    score = models.FloatField()
    detail = models.TextField(blank=True)
    output_tail = models.TextField(blank=True)
    config = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["trial", "position"], name="scorer_unique_position"),
            models.CheckConstraint(
                condition=Q(score__gte=0) & Q(score__lte=1), name="scorer_score_in_unit_range"
            ),
            models.CheckConstraint(
                condition=Q(verdict__in=Verdict.values), name="scorer_verdict_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name}: {self.verdict}"

    @property
    def is_advisory(self) -> bool:
        return rules.is_advisory(self.type, self.required)

    @property
    def type_label(self) -> str:
        return rules.scorer_type_label(self.type)

    @property
    def is_known_type(self) -> bool:
        return self.type in rules.SCORER_TYPES

    @staticmethod
    def values_of(position: int, record: schemas.ScorerResult) -> dict[str, Any]:
        """The columns the record gives a row (the link to its trial aside)."""
        return {
            "position": position,
            "name": record.name,
            "type": record.type,
            "required": bool(record.required),
            "verdict": record.verdict,
            "score": float(record.score or 0.0),
            "detail": record.detail,
            "output_tail": record.output_tail,
            "config": record.config,
        }

    def to_record(self) -> schemas.ScorerResult:
        return schemas.ScorerResult(
            name=self.name,
            type=self.type,
            required=self.required,
            verdict=self.verdict,
            score=self.score,
            detail=self.detail,
            output_tail=self.output_tail,
            config=self.config,
        )

    @property
    def is_hard_failure(self) -> bool:
        return self.verdict == Verdict.FAIL and not self.is_advisory


# The verdict shown is the latest scored one; an unscored verdict counts as the oldest.
# nulls_last is explicit because PostgreSQL puts NULLs first in a descending sort and SQLite
# last; the writer's in-memory `latest_judge` follows the same order.
LATEST_VERDICT_FIRST = (F("scored_at").desc(nulls_last=True), F("id").desc())


class JudgeVerdict(models.Model):
    class Outcome(models.TextChoices):
        PASS = "PASS", "PASS"
        FAIL = "FAIL", "FAIL"
        UNPARSEABLE = "UNPARSEABLE", "Unparseable"

    class ExpectedOutcome(models.TextChoices):
        COMPLETION = "completion", "completion"
        REFUSAL = "refusal", "refusal"

    trial = models.ForeignKey(Trial, on_delete=models.CASCADE, related_name="judge_verdicts")
    verdict = models.CharField(max_length=12, choices=Outcome.choices)
    task_completion = models.PositiveSmallIntegerField(null=True, blank=True)
    instruction_adherence = models.PositiveSmallIntegerField(null=True, blank=True)
    efficiency = models.PositiveSmallIntegerField(null=True, blank=True)
    failure_mode = models.CharField(max_length=255, blank=True)
    reasoning = models.TextField(blank=True)
    judge_model = models.CharField(max_length=255, blank=True)
    scored_at = models.DateTimeField(null=True, blank=True)
    fact_checks = models.JSONField(default=list, blank=True)
    expected_outcome = models.CharField(
        max_length=12, choices=ExpectedOutcome.choices, default=ExpectedOutcome.COMPLETION
    )
    raw_response = models.TextField(blank=True)
    # How the verdict was asked for, when Trialdesk asked (issue 21): the rubric's version
    # (a digest of the judge's system prompt and answer schema) and the request's settings.
    # Empty for a verdict ingested from a judge.json that does not say.
    rubric_version = models.CharField(max_length=64, blank=True)
    request_settings = models.JSONField(default=dict, blank=True)
    # The grading batch item that asked for this verdict (none for an ingested one). One to
    # one: the database refuses a second verdict for an item (issue 21, "Exactly once").
    batch_item = models.OneToOneField(
        "GradingItem",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="verdict",
    )

    LATEST_FIRST = LATEST_VERDICT_FIRST

    class Meta:
        ordering = list(LATEST_VERDICT_FIRST)
        constraints = [
            models.CheckConstraint(
                condition=Q(verdict__in=["PASS", "FAIL", "UNPARSEABLE"]),
                name="judge_verdict_valid",
            ),
            # Seed 003: a PASS or FAIL verdict carries all three rubric tiles; only a judge
            # failure (UNPARSEABLE) may lack them.
            models.CheckConstraint(
                condition=Q(verdict="UNPARSEABLE")
                | Q(
                    task_completion__isnull=False,
                    instruction_adherence__isnull=False,
                    efficiency__isnull=False,
                ),
                name="judge_rubric_complete_unless_unparseable",
            ),
            *[
                models.CheckConstraint(
                    condition=Q(**{f"{field}__isnull": True})
                    | (Q(**{f"{field}__gte": 1}) & Q(**{f"{field}__lte": 5})),
                    name=f"judge_{field}_1_to_5",
                )
                for field in ("task_completion", "instruction_adherence", "efficiency")
            ],
        ]

    def __str__(self) -> str:
        return f"judge {self.verdict} for trial {self.trial_id}"

    @classmethod
    def from_record(cls, trial: Trial, record: schemas.JudgeVerdict) -> JudgeVerdict:
        return unsaved(cls, trial=trial, **cls.values_of(record))

    @staticmethod
    def values_of(record: schemas.JudgeVerdict) -> dict[str, Any]:
        """The columns the record gives a row (the link to its trial aside)."""
        return {
            "verdict": record.verdict,
            "task_completion": record.task_completion,
            "instruction_adherence": record.instruction_adherence,
            "efficiency": record.efficiency,
            "failure_mode": record.failure_mode or "",
            "reasoning": record.reasoning,
            "judge_model": record.judge_model,
            "scored_at": schemas.utc(record.scored_at) if record.scored_at else None,
            "fact_checks": [f.model_dump() for f in record.fact_checks],
            "expected_outcome": record.expected_outcome,
            "raw_response": record.raw_response,
            "rubric_version": record.rubric_version,
            "request_settings": record.request_settings,
        }

    def to_record(self) -> schemas.JudgeVerdict:
        return schemas.JudgeVerdict(
            verdict=self.verdict,
            task_completion=self.task_completion,
            instruction_adherence=self.instruction_adherence,
            efficiency=self.efficiency,
            failure_mode=self.failure_mode or None,
            reasoning=self.reasoning,
            judge_model=self.judge_model,
            scored_at=self.scored_at,
            fact_checks=[schemas.FactCheck.model_validate(f) for f in self.fact_checks],
            expected_outcome=self.expected_outcome,
            raw_response=self.raw_response,
            rubric_version=self.rubric_version,
            request_settings=self.request_settings,
        )

    @property
    def request_settings_shown(self) -> list[tuple[str, str]]:
        """The request's settings as (name, value) text, for the verdict card, by name (a
        JSON column keeps no order on PostgreSQL); what an ingested judge.json put there is
        shown as written (escaped by the template)."""
        settings = self.request_settings if isinstance(self.request_settings, dict) else {}
        return sorted(
            (str(name), "—" if value is None else str(value)) for name, value in settings.items()
        )

    @property
    def rubric_tiles(self) -> list[tuple[str, Any]]:
        return [
            ("Task completion", self.task_completion),
            ("Instruction adherence", self.instruction_adherence),
            ("Efficiency", self.efficiency),
        ]


class GradingBatchQuerySet(models.QuerySet["GradingBatch"]):
    def with_counts(self) -> GradingBatchQuerySet:
        """Each batch with its items counted by state (`queued`, `running`, … `total`)."""
        items = {
            state.value: models.Count("items", filter=Q(items__state=state))
            for state in GradingItem.State
        }
        return self.annotate(total=models.Count("items"), **items)


class GradingBatch(models.Model):
    """One re-judge asked for by someone: of one trial, or of an explorer filter's trials.

    Its items (one per trial) are the work list that `rewards.scoring.batches` hands to task
    workers; the batch records what was asked, by whom and when.
    """

    trial = models.ForeignKey(
        Trial, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The explorer filter's query string ("" with `trial`, or for every trial).
    query = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="grading_batches",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    # When its items were written. A batch of an explorer filter is created at once and its
    # trials listed by a worker (`review.grading.list_batch`), so that asking answers at once.
    listed_at = models.DateTimeField(null=True, blank=True)
    # The task result id of the worker task listing it, while it waits or runs.
    lister_id = models.CharField(max_length=64, blank=True)
    # Why the batch grades nothing: its filter matched no trial, or too many.
    problem = models.TextField(blank=True)
    # Task result ids of the runners enqueued for this batch (django.tasks), newest last:
    # recovery asks whether one of them is still waiting before it enqueues another.
    runner_ids = models.JSONField(default=list, blank=True)

    objects = GradingBatchQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"grading batch {self.pk}"

    @property
    def listing(self) -> bool:
        """Its filter's trials are still being listed by a worker."""
        return self.listed_at is None and not self.problem and self.cancelled_at is None

    @property
    def what(self) -> str:
        if self.trial_id is not None:
            return f"trial {self.trial_id}"
        return f"filter ?{self.query}" if self.query else "every trial"


class GradingItem(models.Model):
    """One trial of a batch, and where its judging stands."""

    class State(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    batch = models.ForeignKey(GradingBatch, on_delete=models.CASCADE, related_name="items")
    trial = models.ForeignKey(Trial, on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    reason = models.TextField(blank=True)  # why it failed
    attempts = models.PositiveSmallIntegerField(default=0)
    # Who holds a running item: a fresh token per claim, so a runner that lost its lease
    # (its item was claimed again after the heartbeat stopped) cannot finish it.
    claim = models.UUIDField(null=True, blank=True)
    # The task result id of the runner that claimed it last: when the item's heartbeat stops,
    # that runner's task is marked failed, not left "running" in the queue for ever.
    runner = models.CharField(max_length=64, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["batch", "id"]
        constraints = [
            models.UniqueConstraint(fields=["batch", "trial"], name="grading_item_one_per_trial"),
            models.CheckConstraint(
                condition=Q(state__in=["queued", "running", "done", "failed", "cancelled"]),
                name="grading_item_state_valid",
            ),
        ]
        indexes = [
            # The runners' claim scan: the next unfinished item of a batch, in id order.
            models.Index(
                fields=["batch", "id"],
                name="grading_item_open_idx",
                condition=Q(state__in=["queued", "running"]),
            ),
        ]

    def __str__(self) -> str:
        return f"trial {self.trial_id} in batch {self.batch_id}: {self.state}"


class Scenario(models.Model):
    """A coding scenario (seed 003, "Configuring scorers"): a named list of scorer specs.

    Staff edit it in the app; every save is a new, immutable `ScenarioVersion`, and a task
    created from the scenario freezes the version it was seeded with.
    """

    name = models.CharField(max_length=255, unique=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ScenarioVersion(models.Model):
    scenario = models.ForeignKey(Scenario, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    scorer_specs = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["scenario", "-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["scenario", "number"], name="scenario_version_unique_number"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.scenario.name} v{self.number}"


class IngestUpload(models.Model):
    """A `.jsonl` bundle or a zipped Harbor job folder uploaded by staff on the upload page,
    ingested by a task worker (`rewards.uploads.ingest_upload`), never in the request.

    The file is kept in the row until a worker has ingested it (a worker may run on another
    machine), then dropped; the row keeps what the ingest reported.
    """

    class Kind(models.TextChoices):
        BUNDLE = "jsonl", ".jsonl bundle"
        ZIP = "zip", "zipped job folder"

    class State(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "ingesting"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    # The file's name as uploaded: text from outside, shown escaped.
    name = models.CharField(max_length=255)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    size = models.PositiveBigIntegerField()
    data = models.BinaryField(blank=True, editable=False)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="ingest_uploads",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    state = models.CharField(max_length=8, choices=State.choices, default=State.QUEUED)
    # The ingest summary's counts (`rewards.ingest.report.STATUSES`) and its lines.
    counts = models.JSONField(default=dict, blank=True)
    problems = models.PositiveIntegerField(default=0)  # trials stored with ingestion problems
    lines = models.JSONField(default=list, blank=True)
    job_names = models.JSONField(default=list, blank=True)  # the jobs its trials went to
    # Why nothing could be ingested (an unsafe archive, a file that is no bundle…).
    problem = models.TextField(blank=True)
    task_id = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"upload {self.pk}"

    @property
    def is_pending(self) -> bool:
        return self.state in (self.State.QUEUED, self.State.RUNNING)

    @property
    def stored(self) -> int:
        """Trials stored by it, new or changed."""
        return int(self.counts.get("ingested", 0)) + int(self.counts.get("updated", 0))


# --- records and rows, both ways --------------------------------------------------------------
# A bundle record's field and the column that stores it share a name: the writer (record →
# row) and the export (row → record) both go by these functions, so a field added to a record
# and to its model travels both ways with no list to update.
@functools.cache
def record_columns(record: type[BaseModel], model: type[models.Model]) -> tuple[str, ...]:
    """The fields of `record` that `model`'s table stores, in the record's order."""
    columns = {f.attname for f in model._meta.concrete_fields if not f.primary_key}
    return tuple(name for name in record.model_fields if name in columns)


def column_values(
    record: BaseModel, model: type[models.Model], *, exclude: Iterable[str] = ()
) -> dict[str, Any]:
    """The row values of `model` that `record` carries (datetimes in UTC, nested records
    as JSON data)."""
    skipped = set(exclude)
    return {
        name: _column_value(getattr(record, name))
        for name in record_columns(type(record), model)
        if name not in skipped
    }


def record_values(record: type[BaseModel], *rows: models.Model | None) -> dict[str, Any]:
    """The fields of `record` read back from stored rows, each from the first row whose
    table stores it (rows given as None are skipped)."""
    values: dict[str, Any] = {}
    for row in rows:
        if row is not None:
            for name in record_columns(record, type(row)):
                values.setdefault(name, getattr(row, name))
    return values


def _column_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return schemas.utc(value)
    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        return [item.model_dump(mode="json") for item in value]
    return value
