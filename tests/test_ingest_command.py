"""`manage.py ingest`: detection by shape, the summary, exit status, idempotency, atomicity."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.db import IntegrityError
from django.db.models import Model

from rewards.ingest import copytext, files, harbor
from rewards.ingest.copytext import Row
from rewards.ingest.discover import ContractTrialItem, Discovery, HarborTrialItem, read_item
from rewards.ingest.pool import ItemReader, read_chunk
from rewards.ingest.prepared import PreparedTrial
from rewards.ingest.writer import BundleWriter, RowInserter
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
from tests.conftest import RecordCalls
from tests.ingest_helpers import (
    PASS_JOB,
    SINGLE_JOB,
    harbor_trial,
    ingest,
    lay_out,
    synthetic_job,
    write_files,
)

pytestmark = pytest.mark.django_db

MODELS = (Job, Task, Trial, TrialDetail, EvaluationResult, ScorerResult, JudgeVerdict, ErrorTag)


def row_counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in MODELS}


def contract(root: Path, name: str, files: dict[str, object] | None = None) -> Path:
    return write_files(root / name, {"logs/verifier/reward.json": {"reward": 0.5}, **(files or {})})


def test_the_summary_counts_each_outcome_and_names_each_problem(
    harbor_files: Path, tmp_path: Path
) -> None:
    lay_out(tmp_path / "jobs")
    contract(tmp_path / "jobs" / "contract-runs", "good")
    write_files(tmp_path / "jobs" / "contract-runs" / "bad", {"trial.json": {"name": 5}})
    (tmp_path / "jobs" / "empty").mkdir()

    ran = ingest(tmp_path / "jobs")

    assert ran.error == ""
    assert ran.lines == [
        "Summary: ingested 6, unchanged 0, updated 0, invalid 1, unreadable 1",
        # Stored without a reward: not valid, and counted so.
        "invalid: contract-runs/bad: stored as invalid: reward file missing: the verifier did"
        " not finish",
        f"unreadable: {tmp_path / 'jobs' / 'empty'}: no trials found",
        "stored with ingestion problems: contract-runs/bad: trial.json name: "
        "Input should be a valid string",
    ]


def test_ingesting_twice_leaves_everything_unchanged(harbor_files: Path, tmp_path: Path) -> None:
    lay_out(tmp_path / "jobs")
    contract(tmp_path / "jobs" / "contract-runs", "c1", {"judge.json": "garbage"})
    assert ingest(tmp_path / "jobs").error == ""
    before = row_counts()
    summaries = dict(Trial.objects.values_list("name", "content_digest"))

    ran = ingest(tmp_path / "jobs")

    assert ran.summary() == "Summary: ingested 0, unchanged 5, updated 0, invalid 0, unreadable 0"
    assert row_counts() == before
    assert dict(Trial.objects.values_list("name", "content_digest")) == summaries


def test_a_changed_artifact_updates_the_trial_and_keeps_the_old_result(tmp_path: Path) -> None:
    trial = contract(tmp_path / "runs", "c1")
    assert ingest(tmp_path / "runs").error == ""
    (trial / "logs" / "verifier" / "reward.json").write_text('{"reward": 0.8}')

    ran = ingest(tmp_path / "runs")

    assert ran.summary() == "Summary: ingested 0, unchanged 0, updated 1, invalid 0, unreadable 0"
    stored = Trial.objects.get()
    assert stored.reward == 0.8
    results = list(stored.results.order_by("id").values_list("reward", "is_current"))
    assert results == [(0.5, False), (0.8, True)]


def test_a_changed_harbor_result_updates_the_trial(harbor_files: Path, tmp_path: Path) -> None:
    folder = harbor_trial(tmp_path / "job", "t1", harbor_files)
    assert ingest(tmp_path / "job").error == ""
    data = json.loads((folder / "result.json").read_text())
    data["verifier_result"]["rewards"]["reward"] = 1.0
    (folder / "result.json").write_text(json.dumps(data))

    ran = ingest(tmp_path / "job")

    assert ran.summary().startswith("Summary: ingested 0, unchanged 0, updated 1,")
    assert EvaluationResult.objects.count() == 2
    assert EvaluationResult.objects.get(is_current=True).reward == 1.0
    assert Trial.objects.get().reward == 1.0


def test_a_duplicate_uid_fails_only_its_own_trial_and_leaves_no_row_of_it(
    harbor_files: Path, tmp_path: Path
) -> None:
    first = harbor_trial(tmp_path / "job-a", "t1", harbor_files)
    assert ingest(tmp_path / "job-a").error == ""
    uid = json.loads((first / "result.json").read_text())["id"]
    harbor_trial(tmp_path / "job-b", "good-1", harbor_files)
    harbor_trial(tmp_path / "job-b", "same-uid", harbor_files, id=uid)
    harbor_trial(tmp_path / "job-b", "good-2", harbor_files)
    before = row_counts()

    ran = ingest(tmp_path / "job-b")

    assert ran.error == ""
    assert ran.lines == [
        "Summary: ingested 2, unchanged 0, updated 0, invalid 1, unreadable 0",
        "invalid: job-b/same-uid: its uid is already used by a trial in another job",
    ]
    job_b = Job.objects.get(name="job-b")
    assert sorted(job_b.trials.values_list("name", flat=True)) == ["good-1", "good-2"]
    after = row_counts()
    assert after["Trial"] == before["Trial"] + 2
    assert after["TrialDetail"] == before["TrialDetail"] + 2
    assert after["EvaluationResult"] == before["EvaluationResult"] + 2


def test_a_trial_failing_half_way_through_its_write_leaves_no_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tags = [{"category": "boom", "source": "mechanical"}]
    contract(tmp_path / "runs", "a")
    contract(tmp_path / "runs", "b", {"trial.json": {"error_tags": tags}})
    contract(tmp_path / "runs", "c")
    real_insert = RowInserter.insert

    def failing(self: RowInserter, model: Any, links: Any, rows: list[Row]) -> None:
        # The last insert of a trial's write: its Trial, detail and result rows exist by now.
        if model is ErrorTag and any("boom" in str(row) for row in rows):
            raise IntegrityError("simulated failure")
        real_insert(self, model, links, rows)

    monkeypatch.setattr(RowInserter, "insert", failing)

    ran = ingest(tmp_path / "runs")

    assert ran.summary() == "Summary: ingested 2, unchanged 0, updated 0, invalid 1, unreadable 0"
    assert "invalid: runs/b: the database refused it (IntegrityError)" in ran.lines
    assert sorted(Trial.objects.values_list("name", flat=True)) == ["a", "c"]
    assert TrialDetail.objects.count() == EvaluationResult.objects.count() == 2


def test_small_batches_store_everything(harbor_files: Path, tmp_path: Path) -> None:
    lay_out(tmp_path / "jobs")

    ran = ingest(tmp_path / "jobs", "--batch-size", "1")

    assert ran.summary() == "Summary: ingested 4, unchanged 0, updated 0, invalid 0, unreadable 0"


def test_many_trials_in_one_job_are_ingested_in_batches(harbor_files: Path, tmp_path: Path) -> None:
    job = synthetic_job(harbor_files, tmp_path, 60)

    ran = ingest(job, "--batch-size", "25")

    assert ran.summary() == "Summary: ingested 60, unchanged 0, updated 0, invalid 0, unreadable 0"
    assert Trial.objects.filter(job__name="synthetic-job").count() == 60
    assert ingest(job).summary().startswith("Summary: ingested 0, unchanged 60,")


@pytest.mark.parametrize("enabled", [True, False])
def test_the_cycle_collector_runs_once_a_batch_and_is_left_as_it_was_found(
    harbor_files: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, enabled: bool
) -> None:
    import gc

    job = synthetic_job(harbor_files, tmp_path, 12)
    collected: list[int] = []
    during: list[bool] = []
    real_collect = gc.collect

    def collect(generation: int = 2) -> int:
        collected.append(generation)
        during.append(gc.isenabled())
        return real_collect(generation)

    monkeypatch.setattr(gc, "collect", collect)
    (gc.enable if enabled else gc.disable)()
    try:
        ran = ingest(job, "--batch-size", "5")
        assert gc.isenabled() is enabled
    finally:
        gc.enable()

    assert ran.summary().startswith("Summary: ingested 12,")
    # One young collection after each of the three batches, with the collector off between.
    assert collected == [1, 1, 1]
    assert during == [False, False, False]


def test_several_paths_of_different_shapes_in_one_run(harbor_files: Path, tmp_path: Path) -> None:
    jobs = lay_out(tmp_path / "jobs")
    runs = tmp_path / "runs"
    contract(runs, "c1")

    ran = ingest(jobs.job(PASS_JOB), jobs.job(SINGLE_JOB), runs / "c1")

    assert ran.summary() == "Summary: ingested 4, unchanged 0, updated 0, invalid 0, unreadable 0"
    assert set(Job.objects.values_list("name", flat=True)) == {PASS_JOB, SINGLE_JOB, "runs"}


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda p: p / "missing", "does not exist"),
        (lambda p: write_files(p, {"notes.txt": "x"}) / "notes.txt", "is a file but not a .jsonl"),
        (lambda p: p, "no trial could be read from it"),
    ],
)
def test_a_path_that_cannot_be_read_at_all_exits_non_zero(
    tmp_path: Path, make: object, reason: str
) -> None:
    path = make(tmp_path)  # type: ignore[operator]

    ran = ingest(path)

    assert ran.error.startswith(f"could not ingest {path}: {reason}")
    assert ran.summary().startswith("Summary: ingested 0,")


def test_a_bad_path_does_not_stop_the_good_ones(tmp_path: Path) -> None:
    contract(tmp_path / "runs", "c1")

    ran = ingest(tmp_path / "missing", tmp_path / "runs")

    assert ran.error == f"could not ingest {tmp_path / 'missing'}: does not exist"
    assert Trial.objects.count() == 1


def test_invalid_and_unreadable_trials_do_not_change_the_exit_status(
    harbor_files: Path, tmp_path: Path
) -> None:
    job = tmp_path / "job"
    harbor_trial(job, "ok", harbor_files)
    write_files(job / "broken", {"result.json": "{"})

    ran = ingest(job)

    assert ran.error == ""
    assert f"unreadable: {job / 'broken' / 'result.json'}: not valid JSON at line 1" in ran.lines


def test_progress_bar_is_harmless_without_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from django.core.management import call_command

    contract(tmp_path / "runs", "c1")

    call_command("ingest", str(tmp_path / "runs"))

    out = capsys.readouterr().out
    assert "Summary: ingested 1," in out


def test_reader_processes_give_the_same_outcomes_as_reading_here(
    harbor_files: Path, tmp_path: Path
) -> None:

    job = synthetic_job(harbor_files, tmp_path, 24)
    write_files(job / "broken", {"result.json": "{"})
    here = ItemReader(None, workers=0)
    there = ItemReader(None, workers=1, chunk=5, parallel_after=0)
    try:
        inline = list(here.outcomes(Discovery(str(job)).items()))
        parallel = list(there.outcomes(Discovery(str(job)).items()))
        assert there._pool is not None  # the reader process did the work
    finally:
        there.close()

    assert [_comparable(p) for p in parallel] == [_comparable(p) for p in inline]
    assert len(parallel) == 25
    assert sum(isinstance(p, PreparedTrial) for p in parallel) == 24


def test_a_large_run_reads_its_first_trials_here_while_the_reader_processes_start(
    harbor_files: Path, tmp_path: Path
) -> None:

    job = synthetic_job(harbor_files, tmp_path, 12)
    here = ItemReader(None, workers=0)
    there = ItemReader(None, workers=1, chunk=2, window=2, parallel_after=3)
    try:
        inline = list(here.outcomes(Discovery(str(job)).items()))
        parallel = list(there.outcomes(Discovery(str(job)).items()))
        assert there._pool is not None
    finally:
        there.close()

    assert [_comparable(p) for p in parallel] == [_comparable(p) for p in inline]
    # The bundle stays with a trial read in this process; a reader process sends rows only.
    assert [isinstance(p, PreparedTrial) and p.bundle is not None for p in parallel] == [
        True
    ] * 3 + [False] * 9


def test_a_small_run_starts_no_reader_process(harbor_files: Path, tmp_path: Path) -> None:

    job = synthetic_job(harbor_files, tmp_path, 3)
    reader = ItemReader(None, workers=1, chunk=2, parallel_after=3)
    read = list(reader.outcomes(Discovery(str(job)).items()))
    assert reader._pool is None
    assert len(read) == 3
    assert all(isinstance(p, PreparedTrial) for p in read)


def _comparable(read: object) -> object:
    """A read outcome without the moment its results were recorded at (the moment of the
    insert is not part of a row at all)."""
    if not isinstance(read, PreparedTrial):
        return read
    return (
        read.key,
        read.uid,
        read.digest,
        read.fingerprint,
        read.problems,
        read.trial,
        {
            label: [_without(apps.get_model(label), row, "created_at") for row in rows]
            for label, rows in read.children.items()
        },
    )


def _without(model: type[Model], row: Row, attname: str) -> tuple[object, ...]:
    """A prepared row's columns, the column `attname` left out (if the row has it)."""
    columns = row.split(b"\t") if isinstance(row, bytes) else list(row)
    names = [name for name, _, _ in copytext.column_plan(model)]
    if attname in names:
        del columns[names.index(attname)]
    return tuple(columns)


