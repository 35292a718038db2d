"""Grading a trial (seed 003, "How a coding run is graded"): scorers, then judge, then ingest.

A run with a code workspace is scored by the task's frozen scorers and then judged with the
scorer results as evidence; a ledger run (no workspace) skips the scorers and is judged only.
What grading produces is written into the trial directory as `scorers.json` and `judge.json`
(and `workspace.diff` when the directory has none), then the directory is stored through the
ingest path (`rewards.ingest.contract` and `BundleWriter`), exactly as `manage.py ingest`
would store it. Re-judging a stored trial adds a verdict and keeps the older ones.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from rewards import citations, reports, rules, schemas
from rewards.ingest import contract
from rewards.ingest.discover import with_job
from rewards.ingest.files import Problem, Root
from rewards.ingest.outcomes import WriteOutcome
from rewards.ingest.trial_files import agent_log_text
from rewards.ingest.writer import BundleWriter
from rewards.models import (
    GradingItem,
    JudgeVerdict,
    ScenarioVersion,
    ScorerResult,
    Task,
    Trial,
    TrialDetail,
    Verdict,
)
from rewards.scoring import config, engine, scenarios
from rewards.scoring.judge import ExpectedOutcome, JudgeInput, JudgeSettings, ask_judge
from rewards.scoring.workspace import Changes, read_changes


class GradeError(Exception):
    """Grading cannot start (nothing was run or written); the message says why."""


@dataclass
class GradeReport:
    outcome: WriteOutcome
    scorers: list[dict[str, Any]] | None  # None for a ledger run
    verdict: schemas.JudgeVerdict | None
    specs_from: str
    notes: list[str] = field(default_factory=list)


def _read(trial_dir: Path, job: str | None) -> schemas.TrialBundle:
    folder = Root(trial_dir).folder()
    if not contract.is_contract_trial(folder):
        raise GradeError(f"{trial_dir}: not a trial directory (no trial.json or logs/verifier/)")
    bundle = contract.read_trial(folder, default_job=trial_dir.resolve().parent.name)
    if isinstance(bundle, Problem):
        raise GradeError(f"{bundle.name}: {bundle.reason}")
    return with_job(bundle, job)


def seeded_task(record: schemas.TaskRecord) -> Task | None:
    return (
        Task.objects.filter(source=record.source, name=record.name, checksum=record.checksum)
        .select_related("scenario_version__scenario")
        .first()
    )


@dataclass(frozen=True)
class Specs:
    raw: list[dict[str, Any]]
    source: str  # where they come from, for messages
    seeds_from: ScenarioVersion | None = None  # a new task seeded from this scenario version


def frozen_specs(bundle: schemas.TrialBundle, scenario: str | None = None) -> Specs:
    """Seed 003, "Scorers freeze at seed time": a task already stored keeps the scorers it
    was seeded with, whatever the scenario says now; a new task is seeded from the named
    scenario's current version, or with the scorers its trial.json names."""
    task = seeded_task(bundle.task)
    if task is not None:
        version = task.scenario_version
        label = f"task {task.name} as seeded" + (
            f" from scenario {version.scenario.name} v{version.number}" if version else ""
        )
        return Specs(list(task.scorer_specs), label)
    if scenario is None:
        return Specs(list(bundle.task.scorer_specs), "trial.json")
    if bundle.task.scorer_specs:
        raise GradeError(
            "trial.json names its own scorers and --scenario names a scenario: keep one"
        )
    current = scenarios.current_version(scenario)
    if current is None:
        raise GradeError(f"no scenario is named {scenario!r}")
    return Specs(
        scenarios.snapshot(current), f"scenario {scenario} v{current.number}", seeds_from=current
    )


