"""Reading one trial's files part by part: what validates is kept, what does not is recorded.

Both readers (Harbor folders and contract directories) collect a trial through one
`TrialFiles`: the files that define the result (hashed into its digest and kept verbatim),
the validity errors of the reward and the output (seed 000's `errors`), and the ingestion
problems of everything else. A side file or a field that does not validate never costs the
trial: the part is dropped from the rows, kept raw in an `IngestProblem` with its file and
field path, and shown on the trial page.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from rewards.ingest.files import ArtifactError, Folder, lenient_text
from rewards.ingest.storable import dotted, loads_storable
from rewards.schemas import IngestProblem

# What a problem keeps of the part it could not read: enough to see what was written.
RAW_LIMIT = 4096
# Validation is retried after dropping the parts at fault; a document this broken is
# dropped whole.
MAX_ROUNDS = 20


def raw_text(value: Any) -> str:
    """A part as the pipeline wrote it, bounded: JSON for data, the text itself for text."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= RAW_LIMIT else text[:RAW_LIMIT] + " …"


def reason(error: Mapping[str, Any]) -> str:
    """pydantic's message for one error, without the "Value error, " of our own checks."""
    return str(error["msg"]).removeprefix("Value error, ")


@dataclass(frozen=True)
class _Part:
    """Where a validation error is dropped: the list element it is inside, else the field.

    In our own formats a bad error tag or scorer row is one part (half a tag is not worth
    keeping); in Harbor's lenient files (`leaf`) only the bad value goes, so one bad token
    count costs that count, not its step. A missing field takes its parent object with it,
    since the object cannot stand without it.
    """

    loc: tuple[int | str, ...]

    @classmethod
    def of(cls, loc: tuple[int | str, ...], *, missing: bool, leaf: bool) -> _Part:
        if not leaf:
            for index, part in enumerate(loc):
                if isinstance(part, int):
                    return cls(loc[: index + 1])
        return cls(loc[:-1] if missing and len(loc) > 1 else loc)


def _lookup(data: Any, loc: tuple[int | str, ...]) -> Any:
    for part in loc:
        data = data[part]
    return data


def _delete(data: Any, loc: tuple[int | str, ...]) -> None:
    container = _lookup(data, loc[:-1])
    del container[loc[-1]]


def validate_parts[M: BaseModel](
    model: type[M], data: dict[str, Any], file: str, *, strict: bool = False, leaf: bool = False
) -> tuple[M, list[IngestProblem]]:
    """`model` from `data` without the parts that fail; each dropped part becomes a problem.

    `data` is the caller's freshly parsed JSON and is changed in place. Only optional parts
    can be dropped, so the models read this way have defaults for every field. Strict
    validation is of the JSON text, as for a file (a datetime is an ISO string there).
    """
    problems: list[IngestProblem] = []
    for _ in range(MAX_ROUNDS):
        try:
            if strict:
                return model.model_validate_json(json.dumps(data), strict=True), problems
            return model.model_validate(data), problems
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_input=False)
        parts: dict[tuple[int | str, ...], list[str]] = {}
        for error in errors:
            part = _Part.of(tuple(error["loc"]), missing=error["type"] == "missing", leaf=leaf)
            inner = tuple(error["loc"])[len(part.loc) :]
            where = f"{dotted(inner)}: " if inner else ""
            parts.setdefault(part.loc, []).append(where + reason(error))
        # Deepest and last first, so deleting one part never moves another.
        for loc in sorted(parts, key=lambda p: (len(p), p), reverse=True):
            try:
                value = _lookup(data, loc)
                _delete(data, loc)
            except (KeyError, IndexError, TypeError):
                value = None
            problems.append(
                IngestProblem(
                    file=file,
                    field=dotted(loc),
                    message="; ".join(parts[loc]),
                    raw=raw_text(value) if value is not None else "",
                )
            )
    problems.append(IngestProblem(file=file, message="too many invalid parts: all ignored"))
    return model.model_validate({}), problems


class TrialFiles:
    """What one trial's files gave: result-defining files, validity errors, problems."""

    def __init__(self, trial: Folder) -> None:
        self.trial = trial
        self.errors: list[str] = []  # the reward's and the output's (seed 000 `errors`)
        self.problems: list[IngestProblem] = []  # everything else that did not validate
        self.defining: list[tuple[str, bytes]] = []
        self.raw: dict[str, str] = {}

    # -- paths ------------------------------------------------------------------------------
    def inside(self, folder: Folder, name: str) -> str:
        """The path of `name` in `folder`, relative to the trial."""
        rel = folder.rel_to(name)
        prefix = self.trial.rel
        return rel[len(prefix) + 1 :] if prefix and rel.startswith(prefix + "/") else rel

    # -- recording ------------------------------------------------------------------------
    def problem(self, file: str, message: str, *, field: str = "", raw: str = "") -> None:
        self.problems.append(IngestProblem(file=file, field=field, message=message, raw=raw))

    def keep(self, folder: Folder, name: str, data: bytes, *, raw: bool = True) -> str:
        """A file that defines the result: hashed into the digest (and kept verbatim)."""
        rel = self.inside(folder, name)
        self.defining.append((rel, data))
        if raw:
            self.raw[rel] = lenient_text(data)
        return rel

    # -- reading ----------------------------------------------------------------------------
    def read(
        self, folder: Folder, name: str, *, tail: bool = False, defines_result: bool = False
    ) -> bytes | None:
        """A file of the trial; one that cannot be read is recorded and read as absent.

        A file that defines the result (the reward) records a validity error; any other
        file an ingestion problem.
        """
        if not folder.has(name):
            return None
        try:
            return folder.read(name, tail=tail)
        except ArtifactError as exc:
            self._failed(self.inside(folder, name), str(exc), defines_result)
            return None

    def json(
        self, folder: Folder, name: str, data: bytes | None, *, defines_result: bool = False
    ) -> Any:
        """Parsed JSON of a file read with `read`; unparseable JSON is recorded, kept raw, and
        what no column can hold is mended (`storable`) and recorded."""
        if data is None:
            return None
        rel = self.inside(folder, name)
        try:
            value, mended = loads_storable(data, folder.root.limits.max_depth, rel)
        except ArtifactError as exc:
            if defines_result:
                self.errors.append(f"{rel}: {exc}")
            else:
                self.problem(rel, str(exc), raw=raw_text(lenient_text(data)))
            return None
        self.problems.extend(mended)
        return value

    def child(self, folder: Folder, name: str) -> Folder | None:
        try:
            return folder.child(name)
        except ArtifactError as exc:
            self.problem(self.inside(folder, name), str(exc))
            return None

    def _failed(self, rel: str, reason: str, defines_result: bool) -> None:
        if defines_result:
            self.errors.append(f"{rel}: {reason}")
        else:
            self.problem(rel, reason)
