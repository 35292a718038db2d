"""Reader for Harbor output: a job folder's `result.json`/`config.json` and trial folders.

A Harbor trial folder holds `result.json` (Harbor's `TrialResult`), `config.json`,
`exception.txt`, `agent/trajectory.json` (ATIF) and `verifier/{reward.json | reward.txt,
reward-details.json, ctrf.json, test-stdout.txt}`; a multi-step trial has the verifier files
under `steps/<name>/verifier/`. The headline reward is what Harbor recorded,
`verifier_result.rewards["reward"]` in result.json (for a multi-step trial the top-level
aggregate, not the last step); the reward files are kept raw and hashed, and only speak when
Harbor recorded no verifier result (DESIGN §5).

Harbor's own pydantic models ignore unknown keys and forks add fields, so these models are
lenient: unknown keys are ignored, and a known field whose value has the wrong type is
dropped with a recorded error instead of losing the whole trial. Naive datetimes (Harbor
writes some with `datetime.now()`) are taken as UTC.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
)

from rewards import rules, schemas
from rewards.ingest.files import (
    ArtifactError,
    Folder,
    Problem,
    artifact_digest,
    lenient_text,
)
from rewards.ingest.parts import TrialFiles, raw_text, validate_parts
from rewards.ingest.storable import loads_storable
from rewards.schemas import (
    IngestProblem,
    JobRecord,
    ResultRecord,
    ShortStr,
    TaskRecord,
    TrialBundle,
    TrialRecord,
    TrialStatus,
    ValidityCheck,
    describe_validation_error,
)

UID_NAMESPACE = uuid.UUID("4f0c6d2e-8a51-4d7e-9b3a-2f6c1e0d9a77")
SHORT = 255
# Exit codes, token counts: what the database columns hold (bigint).
MAX_BIGINT = 2**63 - 1
# Benchmarks write their own breakdown beside reward.json (e.g. clawbench_details.json);
# Harbor's rewardkit writes reward-details.json, which is preferred.
DETAILS_NAMES = ("reward-details.json", "details.json")


# --- lenient models of Harbor's files -------------------------------------------------------
# Naive datetimes (Harbor writes some with `datetime.now()`) are taken as UTC.
UtcDatetime = schemas.UtcDatetime | None


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class TimingBlock(_Lenient):
    started_at: UtcDatetime = None
    finished_at: UtcDatetime = None


class ModelInfo(_Lenient):
    name: str | None = None
    provider: str | None = None


class AgentInfo(_Lenient):
    name: str | None = None
    version: str | None = None
    model_info: ModelInfo | None = None


class AgentResult(_Lenient):
    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None


class VerifierResult(_Lenient):
    # Values stay raw: a string or boolean reward is judged by rules.read_reward_data.
    rewards: dict[str, Any] | None = None


class ExceptionInfo(_Lenient):
    exception_type: str | None = None
    exception_message: str | None = None
    exception_traceback: str | None = None
    occurred_at: UtcDatetime = None


class StepResult(_Lenient):
    step_name: str | None = None
    agent_result: AgentResult | None = None
    verifier_result: VerifierResult | None = None
    exception_info: ExceptionInfo | None = None
    agent_execution: TimingBlock | None = None
    verifier: TimingBlock | None = None


class HarborTrialResult(_Lenient):
    """Harbor's `TrialResult` (result.json of a trial folder)."""

    id: str | None = None
    # As long as the columns they fill: a longer or mistyped value is dropped as a problem
    # (kept raw) and the trial stored without it (its name then is its folder's).
    task_name: ShortStr | None = None
    trial_name: ShortStr | None = None
    source: ShortStr | None = None
    task_checksum: Annotated[str, Field(max_length=128)] | None = None
    task_id: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    agent_info: AgentInfo | None = None
    agent_result: AgentResult | None = None
    verifier_result: VerifierResult | None = None
    exception_info: ExceptionInfo | None = None
    started_at: UtcDatetime = None
    finished_at: UtcDatetime = None
    environment_setup: TimingBlock | None = None
    agent_setup: TimingBlock | None = None
    agent_execution: TimingBlock | None = None
    verifier: TimingBlock | None = None
    step_results: list[StepResult] | None = None


