"""The Harbor folder writer (`seed_demo --harbor`): generated trials as Harbor job folders.

`<job>/` holds `config.json` and `result.json`; `<job>/<trial>/` holds `config.json`,
`result.json`, `exception.txt`, `agent/trajectory.json`, `verifier/` and, for multi-step
trials, `steps/`. For ingest tests and `bench/`; nothing here touches the database.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from demo.generator import DemoGenerator, DemoTrial
from demo.plan import DemoError, DemoPlan, JobPlan, ProgressFn, SeedReport, iso


def _harbor_time(value: datetime | str | None, naive: bool) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if naive:
        # Older Harbor wrote `datetime.now()`: no zone (the machines ran on UTC).
        return value.astimezone(UTC).replace(tzinfo=None).isoformat()
    return iso(value)


def _dump(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")


def write_harbor(plan: DemoPlan, root: Path, *, progress: ProgressFn | None = None) -> SeedReport:
    """Write Harbor-format job folders under `root`: `<job>/` and `<job>/<trial>/`."""
    generator = DemoGenerator(plan, check_outputs=False)
    root.mkdir(parents=True, exist_ok=True)
    clash = [j.name for j in plan.jobs if (root / j.name).exists()]
    if clash:
        raise DemoError(f"{root / clash[0]} already exists; choose an empty folder")
    report = SeedReport(path="harbor", tasks=len(plan.tasks))
    for job in plan.jobs:
        job_dir = root / job.name
        job_dir.mkdir()
        job_id = str(uuid.UUID(bytes=hashlib.blake2b(job.name.encode(), digest_size=16).digest()))
        _dump(job_dir / "config.json", job.config())
        evals: dict[str, _EvalStats] = {}
        for i in range(job.first_trial, job.first_trial + job.n_trials):
            demo = generator.trial(i)
            reward = _write_harbor_trial(job_dir, job, job_id, demo)
            stats = evals.setdefault(
                f"{job.profile.agent}__{demo.bundle.task.source}", _EvalStats()
            )
            stats.add(demo.bundle.trial.name, reward, demo.bundle.trial.exception_type)
            report.trials += 1
            if progress:
                progress(1)
        _write_harbor_job_result(job_dir, job, job_id, evals)
        report.jobs += 1
    return report


@dataclass
class _EvalStats:
    """One `agent__dataset` entry of a Harbor JobResult."""

    n_trials: int = 0
    total: float = 0.0
    rewards: dict[str, list[str]] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)

    def add(self, trial: str, reward: float | None, exception_type: str) -> None:
        self.n_trials += 1
        if reward is not None:
            self.total += reward
            self.rewards.setdefault(repr(float(reward)), []).append(trial)
        if exception_type:
            self.errors[exception_type] += 1

    def as_json(self) -> dict[str, Any]:
        return {
            "n_trials": self.n_trials,
            "n_errors": sum(self.errors.values()),
            "metrics": [{"mean": round(self.total / self.n_trials, 4)}],
            "pass_at_k": {},
            "reward_stats": {"reward": self.rewards},
            "exception_stats": dict(sorted(self.errors.items())),
        }


def _write_harbor_job_result(
    job_dir: Path, job: JobPlan, job_id: str, evals: dict[str, _EvalStats]
) -> None:
    naive = job.naive_times
    _dump(
        job_dir / "result.json",
        {
            "id": job_id,
            "started_at": _harbor_time(job.started_at, naive),
            "finished_at": _harbor_time(job.finished_at, naive),
            "n_total_trials": job.n_trials,
            "stats": {
                "n_trials": job.n_trials,
                "n_errors": sum(sum(e.errors.values()) for e in evals.values()),
                "evals": {key: stats.as_json() for key, stats in sorted(evals.items())},
            },
        },
    )


def _write_harbor_trial(job_dir: Path, job: JobPlan, job_id: str, demo: DemoTrial) -> float | None:
    """One trial folder; returns the reward Harbor recorded (None: no verifier_result)."""
    bundle, hints = demo.bundle, demo.harbor
    trial, task = bundle.trial, bundle.task
    profile = job.profile
    trial_dir = job_dir / trial.name
    (trial_dir / "agent").mkdir(parents=True)
    naive = job.naive_times

    config = {
        **trial.config,
        "task": {
            "path": f"datasets/{task.source}/{task.name.split('/')[-1]}",
            "git_url": None,
            "git_commit_id": None,
            "name": None,
            "ref": None,
            "overwrite": False,
            "download_dir": None,
            "source": task.source,
        },
        "trial_name": trial.name,
        "trials_dir": f"jobs/{job.name}",
        "artifacts": [],
        "job_id": job_id,
    }
    if hints.extra_keys:
        config["environment"] = {**config["environment"], "mounts_json": None}
    _dump(trial_dir / "config.json", config)

    # What Harbor recorded: the verifier's reward file as it read it, or nothing.
    rewards: dict[str, Any] | None = None
    raw = hints.reward_raw
    if raw is not None:
        if hints.reward_file == "reward.txt":
            try:
                rewards = {"reward": float(raw.decode().strip())}
            except ValueError:
                rewards = None
        else:
            try:
                parsed = json.loads(raw.decode() or "null")
            except ValueError:
                parsed = None
            # Harbor keeps only numeric keys; a reward file without one fails its verifier.
            if isinstance(parsed, dict):
                numeric = {
                    k: v
                    for k, v in parsed.items()
                    if isinstance(v, int | float) and not isinstance(v, bool)
                }
                rewards = numeric if "reward" in numeric else None
    verifier_result = {"rewards": rewards, "statistics": None} if rewards is not None else None
    if verifier_result is not None and not hints.extra_keys:
        del verifier_result["statistics"]

    exception_info = None
    if trial.exception_type:
        occurred = trial.finished_at or trial.started_at or job.started_at
        exception_info = {
            "exception_type": trial.exception_type,
            "exception_message": trial.exception_message,
            "exception_traceback": trial.exception_traceback,
            # Harbor calls datetime.now(): always naive local time.
            "occurred_at": occurred.replace(tzinfo=None).isoformat(),
        }
    elif rewards is None and trial.status == "completed":
        # Harbor names the verifier's failure when it recorded no reward.
        exception_info = {
            "exception_type": "RewardFileEmptyError" if raw == b"" else "VerifierOutputParseError",
            "exception_message": "reward file could not be parsed",
            "exception_traceback": "Traceback (most recent call last):\n  ...\n",
            "occurred_at": (trial.finished_at or job.started_at).replace(tzinfo=None).isoformat(),
        }
    if exception_info is not None:
        (trial_dir / "exception.txt").write_text(
            exception_info["exception_traceback"], encoding="utf-8"
        )

    timing = {
        name: {
            "started_at": _harbor_time(block["started_at"], naive),
            "finished_at": _harbor_time(block["finished_at"], naive),
        }
        for name, block in trial.timings.items()
    }
    agent_result = None
    if trial.n_input_tokens is not None:
        agent_result = {
            "n_input_tokens": trial.n_input_tokens,
            "n_cache_tokens": trial.n_cache_tokens,
            "n_output_tokens": trial.n_output_tokens,
            "cost_usd": trial.cost_usd,
            "rollout_details": None,
            "metadata": None,
        }
    model_info = None
    if not hints.model_info_null:
        model_info = {"name": profile.model, "provider": profile.provider}
    result: dict[str, Any] = {
        "id": str(trial.uid),
        "task_name": task.name,
        "trial_name": trial.name,
        "trial_uri": f"file:///srv/harbor/jobs/{job.name}/{trial.name}",
        "task_id": {"path": config["task"]["path"]},
        "source": task.source,
        "task_checksum": task.checksum,
        "config": config,
        "agent_info": {"name": profile.agent, "version": profile.version, "model_info": model_info},
        "agent_result": agent_result,
        "verifier_result": verifier_result,
        "exception_info": exception_info,
        "started_at": _harbor_time(trial.started_at, naive),
        "finished_at": _harbor_time(trial.finished_at, naive),
        "environment_setup": timing.get("environment_setup"),
        "agent_setup": timing.get("agent_setup"),
        "agent_execution": timing.get("agent_execution"),
        "verifier": timing.get("verifier"),
        "step_results": None,
    }
    if hints.extra_keys:
        # A fork-only field: readers must ignore keys they do not know.
        result["skill_learning_result"] = {"outcome": "skipped", "log_path": None}

    if trial.trajectory is not None:
        _dump(trial_dir / "agent" / "trajectory.json", trial.trajectory)
    if hints.steps and verifier_result is not None:
        # Multi-step layout: per-step verifiers; the top-level result is Harbor's aggregate.
        result["agent_execution"] = result["verifier"] = None
        steps = []
        for step, step_reward in hints.steps:
            step_dir = trial_dir / "steps" / step / "verifier"
            step_dir.mkdir(parents=True)
            step_rewards = {**(rewards or {}), "reward": step_reward}
            _dump(step_dir / "reward.json", step_rewards)
            steps.append(
                {
                    "step_name": step,
                    "agent_result": agent_result,
                    "verifier_result": {"rewards": step_rewards, "statistics": None},
                    "exception_info": None,
                    "agent_execution": timing.get("agent_execution"),
                    "verifier": timing.get("verifier"),
                }
            )
        result["step_results"] = steps
    elif raw is not None:
        verifier_dir = trial_dir / "verifier"
        verifier_dir.mkdir()
        (verifier_dir / hints.reward_file).write_bytes(raw)
        if hints.details_raw is not None:
            (verifier_dir / "reward-details.json").write_bytes(hints.details_raw)
        if trial.ctrf is not None:
            _dump(verifier_dir / "ctrf.json", trial.ctrf)
        if trial.verifier_stdout:
            (verifier_dir / "test-stdout.txt").write_text(trial.verifier_stdout, encoding="utf-8")
    _dump(trial_dir / "result.json", result)
    return None if rewards is None else rewards["reward"]
