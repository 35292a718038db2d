"""`manage.py ingest --follow`: a Harbor jobs folder followed while its job runs.

The follower runs as the process a user starts, on this test's database, while the test
writes a job into its folder the way Harbor 0.24 does: the job's result.json first (no
finished_at), each trial's config.json when it starts, its result.json when it ends
(written in place: a reader can see half of it), the job's result.json again at the end.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rewards.management.commands.ingest import RECHECK_EVERY
from rewards.models import Job, Trial
from tests.ingest_helpers import HARBOR_FIXTURES, PASS_JOB, PASSING
from tests.task_worker import PROJECT, database_environment

pytestmark = pytest.mark.django_db(transaction=True)

# The promise: a trial is listed within 2 s of its result.json being written.
LISTED_WITHIN = 2.0
SECOND = "textkit__wrap.0f1e2d3c.__Second1"


def _wait_for(condition: Callable[[], bool], seconds: float) -> float | None:
    """Seconds until `condition` held (None: it did not within `seconds`)."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if condition():
            return time.monotonic() - start
        time.sleep(0.05)
    return None


class Follower:
    def __init__(self, jobs: Path) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "ingest",
                "--follow",
                "--interval=0.25",
                "--no-progress",
                str(jobs),
            ],
            cwd=PROJECT,
            env={**database_environment(), "DJANGO_SETTINGS_MODULE": "config.settings"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.out: list[str] = []
        # The first pass is done when it says it is following.
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.out.append(line)
            if line.startswith("Following "):
                return
        raise AssertionError(f"the follower stopped: {''.join(self.out)}")

    def stop(self) -> str:
        self.process.terminate()
        try:
            rest, _ = self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            rest, _ = self.process.communicate()
        return "".join(self.out) + rest


@pytest.fixture
def followed(tmp_path: Path) -> Iterator[Callable[[Path], Follower]]:
    started: list[Follower] = []

    def start(jobs: Path) -> Follower:
        started.append(Follower(jobs))
        return started[-1]

    yield start
    for follower in started:
        if follower.process.poll() is None:
            follower.stop()


def _trial_result(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((HARBOR_FIXTURES / "pass_result.json").read_text())
    data["trial_name"] = name
    data["id"] = {PASSING: "5d0f6c1e-0b7a-4f43-8e2d-6a1b9c3e5f70"}.get(
        name, "7a2e4c60-1d3b-4e8f-9a5c-0b6d2f4e8a13"
    )
    return data


def _start_trial(job: Path, name: str) -> Path:
    """What Harbor writes when a trial starts: its folder and config.json."""
    folder = job / name
    (folder / "agent").mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(_trial_result(name)["config"]))
    return folder


def _status(name: str) -> str | None:
    return Trial.objects.filter(name=name).values_list("status", flat=True).first()


def test_trials_appear_as_they_run_and_finish_and_the_job_ends_with_its_result(
    tmp_path: Path, followed: Callable[[Path], Follower]
) -> None:
    jobs = tmp_path / "jobs"
    job = jobs / PASS_JOB
    job.mkdir(parents=True)
    job_result = json.loads((HARBOR_FIXTURES / "job_result.json").read_text())
    # Harbor 0.24 writes the job's result.json as the job starts, finished_at unset.
    (job / "result.json").write_text(json.dumps({**job_result, "finished_at": None}))
    follower = followed(jobs)

    # A trial starts: listed as running with what it has so far, not counted as a failure.
    folder = _start_trial(job, PASSING)
    assert _wait_for(lambda: _status(PASSING) == "running", LISTED_WITHIN) is not None
    running = Trial.objects.select_related("job").get(name=PASSING)
    assert (running.agent_name, running.model_name) == ("claude-code", "m-small-7b")
    assert running.job.started_at is not None
    assert running.job.finished_at is None
    assert running.job.is_running
    assert running.run_badge == ""

    # Half of its result.json: read again later, never stored in part.
    full = json.dumps(_trial_result(PASSING), indent=4).encode()
    (folder / "result.json").write_bytes(full[: len(full) // 2])
    time.sleep(1.0)  # several passes
    half = Trial.objects.get(name=PASSING)
    assert half.status == "running"
    assert half.results.filter(reward__gt=0).count() == 0

    # The rest of it: the trial is stored finished, with Harbor's reward, within 2 s.
    (folder / "result.json").write_bytes(full)
    took = _wait_for(lambda: _status(PASSING) == "completed", LISTED_WITHIN)
    assert took is not None, follower.stop()
    done = Trial.objects.get(name=PASSING)
    assert done.reward == 1.0
    assert done.results.get(is_current=True).reward == 1.0
    assert Job.objects.get(name=PASS_JOB).is_running

    # A trial whose result.json appears at once (it ran between two looks).
    second = job / SECOND
    second.mkdir()
    (second / "config.json").write_text(json.dumps(_trial_result(SECOND)["config"]))
    (second / "result.json").write_text(json.dumps(_trial_result(SECOND)))
    assert _wait_for(lambda: _status(SECOND) == "completed", LISTED_WITHIN) is not None

    # The job's own result.json records finished_at: the job is finished.
    (job / "result.json").write_text(json.dumps(job_result))
    assert (
        _wait_for(
            lambda: Job.objects.filter(name=PASS_JOB, finished_at__isnull=False).exists(),
            LISTED_WITHIN,
        )
        is not None
    )
    assert not Job.objects.get(name=PASS_JOB).is_running
    out = follower.stop()
    assert "Stopped following." in out
    assert Trial.objects.filter(job__name=PASS_JOB).count() == 2


def test_a_restarted_follower_resumes_without_reading_or_duplicating_what_is_stored(
    tmp_path: Path, followed: Callable[[Path], Follower]
) -> None:
    jobs = tmp_path / "jobs"
    job = jobs / PASS_JOB
    _start_trial(job, PASSING)
    (job / PASSING / "result.json").write_text(json.dumps(_trial_result(PASSING)))
    _start_trial(job, SECOND)  # still running; an older Harbor: no job result.json yet
    first = followed(jobs)
    assert _status(PASSING) == "completed"
    assert _status(SECOND) == "running"
    assert Job.objects.get(name=PASS_JOB).is_running
    first.stop()

    again = followed(jobs)
    assert "ingested 0, unchanged 2, updated 0" in "".join(again.out)
    (job / SECOND / "result.json").write_text(json.dumps(_trial_result(SECOND)))
    assert _wait_for(lambda: _status(SECOND) == "completed", LISTED_WITHIN) is not None

    # A finished trial is looked at again only every RECHECK_EVERY looks (each look costs
    # the new and running trials alone), yet a later change to it is still stored.
    changed = {**_trial_result(PASSING), "verifier_result": {"rewards": {"reward": 0.5}}}
    (job / PASSING / "result.json").write_text(json.dumps(changed))
    recheck = RECHECK_EVERY * 0.25 + 10
    reward = Trial.objects.filter(name=PASSING).values_list("reward", flat=True)
    assert _wait_for(lambda: reward.first() == 0.5, recheck) is not None
    again.stop()
    assert Trial.objects.filter(job__name=PASS_JOB).count() == 2
    # Finished trials and no job result.json (an older Harbor writes it only at the end):
    # nothing is left running.
    assert not Job.objects.get(name=PASS_JOB).is_running


def test_a_missing_path_stops_the_follower_at_once(tmp_path: Path) -> None:
    ran = subprocess.run(
        [sys.executable, "manage.py", "ingest", "--follow", str(tmp_path / "nowhere")],
        cwd=PROJECT,
        env={**database_environment(), "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode != 0
    assert "does not exist" in ran.stderr
