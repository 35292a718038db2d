"""pydantic models for everything that crosses a trust boundary.

The seed's models (`VerifierSpec`, `ValidityCheck`, `ErrorTag`, `EvaluationResult`, …) and our
own formats (`trial.json`, `scorers.json`, `judge.json`, `TrialBundle`) are strict: unknown
keys are errors. Harbor's files are read leniently in `rewards.ingest.harbor`, as Harbor
itself reads them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal
from uuid import UUID

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from rewards import rules

# Final keeps the Literal type, so it can be the default of the `format` field below.
BUNDLE_FORMAT: Final = "trialdesk.trial/1"


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


def _number(value: Any) -> Any:
    # Seed 000: a reward is "not a bool, not a string". pydantic's lax mode would turn
    # `true` into 1.0 and "0.5" into 0.5, so every number we read is checked first.
    if not rules.is_real_number(value):
        raise ValueError("must be a number")
    return value


def _integer(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be an integer")
    return value


def _unit(value: float) -> float:
    if not rules.is_unit_number(value):
        raise ValueError("must be a finite number between 0 and 1")
    return float(value)


Number = Annotated[float, BeforeValidator(_number)]
FiniteNumber = Annotated[float, BeforeValidator(_number), Field(allow_inf_nan=False)]
UnitFloat = Annotated[float, BeforeValidator(_number), AfterValidator(_unit)]
# Seed 003: the judge's rubric tiles are integers on 1-5 (4.0 is accepted as 4, 4.5 is not).
Rating = Annotated[int, BeforeValidator(_integer), Field(ge=1, le=5)]


def utc(value: datetime) -> datetime:
    """The one normaliser: naive datetimes (Harbor writes both kinds) are UTC, and every
    datetime is stored in UTC.

    One spelling per instant also makes a bundle's JSON, and so its digest, canonical.
    """
    if value.tzinfo is None or value.utcoffset() is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # e.g. year 1 with a positive offset: a field error, not a crash
        raise ValueError("the date is out of range once converted to UTC") from None


UtcDatetime = Annotated[datetime, AfterValidator(utc)]
# Integers that land in 64- and 32-bit columns.
BigInt = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]
Int32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
# Bounds match the columns the values land in, so an oversized value is a validation error
# naming its field, never a database refusal.
ShortStr = Annotated[str, Field(max_length=255)]
PathStr = Annotated[str, Field(max_length=1024)]


# --- seed 000 -----------------------------------------------------------------------------
class VerifierSpec(StrictModel):
    script: PathStr
    expected_output_path: PathStr
    reward_path: PathStr
    details_path: PathStr | None = None


class RewardFile(BaseModel):
    """reward.json: `{"reward": 0.0-1.0}`; the other keys are metrics."""

    model_config = ConfigDict(extra="allow")
    reward: UnitFloat


class DetailsDimension(BaseModel):
    model_config = ConfigDict(extra="allow")
    score: FiniteNumber
    max_score: FiniteNumber
    evidence: str | None = None
    # Not in seed 000's details.json; the rubric scorer reads it as the dimension's weight.
    weight: Annotated[FiniteNumber, Field(ge=0)] | None = None


class DetailsFile(BaseModel):
    """details.json: `{dimension: {score, max_score, evidence}}`."""

    model_config = ConfigDict(extra="forbid")
    dimensions: dict[str, DetailsDimension]

    @classmethod
    def from_data(cls, data: Any) -> DetailsFile:
        return cls.model_validate({"dimensions": data})


class ValidityCheck(StrictModel):
    output_parseable: bool
    schema_valid: bool
    verifier_completed: bool
    errors: list[str] = Field(default_factory=list)


class ErrorTag(StrictModel):
    category: Annotated[str, Field(min_length=1, max_length=255)]
    description: str | None = None
    # Seed 000 names mechanical, human and judge; "Tasks define their own categories", and a
    # newer pipeline's source is stored as given (the trial page shows it as unknown).
    source: Annotated[str, Field(min_length=1, max_length=32)]


class ConfidenceMetadata(BaseModel):
    """Statistical metadata; the seed names no fields, so the common ones are typed."""

    model_config = ConfigDict(extra="allow")
    method: str | None = None
    n: int | None = Field(default=None, ge=0)
    ci_low: float | None = Field(default=None, allow_inf_nan=False)
    ci_high: float | None = Field(default=None, allow_inf_nan=False)


class Annotation(StrictModel):
    reviewer_id: Annotated[str, Field(min_length=1, max_length=150)]
    reviewer_discipline: Annotated[str, Field(max_length=100)] | None = None
    timestamp: UtcDatetime
    judgment: Literal["pass", "fail", "defer"]
    categories: list[str] = Field(default_factory=list)
    notes: str | None = None
    reward_seen: float | None = None
    judge_verdict_seen: Literal["PASS", "FAIL", "UNPARSEABLE", ""] = ""
    # How it was made in a review queue: the time from the trial being handed out, and the
    # version of the queue's guidelines (Trialdesk's own bundles carry them).
    seconds_to_review: int | None = Field(default=None, ge=0, le=2**31 - 1)
    guideline_version: Annotated[str, Field(max_length=40)] | None = None


class StepComment(StrictModel):
    """A reviewer's comment on a step of the trajectory (the review app's `StepComment`): the
    step by its 1-based position, the part by kind and index among that kind, an optional
    character range of its text and the text it covered. `uid` names it across databases;
    `supersedes`, the uid of the earlier comment it corrects."""

    uid: UUID
    author_id: Annotated[str, Field(min_length=1, max_length=150)]
    timestamp: UtcDatetime
    step: int = Field(ge=1)
    part: Literal["message", "tool_call", "observation", "reasoning"]
    part_index: int = Field(default=0, ge=0, le=32767)
    start: int | None = Field(default=None, ge=0)
    end: int | None = Field(default=None, ge=1)
    quote: str = ""
    text: Annotated[str, Field(min_length=1)]
    supersedes: UUID | None = None

    @model_validator(mode="after")
    def _range_in_order(self) -> StepComment:
        if (self.start is None) != (self.end is None):
            raise ValueError("a range has both start and end, or neither")
        if self.start is not None and self.end is not None and self.start >= self.end:
            raise ValueError("a range's start comes before its end")
        return self


class FindingReview(StrictModel):
    """A person's word on a reward-integrity finding (the review app's `FindingReview`):
    confirmed or dismissed, by whom (username), when, and why."""

    reviewer_id: Annotated[str, Field(min_length=1, max_length=150)]
    timestamp: UtcDatetime
    decision: Literal["confirmed", "dismissed"]
    rationale: Annotated[str, Field(min_length=1)]


class IntegrityFinding(StrictModel):
    """What a reward-integrity detector saw in the trial (`rewards.models.IntegrityFinding`):
    the detector, the 1-based step (0: the workspace diff) and the matched text, which
    together name it; with its reviews, oldest first (the latest is where it stands)."""

    detector: Annotated[str, Field(min_length=1, max_length=64)]
    step: int = Field(default=0, ge=0, le=2**31 - 1)
    matched: str
    created_at: UtcDatetime | None = None
    reviews: list[FindingReview] = Field(default_factory=list)

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.detector, self.step, self.matched)


class DefectEntry(StrictModel):
    """One entry of the defective-task ledger of the trial's task (the review app's
    `DefectEntry`): who proposed, confirmed or cleared the task as defective, when, why, and
    on what evidence (links inside the Trialdesk it was exported from)."""

    author_id: Annotated[str, Field(min_length=1, max_length=150)]
    timestamp: UtcDatetime
    state: Literal["proposed", "confirmed", "cleared"]
    category: Literal["broken_test", "underspecified", "environment", "wrong_reference"]
    rationale: Annotated[str, Field(min_length=1)]
    evidence: list[Annotated[str, Field(max_length=500)]] = Field(
        default_factory=list, max_length=20
    )
    # The uid of each trial a link names, by the trial's id in the link: ingested, such a
    # link is pointed at the trial with that uid here, when it is stored.
    evidence_trials: dict[Annotated[str, Field(pattern="^[0-9]{1,18}$")], UUID] = Field(
        default_factory=dict, max_length=20
    )


class EvaluationResult(StrictModel):
    reward: Number
    validity: ValidityCheck
    breakdown: dict[str, Any] | None = None
    error_taxonomy: list[ErrorTag] | None = None
    confidence: ConfidenceMetadata | None = None
    annotations: list[Annotation] | None = None

    @model_validator(mode="after")
    def _reward_fits_validity(self) -> EvaluationResult:
        if not rules.is_unit_number(self.reward):
            raise ValueError(f"reward {self.reward!r} is outside [0, 1]")
        error = rules.cross_field_error(self.reward, self.validity.output_parseable)
        if error:
            raise ValueError(error)
        return self


# --- seed 003 -----------------------------------------------------------------------------
class ScorerResult(StrictModel):
    name: Annotated[str, Field(min_length=1, max_length=255)]
    # One of seed 003's catalog (`rules.SCORER_TYPES`) or a newer pipeline's type, stored as
    # given; an unknown type is required unless the row says otherwise.
    type: Annotated[str, Field(min_length=1, max_length=32)]
    required: bool | None = None
    verdict: Literal["PASS", "FAIL", "N/A", "NA"]
    score: UnitFloat | None = None
    detail: str = ""
    output_tail: str = ""
    config: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _defaults(self) -> ScorerResult:
        if self.verdict == "N/A":
            self.verdict = "NA"
        if self.required is None:
            self.required = rules.default_required(self.type)
        if self.score is None:
            self.score = 1.0 if self.verdict == "PASS" else 0.0
        return self


def _unset(value: Any) -> bool:
    return value is None


class Citation(StrictModel):
    """Where a fact check's evidence is: a step of the trial's trajectory (numbered as the
    judge is shown it, `[step N]`) and a short quote of that step's text.

    `found`, `part`, `start` and `end` are Trialdesk's finding (`rewards.citations`), made
    when the verdict is stored and never taken as given: the quote's character range in
    that part of the step (`rewards.reports.step_parts`), or `found` false ("citation not
    found") when the quote does not occur in the cited step."""

    step: int
    quote: str
    # Written only once checked: an unchecked citation is written as the judge gave it.
    found: bool | None = Field(default=None, exclude_if=_unset)
    part: int | None = Field(default=None, exclude_if=_unset)
    start: int | None = Field(default=None, exclude_if=_unset)
    end: int | None = Field(default=None, exclude_if=_unset)


class FactCheck(StrictModel):
    claim: str
    status: Annotated[str, Field(max_length=64)]
    evidence: str = ""
    # A fact check without citations is written as before citations existed, so stored
    # verdicts, exports and the content digests of earlier trials stay as they were.
    citations: list[Citation] = Field(default_factory=list, exclude_if=lambda found: not found)


class JudgeVerdict(StrictModel):
    verdict: Literal["PASS", "FAIL", "UNPARSEABLE"]
    task_completion: Rating | None = None
    instruction_adherence: Rating | None = None
    efficiency: Rating | None = None
    failure_mode: ShortStr | None = None
    reasoning: str = ""
    judge_model: ShortStr = ""
    scored_at: UtcDatetime | None = None
    fact_checks: list[FactCheck] = Field(default_factory=list)
    expected_outcome: Literal["completion", "refusal"] = "completion"
    raw_response: str = ""
    # Set when Trialdesk asked the judge (issue 21): the rubric's version
    # (`rewards.scoring.judge.RUBRIC_VERSION`) and the request's settings (temperature,
    # response format, max tokens, endpoint host, timeout, retries). A verdict read from
    # another pipeline's judge.json has neither unless it says.
    rubric_version: Annotated[str, Field(max_length=64)] = ""
    request_settings: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _rubric_complete(self) -> JudgeVerdict:
        if self.verdict != "UNPARSEABLE":
            missing = [
                name
                for name in ("task_completion", "instruction_adherence", "efficiency")
                if getattr(self, name) is None
            ]
            if missing:
                raise ValueError(f"a {self.verdict} verdict needs scores for {', '.join(missing)}")
        return self


# --- trial.json (contract layout) ------------------------------------------------------------
class TaskSpec(StrictModel):
    name: ShortStr | None = None
    source: ShortStr = ""
    checksum: Annotated[str, Field(max_length=128)] = ""
    instruction: str = ""
    verifier: VerifierSpec | None = None
    output_format: Literal["json", "jsonl", "csv", "toml", "yaml", "text", ""] = ""
    output_schema: dict[str, Any] | None = None
    rubric_strategy: Literal["weighted_mean", "min"] = "weighted_mean"
    pass_threshold: UnitFloat = 0.5
    scorers: list[dict[str, Any]] = Field(default_factory=list)


class AgentSpec(StrictModel):
    name: ShortStr = ""
    version: ShortStr = ""
    model: ShortStr = ""
    provider: ShortStr = ""


TrialStatus = Literal["pending", "running", "completed", "failed", "cancelled"]


class TrialFile(StrictModel):
    name: ShortStr | None = None
    job: ShortStr | None = None
    task: TaskSpec | None = None
    agent: AgentSpec | None = None
    status: TrialStatus = "completed"
    started_at: UtcDatetime | None = None
    finished_at: UtcDatetime | None = None
    error_tags: list[ErrorTag] = Field(default_factory=list)
    confidence: ConfidenceMetadata | None = None


class CommandOutput(StrictModel):
    command: str = ""
    exit_code: Int32 | None = None
    stdout_tail: str = ""
    stderr_tail: str = ""


class IngestProblem(StrictModel):
    """A part of a trial's artifacts that did not validate, kept as written.

    The trial is stored all the same (a readable reward is never dropped for a bad side
    file); `field` is the path inside `file` ("" for the whole file) and `raw` the part's
    text, so a reviewer sees what the pipeline wrote.
    """

    file: PathStr
    field: str = ""
    message: str
    raw: str = ""


# --- TrialBundle: the lossless one-trial interchange format --------------------------------
class JobRecord(StrictModel):
    name: Annotated[str, Field(min_length=1, max_length=255)]
    started_at: UtcDatetime | None = None
    finished_at: UtcDatetime | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    stats: dict[str, Any] = Field(default_factory=dict)
    source_path: str = ""


class TaskRecord(StrictModel):
    name: Annotated[str, Field(min_length=1, max_length=255)]
    source: ShortStr = ""
    checksum: Annotated[str, Field(max_length=128)] = ""
    instruction: str = ""
    verifier_script: PathStr = ""
    expected_output_path: PathStr = ""
    reward_path: PathStr = ""
    details_path: PathStr = ""
    output_format: Literal["json", "jsonl", "csv", "toml", "yaml", "text", ""] = ""
    output_schema: dict[str, Any] | None = None
    rubric_strategy: Literal["weighted_mean", "min"] = "weighted_mean"
    pass_threshold: UnitFloat = 0.5
    scorer_specs: list[dict[str, Any]] = Field(default_factory=list)


class TrialRecord(StrictModel):
    name: Annotated[str, Field(min_length=1, max_length=255)]
    uid: UUID
    agent_name: ShortStr = ""
    agent_version: ShortStr = ""
    model_name: ShortStr = ""
    model_provider: ShortStr = ""
    status: TrialStatus = "completed"
    started_at: UtcDatetime | None = None
    finished_at: UtcDatetime | None = None
    timings: dict[str, Any] = Field(default_factory=dict)
    n_input_tokens: BigInt | None = None
    n_cache_tokens: BigInt | None = None
    n_output_tokens: BigInt | None = None
    cost_usd: float | None = Field(default=None, allow_inf_nan=False)
    exception_type: ShortStr = ""
    exception_message: str = ""
    exception_traceback: str = ""
    config: dict[str, Any] = Field(default_factory=dict)
    trajectory: dict[str, Any] | list[Any] | None = None
    workspace_diff: str = ""
    command: str = ""
    exit_code: Int32 | None = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    final_response: str = ""
    verifier_stdout: str = ""
    ctrf: dict[str, Any] | None = None
    source_path: str = ""
    ingest_problems: list[IngestProblem] = Field(default_factory=list)


class ResultRecord(StrictModel):
    """One stored EvaluationResult, with the artifacts it was read from."""

    # Any number here (even out of range or NaN): `checked()` turns a bad one into 0.0 with
    # the reason, as seed 000 asks, instead of refusing the whole trial.
    reward: Number
    metrics: dict[str, FiniteNumber] = Field(default_factory=dict)
    validity: ValidityCheck
    breakdown: dict[str, Any] | None = None
    confidence: ConfidenceMetadata | None = None
    artifact_digest: Annotated[str, Field(min_length=64, max_length=64, pattern="^[0-9a-f]+$")]
    raw_artifacts: dict[str, str] = Field(default_factory=dict)
    is_current: bool = True
    created_at: UtcDatetime | None = None

    def checked(self) -> ResultRecord:
        """Apply the seed's EvaluationResult validator; a rejected reward is stored as 0.0.

        Seed 000: the cross-field validator rejects a non-zero reward for output that does
        not parse. We keep the trial (nothing lost): reward 0.0, the rejection in `errors`,
        the raw reward still in `raw_artifacts`.
        """
        try:
            EvaluationResult(reward=self.reward, validity=self.validity)
        except ValidationError as exc:
            message = exc.errors()[0]["msg"].removeprefix("Value error, ")
            validity = self.validity.model_copy(update={"errors": [*self.validity.errors, message]})
            return self.model_copy(update={"reward": 0.0, "validity": validity})
        return self


class TrialBundle(StrictModel):
    format: Literal["trialdesk.trial/1"] = BUNDLE_FORMAT
    job: JobRecord
    task: TaskRecord
    trial: TrialRecord
    results: list[ResultRecord] = Field(min_length=1)
    scorers: list[ScorerResult] = Field(default_factory=list)
    judge_verdicts: list[JudgeVerdict] = Field(default_factory=list)
    error_tags: list[ErrorTag] = Field(default_factory=list)
    annotations: list[Annotation] = Field(default_factory=list)
    step_comments: list[StepComment] = Field(default_factory=list)
    # The trial's integrity findings with their reviews, and its task's ledger entries,
    # oldest first: the review app's records, like annotations (outside the digest).
    integrity_findings: list[IntegrityFinding] = Field(default_factory=list)
    defect_entries: list[DefectEntry] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_current_result(self) -> TrialBundle:
        current = [r for r in self.results if r.is_current]
        if len(current) != 1:
            raise ValueError(f"a trial has exactly one current result, not {len(current)}")
        digests = [r.artifact_digest for r in self.results]
        if len(set(digests)) != len(digests):
            raise ValueError("two results carry the same artifact_digest")
        return self

    @property
    def current_result(self) -> ResultRecord:
        return next(r for r in self.results if r.is_current)

    @property
    def carries_review_records(self) -> bool:
        """Whether it carries what people made (annotations, step comments, finding reviews,
        ledger entries): the review app stores those (`rewards.ingest.writer.bundle_written`).
        """
        return bool(
            self.annotations
            or self.step_comments
            or self.defect_entries
            or any(f.reviews for f in self.integrity_findings)
        )


def describe_validation_error(exc: ValidationError, limit: int = 3) -> str:
    """Short, stable messages with field paths, safe to show (no input values echoed)."""
    parts = []
    for error in exc.errors(include_url=False, include_input=False)[:limit]:
        where = ".".join(str(p) for p in error["loc"]) or "(root)"
        parts.append(f"{where}: {error['msg']}")
    more = len(exc.errors()) - limit
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)