def test_two_different_trials_filed_under_one_name_are_not_merged(
    harbor_files: Path, tmp_path: Path
) -> None:
    harbor_trial(tmp_path / "jobs" / "a", "t1", harbor_files)
    harbor_trial(tmp_path / "jobs" / "b", "t1", harbor_files)

    ran = ingest(tmp_path / "jobs", "--job", "merged")

    assert ran.lines == [
        "Summary: ingested 1, unchanged 0, updated 0, invalid 1, unreadable 0",
        "invalid: merged/t1: another trial in this run has the same job and name",
    ]


def test_the_same_folder_twice_in_one_run_is_ingested_once(tmp_path: Path) -> None:
    contract(tmp_path / "runs", "c1")

    ran = ingest(tmp_path / "runs", tmp_path / "runs")

    assert ran.summary() == "Summary: ingested 1, unchanged 1, updated 0, invalid 0, unreadable 0"


# --- re-ingest decided by the folder's fingerprint -----------------------------------------
def rename_agent(trial: Path, agent: str) -> None:
    """Change what a Harbor trial's result.json says (its agent's name)."""
    data = json.loads((trial / "result.json").read_text())
    data["agent_info"]["name"] = agent
    (trial / "result.json").write_text(json.dumps(data))


def test_an_untouched_harbor_folder_is_unchanged_without_reading_a_file(
    harbor_files: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record_calls: RecordCalls
) -> None:
    job = synthetic_job(harbor_files, tmp_path, 6)
    assert ingest(job).summary().startswith("Summary: ingested 6,")
    assert not Trial.objects.filter(source_fingerprint="").exists()

    def no_reading(*args: object, **kwargs: object) -> None:
        raise AssertionError("an untouched trial folder was read")

    monkeypatch.setattr(harbor, "read_trial", no_reading)
    reads = record_calls(files.Folder, "read")

    ran = ingest(job)
    read = [folder.rel_to(name) for folder, name in reads]

    assert ran.summary() == "Summary: ingested 0, unchanged 6, updated 0, invalid 0, unreadable 0"
    assert read == ["result.json"]  # the job's own, which tells a job from a trial


