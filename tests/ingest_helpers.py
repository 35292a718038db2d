"""Lay out the real Harbor samples (../shared/harbor_samples/) as Harbor writes them.

The sample README gives each file's original path; `lay_out_samples` rebuilds those folders
under a temporary directory, and `synthetic_job` copies them into a job of N trials for the
large-batch tests and the speed measurement:

    .venv/bin/python -m tests.ingest_helpers 10000 /tmp/jobs      # lays out /tmp/jobs/synthetic-job
    SQLITE_PATH=/tmp/speed.sqlite3 .venv/bin/python manage.py migrate
    time SQLITE_PATH=/tmp/speed.sqlite3 .venv/bin/python manage.py ingest /tmp/jobs/synthetic-job
"""

from __future__ import annotations

import io
import json
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.management import CommandError, call_command

CALENDAR_JOB = "2026-05-27__16-03-14"
CALENDAR = "task-calendar__8A83BnJ"
TIMEOUT = "task-log-hdfs-block-ops__nvME2du"
CLAW_JOB = "2026-06-09__20-28-28"
MULTISTEP = "t4-delegation-repair__x8HNRDi"
SKILLS_JOB = "2026-04-13__06-09-31"
PROFILER = "pyutils__line_profiler.a646bf0f.__UPWAM6C"

# sample file -> path inside the jobs folder (README.md, "Path in source repo")
LAYOUT = {
    "pinchbench_task-calendar__result.json": f"{CALENDAR_JOB}/{CALENDAR}/result.json",
    "pinchbench_task-calendar__verifier_reward.json": (
        f"{CALENDAR_JOB}/{CALENDAR}/verifier/reward.json"
    ),
    "pinchbench_task-calendar__agent_trajectory.atif.json": (
        f"{CALENDAR_JOB}/{CALENDAR}/agent/trajectory.json"
    ),
    "pinchbench_task-log-hdfs-block-ops__result_timeout.json": (
        f"{CALENDAR_JOB}/{TIMEOUT}/result.json"
    ),
    "clawbench_t4-delegation-repair__result_multistep.json": f"{CLAW_JOB}/{MULTISTEP}/result.json",
    "clawbench_t4-delegation-repair__steps_run_verifier_reward.json": (
        f"{CLAW_JOB}/{MULTISTEP}/steps/run/verifier/reward.json"
    ),
    "clawbench_t4-delegation-repair__steps_run_verifier_clawbench_details.json": (
        f"{CLAW_JOB}/{MULTISTEP}/steps/run/verifier/clawbench_details.json"
    ),
    "evolving-skills_job_2026-04-13__06-09-31__job_result.json": f"{SKILLS_JOB}/result.json",
    "evolving-skills_line_profiler__result_pass_forkfields.json": (
        f"{SKILLS_JOB}/{PROFILER}/result.json"
    ),
    "evolving-skills_line_profiler__verifier_reward.txt": (
        f"{SKILLS_JOB}/{PROFILER}/verifier/reward.txt"
    ),
    "evolving-skills_line_profiler__verifier_ctrf.json": (
        f"{SKILLS_JOB}/{PROFILER}/verifier/ctrf.json"
    ),
}
GOLDEN_TRAJECTORY = "harbor_golden_terminus2_hello-world-invalid-json.trajectory.json"


@dataclass(frozen=True)
class Jobs:
    root: Path

    def job(self, name: str) -> Path:
        return self.root / name

    def trial(self, job: str, trial: str) -> Path:
        return self.root / job / trial