def judge_input(
    bundle: schemas.TrialBundle,
    specs: Sequence[config.ScorerSpec],
    outcomes: Sequence[engine.Outcome] | None,
    changes: Changes | None,
    expected_outcome: ExpectedOutcome,
) -> JudgeInput:
    trial = bundle.trial
    command = next((o for o in outcomes or [] if o.spec.type == "command"), None)
    return JudgeInput(
        instruction=bundle.task.instruction,
        trajectory=trial.trajectory,
        final_response=trial.final_response,
        diff=changes.patch if changes else trial.workspace_diff,
        objective=_objective(command.as_json()) if command else None,
        scorers=[o.as_json() for o in outcomes or []],
        rubric_notes=[s.rubric for s in specs if isinstance(s, config.LlmJudgeSpec)],
        command_output={
            "command": trial.command,
            "exit_code": trial.exit_code,
            "stdout_tail": trial.stdout_tail,
            "stderr_tail": trial.stderr_tail,
        },
        expected_outcome=expected_outcome,
        is_coding_run=outcomes is not None,
    )


def _objective(result: dict[str, Any]) -> dict[str, Any]:
    return {
        "command": result["config"].get("command", ""),
        "verdict": result["verdict"],
        "detail": result["detail"],
        "output_tail": result["output_tail"],
    }


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def grade_trial_dir(
    trial_dir: str | os.PathLike[str],
    *,
    workspace: str | os.PathLike[str] | None = None,
    baseline: str | None = None,
    judge: JudgeSettings | None = None,
    expected_outcome: ExpectedOutcome = "completion",
    job: str | None = None,
    scenario: str | None = None,
) -> GradeReport:
    """Score (when there is a workspace), judge (when configured), then ingest the trial."""
    directory = Path(trial_dir)
    if not directory.is_dir():
        raise GradeError(f"{trial_dir}: not a directory")
    if (workspace is None) != (baseline is None):
        raise GradeError("--workspace and --baseline go together")
    bundle = _read(directory, job)
    notes: list[str] = []
    frozen = frozen_specs(bundle, scenario)
    try:
        specs = config.parse_scorers(frozen.raw)
    except config.ScenarioError as exc:
        raise GradeError(f"the scorers of {frozen.source} cannot run: {exc}") from None
    if scenario is not None and frozen.seeds_from is None:
        notes.append(f"--scenario not used: the {frozen.source} keeps its scorers")

    outcomes: list[engine.Outcome] | None = None
    changes: Changes | None = None
    if workspace is not None and baseline is not None:
        changes = read_changes(workspace, baseline)
        outcomes = engine.score(changes, specs)
        _write_json(directory / "scorers.json", [o.as_json() for o in outcomes])
        if not (directory / "workspace.diff").exists():
            (directory / "workspace.diff").write_text(changes.patch, encoding="utf-8")
            if changes.patch_truncated:
                notes.append("the workspace diff is large: only its beginning was kept")

    verdict = None
    if judge is not None:
        verdict = ask_judge(judge_input(bundle, specs, outcomes, changes, expected_outcome), judge)
        _write_json(directory / "judge.json", verdict.model_dump(mode="json"))

    # Read again: the directory now holds what grading wrote, as `ingest` would read it.
    bundle = _read(directory, job)
    bundle.task.scorer_specs = frozen.raw
    with transaction.atomic():
        outcome = BundleWriter().write(bundle)
        if frozen.seeds_from is not None and outcome.trial_id is not None:
            task_id = Trial.objects.filter(pk=outcome.trial_id).values_list("task_id", flat=True)
            scenarios.link_seeded_task(task_id.get(), frozen.seeds_from)
    return GradeReport(
        outcome=outcome,
        scorers=[o.as_json() for o in outcomes] if outcomes is not None else None,
        verdict=verdict,
        specs_from=frozen.source,
        notes=notes,
    )


# --- scoring a stored trial -------------------------------------------------------------------
@dataclass
class StoredScores:
    scorers: list[dict[str, Any]]
    specs_from: str
    notes: list[str] = field(default_factory=list)


