"""Safe, bounded access to the files of a folder given to the importer (DESIGN §9).

Everything in a trial folder was written by an agent under evaluation, so the importer:
- reads only inside the folder it was given: a symlink is followed only when its target stays
  inside, and a path named by an artifact (`expected_output_path`, `reward_path`) may not
  climb out with `..`;
- opens only regular files (a FIFO named `reward.json` must not hang the run), and does not
  follow a file symlink swapped in after the check (`O_NOFOLLOW`; the trial has finished
  writing before it is ingested, so folders are not raced);
- bounds every read (`TRIALDESK_MAX_ARTIFACT_BYTES`) and every JSON document's nesting
  (`TRIALDESK_MAX_JSON_DEPTH`).
Any breach raises `ArtifactError` with a short message that never quotes file content; the
readers turn it into a recorded validity error or a named summary line.

A `Folder` lists its directory once (`os.scandir`) and answers "is there a file X" from that
listing, so a trial costs a few directory reads instead of a `stat` per candidate name.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from django.conf import settings

from rewards.formats import ArtifactError, decode_text, loads_bounded, too_deep

__all__ = [
    "ArtifactError",
    "Folder",
    "Limits",
    "Problem",
    "Root",
    "artifact_digest",
    "decode_text",
    "loads_json",
    "too_deep",
]

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    # Opening a FIFO for reading blocks until a writer appears; non-blocking open returns
    # at once and the fstat check below then refuses it.
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


@dataclass(frozen=True)
class Limits:
    max_bytes: int
    max_depth: int

    @classmethod
    def from_settings(cls) -> Limits:
        return cls(
            max_bytes=int(settings.TRIALDESK_MAX_ARTIFACT_BYTES),
            max_depth=int(settings.TRIALDESK_MAX_JSON_DEPTH),
        )


# --- bounded JSON -----------------------------------------------------------------------------
def loads_json(raw: bytes | str, max_depth: int) -> Any:
    """`formats.loads_bounded` with the configured depth."""
    return loads_bounded(raw, max_depth)


def lenient_text(raw: bytes) -> str:
    """Text for display and `raw_artifacts`: kept even when not UTF-8 (bad bytes → U+FFFD)."""
    return raw.decode("utf-8", errors="replace")


def artifact_digest(files: Iterable[tuple[str, bytes]]) -> str:
    """sha256 over the files that define a result: sorted by relative path, names included.

    Each name and body is length-prefixed so that no two different sets of files hash alike.
    """
    digest = hashlib.sha256()
    for name, data in sorted(files):
        encoded = name.encode("utf-8", errors="surrogateescape")
        digest.update(len(encoded).to_bytes(8, "big"))
        digest.update(encoded)
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


# --- bounded file reads -----------------------------------------------------------------------
def read_regular_file(
    path: str, max_bytes: int, *, tail: bool = False, head: bool = False
) -> bytes | None:
    """The bytes of a regular file, at most `max_bytes`; None when it does not exist.

    `tail=True` keeps the last `max_bytes` of a larger file (logs, where the end matters)
    instead of refusing it; `head=True` its first `max_bytes` (a preview).
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        # ELOOP: a symlink was swapped in after the containment check.
        raise ArtifactError(f"cannot be opened ({exc.strerror or type(exc).__name__})") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ArtifactError("not a regular file")
        expected = info.st_size  # what is left to read, as the file stood when opened
        if info.st_size > max_bytes:
            if not (tail or head):
                raise ArtifactError(f"larger than the {max_bytes}-byte limit")
            if tail:
                os.lseek(fd, info.st_size - max_bytes, os.SEEK_SET)
            expected = max_bytes
        chunks = []
        remaining = max_bytes + 1
        while remaining > 0:
            wanted = min(remaining, max(info.st_size + 1, 65536))
            chunk = os.read(fd, wanted)
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
            expected -= len(chunk)
            if len(chunk) < wanted and expected <= 0:
                # Short, with all the file's bytes read: its end, known without one more call.
                break
        data = b"".join(chunks)
        if len(data) > max_bytes:
            if head:
                return data[:max_bytes]
            if not tail:
                raise ArtifactError(f"larger than the {max_bytes}-byte limit")
            data = data[-max_bytes:]
        return data
    except OSError as exc:
        raise ArtifactError(f"cannot be read ({exc.strerror or type(exc).__name__})") from exc
    finally:
        os.close(fd)


