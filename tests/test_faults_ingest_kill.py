"""An ingest SIGKILLed at random points, then resumed, ends exactly as a clean ingest (issue 26).

`manage.py ingest` runs as a process of its own on the test database (committed rows, as in
production), in small batches so that a kill lands between and inside transactions. It is
killed once enough trials are stored (a random number each time; a failure names the seed,
and TRIALDESK_FAULT_SEED=N reruns it), as a whole process group, or as the ingest process
alone while its reader processes live on. A resumed ingest must then leave the database
exactly as one clean ingest of the same job does: the trials and every row they own (details,
results, scorers, verdicts, tags, ingestion problems), the jobs and tasks, and the job
tallies, which also equal a recount.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import models

from review.models import JobTally
from rewards.models import (
    ErrorTag,
    EvaluationResult,
    Job,
    JudgeVerdict,
    ScorerResult,
    Task,
    Trial,
    TrialDetail,
)
from tests.conftest import purge_review_data
from tests.ingest_helpers import HARBOR_FIXTURES, synthetic_job
from tests.task_worker import PROJECT, database_environment
from tests.test_job_tallies import assert_kept_equals_recount

pytestmark = pytest.mark.django_db(transaction=True)

BATCH = 25
# Written again by every ingest that touches the row: not part of what a trial is.
WHEN_WRITTEN = {"imported_at", "updated_at", "created_at"}
SEED = int(os.environ.get("TRIALDESK_FAULT_SEED") or random.randrange(2**32))


def ingest_command(job: Path, batch: int = BATCH) -> list[str]:
    return [
        sys.executable,
        "manage.py",
        "ingest",
        str(job),
        "--no-progress",
        f"--batch-size={batch}",
    ]


def environment() -> dict[str, str]:
    return {**database_environment(), "DJANGO_SETTINGS_MODULE": "config.settings"}


def start_ingest(job: Path) -> subprocess.Popen[bytes]:
    """The ingest in a session of its own: its process group is it and its readers."""
    return subprocess.Popen(
        ingest_command(job),
        cwd=PROJECT,
        env=environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def ingest_to_the_end(job: Path) -> str:
    """An ingest run to its end, in the command's own batches (the state it leaves must not
    depend on how the trials were batched)."""
    done = subprocess.run(
        ingest_command(job, batch=500),
        cwd=PROJECT,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()[0]


def group_members(group: int) -> list[int]:
    """The live processes of a process group (zombies are dead)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def kill_group(group: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)


def _wait_for(condition: Callable[[], bool], seconds: float = 120) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


def kill_when_stored(
    job: Path, stored: int, whole_group: bool
) -> tuple[subprocess.Popen[bytes], list[int]]:
    """Start an ingest and SIGKILL it once at least `stored` trials are in the database.
    Returns the process and its group's other members alive right after the kill."""
    process = start_ingest(job)
    try:
        reached = _wait_for(lambda: Trial.objects.count() >= stored or process.poll() is not None)
        assert reached, "the ingest stored too few trials"
        assert process.poll() is None, "the ingest ended before the kill"
        if whole_group:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        return process, [pid for pid in group_members(process.pid) if pid != process.pid]
    except BaseException:
        kill_group(process.pid)
        raise


# --- the database as a clean ingest leaves it ------------------------------------------------
def _rows(model: type[models.Model], keys: dict[str, Callable[[Any], Any]]) -> list[Any]:
    """Every row of `model`, its own id and write times left out, each foreign key as the
    natural key of the row it points to (a resumed ingest numbers rows differently)."""
    fields = [
        f for f in model._meta.concrete_fields if not f.primary_key and f.name not in WHEN_WRITTEN
    ]
    out = []
    for row in model._default_manager.values_list(*(f.attname for f in fields)):
        values = []
        for f, value in zip(fields, row, strict=True):
            if f.is_relation and value is not None:
                target = f.related_model
                assert isinstance(target, type)
                value = keys[target._meta.label](value)
            elif isinstance(value, float) and model is JobTally:
                value = round(value, 9)  # sums kept by adding and subtracting
            values.append(value)
        out.append(tuple(values))
    return sorted(out, key=repr)


def database_state() -> dict[str, list[Any]]:
    jobs = dict(Job.objects.values_list("id", "name"))
    tasks = {t.pk: (t.name, t.source, t.checksum) for t in Task.objects.all()}
    trials = {
        pk: (jobs[job], name) for pk, job, name in Trial.objects.values_list("id", "job", "name")
    }
    keys = {
        "rewards.Job": jobs.__getitem__,
        "rewards.Task": tasks.__getitem__,
        "rewards.Trial": trials.__getitem__,
    }
    return {
        model._meta.label: _rows(model, keys)
        for model in (
            Job,
            Task,
            Trial,
            TrialDetail,
            EvaluationResult,
            ErrorTag,
            ScorerResult,
            JudgeVerdict,
            JobTally,
        )
    }


def clean_ingest_state(job: Path) -> dict[str, list[Any]]:
    purge_review_data()
    assert ingest_to_the_end(job).startswith("Summary: ingested ")
    return database_state()


@pytest.fixture
def stray_groups() -> Iterator[list[int]]:
    """Process groups the test started; whatever is left of them is killed at the end."""
    groups: list[int] = []
    yield groups
    for group in groups:
        kill_group(group)
    purge_review_data()


def test_an_ingest_killed_as_a_group_twice_then_resumed_equals_a_clean_ingest(
    tmp_path: Path, stray_groups: list[int]
) -> None:
    n = 300
    job = synthetic_job(HARBOR_FIXTURES, tmp_path, n)
    rng = random.Random(SEED)
    first = rng.randrange(1, n // 2)
    second = rng.randrange(first + BATCH, n - 2 * BATCH)

    for stored in (first, second):
        process, left = kill_when_stored(job, stored, whole_group=True)
        stray_groups.append(process.pid)
        assert left == []
        assert Trial.objects.count() < n, f"seed {SEED}: killed too late"

    summary = ingest_to_the_end(job)

    assert summary.endswith("invalid 0, unreadable 0"), summary
    assert Trial.objects.count() == n
    assert_kept_equals_recount()
    resumed = database_state()
    assert resumed == clean_ingest_state(job), f"seed {SEED}"


def test_an_ingest_killed_alone_while_its_readers_live_on_resumes_to_a_clean_ingest(
    tmp_path: Path, stray_groups: list[int]
) -> None:
    # More trials than `ItemReader.parallel_after`: read by reader processes.
    n = 1100
    job = synthetic_job(HARBOR_FIXTURES, tmp_path, n)
    stored = random.Random(SEED).randrange(1, 600)

    process, readers = kill_when_stored(job, stored, whole_group=False)
    stray_groups.append(process.pid)
    assert readers, "the reader processes were alive when the ingest was killed"
    assert Trial.objects.count() < n, f"seed {SEED}: killed too late"

    summary = ingest_to_the_end(job)

    assert summary.endswith("invalid 0, unreadable 0"), summary
    assert Trial.objects.count() == n
    assert_kept_equals_recount()
    resumed = database_state()
    assert resumed == clean_ingest_state(job), f"seed {SEED}"
