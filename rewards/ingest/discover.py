"""Find what a PATH given to `ingest` holds, by its shape (DESIGN §4).

- a `.jsonl` file: bundles, one per line;
- a Harbor trial folder: `result.json` shaped like a `TrialResult` (`trial_name`/`task_name`);
- a Harbor job folder: `result.json` shaped like a `JobResult` (`n_total_trials`/`stats`),
  or no result.json yet but trial folders inside; every sub-folder is then one of its trials;
- a verifier-contract trial directory: `logs/verifier/` or `trial.json`;
- any other folder: a folder of the above (a Harbor jobs folder, a folder of contract trials,
  a mix), searched a few levels deep.

Discovery is lazy: one `result.json` read decides between a trial and a job, and its bytes
and parsed data go to the reader with the item, so no file is read or parsed twice. A
sub-folder that holds nothing ingestible is reported by name, never skipped in silence.
"""

from __future__ import annotations

import gc
import itertools
import logging
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rewards.ingest import bundles, contract, harbor, worker
from rewards.ingest.files import ArtifactError, Folder, Limits, Problem, Root, loads_json
from rewards.ingest.prepared import PreparedTrial
from rewards.ingest.writer import BundleWriter, StoredTrial, WriteOutcome, task_key
from rewards.schemas import JobRecord, TaskRecord, TrialBundle

log = logging.getLogger(__name__)

# jobs folder / job folder / trial folder, plus one level of grouping above.
MAX_SEARCH_DEPTH = 4
NOT_A_HARBOR_TRIAL = "no result.json: not a Harbor trial, or it has not finished"
NO_TRIALS = "no trials found"


class PathError(Exception):
    """A PATH that cannot be read at all: the command exits non-zero."""


@dataclass(frozen=True)
class HarborTrialItem:
    folder: Folder
    job: JobRecord
    # result.json as discovery read it, when it had to read it to tell trial from job.
    result_raw: bytes | None = None
    result_data: Any = None


@dataclass(frozen=True)
class ContractTrialItem:
    folder: Folder
    default_job: str


@dataclass(frozen=True)
class BundleFileItem:
    path: str
    display: str


Item = HarborTrialItem | ContractTrialItem | BundleFileItem | Problem


@dataclass
class _Result:
    """result.json of a folder, read once: its bytes, its data, or why it is unreadable."""

    raw: bytes | None = None
    data: Any = None
    error: str = ""