class HarborJobResult(_Lenient):
    """Harbor's `JobResult` (result.json of a job folder)."""

    id: str | None = None
    started_at: UtcDatetime = None
    finished_at: UtcDatetime = None
    n_total_trials: int | None = None
    stats: dict[str, Any] | None = None


def is_trial_result(data: Any) -> bool:
    return isinstance(data, dict) and ("trial_name" in data or "task_name" in data)


def is_job_result(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and not is_trial_result(data)
        and ("n_total_trials" in data or "stats" in data)
    )


# --- the job ----------------------------------------------------------------------------------
def read_job(
    folder: Folder, name: str, *, result_data: Any = None, read_result: bool = True
) -> tuple[JobRecord, list[Problem]]:
    """The job a Harbor job folder describes: its result.json (JobResult) and config.json.

    Neither file is required (a job that is still running has no result.json yet); one that
    cannot be read is reported and the job is recorded from its name alone.
    """
    problems: list[Problem] = []
    fields: dict[str, Any] = {"name": name, "source_path": folder.path}
    if result_data is None and read_result and folder.has("result.json"):
        result_data = _read_json_or_report(folder, "result.json", problems)
    if isinstance(result_data, dict):
        job, dropped = validate_parts(HarborJobResult, result_data, "result.json", leaf=True)
        for problem in dropped:
            problems.append(
                Problem(
                    "unreadable",
                    folder.root.display(folder.rel_to("result.json")),
                    f"{problem.field} ignored ({problem.message})",
                )
            )
        fields["started_at"] = job.started_at
        fields["finished_at"] = job.finished_at
        stats = _bounded_stats(job.stats or {})
        if job.n_total_trials is not None:
            stats.setdefault("n_total_trials", job.n_total_trials)
        fields["stats"] = stats
    if folder.has("config.json"):
        config = _read_json_or_report(folder, "config.json", problems)
        if isinstance(config, dict):
            fields["config"] = _bounded_lists(config)
    try:
        return JobRecord(**fields), problems
    except ValidationError as exc:
        problems.append(Problem("unreadable", folder.display, describe_validation_error(exc)))
        return JobRecord(name=name, source_path=folder.path), problems


# JobResult.stats.evals[...] lists every trial's name under its reward and exception.
NAME_LISTS = ("reward_stats", "exception_stats")


def _bounded_stats(stats: dict[str, Any]) -> dict[str, Any]:
    """Harbor's job stats with the per-trial name lists replaced by their lengths.

    The job record travels in every trial's bundle (and so in each trial's content digest);
    lists that grow with the job would make a 10,000-trial job cost 10,000² to write. The
    names are not lost: each trial carries its own reward and exception.
    """
    evals = stats.get("evals")
    if not isinstance(evals, dict):
        return stats
    counted = {}
    for key, entry in evals.items():
        if isinstance(entry, dict):
            entry = {
                name: _lengths(value) if name in NAME_LISTS else value
                for name, value in entry.items()
            }
        counted[key] = entry
    return {**stats, "evals": counted}


# A job config may list every task (`tasks`, `datasets[].task_names`): a list this long is
# kept as its length and first items, for the same reason as the stats above.
LONG_LIST = 200
LIST_HEAD = 20


def _bounded_lists(value: Any) -> Any:
    if isinstance(value, list):
        if len(value) > LONG_LIST:
            head = [_bounded_lists(item) for item in value[:LIST_HEAD]]
            return {"omitted_list": {"length": len(value), "first": head}}
        return [_bounded_lists(item) for item in value]
    if isinstance(value, dict):
        return {key: _bounded_lists(item) for key, item in value.items()}
    return value


def _lengths(value: Any) -> Any:
    if isinstance(value, list):
        return len(value)
    if isinstance(value, dict):
        return {key: _lengths(item) for key, item in value.items()}
    return value


def _read_json_or_report(folder: Folder, name: str, problems: list[Problem]) -> Any:
    where = folder.root.display(folder.rel_to(name))
    try:
        raw = folder.read(name)
        if raw is None:
            return None
        value, mended = loads_storable(raw, folder.root.limits.max_depth, name)
    except ArtifactError as exc:
        problems.append(Problem("unreadable", where, str(exc)))
        return None
    for spot in mended:
        problems.append(Problem("unreadable", where, f"{spot.field}: {spot.message}"))
    return value


