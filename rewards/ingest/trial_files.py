"""A Harbor trial folder read when a page shows it: logs, artifacts and analysis.

Ingest stores what the pages filter, score and compare on (result.json, the reward files,
the trajectory, verifier stdout and CTRF, the exception). The rest of a trial folder is
read from it when someone opens it, here and only here:
- `agent/` logs (`*.txt`, `*.log`, a command's stdout and stderr), `trial.log`, the
  verifier's other logs (`test-stderr.txt`, …), `artifacts/` with its `manifest.json`, and
  `analysis.json` / `analysis.md` that `harbor analyze` writes after the run (so they show
  without ingesting again);
- a multi-step trial's `steps/<name>/{agent,verifier,artifacts}/`, each under its step.

The folder's files are as hostile as the rest (DESIGN §9): the importer's rules apply
(`rewards.ingest.files`: nothing outside the trial folder, no symlink leading out, no
`..`, regular files only). Every read is bounded: a log shows its end, a listing its first
entries, and a tab reads at most `TAB_BYTES`. A folder that is gone (moved, cleaned up, or
never there, as for a trial pushed through the API) is said so, and nothing else fails.
"""

from __future__ import annotations

import json
import mimetypes
import os
import posixpath
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from rewards.ingest.files import ArtifactError, Folder, Limits, Root, lenient_text

# What one file shows (its end, for a log), and what one tab reads in all.
FILE_BYTES = 256 * 1024
TAB_BYTES = 1024 * 1024
PREVIEW_BYTES = 64 * 1024
# Entries listed per folder tree, and how deep a tree is walked.
MAX_ENTRIES = 300
MAX_DEPTH = 6
# A download is read whole into memory, so it is bounded too.
DOWNLOAD_BYTES = 16 * 1024 * 1024

LOG_SUFFIXES = (".txt", ".log", ".out", ".err", ".md")
LOG_NAMES = ("stdout", "stderr")
# Shown elsewhere: the trajectory tab, and the reward and CTRF the verifier tab reads from
# the database.
AGENT_SHOWN_ELSEWHERE = {"trajectory.json"}
VERIFIER_SHOWN_ELSEWHERE = {
    "reward.json",
    "reward.txt",
    "ctrf.json",
    "test-stdout.txt",
    "reward-details.json",
    "details.json",
}


@dataclass(frozen=True)
class TextFile:
    """A text file of the trial folder: its path there, and its text (the end of it)."""

    path: str
    text: str = ""
    cut: int = 0  # bytes before the shown text that were left out
    error: str = ""


@dataclass(frozen=True)
class ArtifactFile:
    path: str
    size: int
    text: str | None = None  # a preview when the file is text; None for a binary
    cut: int = 0
    error: str = ""

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)


@dataclass
class Section:
    """One part of the folder: the trial's own (`step` empty) or one step's."""

    step: str
    files: list[TextFile] = field(default_factory=list)
    artifacts: list[ArtifactFile] = field(default_factory=list)
    manifest: TextFile | None = None
    more: int = 0  # entries past the listing's bound


@dataclass(frozen=True)
class Analysis:
    markdown: TextFile | None
    data: TextFile | None  # analysis.json, indented


class TrialFolderGone(Exception):
    """The trial's folder cannot be read now; the message says why, for the page."""


class _Budget:
    def __init__(self, total: int) -> None:
        self.left = total

    def take(self, size: int) -> int:
        granted = max(0, min(size, self.left))
        self.left -= granted
        return granted


