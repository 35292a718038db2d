"""Reader for a trial directory in the verifier-contract layout (seed 000, DESIGN §4.2).

```
<trial>/logs/verifier/reward.json     mandatory: {"reward": 0.0-1.0}
<trial>/logs/verifier/details.json    optional: {dimension: {score, max_score, evidence}}
<trial>/trial.json                    optional metadata and the task's VerifierSpec
<trial>/scorers.json                  list of scorer results (seed 003)
<trial>/judge.json                    the judge's verdict
<trial>/workspace.diff, command_output.json
<trial>/<expected_output_path>        the agent's output, a leading "/" dropped
```

The seed's rules, in order: reward.json missing → 0.0 and `verifier_completed=False`; present
but unreadable, without `reward`, or out of range → 0.0, completed, the reason in `errors`,
the raw file kept; details.json is stored as the breakdown and never used to recompute the
reward; the output is checked against the task's declared format and schema; a non-zero
reward for output that does not parse is rejected by `ResultRecord.checked()` in the writer.
A judge.json that does not parse is an UNPARSEABLE verdict, never a failed trial.

`trial.json` and `scorers.json` are our own formats and validated strictly. A trial.json that
does not validate stops the trial (an `invalid` summary line naming it): its task spec
decides how the output is judged, so guessing would store a wrong verdict.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from rewards import rules
from rewards.ingest.files import (
    ArtifactError,
    Folder,
    Problem,
    artifact_digest,
    decode_text,
    lenient_text,
    loads_json,
    too_deep,
)
from rewards.ingest.harbor import as_utc
from rewards.schemas import (
    CommandOutput,
    DetailsFile,
    JobRecord,
    JudgeVerdict,
    ResultRecord,
    ScorerResult,
    TaskRecord,
    TaskSpec,
    TrialBundle,
    TrialFile,
    TrialRecord,
    ValidityCheck,
    describe_validation_error,
)

UID_NAMESPACE = uuid.UUID("9d3e1c57-0b7a-4a55-8d0c-5f2b8e6a4c21")
DEFAULT_REWARD_PATH = "/logs/verifier/reward.json"
DEFAULT_DETAILS_PATH = "/logs/verifier/details.json"
_SCORERS = TypeAdapter(list[ScorerResult])
# IntegerField on PostgreSQL: a 32-bit exit code.
_INT32 = range(-(2**31), 2**31)
_UNREADABLE_JUDGE_TEXT = 64 * 1024


def is_contract_trial(folder: Folder) -> bool:
    """DESIGN §4.2: a directory is a trial when it holds `logs/verifier/` or `trial.json`."""
    if folder.has("trial.json"):
        return True
    try:
        logs = folder.child("logs")
    except ArtifactError:
        return False
    return logs is not None and logs.is_dir("verifier")


def trial_uid(job: str, trial: str) -> uuid.UUID:
    """Deterministic, so that ingesting the same directory again finds the same trial."""
    return uuid.uuid5(UID_NAMESPACE, f"{job}\x00{trial}")


def task_checksum(spec: TaskSpec) -> str:
    """sha256 of the task spec's canonical JSON: the same spec is the same Task."""
    canonical = json.dumps(
        spec.model_dump(mode="json", exclude={"checksum"}),
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def default_task_name(trial_dir_name: str) -> str:
    # Runners name a trial "<task>__<suffix>" (Harbor does); otherwise the trial is its task.
    return trial_dir_name.rsplit("__", 1)[0] or trial_dir_name


@dataclass(frozen=True)
class _Declared:
    name: str
    data: bytes | None
    error: str = ""
    present: bool = False


class _Reading:
    """Errors, the files that define the result and their raw text, for one trial."""

    def __init__(self, trial: Folder) -> None:
        self.trial = trial
        self.errors: list[str] = []
        self.defining: list[tuple[str, bytes]] = []
        self.raw: dict[str, str] = {}

    def inside(self, rel: str) -> str:
        prefix = self.trial.rel
        return rel[len(prefix) + 1 :] if prefix and rel.startswith(prefix + "/") else rel

    def read(self, name: str) -> bytes | None:
        if not self.trial.has(name):
            return None
        try:
            return self.trial.read(name)
        except ArtifactError as exc:
            self.errors.append(f"{name}: {exc}")
            return None

    def read_declared(self, path: str, what: str) -> _Declared:
        """A file at a path the task declares, read safely relative to the trial."""
        try:
            located = self.trial.locate(path)
        except ArtifactError as exc:
            # The path itself is refused (it climbs out): no file was looked at.
            return _Declared(path, None, f"{what} {path!r}: {exc}", present=False)
        if located is None:
            return _Declared(self.inside(self.trial.rel_to(path.lstrip("/"))), None)
        folder, name = located
        rel = self.inside(folder.rel_to(name))
        try:
            data = folder.read(name)
        except ArtifactError as exc:
            return _Declared(rel, None, f"{rel}: {exc}", present=True)
        return _Declared(rel, data, present=data is not None)

    def keep(self, name: str, data: bytes, *, raw: bool = True) -> None:
        self.defining.append((name, data))
        if raw:
            self.raw[name] = lenient_text(data)


def read_trial(folder: Folder, *, job: str | None, default_job: str) -> TrialBundle | Problem:
    """One contract trial directory as a bundle, or the problem that stopped it.

    `job` (from `--job`) overrides the job trial.json names; `default_job` is the parent
    folder's name, used when neither says.
    """
    reading = _Reading(folder)
    max_depth = folder.root.limits.max_depth
    fallback_name = f"{job or default_job}/{folder.name}"

    trial_file = TrialFile()
    try:
        raw_trial = folder.read("trial.json") if folder.has("trial.json") else None
        if raw_trial is not None:
            # Its task spec (output path, format, schema) decides validity: part of the result.
            reading.keep("trial.json", raw_trial, raw=False)
            trial_file = TrialFile.model_validate_json(
                _json_text(raw_trial, max_depth), strict=True
            )
    except ArtifactError as exc:
        return Problem("invalid", fallback_name, f"trial.json: {exc}")
    except ValidationError as exc:
        return Problem("invalid", fallback_name, f"trial.json: {describe_validation_error(exc)}")

    trial_name = trial_file.name or folder.name
    job_name = job or trial_file.job or default_job
    where = f"{job_name}/{trial_name}"
    spec = trial_file.task or TaskSpec()
    verifier = spec.verifier
    reward_path = verifier.reward_path if verifier else DEFAULT_REWARD_PATH
    details_path = (verifier.details_path if verifier else None) or DEFAULT_DETAILS_PATH
    expected_output_path = verifier.expected_output_path if verifier else ""

    # reward.json: mandatory, read by the seed's rules.
    declared = reading.read_declared(reward_path, "reward_path")
    if declared.error:
        # Present but unreadable (too large, a symlink out) counts as "appeared": seed 000
        # gives it 0.0 with the reason; a refused path means no reward file was found.
        reward = rules.RewardReading(0.0, declared.present, errors=[declared.error])
    else:
        reward = _read_reward(declared.data, max_depth)
        if declared.data is not None:
            reading.keep(declared.name, declared.data)

    # details.json: the breakdown, as validated; never used to recompute the reward.
    breakdown = None
    details = reading.read_declared(details_path, "details_path")
    if details.error:
        reading.errors.append(details.error)
    elif details.data is not None:
        reading.keep(details.name, details.data)
        breakdown = _read_details(details.data, details.name, max_depth, reading.errors)

    output = _check_output(reading, spec, expected_output_path)
    scorers = _read_scorers(reading, max_depth)
    verdicts = _read_judge(reading, max_depth)
    command = _read_command(reading, max_depth)
    diff_raw = reading.read("workspace.diff")
    if diff_raw is not None:
        try:
            diff = diff_raw.decode("utf-8")
        except UnicodeDecodeError:
            reading.errors.append("workspace.diff: not UTF-8 text, undecodable bytes replaced")
            diff = lenient_text(diff_raw)
    else:
        diff = ""

    agent = trial_file.agent
    try:
        return TrialBundle(
            job=JobRecord(name=job_name),
            task=TaskRecord(
                name=spec.name or default_task_name(folder.name),
                source=spec.source,
                checksum=spec.checksum or task_checksum(spec),
                instruction=spec.instruction,
                verifier_script=verifier.script if verifier else "",
                expected_output_path=expected_output_path,
                reward_path=verifier.reward_path if verifier else "",
                details_path=(verifier.details_path or "") if verifier else "",
                output_format=spec.output_format,
                output_schema=spec.output_schema,
                rubric_strategy=spec.rubric_strategy,
                pass_threshold=spec.pass_threshold,
                scorer_specs=spec.scorers,
            ),
            trial=TrialRecord(
                name=trial_name,
                uid=trial_uid(job_name, trial_name),
                agent_name=agent.name if agent else "",
                agent_version=agent.version if agent else "",
                model_name=agent.model if agent else "",
                model_provider=agent.provider if agent else "",
                status=trial_file.status,
                started_at=as_utc(trial_file.started_at),
                finished_at=as_utc(trial_file.finished_at),
                workspace_diff=diff,
                command=command.command,
                exit_code=command.exit_code,
                stdout_tail=command.stdout_tail,
                stderr_tail=command.stderr_tail,
                source_path=folder.path,
            ),
            results=[
                ResultRecord(
                    reward=reward.reward,
                    metrics=reward.metrics,
                    validity=ValidityCheck(
                        output_parseable=output.output_parseable,
                        schema_valid=output.schema_valid,
                        verifier_completed=reward.verifier_completed,
                        errors=[*reward.errors, *output.errors, *reading.errors],
                    ),
                    breakdown=breakdown,
                    confidence=trial_file.confidence,
                    artifact_digest=artifact_digest(reading.defining),
                    raw_artifacts=reading.raw,
                )
            ],
            scorers=scorers,
            judge_verdicts=verdicts,
            error_tags=trial_file.error_tags,
        )
    except ValidationError as exc:
        return Problem("invalid", where, describe_validation_error(exc))


def _json_text(raw: bytes, max_depth: int) -> str:
    """UTF-8 text of a JSON file, refused when nested too deep (before pydantic parses it)."""
    text = decode_text(raw)
    if too_deep(text, max_depth):
        raise ArtifactError(f"JSON nested deeper than {max_depth} levels")
    return text


def _read_reward(raw: bytes | None, max_depth: int) -> rules.RewardReading:
    # rules.read_reward_json bounds depth at its own default; the setting may be lower.
    if raw is not None and too_deep(raw.decode("utf-8-sig", errors="replace"), max_depth):
        message = f"reward file unreadable: JSON nested deeper than {max_depth} levels"
        return rules.RewardReading(0.0, True, errors=[message])
    return rules.read_reward_json(raw)


def _read_details(
    raw: bytes, name: str, max_depth: int, errors: list[str]
) -> dict[str, Any] | None:
    try:
        data = loads_json(raw, max_depth)
        details = DetailsFile.from_data(data)
    except ArtifactError as exc:
        errors.append(f"{name}: {exc}")
        return None
    except ValidationError as exc:
        # DetailsFile wraps the file's object in "dimensions"; report the file's own paths.
        reason = describe_validation_error(exc).replace("dimensions.", "")
        errors.append(f"{name}: {reason.replace('dimensions: ', '(root): ')}")
        return None
    return {key: dim.model_dump(mode="json") for key, dim in details.dimensions.items()}


def _check_output(
    reading: _Reading, spec: TaskSpec, expected_output_path: str
) -> rules.OutputCheck:
    if not expected_output_path:
        return rules.OutputCheck(True, True)
    output = reading.read_declared(expected_output_path, "expected_output_path")
    if output.error:
        return rules.OutputCheck(False, False, [output.error])
    if output.data is not None:
        # The output decides output_parseable: a changed output is a changed result.
        reading.keep(output.name, output.data, raw=False)
    schema = spec.output_schema
    return rules.check_output(
        output.data,
        expected_output_path=expected_output_path,
        output_format=spec.output_format,
        output_schema=schema,
    )


def _read_scorers(reading: _Reading, max_depth: int) -> list[ScorerResult]:
    raw = reading.read("scorers.json")
    if raw is None:
        return []
    try:
        return _SCORERS.validate_json(_json_text(raw, max_depth), strict=True)
    except ArtifactError as exc:
        reason = str(exc)
    except ValidationError as exc:
        reason = describe_validation_error(exc)
    # Kept raw so a reviewer can see what the scorers wrote; no scorer rows from it.
    reading.errors.append(f"scorers.json: {reason}")
    reading.raw["scorers.json"] = lenient_text(raw)
    return []


def _read_judge(reading: _Reading, max_depth: int) -> list[JudgeVerdict]:
    """Seed 003: a judge failure is an UNPARSEABLE verdict and does not fail the run."""
    if not reading.trial.has("judge.json"):
        return []
    try:
        raw = reading.trial.read("judge.json")
    except ArtifactError as exc:
        return [JudgeVerdict(verdict="UNPARSEABLE", reasoning=f"judge.json: {exc}")]
    if raw is None:
        return []
    try:
        verdict = JudgeVerdict.model_validate_json(_json_text(raw, max_depth), strict=True)
        # Naive times are UTC here as in Harbor's files, whatever the server's time zone.
        return [verdict.model_copy(update={"scored_at": as_utc(verdict.scored_at)})]
    except ArtifactError as exc:
        reason = str(exc)
    except ValidationError as exc:
        reason = describe_validation_error(exc)
    text = lenient_text(raw)
    if len(text) > _UNREADABLE_JUDGE_TEXT:
        text = text[:_UNREADABLE_JUDGE_TEXT]
    return [
        JudgeVerdict(
            verdict="UNPARSEABLE",
            reasoning=f"judge.json could not be read: {reason}",
            raw_response=text,
        )
    ]


def _read_command(reading: _Reading, max_depth: int) -> CommandOutput:
    raw = reading.read("command_output.json")
    if raw is None:
        return CommandOutput()
    try:
        command = CommandOutput.model_validate_json(_json_text(raw, max_depth), strict=True)
    except ArtifactError as exc:
        reason = str(exc)
    except ValidationError as exc:
        reason = describe_validation_error(exc)
    else:
        if command.exit_code is not None and command.exit_code not in _INT32:
            reading.errors.append("command_output.json: exit_code out of range, ignored")
            command = command.model_copy(update={"exit_code": None})
        return command
    reading.errors.append(f"command_output.json: {reason}")
    reading.raw["command_output.json"] = lenient_text(raw)
    return CommandOutput()