# --- the trial --------------------------------------------------------------------------------
class _VerifierFiles:
    def __init__(self) -> None:
        self.reward_json: bytes | None = None
        self.reward_txt: bytes | None = None
        self.details: Any = None
        self.ctrf: Any = None
        self.stdout: str = ""

    @property
    def has_reward_file(self) -> bool:
        return self.reward_json is not None or self.reward_txt is not None


def _read_verifier(got: TrialFiles, folder: Folder | None) -> _VerifierFiles:
    files = _VerifierFiles()
    if folder is None:
        return files
    for name in ("reward.json", "reward.txt"):
        data = got.read(folder, name, defines_result=True)
        if data is not None:
            got.keep(folder, name, data)
            setattr(files, name.replace(".", "_"), data)
    detail_names = [n for n in DETAILS_NAMES if folder.has(n)] + sorted(
        n for n in folder.entries if n.endswith("_details.json")
    )
    for name in detail_names:
        data = got.read(folder, name)
        if data is None:
            continue
        got.keep(folder, name, data)
        parsed = got.json(folder, name, data)
        if files.details is None and parsed is not None:
            files.details = parsed
    files.ctrf = got.json(folder, "ctrf.json", got.read(folder, "ctrf.json"))
    if files.ctrf is not None and not isinstance(files.ctrf, dict):
        got.problem(got.inside(folder, "ctrf.json"), "not a JSON object: ignored")
        files.ctrf = None
    # A log: its end matters, so a long one is kept truncated rather than refused.
    stdout = got.read(folder, "test-stdout.txt", tail=True)
    files.stdout = lenient_text(stdout) if stdout is not None else ""
    return files


def _reward_from_files(files: _VerifierFiles) -> rules.RewardReading | None:
    """reward.json wins over reward.txt (a bare number meaning {"reward": x})."""
    if files.reward_json is not None:
        return rules.read_reward_json(files.reward_json)
    if files.reward_txt is not None:
        return rules.read_reward_txt(files.reward_txt)
    return None


def _headline(result: HarborTrialResult, files: _VerifierFiles | None) -> rules.RewardReading:
    """The reward Harbor recorded; 0.0 when it recorded none (DESIGN §5)."""
    verifier_result = result.verifier_result
    if verifier_result is not None and verifier_result.rewards is not None:
        reading = rules.read_reward_data(verifier_result.rewards)
        if reading.errors:
            return rules.RewardReading(
                reading.reward,
                reading.verifier_completed,
                reading.metrics,
                [f"result.json verifier_result: {e}" for e in reading.errors],
            )
        return reading
    from_file = _reward_from_files(files) if files is not None else None
    if from_file is None:
        return rules.RewardReading(
            0.0, False, errors=["Harbor recorded no verifier result and wrote no reward file"]
        )
    if from_file.errors:
        return rules.RewardReading(0.0, True, errors=from_file.errors)
    return rules.RewardReading(
        0.0,
        True,
        errors=[
            "Harbor recorded no verifier result; the reward file's "
            f"{from_file.reward!r} is not used"
        ],
    )


def _short(value: str | None, got: TrialFiles, field: str, file: str = "result.json") -> str:
    """A value for a short column, or "" when it is longer (a problem, kept raw)."""
    return value if value and _fits(value, got, file, field) else ""


def _count(value: int | None, got: TrialFiles, what: str) -> int | None:
    if value is None:
        return None
    if not 0 <= value <= MAX_BIGINT:
        got.problem("result.json", "out of range: ignored", field=what, raw=str(value))
        return None
    return value


def _timing(block: TimingBlock | None) -> dict[str, Any] | None:
    if block is None or (block.started_at is None and block.finished_at is None):
        return None
    timing: dict[str, Any] = {
        "started_at": block.started_at.isoformat() if block.started_at else None,
        "finished_at": block.finished_at.isoformat() if block.finished_at else None,
    }
    if block.started_at and block.finished_at:
        timing["seconds"] = round((block.finished_at - block.started_at).total_seconds(), 3)
    return timing