def test_a_touched_file_is_read_again_and_its_new_fingerprint_kept(
    harbor_files: Path, tmp_path: Path
) -> None:
    job = synthetic_job(harbor_files, tmp_path, 3)
    ingest(job)
    trial = sorted(p for p in job.iterdir() if p.is_dir())[0]
    result = trial / "result.json"
    before = dict(Trial.objects.values_list("source_path", "source_fingerprint"))
    os.utime(result, ns=(result.stat().st_atime_ns, result.stat().st_mtime_ns + 10**9))

    ran = ingest(job)

    assert ran.summary() == "Summary: ingested 0, unchanged 3, updated 0, invalid 0, unreadable 0"
    after = dict(Trial.objects.values_list("source_path", "source_fingerprint"))
    changed = {path for path in after if after[path] != before[path]}
    assert changed == {str(trial.resolve())}


def test_a_changed_file_updates_the_trial_whatever_its_fingerprint_said(
    harbor_files: Path, tmp_path: Path
) -> None:
    job = synthetic_job(harbor_files, tmp_path, 3)
    ingest(job)
    trial = sorted(p for p in job.iterdir() if p.is_dir())[0]
    rename_agent(trial, "another-agent")

    ran = ingest(job)

    assert ran.summary() == "Summary: ingested 0, unchanged 2, updated 1, invalid 0, unreadable 0"
    assert Trial.objects.filter(agent_name="another-agent").count() == 1