@dataclass
class Discovery:
    """Walks one PATH. Jobs are named as found (`--job` is applied by `read_item`)."""

    path: str
    limits: Limits = field(default_factory=Limits.from_settings)
    # Folders already yielded (by real path), so a symlink inside the PATH that points at
    # another folder inside it does not ingest that folder twice.
    _seen: set[str] = field(default_factory=set)

    def items(self) -> Iterator[Item]:
        path = self.path
        if not os.path.lexists(path):
            raise PathError("does not exist")
        if os.path.isfile(path):
            if not path.endswith(".jsonl"):
                raise PathError("is a file but not a .jsonl bundle file")
            if not os.access(path, os.R_OK):
                raise PathError("cannot be read (permission denied)")
            yield BundleFileItem(path, path)
            return
        if not os.path.isdir(path):
            raise PathError("is neither a folder nor a .jsonl bundle file")
        top = Root(path, self.limits).folder()
        if top.listing_error:
            raise PathError(f"cannot be listed ({top.listing_error})")
        parent = os.path.basename(os.path.dirname(top.path)) or "default"
        yield from self._folder(top, parent_name=parent, depth=0, result=self._result(top))

    # -- shapes ---------------------------------------------------------------------------
    def _result(self, folder: Folder) -> _Result | None:
        if not folder.has("result.json"):
            return None
        try:
            raw = folder.read("result.json")
            if raw is None:
                return None
            return _Result(raw, loads_json(raw, self.limits.max_depth))
        except ArtifactError as exc:
            return _Result(error=str(exc))

    def _folder(
        self, folder: Folder, *, parent_name: str, depth: int, result: _Result | None
    ) -> Iterator[Item]:
        """Items of one folder whose result.json (if any) has been read into `result`."""
        broken = False
        if result is not None and not result.error:
            if harbor.is_trial_result(result.data):
                job = JobRecord(name=parent_name)
                yield from self._once(HarborTrialItem(folder, job, result.raw, result.data))
                return
            if harbor.is_job_result(result.data):
                yield from self._harbor_job(folder, result.data)
                return
            broken = True
            yield Problem(
                "unreadable",
                folder.root.display(folder.rel_to("result.json")),
                "neither a Harbor trial result nor a Harbor job result",
            )
        elif result is not None:
            broken = True
            yield Problem(
                "unreadable", folder.root.display(folder.rel_to("result.json")), result.error
            )
        if contract.is_contract_trial(folder):
            yield from self._once(ContractTrialItem(folder, parent_name))
            return
        if depth >= MAX_SEARCH_DEPTH:
            if not broken:
                yield Problem("unreadable", folder.display, "no trials found at this depth")
            return
        if not broken:
            yield from self._container(folder, depth)
            return
        # A folder with a bad result.json may still be a job whose trials are fine; if it
        # holds none, the result.json line above already names it.
        items = list(self._container(folder, depth))
        if any(not isinstance(item, Problem) for item in items):
            yield from items
        else:
            yield from (i for i in items if isinstance(i, Problem) and i.reason != NO_TRIALS)

    def _harbor_job(self, folder: Folder, result_data: Any) -> Iterator[Item]:
        """A Harbor job folder: every sub-folder is one of its trials."""
        job, problems = harbor.read_job(folder, folder.name, result_data=result_data)
        yield from problems
        for child in _subfolders(folder):
            if isinstance(child, Problem):
                yield child
            else:
                yield from self._once(HarborTrialItem(child, job))

    def _container(self, folder: Folder, depth: int) -> Iterator[Item]:
        """A folder of trials, jobs, or folders of them."""
        job: JobRecord | None = None
        unmarked: list[Folder] = []
        for child in _subfolders(folder):
            if isinstance(child, Problem):
                yield child
                continue
            if child.listing_error:
                reason = f"cannot be listed ({child.listing_error})"
                yield Problem("unreadable", child.display, reason)
                continue
            result = self._result(child)
            if result is not None and harbor.is_trial_result(result.data):
                # A trial here makes this folder a Harbor job without a result.json (yet).
                if job is None:
                    job, problems = harbor.read_job(folder, folder.name, read_result=False)
                    yield from problems
                yield from self._once(HarborTrialItem(child, job, result.raw, result.data))
            elif result is not None or contract.is_contract_trial(child):
                yield from self._folder(
                    child, parent_name=folder.name, depth=depth + 1, result=result
                )
            else:
                unmarked.append(child)
        for child in unmarked:
            if job is not None:
                # A sub-folder of a Harbor job without result.json: an unfinished trial.
                yield Problem("unreadable", child.display, NOT_A_HARBOR_TRIAL)
                continue
            found = False
            for item in self._folder(child, parent_name=folder.name, depth=depth + 1, result=None):
                found = found or not isinstance(item, Problem)
                yield item
            if not found and not child.subfolder_names():
                yield Problem("unreadable", child.display, NO_TRIALS)

    def _once(self, item: HarborTrialItem | ContractTrialItem) -> Iterator[Item]:
        if item.folder.path in self._seen:
            return
        self._seen.add(item.folder.path)
        yield item


def _subfolders(folder: Folder) -> Iterator[Folder | Problem]:
    """The sub-folders of a folder, each as a `Folder` or the problem that hides it (a
    symlink that leads outside the folder given)."""
    for name in folder.subfolder_names():
        try:
            child = folder.child(name)
        except ArtifactError as exc:
            yield Problem("unreadable", folder.root.display(folder.rel_to(name)), str(exc))
            continue
        if child is not None:
            yield child


def read_item(item: Item, job: str | None = None) -> Iterator[TrialBundle | Problem]:
    """The bundles (or problems) one discovered item gives, filed under `--job` if given."""
    for read in _read(item):
        yield read if isinstance(read, Problem) else bundles.with_job(read, job)


def _read(item: Item) -> Iterator[TrialBundle | Problem]:
    if isinstance(item, Problem):
        yield item
    elif isinstance(item, HarborTrialItem):
        yield harbor.read_trial(
            item.folder, item.job, result_raw=item.result_raw, result_data=item.result_data
        )
    elif isinstance(item, ContractTrialItem):
        yield contract.read_trial(item.folder, default_job=item.default_job)
    else:
        try:
            yield from bundles.read_bundle_file(item.path, display=item.display)
        except bundles.BundleFileError as exc:
            yield Problem("unreadable", item.display, str(exc))


# --- reading, in a second process when there is a lot to read --------------------------------
Read = PreparedTrial | WriteOutcome | Problem