def lay_out_samples(samples: Path, dest: Path) -> Jobs:
    """Every sample file at its Harbor path under `dest` (a jobs folder of three jobs)."""
    for sample, target in LAYOUT.items():
        path = dest / target
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(samples / sample, path)
    return Jobs(dest)


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def write_files(root: Path, files: dict[str, Any]) -> Path:
    """Files under `root`: bytes and str verbatim, anything else as JSON."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content)
        else:
            path.write_text(json.dumps(content))
    return root


@dataclass(frozen=True)
class Ran:
    """What `manage.py ingest` printed, and its CommandError ('' when it exited 0)."""

    out: str
    error: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()

    def summary(self) -> str:
        return self.lines[0] if self.lines else ""


def ingest(*args: str | Path) -> Ran:
    out = io.StringIO()
    try:
        call_command("ingest", *[str(a) for a in args], "--no-progress", stdout=out)
    except CommandError as exc:
        return Ran(out.getvalue(), str(exc))
    return Ran(out.getvalue(), "")


def harbor_trial(
    job_dir: Path,
    name: str,
    samples: Path,
    *,
    template: str = "pinchbench_task-calendar__result.json",
    **changes: Any,
) -> Path:
    """A Harbor trial folder made from a real result.json, with some keys changed."""
    data = json.loads((samples / template).read_text())
    data["trial_name"] = name
    data["id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{job_dir.name}/{name}"))
    data.update(changes)
    folder = job_dir / name
    write_json(folder / "result.json", data)
    return folder


def synthetic_job(samples: Path, dest: Path, n: int, name: str = "synthetic-job") -> Path:
    """A Harbor job of `n` trials cycling through the real samples' shapes.

    Each trial gets its own id and name; the files are otherwise the samples' bytes, so the
    parse cost is the real one (result.json with its embedded config, an ATIF trajectory,
    reward.json / reward.txt / ctrf.json, a multi-step layout).
    """
    job = dest / name
    job.mkdir(parents=True)
    shapes = [
        (
            "pinchbench_task-calendar__result.json",
            {
                "verifier/reward.json": "pinchbench_task-calendar__verifier_reward.json",
                "agent/trajectory.json": "pinchbench_task-calendar__agent_trajectory.atif.json",
            },
        ),
        ("pinchbench_task-log-hdfs-block-ops__result_timeout.json", {}),
        (
            "clawbench_t4-delegation-repair__result_multistep.json",
            {
                "steps/run/verifier/reward.json": (
                    "clawbench_t4-delegation-repair__steps_run_verifier_reward.json"
                ),
            },
        ),
        (
            "evolving-skills_line_profiler__result_pass_forkfields.json",
            {
                "verifier/reward.txt": "evolving-skills_line_profiler__verifier_reward.txt",
                "verifier/ctrf.json": "evolving-skills_line_profiler__verifier_ctrf.json",
                "agent/trajectory.json": GOLDEN_TRAJECTORY,
            },
        ),
    ]
    templates = {result: json.loads((samples / result).read_text()) for result, _ in shapes}
    rewards: dict[str, list[str]] = {}
    for index in range(n):
        result_name, files = shapes[index % len(shapes)]
        data = templates[result_name]
        trial = f"{data['task_name'].rsplit('/', 1)[-1][:40]}__{index:07d}"
        data["trial_name"] = trial
        data["id"] = str(uuid.UUID(int=index + 1))
        folder = job / trial
        folder.mkdir()
        (folder / "result.json").write_text(json.dumps(data, indent=4))
        for target, sample in files.items():
            path = folder / target
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(samples / sample, path)
        reward = data["verifier_result"]["rewards"]["reward"]
        rewards.setdefault(str(float(reward)), []).append(trial)
    # The job's own result.json, shaped like the sample's: Harbor lists every trial's name
    # under its reward in stats.evals[...].reward_stats, so it grows with the job.
    job_result = json.loads(
        (samples / "evolving-skills_job_2026-04-13__06-09-31__job_result.json").read_text()
    )
    job_result["n_total_trials"] = job_result["stats"]["n_trials"] = n
    evals = job_result["stats"]["evals"]["claude-code__swesmith-train"]
    evals["n_trials"] = n
    evals["reward_stats"] = {"reward": rewards}
    (job / "result.json").write_text(json.dumps(job_result, indent=4))
    return job


if __name__ == "__main__":
    import sys

    count, where = int(sys.argv[1]), Path(sys.argv[2])
    samples = Path(__file__).resolve().parent.parent.parent / "shared" / "harbor_samples"
    print(synthetic_job(samples, where, count))