# A trial folder with more entries than this is not fingerprinted (always read).
FINGERPRINT_MAX_ENTRIES = 2_000


class Root:
    """The folder given on the command line: nothing outside it is ever read."""

    def __init__(self, path: str | os.PathLike[str], limits: Limits | None = None) -> None:
        self.given = os.fspath(path)
        self.real = os.path.realpath(self.given)
        self._prefix = self.real.rstrip(os.sep) + os.sep
        self.limits = limits or Limits.from_settings()

    def contains(self, real_path: str) -> bool:
        return real_path == self.real or real_path.startswith(self._prefix)

    def folder(self) -> Folder:
        return Folder(self, self.real, "")

    def display(self, rel: str) -> str:
        """A path for messages: as the user typed the root, then the part inside it."""
        return os.path.join(self.given, rel) if rel else self.given


class Folder:
    """A directory inside a `Root`, listed once."""

    __slots__ = ("_children", "_entries", "_error", "path", "rel", "root")

    def __init__(self, root: Root, path: str, rel: str) -> None:
        self.root = root
        self.path = path
        self.rel = rel
        self._entries: dict[str, os.DirEntry[str]] | None = None
        self._error = ""
        self._children: dict[str, Folder] = {}  # sub-folders (not symlinks), listed once

    def __reduce__(self) -> tuple[type[Folder], tuple[Root, str, str]]:
        # Sent to a reader process without its listing (DirEntry objects do not pickle);
        # the reader lists the folder again itself.
        return (Folder, (self.root, self.path, self.rel))

    @property
    def name(self) -> str:
        return os.path.basename(self.path.rstrip(os.sep)) or self.path

    @property
    def display(self) -> str:
        return self.root.display(self.rel)

    def rel_to(self, name: str) -> str:
        return f"{self.rel}/{name}" if self.rel else name

    @property
    def entries(self) -> dict[str, os.DirEntry[str]]:
        if self._entries is None:
            try:
                with os.scandir(self.path) as scan:
                    self._entries = {entry.name: entry for entry in scan}
            except OSError as exc:
                self._error = exc.strerror or type(exc).__name__
                self._entries = {}
        return self._entries

    @property
    def listing_error(self) -> str:
        """Why the directory could not be listed ('' when it could)."""
        _ = self.entries
        return self._error

    def has(self, name: str) -> bool:
        return name in self.entries

    def _target(self, entry: os.DirEntry[str]) -> str:
        """The path to open for an entry; a symlink must resolve inside the root."""
        if not entry.is_symlink():
            return entry.path
        real = os.path.realpath(entry.path)
        if not self.root.contains(real):
            raise ArtifactError("a symlink that points outside the folder given")
        return real

    def is_dir(self, name: str) -> bool:
        entry = self.entries.get(name)
        if entry is None:
            return False
        try:
            target = self._target(entry)
        except ArtifactError:
            return False
        return entry.is_dir(follow_symlinks=False) or (entry.is_symlink() and os.path.isdir(target))

    def child(self, name: str) -> Folder | None:
        """The sub-folder `name`; None when absent or not a folder.

        Raises ArtifactError when it is a symlink leading outside the root.
        """
        entry = self.entries.get(name)
        if entry is None:
            return None
        if not entry.is_symlink():
            return self._subfolder(name, entry) if entry.is_dir(follow_symlinks=False) else None
        target = self._target(entry)
        if not os.path.isdir(target):
            return None
        return Folder(self.root, target, self.rel_to(name))

    def _subfolder(self, name: str, entry: os.DirEntry[str]) -> Folder:
        """A real sub-folder, the same object each time (so it is listed once)."""
        folder = self._children.get(name)
        if folder is None:
            folder = self._children[name] = Folder(self.root, entry.path, self.rel_to(name))
        return folder

    def subfolder_names(self) -> list[str]:
        """Names of the entries that are folders or symlinks to folders, sorted."""
        names = []
        for name, entry in self.entries.items():
            if entry.is_dir(follow_symlinks=False):
                names.append(name)
            elif entry.is_symlink():
                try:
                    if os.path.isdir(entry.path):
                        names.append(name)
                except OSError:
                    continue
        return sorted(names)

    def fingerprint(self, max_entries: int = FINGERPRINT_MAX_ENTRIES) -> str:
        """What this folder's tree looks like, cheaply: every entry's path, size and
        modification time (a folder's changes when entries come or go), hashed.

        Equal fingerprints mean the files were not touched since, so an ingest that finds
        the fingerprint it stored last time need not read them again. Symlinks count by
        their target (a changed target changes the fingerprint); linked folders are not
        walked. '' for a tree larger than `max_entries` or one that cannot be listed:
        such a folder is always read. The listings it takes are this folder's own (and its
        sub-folders'), so reading the trial afterwards lists nothing again.
        """
        seen: list[tuple[str, int, int]] = []
        append = seen.append
        try:
            pending = [(self, "", os.stat(self.path).st_mtime_ns)]
        except OSError:
            return ""
        while pending:
            folder, rel, mtime = pending.pop()
            append((rel, -1, mtime))
            entries = folder.entries
            if folder._error or len(seen) + len(entries) > max_entries:
                return ""
            for name, entry in entries.items():
                try:
                    if entry.is_symlink():
                        info = os.stat(entry.path)  # the target's, not the link's
                        append((f"{rel}/{name}", info.st_size, info.st_mtime_ns))
                        continue
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    append((f"{rel}/{name}", -2, 0))
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append(
                        (folder._subfolder(name, entry), f"{rel}/{name}", info.st_mtime_ns)
                    )
                else:
                    append((f"{rel}/{name}", info.st_size, info.st_mtime_ns))
        seen.sort()
        text = repr(seen).encode("utf-8", "surrogateescape")
        return hashlib.blake2b(text, digest_size=16).hexdigest()

    def read(
        self, name: str, *, tail: bool = False, head: bool = False, max_bytes: int | None = None
    ) -> bytes | None:
        """The bytes of file `name` in this folder; None when there is no such file.

        At most the root's byte limit, or `max_bytes` when given (a page reads less)."""
        entry = self.entries.get(name)
        if entry is None:
            return None
        limit = self.root.limits.max_bytes if max_bytes is None else max_bytes
        return read_regular_file(self._target(entry), limit, tail=tail, head=head)

    def locate(self, path: str) -> tuple[Folder, str] | None:
        """The folder and file name for a path an artifact names, relative to this folder.

        A leading `/` is dropped (`/workspace/a.json` is `<here>/workspace/a.json`); a path
        that climbs out of this folder with `..` raises ArtifactError; a folder on the way
        that does not exist gives None (the file is missing).
        """
        parts = relative_parts(path)
        folder = self
        for part in parts[:-1]:
            child = folder.child(part)
            if child is None:
                return None
            folder = child
        return folder, parts[-1]


def relative_parts(path: str) -> list[str]:
    """The parts of a path named by hostile input, relative to the folder it is read in: a
    leading `/` dropped, `\\` read as `/`; ArtifactError for a NUL, for a path that climbs
    out with `..`, and for one that names nothing. `Folder.locate` and the unpacking of an
    uploaded zip (`rewards.ingest.archive`) go by it."""
    if "\x00" in path:
        raise ArtifactError("the path contains a NUL character")
    normal = posixpath.normpath(path.replace("\\", "/").lstrip("/"))
    if normal == ".." or normal.startswith("../"):
        raise ArtifactError("the path leads outside the trial directory")
    parts = [part for part in normal.split("/") if part not in ("", ".")]
    if not parts:
        raise ArtifactError("the path names no file")
    return parts


# --- what a reader says when it cannot produce a bundle -------------------------------------
@dataclass(frozen=True)
class Problem:
    """A named line of the ingest summary: bad input is reported, never dropped.

    `invalid`: the trial was found but its metadata cannot be stored (the name says which
    trial); `unreadable`: a path that could not be read as a trial at all (the name is it).
    """

    kind: Literal["invalid", "unreadable"]
    name: str
    reason: str
