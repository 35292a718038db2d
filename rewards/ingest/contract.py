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

`trial.json`, `scorers.json`, `judge.json` and `command_output.json` are our own formats,
validated strictly but part by part (`rewards.ingest.parts`): a field, an error tag or a
scorer row that does not validate is dropped from the rows and kept raw as an ingestion
problem of the trial, which is stored with its reward all the same. A task spec with a bad
field also marks the result invalid: the spec decides how the output is judged, so the
reviewer must see that it was read without that field.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from rewards import rules
from rewards.ingest.files import (
    ArtifactError,
    Folder,
    Problem,
    artifact_digest,
    decode_text,
    lenient_text,
    too_deep,
)
from rewards.ingest.parts import TrialFiles, raw_text, reason, validate_parts
from rewards.ingest.storable import dotted, loads_storable
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


def _read_declared(files: TrialFiles, path: str, what: str) -> _Declared:
    """A file at a path the task declares, read safely relative to the trial."""
    trial = files.trial
    try:
        located = trial.locate(path)
    except ArtifactError as exc:
        # The path itself is refused (it climbs out): no file was looked at.
        return _Declared(path, None, f"{what} {path!r}: {exc}", present=False)
    if located is None:
        return _Declared(files.inside(trial, path.lstrip("/")), None)
    folder, name = located
    rel = files.inside(folder, name)
    try:
        data = folder.read(name)
    except ArtifactError as exc:
        return _Declared(rel, None, f"{rel}: {exc}", present=True)
    return _Declared(rel, data, present=data is not None)


class _Unread:
    """What `_document` gives for a file that is absent or could not be read."""


UNREAD = _Unread()


def _document(files: TrialFiles, name: str, max_depth: int, *, defines_result: bool = False) -> Any:
    """One of our JSON side files, parsed (`null` included); UNREAD when absent or unreadable.

    A file that cannot be read or parsed is a problem, its text kept raw.
    """
    raw = files.read(files.trial, name)
    if raw is None:
        return UNREAD
    if defines_result:
        files.defining.append((name, raw))
    try:
        value, mended = loads_storable(raw, max_depth, name)
    except ArtifactError as exc:
        files.problem(name, str(exc), raw=raw_text(lenient_text(raw)))
        return UNREAD
    files.problems.extend(mended)
    return value


def read_trial(folder: Folder, *, default_job: str) -> TrialBundle | Problem:
    """One contract trial directory as a bundle, or the problem that stopped it.

    The job is the one trial.json names, else `default_job` (the parent folder's name);
    `--job` is applied afterwards, to every reader's bundles alike (`discover.filed_under`).
    """
    files = TrialFiles(folder)
    max_depth = folder.root.limits.max_depth

    trial_file = _read_trial_file(files, max_depth)
    trial_name = trial_file.name or folder.name
    job_name = trial_file.job or default_job
    where = f"{job_name}/{trial_name}"
    spec = trial_file.task or TaskSpec()
    verifier = spec.verifier
    reward_path = verifier.reward_path if verifier else DEFAULT_REWARD_PATH
    details_path = (verifier.details_path if verifier else None) or DEFAULT_DETAILS_PATH
    expected_output_path = verifier.expected_output_path if verifier else ""

    # reward.json: mandatory, read by the seed's rules.
    declared = _read_declared(files, reward_path, "reward_path")
    if declared.error:
        # Present but unreadable (too large, a symlink out) counts as "appeared": seed 000
        # gives it 0.0 with the reason; a refused path means no reward file was found.
        reward = rules.RewardReading(0.0, declared.present, errors=[declared.error])
    else:
        reward = _read_reward(declared.data, max_depth)
        if declared.data is not None:
            files.defining.append((declared.name, declared.data))
            files.raw[declared.name] = lenient_text(declared.data)

    breakdown = _read_details(files, details_path, max_depth)
    output = _check_output(files, spec, expected_output_path)
    scorers = _read_scorers(files, max_depth)
    verdicts = _read_judge(files, max_depth)
    command = _read_command(files, max_depth)
    diff = _read_diff(files)

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
                started_at=trial_file.started_at,
                finished_at=trial_file.finished_at,
                workspace_diff=diff,
                command=command.command,
                exit_code=command.exit_code,
                stdout_tail=command.stdout_tail,
                stderr_tail=command.stderr_tail,
                source_path=folder.path,
                ingest_problems=files.problems,
            ),
            results=[
                ResultRecord(
                    reward=reward.reward,
                    metrics=reward.metrics,
                    validity=ValidityCheck(
                        output_parseable=output.output_parseable,
                        schema_valid=output.schema_valid,
                        verifier_completed=reward.verifier_completed,
                        errors=[*reward.errors, *output.errors, *files.errors],
                    ),
                    breakdown=breakdown,
                    confidence=trial_file.confidence,
                    artifact_digest=artifact_digest(files.defining),
                    raw_artifacts=files.raw,
                )
            ],
            scorers=scorers,
            judge_verdicts=verdicts,
            error_tags=trial_file.error_tags,
        )
    except ValidationError as exc:
        return Problem("invalid", where, describe_validation_error(exc))