def _stored_specs(task: Task, scenario: str | None) -> Specs:
    """A stored task's frozen scorers; a task stored without any (a Harbor task) is seeded
    now from the named scenario's current version, and keeps those from then on."""
    if task.scorer_specs:
        version = task.scenario_version
        label = f"task {task.name} as seeded" + (
            f" from scenario {version.scenario.name} v{version.number}" if version else ""
        )
        return Specs(list(task.scorer_specs), label)
    if scenario is None:
        raise GradeError(
            f"task {task.name} has no scorers: name a scenario to seed it with (--scenario)"
        )
    current = scenarios.current_version(scenario)
    if current is None:
        raise GradeError(f"no scenario is named {scenario!r}")
    return Specs(
        scenarios.snapshot(current), f"scenario {scenario} v{current.number}", seeds_from=current
    )


def score_stored(
    trial: Trial,
    workspace: str | os.PathLike[str],
    baseline: str,
    *,
    scenario: str | None = None,
) -> StoredScores:
    """Run a stored trial's frozen scorers over its workspace and store the results on the
    trial in place of its earlier ones (and the workspace diff, when none is stored)."""
    task = Task.objects.select_related("scenario_version__scenario").get(pk=trial.task_id)
    frozen = _stored_specs(task, scenario)
    notes = []
    if scenario is not None and frozen.seeds_from is None:
        notes.append(f"--scenario not used: the {frozen.source} keeps its scorers")
    try:
        specs = config.parse_scorers(frozen.raw)
    except config.ScenarioError as exc:
        raise GradeError(f"the scorers of {frozen.source} cannot run: {exc}") from None
    changes = read_changes(workspace, baseline)
    results = [o.as_json() for o in engine.score(changes, specs)]
    records = [
        schemas.ScorerResult.model_validate_json(json.dumps(r), strict=True) for r in results
    ]
    with transaction.atomic():
        # The row lock keeps a judge's verdict and these scorers from interleaving summaries.
        locked = Trial.objects.select_for_update().select_related("task").get(pk=trial.pk)
        if frozen.seeds_from is not None:
            # Seed 003, "Scorers freeze at seed time": this is the task's seed time.
            Task.objects.filter(pk=task.pk).update(scorer_specs=frozen.raw)
            scenarios.link_seeded_task(task.pk, frozen.seeds_from)
            locked.task.refresh_from_db()
        ScorerResult.objects.filter(trial=locked).delete()
        ScorerResult.objects.bulk_create(
            ScorerResult(trial=locked, **ScorerResult.values_of(i, r))
            for i, r in enumerate(records)
        )
        detail, _ = TrialDetail.objects.get_or_create(trial=locked)
        if not detail.workspace_diff:
            detail.workspace_diff = changes.patch
            detail.save(update_fields=["workspace_diff"])
            if changes.patch_truncated:
                notes.append("the workspace diff is large: only its beginning was kept")
        fields = locked.refresh_summary()
        locked.save(update_fields=[*fields, "updated_at"])
    return StoredScores(results, frozen.source, notes)


# --- judging a stored trial -------------------------------------------------------------------
# Each part of a trajectory step (a message, a tool call, an observation) is cut here for the
# judge; the judge bounds the whole trajectory (keeping its end).
MAX_STEP_PART_CHARS = 2_000


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f" [… {len(text) - limit} more characters left out …]"


def trajectory_text(raw: Any) -> str | None:
    """An ATIF trajectory written out step by step for the judge: each step numbered, its
    source, then its reasoning, message, tool calls and observations, each part bounded; a
    multi-step trial's stages under their names. None when nothing was recorded.

    A step's number is its position in the whole trajectory (`reports.numbered_steps`,
    counting on across stages), not the id the agent wrote: the judge cites steps by it and
    `rewards.citations` finds them by it."""
    if raw is None:
        return None
    lines: list[str] = []
    number = 0
    for stage, trajectory in reports.stages(raw):
        if stage:
            lines.append(f"### stage {stage}")
        steps = reports.steps(trajectory)
        if steps is None:  # not ATIF: as written
            lines.append(_cut(reports.as_text(trajectory), MAX_STEP_PART_CHARS))
            continue
        for step in steps:
            number += 1
            lines.append(f"[step {number}] {reports.as_text(step.get('source', ''))}")
            said = set()
            for part in reports.step_parts(step):
                if part.text in said:
                    continue  # a tool's result given as both the message and the observation
                said.add(part.text)
                label = f"{part.label} {part.name}" if part.name else part.label
                lines.append(f"{label}: {_cut(part.text, MAX_STEP_PART_CHARS)}")
    return "\n".join(lines)


