"""Harbor-shaped job folders for the ingest tests, from the files in tests/fixtures/harbor/.

The files there are written by this project in the shapes Harbor writes (single- and multi-step
trials, an agent timeout with a partial verifier result, reward.txt, a job result.json with
naive times, unknown fork-only keys); `lay_out` puts each at its Harbor path under a jobs
folder, and `synthetic_job` copies them into a job of N trials for the large-batch tests and
the speed measurement:

    .venv/bin/python -m tests.ingest_helpers 10000 /tmp/jobs      # lays out /tmp/jobs/synthetic-job
    SQLITE_PATH=/tmp/speed.sqlite3 .venv/bin/python manage.py migrate
    time SQLITE_PATH=/tmp/speed.sqlite3 .venv/bin/python manage.py ingest /tmp/jobs/synthetic-job

The real Harbor output in ../shared/harbor_samples/ is checked by tests/test_harbor_conformance.py.
"""

from __future__ import annotations

import io
import json
import shutil
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.core.management import CommandError, call_command

HARBOR_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "harbor"

SINGLE_JOB = "2026-10-05__09-12-44"
SINGLE = "task-weather-report__Q7xK2pL"
TIMEOUT = "task-log-audit__Zr4Wm8N"
MULTI_JOB = "2026-10-07__14-30-02"
MULTISTEP = "m2-invoice-repair__Hq3Tn5V"
PASS_JOB = "2026-10-09__08-00-05"
PASSING = "textkit__wrap.0f1e2d3c.__Lm2Xc9R"

# fixture file -> path inside the jobs folder
LAYOUT = {
    "single_result.json": f"{SINGLE_JOB}/{SINGLE}/result.json",
    "single_verifier_reward.json": f"{SINGLE_JOB}/{SINGLE}/verifier/reward.json",
    "single_trajectory.json": f"{SINGLE_JOB}/{SINGLE}/agent/trajectory.json",
    "timeout_result.json": f"{SINGLE_JOB}/{TIMEOUT}/result.json",
    "multistep_result.json": f"{MULTI_JOB}/{MULTISTEP}/result.json",
    "multistep_step_reward.json": f"{MULTI_JOB}/{MULTISTEP}/steps/run/verifier/reward.json",
    "multistep_step_details.json": (
        f"{MULTI_JOB}/{MULTISTEP}/steps/run/verifier/multibench_details.json"
    ),
    "job_result.json": f"{PASS_JOB}/result.json",
    "pass_result.json": f"{PASS_JOB}/{PASSING}/result.json",
    "pass_reward.txt": f"{PASS_JOB}/{PASSING}/verifier/reward.txt",
    "pass_ctrf.json": f"{PASS_JOB}/{PASSING}/verifier/ctrf.json",
}


@dataclass(frozen=True)
class HarborSet:
    """One set of Harbor files, where they go, and what ingesting them must give.

    The ingest tests make the same promises of every set: the authored files here, and the
    real Harbor output that tests/test_harbor_conformance.py checks.
    """

    source: Path
    layout: Mapping[str, str]
    single_job: str
    single: str
    timeout: str
    multi_job: str
    multistep: str
    pass_job: str
    passing: str
    # the files the tests read themselves, by their name in `source`
    single_reward: str
    multistep_result: str
    expect: Mapping[str, Any]


