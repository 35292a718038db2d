"""The reader pool: discovered items read and their rows prepared, in parallel.

Reading a trial and preparing its rows costs several times what storing them costs, so a
large run is read by reader processes while the ingest process writes (`ItemReader`). A
small run, and whatever a reader process could not read, is read in the ingest process.
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
from typing import Any

from rewards.ingest import worker
from rewards.ingest.discover import (
    ContractTrialItem,
    HarborTrialItem,
    Item,
    filed_under,
    read_item,
    read_located,
)
from rewards.ingest.files import Problem
from rewards.ingest.mapping import task_key
from rewards.ingest.outcomes import StoredTrial, WriteOutcome
from rewards.ingest.prepared import PreparedTrial, prepare_or_refuse
from rewards.schemas import TaskRecord

log = logging.getLogger(__name__)

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
                filed = filed_under(item.job, job).name
                unchanged = known.unchanged_if(fingerprint, filed)
                if unchanged is not None:
                    outcomes.append(unchanged)
                    continue
            for read in read_item(item, job):
                if isinstance(read, Problem):
                    outcomes.append(read)
                    continue
                prepared = prepare_or_refuse(read, fingerprint=fingerprint)
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
            for read, where in read_located(item, self.job):
                yield read if isinstance(read, Problem) else prepare_or_refuse(read, where=where)
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
                    # out waits for it (until then, this process reads). Imported here: the
                    # module is only for platforms that offer forkserver (POSIX).
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
