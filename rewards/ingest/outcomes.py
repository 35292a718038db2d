"""What became of each trial: the outcome the writer (or a reader, for a trial it could
tell was unchanged or could not prepare) reports, and the readable reason a database
refusal is reported with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from uuid import UUID

from django.db import DatabaseError

Status = Literal["ingested", "unchanged", "updated", "invalid"]

# What makes a batch fall back to one trial per transaction; a trial that still fails is
# reported "invalid". Our own ValueErrors name a bundle problem found while writing.
WRITE_ERRORS = (DatabaseError, ValueError, OverflowError)


@dataclass(frozen=True)
class WriteOutcome:
    status: Status
    job: str
    trial: str
    trial_id: int | None = None
    reason: str = ""
    uid: UUID | None = None  # known when the outcome was decided without reading the trial
    where: str = ""  # a bundle line's `FILE line N`, which the trial's name does not say

    @property
    def name(self) -> str:
        """The trial as the summary names it: `job/trial`, and its line when it has one."""
        named = f"{self.job}/{self.trial}"
        return f"{named} ({self.where})" if self.where else named


@dataclass(frozen=True)
class StoredTrial:
    """What is stored of a trial read from a folder: enough to call it unchanged."""

    pk: int
    name: str
    uid: UUID
    fingerprint: str

    def unchanged_if(self, fingerprint: str, job: str) -> WriteOutcome | None:
        """ "unchanged" when the folder still has the fingerprint stored with the trial."""
        if fingerprint != self.fingerprint:
            return None
        return WriteOutcome("unchanged", job, self.name, self.pk, uid=self.uid)


# Readable reasons for the database's refusals, by constraint name. Messages never echo
# the database's text: PostgreSQL's DETAIL quotes the offending values, which came from
# an agent under evaluation.
_CONSTRAINT_REASONS = {
    "trial_unique_name_per_job": "another trial in its job has the same name",
    "trial_reward_in_unit_range": "its reward is outside [0, 1]",
    "trial_scorer_mean_in_unit_range": "its scorer mean is outside [0, 1]",
    "task_pass_threshold_in_unit_range": "its task's pass_threshold is outside [0, 1]",
    "task_unique_source_name_checksum": "its task was created at the same time elsewhere",
    "result_reward_in_unit_range": "a result's reward is outside [0, 1]",
    "result_unparseable_output_has_zero_reward": (
        "a result gives a non-zero reward to output that does not parse"
    ),
    "result_one_current_per_trial": "it has more than one current result",
    "result_unique_digest_per_trial": "two of its results have the same artifact digest",
    "scorer_score_in_unit_range": "a scorer's score is outside [0, 1]",
    "scorer_verdict_valid": "a scorer's verdict is not PASS, FAIL or N/A",
    "scorer_unique_position": "two scorers share a position",
    "judge_verdict_valid": "a judge verdict is not PASS, FAIL or UNPARSEABLE",
    "judge_rubric_complete_unless_unparseable": "a PASS or FAIL judge verdict lacks a rubric score",
    "judge_task_completion_1_to_5": "a judge's task_completion is not 1-5",
    "judge_instruction_adherence_1_to_5": "a judge's instruction_adherence is not 1-5",
    "judge_efficiency_1_to_5": "a judge's efficiency is not 1-5",
}


def db_reason(exc: Exception) -> str:
    if not isinstance(exc, DatabaseError):
        return str(exc)[:300]  # our own ValueError, written for people
    text = str(exc)
    # SQLite: "UNIQUE constraint failed: rewards_trial.uid"; PostgreSQL names the index
    # rewards_trial_uid_key (or …_uniq).
    if "rewards_trial.uid" in text or "rewards_trial_uid" in text:
        return "its uid is already used by a trial in another job"
    for constraint, reason in _CONSTRAINT_REASONS.items():
        if constraint in text:
            return reason
    return f"the database refused it ({type(exc).__name__})"