def _timings(result: HarborTrialResult) -> dict[str, Any]:
    timings: dict[str, Any] = {}
    for name in ("environment_setup", "agent_setup", "agent_execution", "verifier"):
        timing = _timing(getattr(result, name))
        if timing:
            timings[name] = timing
    steps: dict[str, Any] = {}
    for index, step in enumerate(result.step_results or []):
        blocks = {
            name: timing
            for name in ("agent_execution", "verifier")
            if (timing := _timing(getattr(step, name)))
        }
        if blocks:
            steps[step.step_name or str(index)] = blocks
    if steps:
        timings["steps"] = steps
    return timings


def _model(result: HarborTrialResult, got: TrialFiles, config: str) -> tuple[str, str]:
    """(model, provider): agent_info.model_info, else config.agent.model_name "provider/model"."""
    info = result.agent_info.model_info if result.agent_info else None
    if info is not None and (info.name or info.provider):
        return (
            _short(info.name, got, "agent_info.model_info.name"),
            _short(info.provider, got, "agent_info.model_info.provider"),
        )
    agent = (result.config or {}).get("agent")
    model_name = agent.get("model_name") if isinstance(agent, dict) else None
    if not isinstance(model_name, str) or not model_name:
        return "", ""
    provider, slash, model = model_name.partition("/")
    if not slash:
        provider, model = "", model_name
    field = "config.agent.model_name" if config == "result.json" else "agent.model_name"
    return _short(model, got, field, config), _short(provider, got, field, config)


def _agent_name(result: HarborTrialResult, got: TrialFiles, config: str) -> str:
    if result.agent_info and result.agent_info.name:
        return _short(result.agent_info.name, got, "agent_info.name")
    agent = (result.config or {}).get("agent")
    name = agent.get("name") if isinstance(agent, dict) else None
    field = "config.agent.name" if config == "result.json" else "agent.name"
    return _short(name, got, field, config) if isinstance(name, str) else ""


def _tokens(result: HarborTrialResult, got: TrialFiles) -> dict[str, Any]:
    """Token counts and cost; a multi-step trial's are the sum over its steps."""
    blocks = [result.agent_result] if result.agent_result else []
    if not blocks:
        blocks = [s.agent_result for s in result.step_results or [] if s.agent_result]
    totals: dict[str, Any] = {}
    for name in ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd"):
        values = [getattr(b, name) for b in blocks if getattr(b, name) is not None]
        totals[name] = sum(values) if values else None
    for name in ("n_input_tokens", "n_cache_tokens", "n_output_tokens"):
        totals[name] = _count(totals[name], got, name)
    cost = totals["cost_usd"]
    if cost is not None and not (math.isfinite(cost) and cost >= 0):
        got.problem(
            "result.json",
            "not a finite, non-negative number: ignored",
            field="cost_usd",
            raw=str(cost),
        )
        totals["cost_usd"] = None
    return totals


EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*)(?::|$)")


def _exception(result: HarborTrialResult, got: TrialFiles) -> tuple[str, str, str, datetime | None]:
    """(type, message, traceback, occurred_at): result.json's, a step's, or exception.txt."""
    info = result.exception_info
    if info is None:
        info = next((s.exception_info for s in result.step_results or [] if s.exception_info), None)
    if info is not None and (info.exception_type or info.exception_message):
        traceback = info.exception_traceback or ""
        if not traceback:
            text = got.read(got.trial, "exception.txt", tail=True)
            traceback = lenient_text(text) if text is not None else ""
        return (
            _short(info.exception_type, got, "exception_info.exception_type") or "Exception",
            info.exception_message or "",
            traceback,
            info.occurred_at,
        )
    text = got.read(got.trial, "exception.txt", tail=True)
    if not text or not text.strip():
        return "", "", "", None
    traceback = lenient_text(text)
    last = traceback.strip().splitlines()[-1]
    match = EXCEPTION_LINE.match(last)
    kind = match.group(1).rsplit(".", 1)[-1] if match else "Exception"
    message = last.partition(":")[2].strip() if match else ""
    return _short(kind, got, "", "exception.txt") or "Exception", message, traceback, None