class TrialFolder:
    """The folder a Harbor trial was ingested from, opened read-only within its bounds."""

    def __init__(
        self, path: str, limits: Limits | None = None, step_order: Sequence[str] = ()
    ) -> None:
        """`step_order`: the steps' names in the order Harbor ran them (the trial's
        timings keep it); folders it does not name come after, by name."""
        self.step_order = list(step_order)
        if not path:
            raise TrialFolderGone("This trial was not ingested from a folder.")
        if not os.path.isdir(path):
            raise TrialFolderGone(
                f"The trial folder {path} is not there any more; what ingest stored is "
                "shown, the files read from the folder are not."
            )
        base = limits or Limits.from_settings()
        self.root = Root(path, Limits(max_bytes=FILE_BYTES, max_depth=base.max_depth))
        self.folder = self.root.folder()
        if self.folder.listing_error:
            raise TrialFolderGone(
                f"The trial folder {path} cannot be read ({self.folder.listing_error})."
            )

    # --- the parts ------------------------------------------------------------------------
    def _parts(self) -> Iterator[tuple[str, Folder]]:
        """The trial's own folder, then each step's, in name order."""
        yield "", self.folder
        steps = self._child(self.folder, "steps")
        if steps is not None:
            names = steps.subfolder_names()
            ran = [name for name in dict.fromkeys(self.step_order) if name in names]
            for name in [*ran, *(name for name in names if name not in ran)]:
                step = self._child(steps, name)
                if step is not None:
                    yield name, step

    def _child(self, folder: Folder, name: str) -> Folder | None:
        try:
            return folder.child(name)
        except ArtifactError:
            return None

    def agent_logs(self, budget: int = TAB_BYTES) -> list[Section]:
        """The agent's log files (not its trajectory), per step, each its last `FILE_BYTES`."""
        return self._logs("agent", AGENT_SHOWN_ELSEWHERE, _Budget(budget))

    def verifier_logs(self, budget: int = TAB_BYTES) -> list[Section]:
        """The verifier's logs other than the stdout, reward and CTRF stored at ingest."""
        return self._logs("verifier", VERIFIER_SHOWN_ELSEWHERE, _Budget(budget))

    def _logs(self, part: str, elsewhere: set[str], budget: _Budget) -> list[Section]:
        sections = []
        for step, folder in self._parts():
            logs = self._child(folder, part)
            if logs is None:
                continue
            section = Section(step)
            for rel, entry_folder, name, _size in self._walk(logs, section):
                if name in elsewhere or not _is_log(name):
                    continue
                section.files.append(self._text(entry_folder, name, rel, budget, tail=True))
            if section.files or section.more:
                sections.append(section)
        return sections

    def trial_log(self) -> TextFile | None:
        """`trial.log`: Harbor's own log of the trial, its last `FILE_BYTES`."""
        if not self.folder.has("trial.log"):
            return None
        return self._text(self.folder, "trial.log", "trial.log", _Budget(FILE_BYTES), tail=True)

    def artifacts(self, budget: int = TAB_BYTES) -> list[Section]:
        """`artifacts/` per step: its manifest, and every file (text ones previewed)."""
        spend = _Budget(budget)
        sections = []
        for step, folder in self._parts():
            artifacts = self._child(folder, "artifacts")
            if artifacts is None:
                continue
            section = Section(step)
            for rel, entry_folder, name, size in self._walk(artifacts, section):
                if entry_folder is artifacts and name == "manifest.json":
                    section.manifest = self._manifest(artifacts, rel, spend)
                    continue
                section.artifacts.append(self._artifact(entry_folder, name, rel, size, spend))
            if section.artifacts or section.manifest or section.more:
                sections.append(section)
        return sections

    def analysis(self) -> Analysis | None:
        """What `harbor analyze` wrote: analysis.md, and analysis.json indented."""
        budget = _Budget(TAB_BYTES)
        markdown = data = None
        if self.folder.has("analysis.md"):
            markdown = self._text(self.folder, "analysis.md", "analysis.md", budget)
        if self.folder.has("analysis.json"):
            data = self._json_text(self.folder, "analysis.json", "analysis.json", budget)
        if markdown is None and data is None:
            return None
        return Analysis(markdown=markdown, data=data)

    def download(self, path: str) -> tuple[bytes, str]:
        """A file of the folder named by its path inside it: (bytes, content type).

        Raises ArtifactError for a path that leaves the folder, a symlink leading out,
        anything but a regular file, a file over `DOWNLOAD_BYTES`; FileNotFoundError for
        a file that is not there.
        """
        located = self.folder.locate(path)
        if located is None:
            raise FileNotFoundError(path)
        folder, name = located
        entry = folder.entries.get(name)
        if entry is None:
            raise FileNotFoundError(path)
        data = folder.read(name, max_bytes=DOWNLOAD_BYTES)
        if data is None:
            raise FileNotFoundError(path)
        kind, encoding = mimetypes.guess_type(name)
        if encoding is not None or kind is None:
            kind = "application/octet-stream"
        return data, kind

    # --- reading --------------------------------------------------------------------------
    def _walk(self, top: Folder, section: Section) -> Iterator[tuple[str, Folder, str, int]]:
        """(path in the trial folder, folder, name, size) of the regular files under `top`,
        breadth first and sorted, at most `MAX_ENTRIES`; the rest counted in `section.more`."""
        pending = [(top, 0)]
        listed = walked = 0
        while pending:
            folder, depth = pending.pop(0)
            for name in sorted(folder.entries):
                entry = folder.entries[name]
                rel = folder.rel_to(name)
                if _is_real_dir(entry):
                    # Real sub-folders only (a symlinked one could lead round in a loop; it
                    # is listed, and refused when read), and no more of them than entries.
                    walked += 1
                    child = self._child(folder, name)
                    if child is not None and depth + 1 < MAX_DEPTH and walked <= MAX_ENTRIES:
                        pending.append((child, depth + 1))
                    continue
                if listed >= MAX_ENTRIES:
                    section.more += 1
                    continue
                listed += 1
                try:
                    size = (
                        os.stat(entry.path).st_size
                        if entry.is_symlink()
                        else entry.stat(follow_symlinks=False).st_size
                    )
                except OSError:
                    size = 0
                yield rel, folder, name, size

    def _read(self, folder: Folder, name: str, budget: _Budget, *, tail: bool) -> bytes:
        """At most what the budget grants of the file (its end for `tail`)."""
        limit = budget.take(FILE_BYTES)
        if limit <= 0:
            raise ArtifactError("not read: this tab shows enough already")
        data = folder.read(name, tail=tail, head=not tail, max_bytes=limit)
        if data is None:
            raise ArtifactError("not there any more")
        budget.left += limit - len(data)
        return data

    def _text(
        self, folder: Folder, name: str, rel: str, budget: _Budget, *, tail: bool = False
    ) -> TextFile:
        try:
            size = _size(folder, name)
            data = self._read(folder, name, budget, tail=tail)
        except ArtifactError as exc:
            return TextFile(rel, error=str(exc))
        return TextFile(rel, lenient_text(data), cut=max(0, size - len(data)))

    def _json_text(self, folder: Folder, name: str, rel: str, budget: _Budget) -> TextFile:
        read = self._text(folder, name, rel, budget)
        if read.error or read.cut:
            return read
        try:
            value = json.loads(read.text)
        except ValueError:
            return read
        return TextFile(rel, json.dumps(value, indent=2, ensure_ascii=False))

    def _manifest(self, folder: Folder, rel: str, budget: _Budget) -> TextFile:
        return self._json_text(folder, "manifest.json", rel, budget)

    def _artifact(
        self, folder: Folder, name: str, rel: str, size: int, budget: _Budget
    ) -> ArtifactFile:
        try:
            limit = budget.take(PREVIEW_BYTES)
            if limit <= 0:
                return ArtifactFile(rel, size)
            head = folder.read(name, head=True, max_bytes=limit) or b""
            budget.left += limit - len(head)
        except ArtifactError as exc:
            return ArtifactFile(rel, size, error=str(exc))
        text = _as_text(head)
        if text is None:
            return ArtifactFile(rel, size)
        return ArtifactFile(rel, size, text=text, cut=max(0, size - len(head)))


