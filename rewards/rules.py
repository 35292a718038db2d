"""The scoring rules of the two source documents, as plain functions.

Seed 000 ("Scoring") gives the verifier contract, the validity gates and the cross-field
rule; seed 003 ("Scorers and grading") gives required vs advisory scorers, OVERALL, the
judge and the three independent gates. Nothing here touches the database.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewards.formats import (
    ArtifactError,
    declared_format,
    loads_bounded,
    parse_output,
    schema_error,
    yaml_has_aliases,
)

# --- Names of the disagreements (stable strings: stored, filtered on, exported) ----------
# (ruff's S105 reads "…_PASS…" names as passwords; these are labels.)
JUDGE_PASS_SCORERS_FAIL = "judge_pass_scorers_fail"  # noqa: S105
SCORERS_PASS_JUDGE_FAIL = "scorers_pass_judge_fail"  # noqa: S105
ADVISORY_FAIL = "advisory_fail"
HUMAN_PASS_AUTOMATED_FAIL = "human_pass_automated_fail"  # noqa: S105
HUMAN_FAIL_AUTOMATED_PASS = "human_fail_automated_pass"  # noqa: S105

PASS, FAIL, NA, UNPARSEABLE = "PASS", "FAIL", "NA", "UNPARSEABLE"

# Seed 003: only these two heuristic detectors default to advisory; llm_judge is advisory
# whatever its flag says ("required is non-gating and only affects judge context input").
ADVISORY_BY_DEFAULT = frozenset({"no_new_skips", "assertions_not_weakened"})
NEVER_GATING = frozenset({"llm_judge"})
# Seed 000's error sources; a newer pipeline's own source is stored as given.
ERROR_SOURCES = ("mechanical", "human", "judge")
SCORER_TYPES = (
    "command",
    "allowed_paths",
    "forbid_paths",
    "max_files_changed",
    "forbid_secrets",
    "file_exists",
    "tests_unmodified",
    "baseline_unmodified",
    "no_new_skips",
    "assertions_not_weakened",
    "llm_judge",
)


# --- reward.json --------------------------------------------------------------------------
@dataclass(frozen=True)
class RewardReading:
    """What a reward file said, after the seed's validation."""

    reward: float
    verifier_completed: bool
    metrics: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def is_real_number(value: Any) -> bool:
    """An int or float that is not a bool (JSON `true` is not a number)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def finite_float(value: Any) -> float | None:
    """The value as a finite float, or None when it is not a finite real number.

    An int too large for a float (JSON allows `1` followed by 400 zeros) is not finite here:
    `math.isfinite` and `float` would raise OverflowError on it.
    """
    if not is_real_number(value):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def is_unit_number(value: Any) -> bool:
    """A real number in [0, 1]: not a bool, not a string, not NaN or infinite."""
    number = finite_float(value)
    return number is not None and 0.0 <= number <= 1.0


def _numeric_metrics(data: dict[str, Any]) -> dict[str, float]:
    # Seed 000 names only `reward`; DESIGN §4 keeps the other numeric keys as metrics.
    metrics: dict[str, float] = {}
    for key, value in data.items():
        number = finite_float(value)
        if key != "reward" and number is not None:
            metrics[str(key)] = number
    return metrics


def read_reward_data(data: Any) -> RewardReading:
    """Validate parsed reward.json content (seed 000: `{"reward": 0.0-1.0}`)."""
    if not isinstance(data, dict):
        return RewardReading(0.0, True, errors=["reward file is not a JSON object"])
    metrics = _numeric_metrics(data)
    if "reward" not in data:
        return RewardReading(0.0, True, metrics, ["reward file has no 'reward' key"])
    value = data["reward"]
    if not is_real_number(value):
        kind = "a boolean" if isinstance(value, bool) else f"of type {type(value).__name__}"
        return RewardReading(0.0, True, metrics, [f"reward is {kind}, not a number"])
    number = finite_float(value)
    if number is None:
        return RewardReading(0.0, True, metrics, ["reward is not a finite number"])
    if not 0.0 <= number <= 1.0:
        return RewardReading(0.0, True, metrics, [f"reward {number!r} is outside [0, 1]"])
    # `+ 0.0` turns -0.0 into 0.0, so the stored and exported value is the plain zero.
    return RewardReading(number + 0.0, True, metrics)


def read_reward_json(raw: bytes | None) -> RewardReading:
    """Read reward.json bytes; None means the file never appeared."""
    if raw is None:
        return RewardReading(
            0.0, False, errors=["reward file missing: the verifier did not finish"]
        )
    try:
        data = loads_bounded(raw)
    except ArtifactError as exc:
        return RewardReading(0.0, True, errors=[f"reward file unreadable: {exc}"])
    return read_reward_data(data)


def read_reward_txt(raw: bytes) -> RewardReading:
    """Harbor's reward.txt holds a bare number; it means `{"reward": <number>}`."""
    try:
        # utf-8-sig: a BOM is not whitespace to str.strip, and float() would refuse it.
        text = raw.decode("utf-8-sig").strip()
        value = float(text)
    except (UnicodeDecodeError, ValueError):
        return RewardReading(0.0, True, errors=["reward.txt does not hold a number"])
    return read_reward_data({"reward": value})


