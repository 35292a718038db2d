"""Unpacking an uploaded zip of a Harbor job folder, with the importer's safety rules.

The archive was made by whoever uploaded it from files an agent wrote, so it is hostile: an
entry whose path climbs out (`..`, an absolute path, a drive letter) is refused by the same
rule the importer applies to a path an artifact names (`files.relative_parts`); a symlink is
refused (the importer follows none that leaves its folder; an archive has no folder to stay
in yet); and a zip bomb is refused before anything is written, by the total size its entries
declare, and again while writing, by the bytes actually unpacked. Any of these refuses the
whole archive with an `ArtifactError` naming what was wrong.
"""

from __future__ import annotations

import os
import stat
import zipfile
from typing import BinaryIO

from rewards.ingest.files import ArtifactError, relative_parts

# Entries one archive may hold: a job of 10,000 trials has about ten files each.
MAX_ENTRIES = 200_000
CHUNK = 1 << 16


def unpack_zip(source: BinaryIO, target: str, max_bytes: int) -> None:
    """The archive's files written under the (empty) folder `target`; ArtifactError, with
    nothing more written, when an entry is unsafe or the files would exceed `max_bytes`."""
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ArtifactError("not a readable zip archive") from exc
    with archive:
        entries = archive.infolist()
        if len(entries) > MAX_ENTRIES:
            raise ArtifactError(f"holds more than {MAX_ENTRIES} entries")
        declared = sum(entry.file_size for entry in entries)
        if declared > max_bytes:
            raise ArtifactError(f"unpacks to more than the {max_bytes}-byte limit")
        planned = [(entry, _safe_parts(entry)) for entry in entries]
        written = 0
        for entry, parts in planned:
            path = os.path.join(target, *parts)
            if entry.is_dir():
                os.makedirs(path, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            try:
                with archive.open(entry) as data, open(path, "xb") as out:
                    while chunk := data.read(CHUNK):
                        written += len(chunk)
                        if written > max_bytes:
                            raise ArtifactError(f"unpacks to more than the {max_bytes}-byte limit")
                        out.write(chunk)
            except FileExistsError as exc:
                raise ArtifactError("names the same file twice") from exc
            except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError) as exc:
                raise ArtifactError("has an entry that cannot be unpacked") from exc
            except (OSError, EOFError) as exc:
                raise ArtifactError("has an entry that cannot be unpacked") from exc


def _safe_parts(entry: zipfile.ZipInfo) -> list[str]:
    """The entry's path as parts inside the target; ArtifactError for a symlink or a path
    that would leave the folder."""
    name = entry.filename
    if stat.S_ISLNK(entry.external_attr >> 16):
        raise ArtifactError("holds a symlink, which the importer does not follow")
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise ArtifactError("holds an entry with an absolute path")
    try:
        parts = relative_parts(name)
    except ArtifactError as exc:
        raise ArtifactError(f"holds an entry outside its folder: {exc}") from exc
    return parts