def _status(exception_type: str, result: HarborTrialResult) -> TrialStatus:
    if exception_type:
        return "cancelled" if exception_type == "CancelledError" else "failed"
    if result.finished_at is not None:
        return "completed"
    if result.started_at is not None:
        return "running"
    return "pending"


def _step_order(result: HarborTrialResult, names: list[str]) -> list[str]:
    """Step folders in the order Harbor ran them (step_results), the others after."""
    ran = [s.step_name for s in result.step_results or [] if s.step_name in names]
    return [*dict.fromkeys(ran), *(n for n in names if n not in ran)]


def _final_response(trajectory: Any) -> str:
    """The agent's last message in an ATIF trajectory: what it finally said."""
    if isinstance(trajectory, dict) and isinstance(trajectory.get("multi_step"), list):
        finals = [_final_response(s.get("trajectory")) for s in trajectory["multi_step"]]
        return next((f for f in reversed(finals) if f), "")
    steps = trajectory.get("steps") if isinstance(trajectory, dict) else None
    if not isinstance(steps, list):
        return ""
    for step in reversed(steps):
        if isinstance(step, dict) and step.get("source") == "agent":
            message = step.get("message")
            if isinstance(message, str) and message.strip():
                return message
    return ""


def _task_name(result: HarborTrialResult, folder: Folder, got: TrialFiles, config: str) -> str:
    if result.task_name:
        return result.task_name
    task = (result.config or {}).get("task")
    for field, candidate in (
        ("task.name", task.get("name") if isinstance(task, dict) else None),
        ("task_id.path", (result.task_id or {}).get("path")),
        ("task.path", task.get("path") if isinstance(task, dict) else None),
    ):
        if isinstance(candidate, str) and candidate.strip("/"):
            name = candidate.rstrip("/").rsplit("/", 1)[-1]
            file = "result.json" if field == "task_id.path" else config
            if _fits(name, got, file, field):
                return name
    # Harbor names a trial "<task>__<suffix>".
    return (result.trial_name or folder.name).rsplit("__", 1)[0]


def _task_record(
    result: HarborTrialResult, folder: Folder, got: TrialFiles, config: str
) -> TaskRecord:
    """The task, one identity however the trial referred to it: Harbor names a task
    "<dataset>/<task>" when it came from a registry or its task.toml names it so, and by its
    folder, "<task>", when run from a path. Both become (dataset, task): the dataset is the
    source (taken from the name's prefix when the trial recorded none) and the name is bare."""
    name = _task_name(result, folder, got, config)
    source = result.source or _config_task_source(result, got, config)
    prefix, _, bare = name.partition("/")
    if bare and "/" not in bare and (not source or prefix == source):
        source, name = prefix, bare
    return TaskRecord(name=name, source=source, checksum=result.task_checksum or "")


def _fits(value: str, got: TrialFiles, file: str, field: str) -> bool:
    """Does a value taken from the config fit its column? One that does not is a problem,
    kept raw, and the trial is stored without it."""
    if len(value) <= SHORT:
        return True
    message = f"longer than {SHORT} characters: ignored"
    got.problem(file, message, field=field, raw=raw_text(value))
    return False


def _uid(result: HarborTrialResult, job: str, trial: str) -> uuid.UUID:
    if result.id:
        try:
            return uuid.UUID(result.id)
        except ValueError:
            pass
    return uuid.uuid5(UID_NAMESPACE, f"harbor\x00{job}\x00{trial}")


def read_trial(
    folder: Folder, job: JobRecord, *, result_raw: bytes | None = None, result_data: Any = None
) -> TrialBundle | Problem:
    """One Harbor trial folder as a bundle, or the problem that stopped it.

    Discovery may already have read (and parsed) result.json to tell a trial from a job;
    it passes the bytes (and data) on so the file is neither read nor parsed twice.
    """
    read = _read_result(folder, result_raw, result_data)
    if isinstance(read, Problem):
        return read
    raw, result, dropped = read
    got = TrialFiles(folder)
    got.problems.extend(dropped)
    got.defining.append(("result.json", raw))
    return _bundle(folder, job, result, got)