# --- validity gate -------------------------------------------------------------------------
@dataclass(frozen=True)
class OutputCheck:
    output_parseable: bool
    schema_valid: bool
    errors: list[str] = field(default_factory=list)


def check_output(
    raw: bytes | None,
    *,
    expected_output_path: str,
    output_format: str,
    output_schema: dict[str, Any] | None,
) -> OutputCheck:
    """Seed 000's first two flags: does the output parse, and does it match its schema?"""
    if not expected_output_path:
        return OutputCheck(True, True)
    if raw is None:
        return OutputCheck(False, False, [f"output file missing: {expected_output_path}"])
    fmt = declared_format(output_format, expected_output_path)
    try:
        parsed = parse_output(raw, fmt)
    except ArtifactError as exc:
        return OutputCheck(False, False, [f"output does not parse as {fmt}: {exc}"])
    if not output_schema:
        return OutputCheck(True, True)
    if fmt == "yaml" and yaml_has_aliases(raw):
        # Aliases build a small graph that a recursive schema walks as a tree exponentially
        # large (a 300-byte file takes minutes): the output parses, but is not checked.
        return OutputCheck(True, False, [YAML_ALIASES])
    error = schema_error(parsed, output_schema)
    if error:
        return OutputCheck(True, False, [error])
    return OutputCheck(True, True)


YAML_ALIASES = "output uses YAML aliases: not checked against the schema (unbounded expansion)"


def is_valid(output_parseable: bool, verifier_completed: bool, errors: Sequence[str]) -> bool:
    return output_parseable and verifier_completed and not errors


def cross_field_error(reward: float, output_parseable: bool) -> str | None:
    """Seed 000: `output_parseable=False` with a non-zero reward is rejected."""
    if not output_parseable and reward != 0.0:
        return f"reward {reward!r} rejected: the output does not parse, so only 0.0 is valid"
    return None


# --- scorers (seed 003) ---------------------------------------------------------------------
def scorer_type_label(scorer_type: str) -> str:
    """`max_files_changed` → "Max files changed"; LLM stays upper case."""
    label = scorer_type.replace("_", " ").capitalize()
    return label.replace("Llm ", "LLM ")


def default_required(scorer_type: str) -> bool:
    """Seed 003, "Required by default": all but the two heuristic detectors and llm_judge."""
    return scorer_type not in ADVISORY_BY_DEFAULT and scorer_type not in NEVER_GATING


def is_advisory(scorer_type: str, required: bool) -> bool:
    return scorer_type in NEVER_GATING or not required


def is_applicable(verdict: str) -> bool:
    # scorers.json writes "N/A"; the schema and the database store "NA". Accept both here
    # so a caller that skips the schema cannot make an N/A count as a score of 0.
    return verdict not in {NA, "N/A"}


@dataclass(frozen=True)
class ScorerOutcome:
    required: bool
    type: str
    verdict: str
    score: float


def scorers_overall(scorers: Sequence[ScorerOutcome]) -> str:
    """OVERALL: FAIL when any required, applicable scorer fails; '' when there are none."""
    if not scorers:
        return ""
    gating_failure = any(s.verdict == FAIL and not is_advisory(s.type, s.required) for s in scorers)
    return FAIL if gating_failure else PASS