def _read_trial_file(files: TrialFiles, max_depth: int) -> TrialFile:
    """trial.json, without the fields that do not validate (each one a problem)."""
    if not files.trial.has("trial.json"):
        return TrialFile()
    # Its task spec (output path, format, schema) decides validity: part of the result.
    data = _document(files, "trial.json", max_depth, defines_result=True)
    if not isinstance(data, dict):
        if data is not UNREAD:
            files.problem("trial.json", "not a JSON object", raw=raw_text(data))
        # Read with the defaults instead, and that is not a valid result.
        files.errors.append("trial.json could not be read: the task spec's defaults were used")
        return TrialFile()
    # Named by their place in the file as written, before any bad tag is dropped.
    tags = data.get("error_tags")
    unknown = [
        (index, tag["source"])
        for index, tag in enumerate(tags if isinstance(tags, list) else [])
        if isinstance(tag, dict)
        and isinstance(tag.get("source"), str)
        and tag["source"] not in rules.ERROR_SOURCES
    ]
    trial_file, problems = validate_parts(TrialFile, data, "trial.json", strict=True)
    files.problems.extend(problems)
    if any(p.field == "task" or p.field.startswith(("task.", "task[")) for p in problems):
        files.errors.append(
            "trial.json: the task spec has fields that do not validate (see ingestion "
            "problems); they were read as their defaults"
        )
    for index, source in unknown:
        files.problem(
            "trial.json",
            f"unknown error source {source!r}: stored as given",
            field=dotted(("error_tags", index, "source")),
        )
    return trial_file


def _read_reward(raw: bytes | None, max_depth: int) -> rules.RewardReading:
    # rules.read_reward_json bounds depth at its own default; the setting may be lower.
    if raw is not None and too_deep_bytes(raw, max_depth):
        message = f"reward file unreadable: JSON nested deeper than {max_depth} levels"
        return rules.RewardReading(0.0, True, errors=[message])
    return rules.read_reward_json(raw)


def too_deep_bytes(raw: bytes, max_depth: int) -> bool:
    return too_deep(raw.decode("utf-8-sig", errors="replace"), max_depth)


def _read_details(files: TrialFiles, details_path: str, max_depth: int) -> Any:
    """details.json verbatim as the breakdown (seed 000); it never recomputes the reward.

    Dimensions that do not have the seed's shape are still stored as written (the trial
    page shows them as a tree); each one is named as an ingestion problem.
    """
    details = _read_declared(files, details_path, "details_path")
    if details.error:
        files.problem(details.name, details.error.removeprefix(f"{details.name}: "))
        return None
    if details.data is None:
        return None
    files.defining.append((details.name, details.data))
    files.raw[details.name] = lenient_text(details.data)
    try:
        data, mended = loads_storable(details.data, max_depth, details.name)
    except ArtifactError as exc:
        files.problem(details.name, str(exc))
        return None
    files.problems.extend(mended)
    if not isinstance(data, dict):
        files.problem(details.name, "not a JSON object: kept raw only")
        return None
    try:
        DetailsFile.from_data(data)
    except ValidationError as exc:
        # DetailsFile wraps the file's object in "dimensions"; name the file's own paths.
        for error in exc.errors(include_url=False, include_input=False):
            loc = tuple(error["loc"])[1:]
            files.problem(details.name, reason(error), field=dotted(loc))
    return data