def _run_error(trial: Trial, detail: TrialDetail | None) -> str:
    """The run's exception as stored: its type and message, then the traceback."""
    head = ": ".join(part for part in (trial.exception_type, trial.exception_message) if part)
    traceback = detail.exception_traceback if detail else ""
    return "\n".join(part for part in (head, traceback) if part)


def stored_judge_input(trial: Trial, expected_outcome: ExpectedOutcome | None = None) -> JudgeInput:
    """What the judge reads about a stored trial (`judge_input_of`), read from its rows."""
    return judge_input_of(Trial.objects.for_judging().get(pk=trial.pk), expected_outcome)


def judge_input_of(trial: Trial, expected_outcome: ExpectedOutcome | None = None) -> JudgeInput:
    """What the judge reads about a stored trial read with `Trial.objects.for_judging()`: a
    contract trial's diff, scorers and command output; a Harbor trial's (a ledger run)
    instruction, trajectory, run error, verifier tests and output; every trial's reward. A
    Harbor trial with no trajectory is judged on its agent's own log files instead, read
    (bounded) from its trial folder: they are not stored, and without them the judge would
    have only the verifier's side. The expected outcome is the latest verdict's unless given."""
    detail: TrialDetail | None = getattr(trial, "detail", None)
    scorers = list(trial.scorers.all())
    # Annotated by `for_judging`.
    latest_expected = getattr(trial, "latest_expected_outcome", None)
    table = [
        {
            "name": s.name,
            "type": s.type,
            "required": s.required,
            "verdict": s.get_verdict_display(),
            "score": s.score,
            "detail": s.detail,
            "output_tail": s.output_tail,
            "config": s.config,
        }
        for s in scorers
    ]
    command = next((row for row in table if row["type"] == "command"), None)
    notes = [
        str(spec.get("rubric"))
        for spec in trial.task.scorer_specs
        if isinstance(spec, dict) and spec.get("type") == "llm_judge" and spec.get("rubric")
    ]
    trajectory = detail.trajectory if detail else None
    tests = reports.ctrf(detail.ctrf if detail else None)
    return JudgeInput(
        # Harbor stores no task text: the agent received it as the trajectory's first message.
        instruction=trial.task.instruction or reports.first_user_message(trajectory),
        trajectory=trajectory_text(trajectory),
        final_response=detail.final_response if detail else "",
        diff=detail.workspace_diff if detail else "",
        objective=_objective(command) if command else None,
        scorers=table,
        rubric_notes=notes,
        command_output=(
            {
                "command": detail.command,
                "exit_code": detail.exit_code,
                "stdout_tail": detail.stdout_tail,
                "stderr_tail": detail.stderr_tail,
            }
            if detail
            else None
        ),
        expected_outcome=expected_outcome or latest_expected or "completion",
        is_coding_run=bool(scorers) or bool(detail and detail.workspace_diff),
        tests=[
            {"name": t.name, "status": t.status, "message": t.message}
            for t in (tests.tests if tests else [])
        ],
        verifier_output=detail.verifier_stdout if detail else "",
        reward=trial.reward,
        run_error=_run_error(trial, detail),
        agent_logs=(
            agent_log_text(trial.source_path) if not trajectory and trial.source_path else ""
        ),
    )


def store_verdict(
    trial: Trial, verdict: schemas.JudgeVerdict, *, batch_item: GradingItem | None = None
) -> JudgeVerdict:
    """Add a verdict beside the trial's older ones and refresh the trial's summary; a batch's
    verdict is linked to its item. Its citations are stored as checked against the trial's
    trajectory (`rewards.citations`)."""
    return store_verdicts([(trial.pk, verdict, batch_item)])[0]