def is_running_trial(folder: Folder) -> bool:
    """A Harbor trial folder that has started but written no result yet: its config.json is
    a trial's (`TrialConfig` names its trial) and result.json is absent or incomplete."""
    if not folder.has("config.json"):
        return False
    try:
        raw = folder.read("config.json")
        data = loads_storable(raw, folder.root.limits.max_depth, "config.json")[0] if raw else None
    except ArtifactError:
        return False
    return isinstance(data, dict) and "trial_name" in data


def read_running_trial(folder: Folder, job: JobRecord, why: str = "") -> TrialBundle | Problem:
    """A Harbor trial still running, as far as its folder tells: config.json (task, agent,
    model), the trajectory and logs written so far; status "running", no reward yet (its
    result is that of a verifier that has not run, and the job tallies leave it out).

    `why`: the reason a result.json present could not be used (Harbor rewrites it in place,
    so a half-written one is read as not there yet, and read again once it has changed).
    """
    got = TrialFiles(folder)
    if why:
        got.problem("result.json", f"not complete yet: {why}")
    result = HarborTrialResult(trial_name=folder.name)
    return _bundle(folder, job, result, got, running=True)


def _bundle(
    folder: Folder,
    job: JobRecord,
    result: HarborTrialResult,
    got: TrialFiles,
    *,
    running: bool = False,
) -> TrialBundle | Problem:
    trial_name = result.trial_name or folder.name
    # Where the trial's config was read from: embedded in result.json, else config.json.
    config_file = "result.json" if result.config is not None else "config.json"
    if result.config is None and folder.has("config.json"):
        config = got.json(folder, "config.json", got.read(folder, "config.json"))
        result.config = config if isinstance(config, dict) else None

    verifier = _read_verifier(got, got.child(folder, "verifier"))
    steps = _read_steps(got, result)
    reading = (
        rules.RewardReading(0.0, False)
        if running
        else _headline(result, _reward_files(verifier, steps))
    )
    trajectory = _trajectory(got, steps)
    exception_type, exception_message, traceback, occurred_at = _exception(result, got)
    model_name, model_provider = _model(result, got, config_file)
    timings = _timings(result)
    if occurred_at is not None:
        timings["exception_occurred_at"] = occurred_at.isoformat()
    tokens = _tokens(result, got)

    try:
        return TrialBundle(
            job=job,
            task=_task_record(result, folder, got, config_file),
            trial=TrialRecord(
                name=trial_name,
                uid=_uid(result, job.name, trial_name),
                agent_name=_agent_name(result, got, config_file),
                agent_version=_short(
                    result.agent_info.version if result.agent_info else "",
                    got,
                    "agent_info.version",
                ),
                model_name=model_name,
                model_provider=model_provider,
                status="running" if running else _status(exception_type, result),
                started_at=result.started_at,
                finished_at=result.finished_at,
                timings=timings,
                exception_type=exception_type,
                exception_message=exception_message,
                exception_traceback=traceback,
                config=result.config or {},
                trajectory=trajectory,
                final_response=_final_response(trajectory),
                verifier_stdout=_verifier_stdout(verifier, steps),
                ctrf=_ctrf(verifier, steps),
                source_path=folder.path,
                ingest_problems=got.problems,
                **tokens,
            ),
            results=[
                ResultRecord(
                    reward=reading.reward,
                    metrics=reading.metrics,
                    # Harbor tasks declare no output file: there is nothing to fail to parse.
                    validity=ValidityCheck(
                        output_parseable=True,
                        schema_valid=True,
                        verifier_completed=reading.verifier_completed,
                        errors=[*reading.errors, *got.errors],
                    ),
                    breakdown=_breakdown(got, verifier, steps),
                    artifact_digest=artifact_digest(got.defining),
                    raw_artifacts=got.raw,
                )
            ],
        )
    except ValidationError as exc:
        return Problem("invalid", f"{job.name}/{trial_name}", describe_validation_error(exc))


