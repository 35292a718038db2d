"""`manage.py ingest PATH… [--job NAME]`: read evaluation artifacts into Trialdesk (DESIGN §4).

Each PATH is detected by shape (`rewards.ingest.discover`): a Harbor jobs, job or trial
folder, a verifier-contract trial directory or a folder of them, or a `.jsonl` bundle file.
Readers turn what they find into `TrialBundle`s, which `BundleWriter` stores in batches
(atomic per trial, idempotent). The run ends with a summary: ingested, unchanged, updated,
invalid (one line per trial, with the reason: refused, or stored but not valid, e.g. its
reward rejected) and unreadable (one line per path, with why),
then the trials stored with ingestion problems (parts kept raw; first few named).

Bad input never stops the run; the exit status is non-zero only when a PATH gave nothing at
all (it does not exist, cannot be listed, or holds no trial that could be read).

Large jobs are read by reader processes (`--workers`, default one per core) while this
process writes; see `rewards.ingest.pool.ItemReader`.

`--follow` keeps watching the PATHs after the first pass (a Harbor jobs folder while its jobs
run): every `--interval` seconds (default 1) the folders are walked again, by polling, which
works on every filesystem and across network mounts. A look lists the job folders and reads
only what changed: the folders of finished trials already stored are passed over (every
`RECHECK_EVERY` looks they are fingerprinted again, `StoredFingerprints`), so a look costs
the new and running trials (2,000 finished trials: 0.05 s a look, 0.55 s when each is
fingerprinted), and a trial appears about a second after its result.json is complete.
A trial folder without a complete result.json is stored as running with what it has so far
(`harbor.read_running_trial`); a half-written result.json is read again on the next pass,
never stored in part. A restarted follower resumes from the stored fingerprints.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import closing
from types import FrameType
from typing import Any
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import close_old_connections
from tqdm import tqdm

from rewards.ingest.discover import Discovery, HarborTrialItem, Item, PathError, filed_under
from rewards.ingest.files import Problem
from rewards.ingest.outcomes import WriteOutcome
from rewards.ingest.pool import ItemReader, cycle_collector_paused, default_workers
from rewards.ingest.prepared import PreparedTrial
from rewards.ingest.report import IngestReport, printable
from rewards.ingest.writer import BundleWriter, StoredFingerprints
from rewards.models import UNFINISHED, Trial
from rewards.schemas import JobRecord

log = logging.getLogger(__name__)

# With --follow: every this many looks, finished trials are looked at again too.
RECHECK_EVERY = 30


class Command(BaseCommand):
    help = (
        "Ingest Harbor job/trial folders, verifier-contract trial directories and .jsonl "
        "bundle files. Each PATH is detected by its shape."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument("--job", help="file every trial under this job name")
        parser.add_argument(
            "--batch-size",
            type=int,
            default=500,
            help="bundles per database transaction (default 500)",
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=None,
            help="reader processes for large jobs (default: one per core, at most 4; "
            "0 reads everything in this process)",
        )
        parser.add_argument(
            "--no-progress", action="store_true", help="do not show the progress bar"
        )
        parser.add_argument(
            "--follow",
            action="store_true",
            help="keep watching the PATHs: new and finished trials are stored as they appear, "
            "unfinished ones as running (stop with Ctrl-C)",
        )
        parser.add_argument(
            "--interval",
            type=float,
            default=1.0,
            help="with --follow: seconds between two looks at the folders (default 1)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        paths: list[str] = options["paths"]
        job: str | None = options["job"] or None
        batch_size = max(1, int(options["batch_size"]))
        workers = options["workers"]
        workers = default_workers() if workers is None else max(0, workers)
        follow = bool(options["follow"])
        show_progress = not options["no_progress"]
        if follow:
            # A folder may be empty when following starts, not absent.
            missing = [p for p in paths if not os.path.isdir(p)]
            if missing:
                names = ", ".join(printable(p) for p in missing)
                raise CommandError(f"--follow needs existing folders: {names} does not exist")
        summary, failed = self._pass(paths, job, batch_size, workers, show_progress, follow)
        for line in summary.lines():
            self.stdout.write(line)
        if failed and not follow:
            reasons = "; ".join(f"{printable(p)}: {printable(r)}" for p, r in failed)
            raise CommandError(f"could not ingest {reasons}")
        if follow:
            self._follow(paths, job, batch_size, max(0.05, float(options["interval"])))

    def ingest_once(self, paths: list[str]) -> tuple[IngestReport, list[tuple[str, str]]]:
        """One pass over the PATHs in this process, without a progress bar: what a task
        worker runs for an upload (`rewards.uploads`); the paths that gave nothing named."""
        return self._pass(paths, None, 500, 0, False, False)

    def _follow(self, paths: list[str], job: str | None, batch_size: int, interval: float) -> None:
        """Walk the PATHs again every `interval` seconds until stopped (Ctrl-C or SIGTERM,
        between two passes or inside one: a trial is stored whole or not at all)."""
        self.stdout.write(f"Following {', '.join(map(printable, paths))} (Ctrl-C stops).")
        self.stdout.flush()
        stopped = False

        def stop(signum: int, frame: FrameType | None) -> None:
            nonlocal stopped
            stopped = True

        previous = signal.signal(signal.SIGTERM, stop)
        looks = 0
        try:
            while not stopped:
                time.sleep(interval)
                if stopped:
                    break
                # A long-lived process: drop a connection the database closed meanwhile.
                close_old_connections()
                looks += 1
                # Finished trials are looked at again only now and then (Harbor does not
                # touch them; `harbor analyze` may add a file later), so a look costs the
                # new and running trials, not the whole job.
                settled = self._settled() if looks % RECHECK_EVERY else set()
                # Later passes are read here: the new work is a few trials, not a job.
                summary, _ = self._pass(paths, job, batch_size, 0, False, True, settled)
                changed = summary.changes()
                if changed:
                    self.stdout.write(f"{time.strftime('%H:%M:%S')} {changed}")
                    self.stdout.flush()
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
        self.stdout.write("Stopped following.")

    def _pass(
        self,
        paths: list[str],
        job: str | None,
        batch_size: int,
        workers: int,
        show_progress: bool,
        follow: bool,
        settled: set[str] | frozenset[str] = frozenset(),
    ) -> tuple[IngestReport, list[tuple[str, str]]]:
        """One walk over the PATHs: every trial stored, the paths that gave nothing named.
        Harbor trial folders in `settled` are passed over (their jobs still refreshed)."""
        summary = IngestReport()
        # A fresh writer and fingerprints each pass: what the last pass stored is known, and
        # each job row is refreshed from its result.json (`StoredFingerprints.stored`).
        self._writer = BundleWriter(batch_size=batch_size)
        self._names: dict[tuple[str, str], UUID] = {}
        self._jobs_seen: dict[str, JobRecord] = {}
        self._passed_over: set[str] = set()
        reader = ItemReader(job, workers, stored=StoredFingerprints(self._writer).stored)
        failed: list[tuple[str, str]] = []
        progress = tqdm(
            desc="ingest",
            unit=" trials",
            file=sys.stderr,
            disable=not show_progress or not sys.stderr.isatty(),
            dynamic_ncols=True,
        )
        # As in the reader processes, the cycle collector is off; it runs once a batch
        # instead, over the young objects (`_write`), and after the run as it will.
        with closing(reader), progress, cycle_collector_paused():
            pending: list[PreparedTrial] = []
            for path in paths:
                read = 0
                try:
                    discovery = Discovery(path, follow=follow)
                    items = self._unsettled(_guarded(discovery, path), job, settled)
                    for outcome in reader.outcomes(items):
                        progress.update(1)
                        if isinstance(outcome, Problem):
                            summary.problem(outcome)
                            read += outcome.kind == "invalid"
                            continue
                        read += 1
                        clash = self._clash(outcome)
                        if clash:
                            summary.problem(clash)
                        elif isinstance(outcome, WriteOutcome):
                            summary.outcome(outcome)
                        else:
                            pending.append(outcome)
                        if len(pending) >= batch_size:
                            self._write(pending, summary)
                            pending = []
                except PathError as exc:
                    failed.append((path, str(exc)))
                    continue
                if not read:
                    failed.append((path, "no trial could be read from it"))
            self._write(pending, summary)
            # A job whose trials were passed over still takes its result.json's news
            # (finished_at); a job refreshed this pass already is not asked again.
            for name in self._passed_over:
                self._writer.refresh_job(self._jobs_seen[name])
        return summary, failed

    def _unsettled(
        self, items: Iterator[Item], job: str | None, settled: set[str] | frozenset[str]
    ) -> Iterator[Item]:
        """The items, but Harbor trial folders in `settled`; notes every Harbor job seen."""
        for item in items:
            if isinstance(item, HarborTrialItem):
                record = filed_under(item.job, job)
                self._jobs_seen.setdefault(record.name, record)
                if item.folder.path in settled:
                    self._passed_over.add(record.name)
                    continue
            yield item

    def _settled(self) -> set[str]:
        """The folders of the finished Harbor trials stored for the jobs last seen."""
        names = list(self._jobs_seen)
        if not names:
            return set()
        return set(
            Trial.objects.filter(job__name__in=names)
            .exclude(status__in=UNFINISHED)
            .exclude(source_fingerprint="")
            .values_list("source_path", flat=True)
        )

    # -- internals --------------------------------------------------------------------------
    def _clash(self, outcome: PreparedTrial | WriteOutcome) -> Problem | None:
        """A second, different trial with the same job and name in this run (say, two Harbor
        jobs ingested with one `--job`): refused, or it would overwrite the first."""
        if isinstance(outcome, PreparedTrial):
            key, identity = outcome.key, outcome.uid
        elif outcome.uid is not None:  # known unchanged: the stored trial itself
            key, identity = (outcome.job, outcome.trial), outcome.uid
        else:
            return None
        first = self._names.setdefault(key, identity)
        if first == identity:
            return None
        return Problem(
            "invalid", f"{key[0]}/{key[1]}", "another trial in this run has the same job and name"
        )

    def _write(self, prepared: Sequence[PreparedTrial], summary: IngestReport) -> None:
        if not prepared:
            return
        outcomes = self._writer.write_prepared(prepared)
        for outcome, one in zip(outcomes, prepared, strict=True):
            summary.outcome(outcome, one)
        gc.collect(1)  # the cycles this batch left, if any (see `handle`)


def _guarded(discovery: Discovery, path: str) -> Iterator[Item]:
    """The items of one PATH; a failure of the search itself is reported, not raised."""
    items = discovery.items()
    while True:
        try:
            item = next(items)
        except StopIteration:
            return
        except PathError:
            raise
        except Exception as exc:  # a bug must not lose the rest of the run
            log.exception("searching %s failed", path)
            yield Problem("unreadable", path, f"search stopped ({type(exc).__name__})")
            return
        yield item