def scorers_mean(scorers: Iterable[ScorerOutcome]) -> float | None:
    """Mean score of the applicable scorers (N/A neither passes nor fails, nor counts)."""
    scores = [s.score for s in scorers if is_applicable(s.verdict)]
    if not scores:
        return None
    return round(sum(scores) / len(scores), 4)


def advisory_failed(scorers: Iterable[ScorerOutcome]) -> bool:
    return any(s.verdict == FAIL and is_advisory(s.type, s.required) for s in scorers)


# --- gates ----------------------------------------------------------------------------------
def run_badge(status: str, exception_type: str, verifier_completed: bool) -> str:
    """Run badge: the run completed and passed generic run metrics."""
    if status in {"pending", "running"}:
        return ""
    if status == "completed" and not exception_type and verifier_completed:
        return PASS
    return FAIL


# What the run badge measures, in words: whether the run itself ended cleanly, never whether
# the task was solved (the reward and the gates say that).
RUN_COMPLETED, RUN_ERRORED, RUN_TIMED_OUT, RUN_CANCELLED, RUN_RUNNING = (
    "completed",
    "errored",
    "timed out",
    "cancelled",
    "running",
)


def run_outcome(badge: str, exception_type: str) -> str:
    """The stored run badge read as what it measures: completed, errored, timed out,
    cancelled, or running (no badge yet). A timeout is any exception type naming one
    (Harbor's AgentTimeoutError, VerifierTimeoutError)."""
    if not badge:
        return RUN_RUNNING
    if badge == PASS:
        return RUN_COMPLETED
    if "timeout" in exception_type.lower():
        return RUN_TIMED_OUT
    if exception_type == "CancelledError":
        return RUN_CANCELLED
    return RUN_ERRORED


def gate_disagreement(scorer_verdict: str, judge_verdict: str, advisory_fail: bool) -> str:
    """Seed 003, "When the gates disagree": the three named cases."""
    if judge_verdict == PASS and scorer_verdict == FAIL:
        return JUDGE_PASS_SCORERS_FAIL
    if scorer_verdict == PASS and judge_verdict == FAIL:
        return SCORERS_PASS_JUDGE_FAIL
    if scorer_verdict == PASS and judge_verdict == PASS and advisory_fail:
        return ADVISORY_FAIL
    return ""


def automated_pass(reward: float, pass_threshold: float) -> bool:
    return reward >= pass_threshold


def latest_per_reviewer(annotations: Iterable[tuple[Hashable, Any, str]]) -> list[str]:
    """The latest judgment of each reviewer from `(reviewer, order_key, judgment)` triples.

    DESIGN §3: annotations are append-only and a reviewer changes their mind by adding a
    newer one; only the latest per reviewer counts. `order_key` is anything comparable that
    grows with time, e.g. `(created_at, id)`; on a tie the later triple wins.
    """
    latest: dict[Hashable, tuple[Any, str]] = {}
    for reviewer, order_key, judgment in annotations:
        seen = latest.get(reviewer)
        if seen is None or not order_key < seen[0]:
            latest[reviewer] = (order_key, judgment)
    return [judgment for _, judgment in latest.values()]


def human_consensus(latest_judgments: Sequence[str]) -> str:
    """One label for the latest judgment of each reviewer: '' when nobody reviewed.

    A defer abstains: pass + defer is "pass"; only defers is "defer"; pass + fail is "mixed".
    """
    decided = {j for j in latest_judgments if j != "defer"}
    if not latest_judgments:
        return ""
    if not decided:
        return "defer"
    if len(decided) == 1:
        return decided.pop()
    return "mixed"


def human_disagreement(human_judgment: str, reward: float, pass_threshold: float) -> str:
    """Humans disagreeing with the automated outcome (reward ≥ the task's pass threshold)."""
    passed = automated_pass(reward, pass_threshold)
    if human_judgment == "pass" and not passed:
        return HUMAN_PASS_AUTOMATED_FAIL
    if human_judgment == "fail" and passed:
        return HUMAN_FAIL_AUTOMATED_PASS
    return ""