def _read_result(
    folder: Folder, result_raw: bytes | None, result_data: Any
) -> tuple[bytes, HarborTrialResult, list[IngestProblem]] | Problem:
    """result.json: the one file a Harbor trial cannot do without (it holds the reward)."""
    where = folder.root.display(folder.rel_to("result.json"))
    try:
        raw = result_raw if result_raw is not None else folder.read("result.json")
    except ArtifactError as exc:
        return Problem("unreadable", where, str(exc))
    if raw is None:
        reason = (
            folder.listing_error or "no result.json: not a Harbor trial, or it has not finished"
        )
        return Problem("unreadable", folder.display, reason)
    data = result_data if result_raw is not None else None
    mended: list[IngestProblem] = []
    if data is None:
        try:
            data, mended = loads_storable(raw, folder.root.limits.max_depth, "result.json")
        except ArtifactError as exc:
            return Problem("unreadable", where, str(exc))
    if not is_trial_result(data):
        return Problem(
            "unreadable", where, "not a Harbor trial result (no trial_name or task_name)"
        )
    result, dropped = validate_parts(HarborTrialResult, data, "result.json", leaf=True)
    return raw, result, [*mended, *dropped]


class _Step:
    """A multi-step trial's `steps/<name>/`: its verifier files and its trajectory."""

    def __init__(self, name: str, verifier: _VerifierFiles, trajectory: Any = None) -> None:
        self.name = name
        self.verifier = verifier
        self.trajectory = trajectory


def _read_steps(got: TrialFiles, result: HarborTrialResult) -> list[_Step]:
    steps_folder = got.child(got.trial, "steps")
    if steps_folder is None:
        return []
    steps = []
    for step_name in _step_order(result, steps_folder.subfolder_names()):
        step = got.child(steps_folder, step_name)
        if step is None:
            continue
        read = _Step(step_name, _read_verifier(got, got.child(step, "verifier")))
        agent = got.child(step, "agent")
        if agent is not None and agent.has("trajectory.json"):
            read.trajectory = got.json(agent, "trajectory.json", got.read(agent, "trajectory.json"))
        steps.append(read)
    return steps


def _reward_files(verifier: _VerifierFiles, steps: list[_Step]) -> _VerifierFiles | None:
    """Which reward files speak when Harbor recorded no verifier result: the trial's own,
    else the last step's that wrote one."""
    if verifier.has_reward_file:
        return verifier
    return next((s.verifier for s in reversed(steps) if s.verifier.has_reward_file), None)


def _breakdown(got: TrialFiles, verifier: _VerifierFiles, steps: list[_Step]) -> Any:
    """The reward details as written: the trial's own, else each step's under its name."""
    breakdown: Any = verifier.details
    if breakdown is None and steps:
        per_step = {s.name: s.verifier.details for s in steps if s.verifier.details is not None}
        breakdown = per_step or None
    if breakdown is not None and not isinstance(breakdown, dict):
        got.problem("reward details", "not a JSON object: kept raw only")
        return None
    return breakdown


def _trajectory(got: TrialFiles, steps: list[_Step]) -> Any:
    """agent/trajectory.json (ATIF); a multi-step trial's are its steps', in order."""
    agent = got.child(got.trial, "agent")
    trajectory: Any = None
    if agent is not None:
        trajectory = got.json(agent, "trajectory.json", got.read(agent, "trajectory.json"))
    stepped = [(s.name, s.trajectory) for s in steps if s.trajectory is not None]
    if trajectory is None and stepped:
        trajectory = (
            stepped[0][1]
            if len(stepped) == 1
            else {"multi_step": [{"step_name": n, "trajectory": t} for n, t in stepped]}
        )
    if trajectory is not None and not isinstance(trajectory, dict | list):
        got.problem("agent/trajectory.json", "not an ATIF document: ignored")
        return None
    return trajectory


def _ctrf(verifier: _VerifierFiles, steps: list[_Step]) -> Any:
    if verifier.ctrf is not None:
        return verifier.ctrf
    return next((s.verifier.ctrf for s in reversed(steps) if s.verifier.ctrf), None)


def _verifier_stdout(verifier: _VerifierFiles, steps: list[_Step]) -> str:
    if verifier.stdout:
        return verifier.stdout
    return "\n".join(
        f"== step {s.name} ==\n{s.verifier.stdout}" for s in steps if s.verifier.stdout
    )


def _config_task_source(result: HarborTrialResult, got: TrialFiles, config: str) -> str:
    task = (result.config or {}).get("task")
    source = task.get("source") if isinstance(task, Mapping) else None
    if not isinstance(source, str) or not _fits(source, got, config, "task.source"):
        return ""
    return source