FIXTURE_SET = HarborSet(
    source=HARBOR_FIXTURES,
    layout=LAYOUT,
    single_job=SINGLE_JOB,
    single=SINGLE,
    timeout=TIMEOUT,
    multi_job=MULTI_JOB,
    multistep=MULTISTEP,
    pass_job=PASS_JOB,
    passing=PASSING,
    single_reward="single_verifier_reward.json",
    multistep_result="multistep_result.json",
    expect={
        "single_metric": "automated.file_created",
        # One identity for a task however it was referenced: (dataset, bare name).
        "single_task": ("task-weather-report", "fixturebench"),
        "single_checksum": "882791463ffd8f4a454db6b74d3ebae5cd73c87d44acec97331cb34874a0e9c9",
        "single_uid": "0b7f3c2e-5a41-4c1d-9e8f-2a6b4c8d0e11",
        "single_agent": ("terminus-2", "terminus-2 0.9.4 (b51e0c2)"),
        "single_model": ("m-large", "acme"),
        "single_tokens": (2210, 38912, 517),
        "single_started_at": datetime(2026, 10, 5, 9, 13, 2, 118204, tzinfo=UTC),
        "single_agent_seconds": 31.25,
        "single_steps": 6,
        "single_final_start": "Done. Wrote `/app/report/weather.md`",
        "single_config_model": "acme/m-large",
        "timeout_reward": 0.4,
        "timeout_metrics": {"llm_judge": 0.3, "automated.sessions_traced": 0.5},
        "timeout_message": "Agent execution timed out after 600.0 seconds",
        "timeout_occurred_at": "2026-10-05T11:24:51.302518+00:00",
        "multistep_reward": 0.3125,
        "multistep_metric": ("multibench.trajectory_score", 0.625),
        "multistep_failure_mode": ("multibench.failure_mode", "tests_not_run"),
        "multistep_details": "steps/run/verifier/multibench_details.json",
        "multistep_verifier_seconds": 2.25,
        "passing_model": ("m-small-7b", ""),
        "passing_agent": ("claude-code", "2.3.0"),
        "passing_ctrf_passed": 2,
        "job_started_at": datetime(2026, 10, 9, 8, 0, 5, 250125, tzinfo=UTC),
        "job_finished_at": datetime(2026, 10, 9, 8, 19, 47, 812406, tzinfo=UTC),
        "job_eval": "claude-code__swe-fixtures",
    },
)


@dataclass(frozen=True)
class Jobs:
    root: Path

    def job(self, name: str) -> Path:
        return self.root / name

    def trial(self, job: str, trial: str) -> Path:
        return self.root / job / trial


def lay_out(dest: Path, source: Path = HARBOR_FIXTURES, layout: Mapping[str, str] = LAYOUT) -> Jobs:
    """Every file of `source` at its Harbor path under `dest` (a jobs folder of three jobs)."""
    for sample, target in layout.items():
        path = dest / target
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / sample, path)
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
    template: str = "single_result.json",
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
    """A Harbor job of `n` trials cycling through the fixtures' shapes.

    Each trial gets its own id and name; the files are otherwise the fixtures' bytes, so the
    parse cost is a realistic one (result.json with its embedded config, an ATIF trajectory,
    reward.json / reward.txt / ctrf.json, a multi-step layout).
    """
    job = dest / name
    job.mkdir(parents=True)
    shapes = [
        (
            "single_result.json",
            {
                "verifier/reward.json": "single_verifier_reward.json",
                "agent/trajectory.json": "single_trajectory.json",
            },
        ),
        ("timeout_result.json", {}),
        ("multistep_result.json", {"steps/run/verifier/reward.json": "multistep_step_reward.json"}),
        (
            "pass_result.json",
            {
                "verifier/reward.txt": "pass_reward.txt",
                "verifier/ctrf.json": "pass_ctrf.json",
                "agent/trajectory.json": "terminal_trajectory.json",
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
    job_result = json.loads((samples / "job_result.json").read_text())
    job_result["n_total_trials"] = job_result["stats"]["n_trials"] = n
    evals = job_result["stats"]["evals"]["claude-code__swe-fixtures"]
    evals["n_trials"] = n
    evals["reward_stats"] = {"reward": rewards}
    (job / "result.json").write_text(json.dumps(job_result, indent=4))
    return job


if __name__ == "__main__":
    import sys

    count, where = int(sys.argv[1]), Path(sys.argv[2])
    print(synthetic_job(HARBOR_FIXTURES, where, count))