@dataclass(frozen=True)
class TrialSummary:
    reward: float
    is_valid: bool
    scorer_verdict: str
    scorer_mean: float | None
    judge_verdict: str
    failure_mode: str
    run_badge: str
    gate_disagreement: str
    # The shown (latest) verdict's rubric tiles and the trial's error categories: kept on the
    # trial row so lists and exports read one table, like the gates.
    judge_task_completion: int | None = None
    judge_instruction_adherence: int | None = None
    judge_efficiency: int | None = None
    error_categories: str = ""
    # The shown verdict's judge model: the agreement breakdown and the explorer filter read it
    # here rather than from the verdicts.
    judge_model: str = ""
    # The shown verdict's rubric version, None when it records none: with the judge model, the
    # judge version a job's corrected pass rate counts the trial under
    # (review.science.calibration.shown_versions), read here rather than from the verdicts.
    judge_rubric_version: str | None = None


SUMMARY_FIELDS = (
    "reward",
    "is_valid",
    "scorer_verdict",
    "scorer_mean",
    "judge_verdict",
    "failure_mode",
    "run_badge",
    "gate_disagreement",
    "judge_task_completion",
    "judge_instruction_adherence",
    "judge_efficiency",
    "error_categories",
    "judge_model",
    "judge_rubric_version",
)
ERROR_CATEGORY_SEPARATOR = "; "


def join_categories(categories: Iterable[str]) -> str:
    """Error categories in the order they were recorded, each once."""
    return ERROR_CATEGORY_SEPARATOR.join(dict.fromkeys(categories))


def summarise(
    *,
    reward: float,
    is_valid: bool,
    verifier_completed: bool,
    scorers: Sequence[ScorerOutcome],
    judge_verdict: str,
    failure_mode: str,
    status: str,
    exception_type: str,
    judge_tiles: tuple[int | None, int | None, int | None] = (None, None, None),
    error_categories: Iterable[str] = (),
    judge_model: str = "",
    judge_rubric_version: str = "",
) -> TrialSummary:
    overall = scorers_overall(scorers)
    return TrialSummary(
        reward=reward,
        is_valid=is_valid,
        scorer_verdict=overall,
        scorer_mean=scorers_mean(scorers),
        run_badge=run_badge(status, exception_type, verifier_completed),
        error_categories=join_categories(error_categories),
        **judged_summary(
            scorer_verdict=overall,
            advisory_fail=advisory_failed(scorers),
            judge_verdict=judge_verdict,
            failure_mode=failure_mode,
            judge_tiles=judge_tiles,
            judge_model=judge_model,
            judge_rubric_version=judge_rubric_version,
        ),
    )


# The summary columns that the shown verdict decides, with the scorers' overall verdict and
# whether an advisory scorer failed (`judged_summary`).
JUDGED_SUMMARY_FIELDS = (
    "judge_verdict",
    "failure_mode",
    "gate_disagreement",
    "judge_task_completion",
    "judge_instruction_adherence",
    "judge_efficiency",
    "judge_model",
    "judge_rubric_version",
)


def judged_summary(
    *,
    scorer_verdict: str,
    advisory_fail: bool,
    judge_verdict: str,
    failure_mode: str,
    judge_tiles: tuple[int | None, int | None, int | None],
    judge_model: str,
    judge_rubric_version: str = "",
) -> dict[str, Any]:
    """The summary's JUDGED_SUMMARY_FIELDS for the verdict shown: the rest of the summary does
    not depend on it, so a new verdict changes only these (`summarise` computes them here)."""
    return {
        "judge_verdict": judge_verdict,
        "failure_mode": failure_mode if judge_verdict == FAIL else "",
        "gate_disagreement": gate_disagreement(scorer_verdict, judge_verdict, advisory_fail),
        "judge_task_completion": judge_tiles[0],
        "judge_instruction_adherence": judge_tiles[1],
        "judge_efficiency": judge_tiles[2],
        "judge_model": judge_model,
        # None for none recorded: the column is nullable (added without rebuilding the table).
        "judge_rubric_version": judge_rubric_version or None,
    }