def test_a_new_file_in_a_trial_folder_changes_its_fingerprint(tmp_path: Path) -> None:
    root = files.Root(tmp_path)
    write_files(tmp_path / "t", {"result.json": {"a": 1}, "agent/trajectory.json": {"steps": []}})
    folder = root.folder().child("t")
    assert folder is not None
    first = folder.fingerprint()
    assert first
    assert folder.fingerprint() == first  # the same tree, the same fingerprint

    write_files(tmp_path / "t", {"verifier/reward.txt": "1"})

    assert folder.fingerprint() not in ("", first)


def test_a_folder_too_large_to_fingerprint_is_always_read(tmp_path: Path) -> None:
    write_files(tmp_path / "t", {f"f{i}.txt": "x" for i in range(5)})
    folder = files.Root(tmp_path).folder().child("t")
    assert folder is not None
    assert folder.fingerprint(max_entries=4) == ""
    assert folder.fingerprint(max_entries=10) != ""


def test_a_trial_prepared_in_a_reader_process_is_read_again_to_be_updated(
    harbor_files: Path, tmp_path: Path
) -> None:

    job = synthetic_job(harbor_files, tmp_path, 4)

    def write_all() -> list[str]:
        reader = ItemReader(None, workers=1, chunk=2, parallel_after=0)
        try:
            read = list(reader.outcomes(Discovery(str(job)).items()))
            assert reader._pool is not None
        finally:
            reader.close()
        prepared = [p for p in read if isinstance(p, PreparedTrial) and p.bundle is None]
        assert len(prepared) == len(read)
        return [o.status for o in BundleWriter().write_prepared(prepared)]

    assert write_all() == ["ingested"] * 4
    trial = sorted(p for p in job.iterdir() if p.is_dir())[1]
    rename_agent(trial, "another-agent")

    assert sorted(write_all()) == ["unchanged"] * 3 + ["updated"]
    assert Trial.objects.filter(agent_name="another-agent").count() == 1