def _check_output(
    files: TrialFiles, spec: TaskSpec, expected_output_path: str
) -> rules.OutputCheck:
    if not expected_output_path:
        return rules.OutputCheck(True, True)
    output = _read_declared(files, expected_output_path, "expected_output_path")
    if output.error:
        return rules.OutputCheck(False, False, [output.error])
    if output.data is not None:
        # The output decides output_parseable: a changed output is a changed result.
        files.defining.append((output.name, output.data))
    return rules.check_output(
        output.data,
        expected_output_path=expected_output_path,
        output_format=spec.output_format,
        output_schema=spec.output_schema,
    )


def _read_scorers(files: TrialFiles, max_depth: int) -> list[ScorerResult]:
    """scorers.json row by row: a row that does not validate is a problem, the rest stored."""
    data = _document(files, "scorers.json", max_depth)
    if data is UNREAD:
        return []
    if not isinstance(data, list):
        files.problem("scorers.json", "not a JSON list of scorer results", raw=raw_text(data))
        return []
    scorers = []
    for index, row in enumerate(data):
        try:
            scorer = ScorerResult.model_validate_json(json.dumps(row), strict=True)
        except ValidationError as exc:
            files.problem(
                "scorers.json",
                _messages(exc),
                field=dotted((index,)),
                raw=raw_text(row),
            )
            continue
        if scorer.type not in rules.SCORER_TYPES:
            files.problem(
                "scorers.json",
                f"unknown scorer type {scorer.type!r}: stored as given, "
                + ("required" if scorer.required else "advisory"),
                field=dotted((index, "type")),
            )
        scorers.append(scorer)
    return scorers


def _messages(exc: ValidationError) -> str:
    """Every error of a part, with the field inside it: 'score: must be …; verdict: …'."""
    return "; ".join(
        f"{dotted(tuple(e['loc']))}: {reason(e)}" if e["loc"] else reason(e)
        for e in exc.errors(include_url=False, include_input=False)
    )


def _read_judge(files: TrialFiles, max_depth: int) -> list[JudgeVerdict]:
    """Seed 003: a judge failure is an UNPARSEABLE verdict and does not fail the run."""
    trial = files.trial
    if not trial.has("judge.json"):
        return []
    try:
        raw = trial.read("judge.json")
    except ArtifactError as exc:
        files.problem("judge.json", str(exc))
        return [JudgeVerdict(verdict="UNPARSEABLE", reasoning=f"judge.json: {exc}")]
    if raw is None:
        return []
    text = lenient_text(raw)
    try:
        if too_deep_bytes(raw, max_depth):
            raise ArtifactError(f"JSON nested deeper than {max_depth} levels")
        # Naive times are UTC (`schemas.UtcDatetime`), as in Harbor's files.
        return [JudgeVerdict.model_validate_json(decode_text(raw), strict=True)]
    except ArtifactError as exc:
        why = str(exc)
        files.problem("judge.json", why)
    except ValidationError as exc:
        why = describe_validation_error(exc)
        for error in exc.errors(include_url=False, include_input=False):
            files.problem("judge.json", reason(error), field=dotted(tuple(error["loc"])))
    if len(text) > _UNREADABLE_JUDGE_TEXT:
        text = text[:_UNREADABLE_JUDGE_TEXT]
    return [
        JudgeVerdict(
            verdict="UNPARSEABLE",
            reasoning=f"judge.json could not be read: {why}",
            raw_response=text,
        )
    ]


def _read_command(files: TrialFiles, max_depth: int) -> CommandOutput:
    data = _document(files, "command_output.json", max_depth)
    if data is UNREAD:
        return CommandOutput()
    if not isinstance(data, dict):
        files.problem("command_output.json", "not a JSON object", raw=raw_text(data))
        return CommandOutput()
    command, problems = validate_parts(CommandOutput, data, "command_output.json", strict=True)
    files.problems.extend(problems)
    if command.exit_code is not None and command.exit_code not in _INT32:
        files.problem(
            "command_output.json",
            "out of range: ignored",
            field="exit_code",
            raw=str(command.exit_code),
        )
        command = command.model_copy(update={"exit_code": None})
    return command


def _read_diff(files: TrialFiles) -> str:
    raw = files.read(files.trial, "workspace.diff")
    if raw is None:
        return ""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        files.problem("workspace.diff", "not UTF-8 text: undecodable bytes shown as �")
        return lenient_text(raw)
