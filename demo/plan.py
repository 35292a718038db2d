"""The plan of a demo run: its jobs, each trial's identity and time slot, and its report.

A plan is a pure function of `(seed, trials, jobs)`: every output (the writer, the fast path,
the Harbor folders) asks it for the same names, uids and times. Dates start from a fixed base;
the only wall-clock values are the database's own bookkeeping (`imported_at`, `updated_at`).
"""

from __future__ import annotations

import bisect
import hashlib
import math
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from demo.cases import (
    EXCEPTION_CASES,
    GATE_CASES,
    PROFILES,
    VALIDITY_CASES,
    AgentProfile,
    GateCase,
)
from demo.catalogue import TASKS, TaskTemplate, short_name, task_record
from rewards.schemas import TaskRecord

BASE_DATE = datetime(2026, 11, 2, tzinfo=UTC)
TRIALS_PER_JOB = 10_000
MIN_JOBS = len(PROFILES)  # every agent profile shows up, however small the demo
CONCURRENCY = 8


class DemoError(Exception):
    """A demo run that cannot go ahead; the message is for the person who ran it."""


def iso(value: datetime) -> str:
    """Harbor's spelling of an aware time: ISO 8601 with a `Z`."""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


# --- plan: jobs and trial identities -----------------------------------------------------------
@dataclass(frozen=True)
class JobPlan:
    index: int
    name: str
    profile_index: int
    started_at: datetime
    first_trial: int
    n_trials: int

    @property
    def profile(self) -> AgentProfile:
        return PROFILES[self.profile_index]

    @property
    def finished_at(self) -> datetime:
        return _slot_time(self.started_at, self.n_trials) + timedelta(minutes=20)

    @property
    def naive_times(self) -> bool:
        # Older Harbor wrote `datetime.now()`: every third job's folders carry times without a
        # zone, in the job's result.json and in its trials' alike.
        return self.index % 3 == 2

    @property
    def dataset_sources(self) -> list[str]:
        return sorted({t.source for t in TASKS})

    def config(self) -> dict[str, Any]:
        """Harbor's JobConfig, trimmed to what a reader of the job page cares about."""
        profile = self.profile
        return {
            "job_name": self.name,
            "jobs_dir": "jobs",
            "n_attempts": 1,
            "timeout_multiplier": 1.0,
            "orchestrator": {"type": "local", "n_concurrent_trials": CONCURRENCY},
            "agents": [
                {
                    "name": profile.agent,
                    "model_name": profile.qualified_model,
                    "kwargs": {"version": profile.version},
                }
            ],
            "datasets": [{"path": f"datasets/{source}"} for source in self.dataset_sources],
        }


def _slot_time(job_start: datetime, position: int) -> datetime:
    # Harbor runs CONCURRENCY trials at a time; a new one starts every ~97 s per lane.
    lane = position % CONCURRENCY
    return job_start + timedelta(seconds=(position // CONCURRENCY) * 97 + lane * 3)


_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SUFFIX_SPACE = 62**7


class DemoPlan:
    """Jobs, tasks and per-trial identities for one `(seed, trials, jobs)`."""

    def __init__(self, *, seed: int, trials: int, jobs: int | None = None) -> None:
        if trials < 1:
            raise DemoError("--trials must be at least 1")
        if jobs is not None and jobs < 1:
            raise DemoError("--jobs must be at least 1")
        self.seed = seed
        self.trials = trials
        n_jobs = jobs or max(MIN_JOBS, math.ceil(trials / TRIALS_PER_JOB))
        n_jobs = min(n_jobs, trials)
        # The plan (job names, name suffixes, uids) is keyed by the whole run, so the same
        # seed at another size makes a disjoint set of jobs and uids instead of moving trials
        # between jobs of an earlier run.
        self._key = f"{seed}:{trials}:{n_jobs}"
        # Demo content, not secrets: a seeded PRNG is the point (same seed, same data).
        rng = random.Random(f"trialdesk-demo:{self._key}:plan")
        profile_offset = rng.randrange(len(PROFILES))
        self.jobs: list[JobPlan] = []
        for index in range(n_jobs):
            first = index * trials // n_jobs
            last = (index + 1) * trials // n_jobs
            # Nightly runs: one a day, at a seeded time, named the way Harbor names job folders.
            started = BASE_DATE + timedelta(
                days=index, hours=rng.randrange(0, 6), minutes=rng.randrange(60)
            )
            started += timedelta(seconds=rng.randrange(60))
            self.jobs.append(
                JobPlan(
                    index=index,
                    name=started.strftime("%Y-%m-%d__%H-%M-%S"),
                    profile_index=(index + profile_offset) % len(PROFILES),
                    started_at=started,
                    first_trial=first,
                    n_trials=last - first,
                )
            )
        self._job_starts = [job.first_trial for job in self.jobs]
        self.tasks: list[TaskRecord] = [task_record(t, seed) for t in TASKS]
        # Name suffixes: i ↦ (a·i + b) mod 62⁷ is a bijection (a is prime to 62), so names
        # are unique within a seed and look like Harbor's random ones.
        self._suffix_mul = rng.randrange(1, _SUFFIX_SPACE) | 1
        while self._suffix_mul % 31 == 0:
            self._suffix_mul += 2
        self._suffix_add = rng.randrange(_SUFFIX_SPACE)
        self._case_offsets = [rng.randrange(1000) for _ in range(3)]

    def job_of(self, i: int) -> JobPlan:
        return self.jobs[bisect.bisect_right(self._job_starts, i) - 1]

    def suffix(self, i: int) -> str:
        n = (i * self._suffix_mul + self._suffix_add) % _SUFFIX_SPACE
        chars = []
        for _ in range(7):
            n, digit = divmod(n, 62)
            chars.append(_BASE62[digit])
        return "".join(chars)

    def uid(self, i: int) -> uuid.UUID:
        digest = hashlib.blake2b(f"{self._key}:{i}".encode(), digest_size=16).digest()
        return uuid.UUID(bytes=digest, version=4)

    def slot(self, i: int) -> datetime:
        job = self.job_of(i)
        return _slot_time(job.started_at, i - job.first_trial)

    def trial_name(self, i: int, task: TaskTemplate | TaskRecord) -> str:
        return f"{short_name(task.name)}__{self.suffix(i)}"

    def record_of(self, task: TaskTemplate) -> TaskRecord:
        """The task as this seed records it (checksum and verifier paths)."""
        return self.tasks[TASKS.index(task)]

    def cases(self, i: int) -> tuple[GateCase, str, str]:
        g, v, e = self._case_offsets
        return (
            GATE_CASES[(i + g) % len(GATE_CASES)],
            VALIDITY_CASES[(i + v) % len(VALIDITY_CASES)],
            EXCEPTION_CASES[(i + e) % len(EXCEPTION_CASES)],
        )


@dataclass
class SeedReport:
    """What a run made, for `seed_demo`'s summary line."""

    jobs: int = 0
    tasks: int = 0
    trials: int = 0
    unchanged: int = 0
    updated: int = 0
    invalid: list[str] = field(default_factory=list)
    path: str = ""


ProgressFn = Callable[[int], None]