def store_verdicts(
    judged: Sequence[tuple[int, schemas.JudgeVerdict, GradingItem | None]],
) -> list[JudgeVerdict]:
    """Add each verdict (trial id, verdict, its batch item or None) beside its trial's older
    ones and bring the trial's summary up to date, in one transaction and a few statements
    whatever the number of verdicts (a grading runner stores a round of answers at once).

    A new verdict is the one shown unless an older one claims a later time: then only the
    summary's judged columns change (`Trial.apply_verdict`), and trials given the same
    values share one UPDATE. Otherwise (rare) the summary is recomputed from the rows."""
    if not judged:
        return []
    ids = sorted({trial_id for trial_id, _, _ in judged})
    # Inside a caller's transaction (a runner's round), a part of it: all or nothing.
    with transaction.atomic(savepoint=False):
        # The row locks, taken in id order, keep two re-judges of a trial from interleaving
        # their summaries.
        trials = {
            t.pk: t
            for t in Trial.objects.for_new_verdicts()
            .select_for_update()
            .filter(pk__in=ids)
            .order_by("pk")
        }
        # Citations are checked against the cited trials' trajectories (one query, only
        # when a verdict cites anything).
        cited = [trial_id for trial_id, record, _ in judged if citations.has_citations(record)]
        trajectories = (
            dict(
                TrialDetail.objects.filter(trial_id__in=cited).values_list("trial_id", "trajectory")
            )
            if cited
            else {}
        )
        rows = []
        for trial_id, record, batch_item in judged:
            if trial_id not in trials:
                raise Trial.DoesNotExist(f"trial {trial_id} is gone")
            if trial_id in trajectories or citations.has_citations(record):
                record = citations.checked(record, trajectories.get(trial_id))
            row = JudgeVerdict.from_record(trials[trial_id], record)
            row.batch_item = batch_item
            rows.append(row)
        JudgeVerdict.objects.bulk_create(rows)
        advisory_failed = {
            trial_id
            for trial_id, scorer_type, required in ScorerResult.objects.filter(
                trial_id__in=ids, verdict=Verdict.FAIL
            ).values_list("trial_id", "type", "required")
            if rules.is_advisory(scorer_type, required)
        }
        # Annotated by `for_new_verdicts`, then moved on by each verdict shown.
        latest = {pk: getattr(trial, "latest_scored_at", None) for pk, trial in trials.items()}
        judged_values: dict[int, dict[str, Any]] = {}
        for row in rows:
            trial = trials[row.trial_id]
            if _shown_after(row, latest[trial.pk]):
                judged_values[trial.pk] = trial.apply_verdict(
                    row, advisory_failed=trial.pk in advisory_failed
                )
                latest[trial.pk] = row.scored_at
            else:  # an older verdict stays shown: recomputed as it was before this one
                judged_values.pop(trial.pk, None)
                full = Trial.objects.select_related("task").get(pk=trial.pk)
                full.save(update_fields=[*full.refresh_summary(), "updated_at"])
        # One UPDATE per distinct set of values: the trials of a round judged alike share one.
        alike: dict[tuple[tuple[str, Any], ...], list[int]] = defaultdict(list)
        for pk, values in judged_values.items():
            alike[tuple(values.items())].append(pk)
        now = timezone.now()
        for shared, pks in alike.items():
            Trial.objects.filter(pk__in=pks).update(**dict(shared), updated_at=now)
    return rows


def _shown_after(verdict: JudgeVerdict, latest_scored_at: datetime | None) -> bool:
    """Whether a verdict just added is shown (`JudgeVerdict.LATEST_FIRST`: the latest time
    first, one without a time last, then the newest row) before the trial's others, whose
    latest time is `latest_scored_at` (None when none has one)."""
    return latest_scored_at is None or (
        verdict.scored_at is not None and verdict.scored_at >= latest_scored_at
    )


def rejudge(trial: Trial, settings: JudgeSettings) -> JudgeVerdict:
    """Ask the judge again about a stored trial; the new verdict is added, none is replaced."""
    return store_verdict(trial, ask_judge(stored_judge_input(trial), settings))