def _is_real_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_log(name: str) -> bool:
    return name.endswith(LOG_SUFFIXES) or name in LOG_NAMES


def _size(folder: Folder, name: str) -> int:
    entry = folder.entries.get(name)
    if entry is None:
        return 0
    try:
        return os.stat(entry.path).st_size
    except OSError:
        return 0


def _as_text(data: bytes) -> str | None:
    """The bytes as text, or None when they look binary (a NUL, or not UTF-8)."""
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A preview may cut a character in two at its end.
        if exc.start >= len(data) - 3:
            return data[: exc.start].decode("utf-8")
        return None


def step_order(timings: object) -> list[str]:
    """The steps in the order Harbor ran them, as ingest kept them in a trial's timings."""
    steps = timings.get("steps") if isinstance(timings, dict) else None
    return [str(name) for name in steps] if isinstance(steps, dict) else []


def agent_log_text(source_path: str, max_chars: int = 200_000) -> str:
    """The agent's logs as one text (each headed by its path), for a judge of a trial with
    no trajectory; '' when the folder is gone or holds no log. Bounded to `max_chars`."""
    try:
        folder = TrialFolder(source_path)
    except TrialFolderGone:
        return ""
    parts = []
    for section in folder.agent_logs(budget=max_chars * 4):
        for file in section.files:
            if file.text:
                parts.append(f"== {file.path} ==\n{file.text}")
    text = "\n\n".join(parts)
    return text[-max_chars:]