def read_chunk(
    items: list[HarborTrialItem | ContractTrialItem],
    job: str | None,
    stored: list[StoredTrial | None] | None = None,
    *,
    keep_bundles: bool = True,
) -> list[Read]:
    """Read trial items and prepare their rows; runs in a reader process (what it returns
    pickles as plain data). An item whose folder still has its `stored` fingerprint is
    "unchanged" and is not read. A reader process keeps no bundle (`keep_bundles`): it would
    not be handed over anyway, and freed here, before the collector runs again, its parsed
    files are not walked by the collection the next allocation starts."""
    # Whatever cycles the chunk leaves are collected once it is done.
    with cycle_collector_paused():
        outcomes = _read_chunk(items, job, stored)
        if not keep_bundles:
            for outcome in outcomes:
                if isinstance(outcome, PreparedTrial):
                    outcome.bundle = None
        return outcomes


@contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """The cycle collector off meanwhile (its setting restored after). Reading and handing
    over trials allocates many short-lived containers (parsed JSON, prepared rows) that
    reference counting frees; the collector would walk them, and the process's long-lived
    objects, again and again: a tenth of the time."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _read_chunk(
    items: list[HarborTrialItem | ContractTrialItem],
    job: str | None,
    stored: list[StoredTrial | None] | None,
) -> list[Read]:
    outcomes: list[Read] = []
    # A chunk's trials mostly share a few tasks: equal task records become one object, which
    # a reader process's answer then carries (and the ingest process unpickles) once.
    tasks: dict[tuple[str, str, str], TaskRecord] = {}
    for index, item in enumerate(items):
        try:
            # Before reading: a file changed while it is read changes the fingerprint too.
            fingerprint = item.folder.fingerprint()
            known = stored[index] if stored else None
            if known is not None and isinstance(item, HarborTrialItem):
                filed = bundles.filed_under(item.job, job).name
                unchanged = known.unchanged_if(fingerprint, filed)
                if unchanged is not None:
                    outcomes.append(unchanged)
                    continue
            for read in read_item(item, job):
                if isinstance(read, Problem):
                    outcomes.append(read)
                    continue
                prepared = BundleWriter.prepared(read, fingerprint=fingerprint)
                if isinstance(prepared, PreparedTrial):
                    prepared.source, prepared.job_override = item, job
                    task = prepared.task
                    same = tasks.setdefault(task_key(task), task)
                    if same is not task and same == task:
                        prepared.task = same
                outcomes.append(prepared)
        except Exception as exc:
            # A reader bug must cost one trial, named, not the run.
            log.exception("reading %s failed", item.folder.display)
            reason = f"could not be read ({type(exc).__name__})"
            outcomes.append(Problem("unreadable", item.folder.display, reason))
    return outcomes


class ItemReader:
    """Turns discovered items into prepared trials, reading while the writer writes.

    Reading a trial and preparing its rows (`prepared.prepare`: validation, digest,
    summary, JSON text) costs several times what inserting the rows costs, and the writer
    must run in this process (it holds the database connection), so large runs are read
    by `workers` reader processes, one per core: this process mostly waits on them and on
    the database. A prepared trial pickles as plain data, so handing it over is cheap. The
    processes start as soon as discovery (which looks ahead) finds more than
    `parallel_after` items, and this process reads those first ones while they start: for
    a few hundred trials, starting them costs more than it saves. Trials' outcomes come back
    in discovery order.

    `stored`, when given, tells what is stored of each Harbor trial folder: one whose
    fingerprint still matches is "unchanged" and is not read at all (fingerprints are taken
    where the folder would be read, in the reader processes for a large run).
    """

    def __init__(
        self,
        job: str | None,
        workers: int,
        *,
        chunk: int = 100,
        window: int = 8,
        parallel_after: int = 1000,
        stored: Callable[[HarborTrialItem, str | None], StoredTrial | None] | None = None,
    ) -> None:
        self.job = job
        self.workers = workers
        self.chunk = chunk
        self.window = window
        self.parallel_after = parallel_after
        self.stored = stored
        self._pool: ProcessPoolExecutor | None = None
        self._inflight: deque[tuple[Future[list[Read]], list[Any]]] = deque()

    def outcomes(self, items: Iterator[Item]) -> Iterator[Read]:
        stream = iter(items)
        # Discovery is cheap: look ahead to learn whether this run is large.
        head = list(itertools.islice(stream, self.parallel_after + 1))
        if len(head) <= self.parallel_after or self._start_pool() is None:
            yield from self._through(itertools.chain(head, stream))
            return
        # A large run: the reader processes are starting (their server imports the code
        # they run, about as long as reading the head takes), and this process reads the
        # head meanwhile; then a window of chunks is handed to them before the head goes to
        # the writer, so that they read while it writes.
        read_here = list(self._here(head[: self.parallel_after]))
        rest = itertools.chain(head[self.parallel_after :], stream)
        early = list(self._through(rest, limit=self.window * self.chunk))
        yield from read_here
        yield from early
        yield from self._through(rest)

    def _through(self, items: Iterator[Item], limit: int | None = None) -> Iterator[Read]:
        """Every item's outcomes; trials read in chunks (by the reader processes, once
        started), others here. `limit`: stop after that many trials handed out (their
        chunks may still be in flight: nothing is collected before the window is full)."""
        batch: list[HarborTrialItem | ContractTrialItem] = []
        handed = 0
        for item in items:
            if isinstance(item, HarborTrialItem | ContractTrialItem):
                batch.append(item)
                if len(batch) >= self.chunk:
                    handed += len(batch)
                    yield from self._dispatch(batch)
                    batch = []
                    if limit is not None and handed >= limit:
                        return
            else:
                yield from self._here([item])
        if batch:
            yield from self._dispatch(batch)
        if limit is None:
            while self._inflight:
                yield from self._collect()

    def _here(self, items: list[Item]) -> Iterator[Read]:
        """Items read in this process, in order."""
        batch: list[HarborTrialItem | ContractTrialItem] = []
        for item in items:
            if isinstance(item, HarborTrialItem | ContractTrialItem):
                batch.append(item)
                continue
            if batch:
                yield from read_chunk(batch, self.job, self._stored(batch))
                batch = []
            for read in read_item(item, self.job):
                yield read if isinstance(read, Problem) else BundleWriter.prepared(read)
        if batch:
            yield from read_chunk(batch, self.job, self._stored(batch))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _dispatch(self, batch: list[HarborTrialItem | ContractTrialItem]) -> Iterator[Read]:
        pool = self._pool
        if pool is None:
            yield from read_chunk(batch, self.job, self._stored(batch))
            return
        try:
            job, stored = self.job, self._stored(batch)
            future = pool.submit(read_chunk, batch, job, stored, keep_bundles=False)
            self._inflight.append((future, batch))
        except RuntimeError:  # the pool broke or shut down: read here instead
            self._pool = None
            yield from read_chunk(batch, self.job, self._stored(batch))
            return
        while len(self._inflight) > self.window:
            yield from self._collect()

    def _stored(self, batch: list[HarborTrialItem | ContractTrialItem]) -> list[StoredTrial | None]:
        if self.stored is None:
            return []
        lookup = self.stored
        job = self.job
        return [lookup(item, job) if isinstance(item, HarborTrialItem) else None for item in batch]

    def _collect(self) -> Iterator[Read]:
        future, batch = self._inflight.popleft()
        try:
            yield from future.result()
        except Exception:
            # A reader process died (killed, out of memory): read its chunk here, where an
            # error is reported per trial as usual.
            log.warning("a reader process failed; reading its trials in the main process")
            yield from read_chunk(batch, self.job, self._stored(batch))

    def _start_pool(self) -> ProcessPoolExecutor | None:
        if self._pool is None and self.workers > 0:
            # forkserver, not fork: this process holds a database connection and maybe
            # threads (the progress bar); the readers need neither, only this module.
            try:
                method = (
                    "forkserver"
                    if "forkserver" in multiprocessing.get_all_start_methods()
                    else "spawn"
                )
                context = multiprocessing.get_context(method)
                if method == "forkserver":
                    context.set_forkserver_preload([worker.__name__, __name__])
                    # The server starts now and imports on its own; the first chunk handed
                    # out waits for it (until then, this process reads).
                    from multiprocessing import forkserver

                    forkserver.ensure_running()
                self._pool = ProcessPoolExecutor(
                    max_workers=self.workers, mp_context=context, initializer=worker.setup
                )
            except (OSError, ValueError) as exc:  # no semaphores (some containers), …
                log.warning("reading in this process only: no reader processes (%s)", exc)
                self.workers = 0
        return self._pool


def default_workers() -> int:
    """Reader processes to use: one per core (the writer mostly waits), at most four."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(0, min(cores, 4))
