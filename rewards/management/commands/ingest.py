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
"""

from __future__ import annotations

import gc
import logging
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from rewards.ingest.discover import Discovery, Item, PathError
from rewards.ingest.files import Problem
from rewards.ingest.outcomes import WriteOutcome
from rewards.ingest.pool import ItemReader, cycle_collector_paused, default_workers
from rewards.ingest.prepared import PreparedTrial
from rewards.ingest.writer import BundleWriter, StoredFingerprints

log = logging.getLogger(__name__)

STATUSES = ("ingested", "unchanged", "updated", "invalid", "unreadable")
LINE_LIMIT = 500
# Trials stored with ingestion problems named one per line; the rest are counted (the
# explorer's "Has ingestion problems" filter lists them all).
PROBLEM_LINES = 20
# Characters a terminal would act on (C0/C1 controls, DEL) or that reorder text (bidi
# controls): names and reasons come from agent-written files, so they are shown escaped.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def printable(text: str, limit: int = LINE_LIMIT) -> str:
    """Text safe to print to a terminal: controls escaped, length bounded."""
    out = []
    for char in text[: limit + 1]:
        if char in _BIDI or (not char.isprintable() and char != " "):
            out.append(char.encode("unicode_escape").decode("ascii"))
        else:
            out.append(char)
    clipped = "".join(out)
    return clipped[:limit] + "…" if len(text) > limit else clipped


@dataclass
class IngestReport:
    counts: Counter[str] = field(default_factory=Counter)
    invalid: list[tuple[str, str]] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    with_problems: list[tuple[str, str]] = field(default_factory=list)

    def outcome(self, outcome: WriteOutcome, prepared: PreparedTrial | None = None) -> None:
        self.counts[outcome.status] += 1
        name = outcome.name
        if prepared is not None and prepared.where and not outcome.where:
            name = f"{name} ({prepared.where})"
        if outcome.status == "invalid":
            self.invalid.append((name, outcome.reason))
            return
        if outcome.status == "unchanged" or prepared is None:
            return
        if prepared.rejected:
            # Stored, but not valid (a rejected reward is stored as 0, the reason in its
            # errors): counted invalid, as the explorer's validity filter counts it.
            self.counts["invalid"] += 1
            self.invalid.append((name, f"stored as invalid: {prepared.rejected}"))
        if prepared.problems:
            self.with_problems.append((name, prepared.first_problem))

    def problem(self, problem: Problem) -> None:
        self.counts[problem.kind] += 1
        target = self.invalid if problem.kind == "invalid" else self.unreadable
        target.append((problem.name, problem.reason))

    def lines(self) -> list[str]:
        head = ", ".join(f"{status} {self.counts[status]}" for status in STATUSES)
        lines = [f"Summary: {head}"]
        for name, reason in self.invalid:
            lines.append(f"invalid: {printable(name)}: {printable(reason)}")
        for name, reason in self.unreadable:
            lines.append(f"unreadable: {printable(name)}: {printable(reason)}")
        for name, reason in self.with_problems[:PROBLEM_LINES]:
            lines.append(f"stored with ingestion problems: {printable(name)}: {printable(reason)}")
        hidden = len(self.with_problems) - PROBLEM_LINES
        if hidden > 0:
            lines.append(
                f"stored with ingestion problems: {hidden} more trials "
                "(the explorer's 'Has ingestion problems' filter lists them)"
            )
        return lines


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

    def handle(self, *args: Any, **options: Any) -> None:
        paths: list[str] = options["paths"]
        job: str | None = options["job"] or None
        batch_size = max(1, int(options["batch_size"]))
        workers = options["workers"]
        summary = IngestReport()
        self._writer = BundleWriter(batch_size=batch_size)
        self._names: dict[tuple[str, str], UUID] = {}
        reader = ItemReader(
            job,
            default_workers() if workers is None else max(0, workers),
            stored=StoredFingerprints(self._writer).stored,
        )
        failed: list[tuple[str, str]] = []
        progress = tqdm(
            desc="ingest",
            unit=" trials",
            file=sys.stderr,
            disable=options["no_progress"] or not sys.stderr.isatty(),
            dynamic_ncols=True,
        )
        # As in the reader processes, the cycle collector is off; it runs once a batch
        # instead, over the young objects (`_write`), and after the run as it will.
        with closing(reader), progress, cycle_collector_paused():
            pending: list[PreparedTrial] = []
            for path in paths:
                read = 0
                try:
                    for outcome in reader.outcomes(_guarded(Discovery(path), path)):
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

        for line in summary.lines():
            self.stdout.write(line)
        if failed:
            reasons = "; ".join(f"{printable(p)}: {printable(r)}" for p, r in failed)
            raise CommandError(f"could not ingest {reasons}")

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
