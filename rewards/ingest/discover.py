"""Find what a PATH given to `ingest` holds, by its shape (DESIGN §4).

- a `.jsonl` file: bundles, one per line;
- a Harbor trial folder: `result.json` shaped like a `TrialResult` (`trial_name`/`task_name`);
- a Harbor job folder: `result.json` shaped like a `JobResult` (`n_total_trials`/`stats`),
  or no result.json yet but trial folders inside; every sub-folder is then one of its trials;
- a verifier-contract trial directory: `logs/verifier/` or `trial.json`;
- any other folder: a folder of the above (a Harbor jobs folder, a folder of contract trials,
  a mix), searched a few levels deep.

Following a running job (`Discovery(follow=True)`, `ingest --follow`), a Harbor trial folder
without a complete result.json yet (its config.json is a trial's) is a trial too: it is read
as running, with what it has so far (`harbor.read_running_trial`).

Discovery is lazy: one `result.json` read decides between a trial and a job, and its bytes
and parsed data go to the reader with the item, so no file is read or parsed twice. A
sub-folder that holds nothing ingestible is reported by name, never skipped in silence.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rewards.ingest import bundles, contract, harbor
from rewards.ingest.files import ArtifactError, Folder, Limits, Problem, Root
from rewards.ingest.storable import loads_storable
from rewards.schemas import JobRecord, TrialBundle

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
    # Following a running job: no result.json (or a half-written one) reads as running.
    follow: bool = False


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
    reparse: bool = False  # it needed mending: its reader parses it again, recording why

    @property
    def handed_on(self) -> Any:
        """The data a reader is given (None: it parses the bytes itself)."""
        return None if self.reparse else self.data


@dataclass
class Discovery:
    """Walks one PATH. Jobs are named as found (`--job` is applied by `read_item`)."""

    path: str
    limits: Limits = field(default_factory=Limits.from_settings)
    # Trial folders of a running job (no complete result.json yet) are items too.
    follow: bool = False
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
            data, mended = loads_storable(raw, self.limits.max_depth, "result.json")
            # A result.json that needed mending is parsed again by its reader, which
            # records the spots: only such a rare file is read twice.
            return _Result(raw, data, reparse=bool(mended))
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
                yield from self._once(HarborTrialItem(folder, job, result.raw, result.handed_on))
                return
            if harbor.is_job_result(result.data):
                yield from self._harbor_job(folder, result.handed_on)
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
                yield from self._once(HarborTrialItem(child, job, follow=self.follow))

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
                yield from self._once(HarborTrialItem(child, job, result.raw, result.handed_on))
            elif (
                self.follow and (result is None or result.error) and harbor.is_running_trial(child)
            ):
                if job is None:
                    job, problems = harbor.read_job(folder, folder.name, read_result=False)
                    yield from problems
                yield from self._once(HarborTrialItem(child, job, follow=True))
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


def filed_under(record: JobRecord, job: str | None) -> JobRecord:
    """The job a trial is stored under: `--job NAME` when given, else the one it names.

    The one place `--job` is applied, after any reader has read a trial (Harbor folder,
    contract directory, bundle line alike), so a trial's uid never depends on it.
    """
    if not job or job == record.name:
        return record
    return record.model_copy(update={"name": job})


def with_job(bundle: TrialBundle, job: str | None) -> TrialBundle:
    """The bundle filed under `filed_under(bundle.job, job)` (its uid stays the trial's)."""
    record = filed_under(bundle.job, job)
    return bundle if record is bundle.job else bundle.model_copy(update={"job": record})


def read_item(item: Item, job: str | None = None) -> Iterator[TrialBundle | Problem]:
    """The bundles (or problems) one discovered item gives, filed under `--job` if given."""
    for read, _ in read_located(item, job):
        yield read


def read_located(item: Item, job: str | None = None) -> Iterator[tuple[TrialBundle | Problem, str]]:
    """`read_item`, each read with where it was when a trial's name does not say it (a
    bundle file's `FILE line N`; '' for a folder, whose trial is named by its path)."""
    for read, where in _read(item):
        yield (read if isinstance(read, Problem) else with_job(read, job)), where


def _read(item: Item) -> Iterator[tuple[TrialBundle | Problem, str]]:
    if isinstance(item, Problem):
        yield item, ""
    elif isinstance(item, HarborTrialItem):
        read = harbor.read_trial(
            item.folder, item.job, result_raw=item.result_raw, result_data=item.result_data
        )
        if (
            item.follow
            and isinstance(read, Problem)
            and read.kind == "unreadable"
            and harbor.is_running_trial(item.folder)
        ):
            # Not finished, or its result.json is being written: running, read again later.
            why = read.reason if item.folder.has("result.json") else ""
            read = harbor.read_running_trial(item.folder, item.job, why)
        yield read, ""
    elif isinstance(item, ContractTrialItem):
        yield contract.read_trial(item.folder, default_job=item.default_job), ""
    else:
        try:
            for where, read in bundles.read_bundle_lines(item.path, display=item.display):
                yield read, where
        except bundles.BundleFileError as exc:
            yield Problem("unreadable", item.display, str(exc)), ""
