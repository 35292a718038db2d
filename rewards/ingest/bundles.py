"""Reader for `.jsonl` bundle files: one `TrialBundle` per line (DESIGN §4.3).

The lossless interchange format that `export --format jsonl` writes; ingesting an export
gives back the same trials ("unchanged" when they are already stored). Lines are read one at
a time with a bounded length, so a file of any size streams in flat memory; a line that does
not validate is reported with its number and the field path, and the rest of the file goes on.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from typing import Any

from pydantic import ValidationError

from rewards.ingest.files import ArtifactError, Limits, Problem, decode_text, too_deep
from rewards.ingest.storable import (
    dotted,
    line_may_hold_non_finite,
    loads_line,
    may_hold_surrogates,
)
from rewards.schemas import IngestProblem, TrialBundle, describe_validation_error

# A bundle carries its trial's artifacts (each up to the artifact limit) and a few levels of
# envelope around them.
LINE_FACTOR = 4
ENVELOPE_DEPTH = 8


class BundleFileError(OSError):
    """The file as a whole cannot be read (missing, not a regular file, no permission)."""


def parse_line(line: bytes | str, limits: Limits, *, where: str = "bundle") -> TrialBundle:
    """One line as a bundle; raises ArtifactError or ValidationError saying why not.

    pydantic reads the line, except one that may hold what no column can store (NaN,
    Infinity, a number beyond a double, which pydantic reads without complaint; a lone
    surrogate, which it refuses): that one is read carefully (`storable`), mended, and the
    bundle carries each mended spot as an ingestion problem named by `where`.
    """
    raw = line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")
    text = decode_text(line) if isinstance(line, bytes) else line
    max_depth = limits.max_depth + ENVELOPE_DEPTH
    if too_deep(text, max_depth):
        raise ArtifactError(f"JSON nested deeper than {max_depth} levels")
    if line_may_hold_non_finite(raw):
        return _parse_mended(text, max_depth, where)
    try:
        return TrialBundle.model_validate_json(text, strict=True)
    except ValidationError as exc:
        # pydantic refuses a lone surrogate as invalid JSON: read carefully, it is kept
        # escaped; a line that is not JSON at all keeps pydantic's message.
        if not (may_hold_surrogates(text) and _json_invalid(exc)):
            raise
        try:
            return _parse_mended(text, max_depth, where)
        except ArtifactError:
            raise exc from None


def drop_refused(data: Any, locations: list[tuple[Any, ...]], mended: set[str]) -> bool:
    """Remove from `data` each spot at `locations` (a validation error's) when it is one that
    was mended (a number no column can hold, now null); False when any is not (or cannot be
    removed): that error stands."""
    if not locations or any(dotted(location) not in mended for location in locations):
        return False
    for location in locations:
        parent = data
        for part in location[:-1]:
            parent = parent[part]
        if not isinstance(parent, dict):
            return False
        parent.pop(location[-1], None)
    return True


def _json_invalid(exc: ValidationError) -> bool:
    return any(error["type"] == "json_invalid" for error in exc.errors())


def _parse_mended(text: str, max_depth: int, where: str) -> TrialBundle:
    data, mended = loads_line(text, max_depth, where)
    # Strict validation is of JSON text, as for any line (a datetime is a string there).
    try:
        bundle = TrialBundle.model_validate_json(json.dumps(data), strict=True)
    except ValidationError as exc:
        # A number no column can hold is null now, which its field may refuse (a metric is
        # a number): such a field is left out, as the readers leave out a field that does
        # not validate, its text kept in the problem. Any other error stands.
        refused = [tuple(error["loc"]) for error in exc.errors()]
        if not drop_refused(data, refused, {p.field for p in mended}):
            raise
        try:
            bundle = TrialBundle.model_validate_json(json.dumps(data), strict=True)
        except ValidationError:
            raise exc from None  # the field is required (a reward): the first reason stands
    return with_problems(bundle, mended)


def with_problems(bundle: TrialBundle, mended: list[IngestProblem]) -> TrialBundle:
    """`bundle` with the spots mended while reading it (`storable.mend`) among its trial's
    ingestion problems."""
    if not mended:
        return bundle
    trial = bundle.trial
    # An exported bundle already lists what was mended when it was first read.
    new = [problem for problem in mended if problem not in trial.ingest_problems]
    if not new:
        return bundle
    record = trial.model_copy(update={"ingest_problems": [*trial.ingest_problems, *new]})
    return bundle.model_copy(update={"trial": record})


def _name_of(text: bytes) -> str:
    """`job/trial` of a line that failed validation, when the line says, for the summary."""
    try:
        data = json.loads(text)
        job, trial = data["job"]["name"], data["trial"]["name"]
    except (ValueError, TypeError, KeyError, RecursionError):
        return ""
    if isinstance(job, str) and isinstance(trial, str):
        return f"{job[:255]}/{trial[:255]}"
    return ""


def read_bundle_file(
    path: str, *, limits: Limits | None = None, display: str = ""
) -> Iterator[TrialBundle | Problem]:
    """Every line of a bundle file: a bundle, or an `invalid` problem naming the line."""
    for _, read in read_bundle_lines(path, limits=limits, display=display):
        yield read


def read_bundle_lines(
    path: str, *, limits: Limits | None = None, display: str = ""
) -> Iterator[tuple[str, TrialBundle | Problem]]:
    """`read_bundle_file`, each read with where it was (`FILE line N`), so a trial the
    database refuses later is still named by its line."""
    limits = limits or Limits.from_settings()
    display = display or path
    max_line = limits.max_bytes * LINE_FACTOR
    try:
        # Non-blocking open: a FIFO given as PATH must not hang the run (it is refused below).
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise BundleFileError(exc.strerror or type(exc).__name__) from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise BundleFileError("not a regular file")
    with os.fdopen(fd, "rb") as handle:
        number = 0
        while True:
            try:
                line = handle.readline(max_line + 1)
            except OSError as exc:
                failed = f"read failed after line {number}: {exc}"
                yield display, Problem("unreadable", display, failed)
                return
            if not line:
                return
            number += 1
            where = f"{display} line {number}"
            if len(line) > max_line and not line.endswith(b"\n"):
                # Skip the rest of the over-long line without holding it.
                while (rest := handle.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass
                yield (
                    where,
                    Problem("invalid", where, f"longer than the {max_line}-byte line limit"),
                )
                continue
            line = line.strip()
            if not line:
                continue
            try:
                bundle = parse_line(line, limits, where=f"bundle line {number}")
            except ArtifactError as exc:
                yield where, Problem("invalid", where, str(exc))
                continue
            except ValidationError as exc:
                name = _name_of(line)
                yield (
                    where,
                    Problem(
                        "invalid",
                        f"{name} ({where})" if name else where,
                        describe_validation_error(exc),
                    ),
                )
                continue
            yield where, bundle