def trial_items(job: Path) -> list[HarborTrialItem | ContractTrialItem]:
    """The Harbor trial items discovery finds in a job folder, as a chunk to read."""

    return [i for i in Discovery(str(job)).items() if isinstance(i, HarborTrialItem)]


def test_reading_a_chunk_leaves_the_cycle_collector_as_it_found_it(
    harbor_files: Path, tmp_path: Path
) -> None:
    import gc

    items = trial_items(synthetic_job(harbor_files, tmp_path, 2))
    assert gc.isenabled()
    assert all(isinstance(r, PreparedTrial) for r in read_chunk(items, None))
    assert gc.isenabled()
    gc.disable()
    try:
        read_chunk(items, None)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_reader_process_chunk_frees_its_bundles_before_the_collector_runs_again(
    harbor_files: Path, tmp_path: Path
) -> None:
    import gc
    import pickle

    items = trial_items(synthetic_job(harbor_files, tmp_path, 40))
    kept = read_chunk(items, None)
    assert all(isinstance(r, PreparedTrial) and r.bundle is not None for r in kept)
    collections: list[dict[str, Any]] = []

    def record(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            collections.append(info)

    gc.collect()
    gc.callbacks.append(record)
    try:
        freed = read_chunk(items, None, keep_bundles=False)
        answer = pickle.dumps(freed)  # what a reader process then does with it
    finally:
        gc.callbacks.remove(record)
    # No bundle is left to hand over (none would be: it does not pickle)...
    assert all(isinstance(r, PreparedTrial) and r.bundle is None for r in freed)
    # ...and the parsed files went with them while the collector was off, so the collection
    # that the chunk's allocations would start on the next allocation had nothing to walk.
    assert collections == []

    # The trials' rows are the same either way (their children's carry the moment read).
    def rows(read: list[Any]) -> list[tuple[Any, ...]]:
        return [(r.trial, r.digest, list(r.children)) for r in read]

    assert rows(pickle.loads(answer)) == rows(kept)  # noqa: S301 (our own bytes)


def test_a_chunks_trials_of_one_task_carry_one_task_record(
    harbor_files: Path, tmp_path: Path
) -> None:
    import pickle

    # Four shapes of trial, four tasks: the fifth trial is of the first one's task.
    read = read_chunk(trial_items(synthetic_job(harbor_files, tmp_path, 5)), None)
    # Through the pickle a reader process answers with, as the ingest process sees them.
    answer = pickle.loads(pickle.dumps(read))  # noqa: S301 (our own bytes)
    prepared = [r for r in answer if isinstance(r, PreparedTrial)]
    by_task: dict[str, list[Any]] = {}
    for one in prepared:
        by_task.setdefault(one.task.name, []).append(one.task)
    assert sorted(len(tasks) for tasks in by_task.values()) == [1, 1, 1, 2]
    shared = next(tasks for tasks in by_task.values() if len(tasks) == 2)
    assert shared[0] is shared[1]
    assert len({id(tasks[0]) for tasks in by_task.values()}) == 4


def test_reading_a_fingerprinted_trial_lists_no_folder_again(
    harbor_files: Path, tmp_path: Path, record_calls: RecordCalls
) -> None:
    import os

    from rewards.ingest.files import Problem

    job = synthetic_job(harbor_files, tmp_path, 1)
    item = next(i for i in Discovery(str(job)).items() if isinstance(i, HarborTrialItem))
    fingerprint = item.folder.fingerprint()
    listed = record_calls(os, "scandir")
    read = next(read_item(item))

    assert fingerprint
    assert not isinstance(read, Problem)
    assert listed == []
    assert item.folder.fingerprint() == fingerprint
