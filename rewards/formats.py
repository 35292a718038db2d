"""Reading artifact files: bounded JSON, the output formats a task may declare, JSON Schema.

Plain parsing with short, stable error messages (`ArtifactError`) that never quote the file;
what a parse result means for a score is decided in `rewards.rules`.
"""

from __future__ import annotations

import csv
import io
import json
import re
import tomllib
from collections.abc import Callable
from typing import Any, Final

import orjson
import yaml


# --- bounded JSON ---------------------------------------------------------------------------
class ArtifactError(ValueError):
    """An artifact that cannot be read: the message is short and safe to show."""


DEFAULT_MAX_DEPTH = 64


# A JSON string, matched without backtracking (possessive quantifiers), so brackets inside
# strings are not counted as nesting.
_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_SQUARE = str.maketrans("{}", "[]")


def too_deep(text: str, max_depth: int) -> bool:
    """Is this JSON text nested deeper than `max_depth`? Decided before any parser recurses.

    Done with C-speed string operations rather than a character loop: drop strings, keep
    only brackets, then strip innermost `[]` pairs once per level.
    """
    if text.count("[") + text.count("{") <= max_depth:
        return False
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text)).translate(_SQUARE)
    for _ in range(max_depth):
        if not brackets:
            return False
        shorter = brackets.replace("[]", "")
        if shorter == brackets:
            return False  # unbalanced: the parser rejects it with a better message
        brackets = shorter
    return "[]" in brackets


def decode_text(raw: bytes) -> str:
    """JSON text: UTF-8 (a BOM allowed); failing that, UTF-16 or UTF-32 as RFC 8259's
    detection tells them apart (Windows tools write UTF-16 with a BOM). The other
    encodings are tried only when UTF-8 fails, so a UTF-8 file costs nothing more.

    Without a BOM, UTF-16 or UTF-32 text of ASCII characters is valid UTF-8 too (every
    other byte NUL), which no JSON text in UTF-8 is: JSON starts with ASCII, so a NUL in
    the first four bytes is what RFC 8259's detection looks for."""
    if b"\x00" in raw[:4]:
        encoding = json.detect_encoding(raw)
        if not encoding.startswith("utf-8"):
            try:
                return raw.decode(encoding)
            except UnicodeDecodeError:
                pass  # not that either: read as UTF-8, and refused as such
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        encoding = json.detect_encoding(raw)
        if encoding.startswith("utf-8"):
            raise ArtifactError("not UTF-8 text") from exc
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            raise ArtifactError(f"not UTF-8 text, nor {encoding.upper()}") from exc


# A run of 20 digits may be an integer too large for 64 bits, which orjson would read as a
# float; the standard library keeps it exact. Found with C-speed bytes operations: every
# digit becomes "1" (no other byte is one), then one substring search.
_DIGITS_AS_ONES = bytes.maketrans(b"0123456789", b"1" * 10)
_LONG_DIGIT_RUN = b"1" * 20
_BOM = b"\xef\xbb\xbf"


def loads_bounded(raw: bytes | str, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """json.loads with a depth bound and short, stable error messages.

    Well-formed documents are parsed by orjson (several times faster, and it never recurses
    in Python); anything it refuses, and integers beyond 64 bits, go through the standard
    library, so every document reads exactly as `json.loads` reads it and every error gets
    the same message.
    """
    value = loads_fast(raw, max_depth)
    return _loads_stdlib(raw, max_depth) if value is NOT_FAST else value


class _NotFast:
    """What `loads_fast` gives for a document orjson did not read."""


NOT_FAST: Final = _NotFast()


def loads_fast(raw: bytes | str, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """The document as orjson reads it, or NOT_FAST when orjson refuses it.

    orjson reads only what every database stores as it is: finite doubles, integers of 64
    bits at most (longer digit runs are not even tried), valid UTF-8 without lone
    surrogates, no NaN or Infinity. So a document it reads needs no further care; one it
    refuses is read again by a careful reader (`loads_careful`, `loads_bounded`).
    """
    if isinstance(raw, bytes):
        data = raw.removeprefix(_BOM)
        if _LONG_DIGIT_RUN not in data.translate(_DIGITS_AS_ONES):
            try:
                value = orjson.loads(data)
            except orjson.JSONDecodeError:
                pass
            else:
                if nested_deeper(value, max_depth, data.count(b"[") + data.count(b"{")):
                    raise ArtifactError(f"JSON nested deeper than {max_depth} levels")
                return value
    return NOT_FAST


def loads_careful(
    raw: bytes | str,
    max_depth: int,
    *,
    parse_constant: Callable[[str], Any],
    parse_float: Callable[[str], Any],
    parse_int: Callable[[str], Any],
) -> Any:
    """The standard library's reading, with the depth bound and `json.loads`' hooks for
    the numbers (and the NaN / Infinity constants) a caller wants to look at."""
    return _loads_stdlib(
        raw,
        max_depth,
        parse_constant=parse_constant,
        parse_float=parse_float,
        parse_int=parse_int,
    )


def nested_deeper(value: Any, max_depth: int, containers: int | None = None) -> bool:
    """Is this parsed JSON value nested deeper than `max_depth`? (`containers`: how many
    arrays and objects the text opens, when known: fewer than the bound cannot exceed it.)"""
    if containers is not None and containers <= max_depth:
        return False
    # Level by level: each pass keeps the containers one level down.
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            return True
        inner: list[Any] = []
        for item in level:
            inner += [
                v for v in (item.values() if type(item) is dict else item) if type(v) in _CONTAINERS
            ]
        level = inner
    return False


_CONTAINERS = (dict, list)


def _loads_stdlib(
    raw: bytes | str,
    max_depth: int,
    *,
    parse_constant: Callable[[str], Any] | None = None,
    parse_float: Callable[[str], Any] | None = None,
    parse_int: Callable[[str], Any] | None = None,
) -> Any:
    text = decode_text(raw) if isinstance(raw, bytes) else raw
    if too_deep(text, max_depth):
        raise ArtifactError(f"JSON nested deeper than {max_depth} levels")
    try:
        return json.loads(
            text,
            parse_constant=parse_constant or _reject_constant,
            parse_float=parse_float,
            parse_int=parse_int,
        )
    except RecursionError as exc:
        raise ArtifactError("JSON nested too deeply") from exc
    except ValueError as exc:
        if isinstance(exc, ArtifactError):
            raise
        line = getattr(exc, "lineno", None)
        where = f" at line {line}" if line else ""
        raise ArtifactError(f"not valid JSON{where}") from exc


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; Python accepts them unless told otherwise.
    raise ArtifactError(f"not valid JSON: {name} is not a JSON value")


# --- output formats -----------------------------------------------------------------------
FORMAT_BY_SUFFIX = {
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
}


def declared_format(output_format: str, expected_output_path: str) -> str:
    """The task's declared format, or the one its output file's name implies."""
    if output_format:
        return output_format
    for suffix, fmt in FORMAT_BY_SUFFIX.items():
        if expected_output_path.lower().endswith(suffix):
            return fmt
    return "text"


def parse_output(raw: bytes, fmt: str) -> Any:
    """Parse agent output as its declared format; raises ArtifactError when it does not."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ArtifactError("output is not UTF-8 text") from exc
    if fmt == "json":
        return loads_bounded(text)
    if fmt == "jsonl":
        rows = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append(loads_bounded(line))
            except ArtifactError as exc:
                raise ArtifactError(f"line {number}: {exc}") from exc
        return rows
    if fmt == "csv":
        return _parse_csv(text)
    if fmt == "toml":
        try:
            return tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError) as exc:
            # tomllib recurses per nesting level: `a = [[[[…` is a bad file, not a crash.
            raise ArtifactError("not valid TOML") from exc
    if fmt == "yaml":
        try:
            # safe_load builds plain data only: no tags that construct Python objects.
            return yaml.safe_load(text)
        except (yaml.YAMLError, RecursionError) as exc:
            raise ArtifactError("not valid YAML") from exc
    return text


def _parse_csv(text: str) -> list[dict[str, str]]:
    """CSV with a header row, as records.

    A row with more fields than the header is malformed (pandas and most readers refuse it;
    csv.DictReader would silently file the extras under a `None` key). Short rows are padded,
    as every CSV reader does.
    """
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except csv.Error as exc:
        raise ArtifactError(f"not valid CSV: {str(exc)[:100]}") from exc
    if not rows:
        return []
    header, records = rows[0], []
    for number, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) > len(header):
            raise ArtifactError(
                f"not valid CSV: row {number} has {len(row)} fields, the header {len(header)}"
            )
        records.append(dict(zip(header, [*row, *[""] * (len(header) - len(row))], strict=True)))
    return records


def yaml_has_aliases(raw: bytes) -> bool:
    """Does this YAML text use an alias (`*name`)? Event parsing only, in linear time."""
    try:
        text = raw.decode("utf-8-sig")
        return any(
            isinstance(event, yaml.AliasEvent) for event in yaml.parse(text, yaml.SafeLoader)
        )
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return False


def schema_error(instance: Any, schema: dict[str, Any]) -> str | None:
    """The first JSON Schema violation, as a short message; None when the instance fits."""
    import jsonschema
    import referencing
    import referencing.exceptions
    from jsonschema.exceptions import SchemaError

    try:
        validator_cls = jsonschema.validators.validator_for(schema)
        validator_cls.check_schema(schema)
        # DESIGN §9, "nothing fetches a URL found in an artifact": jsonschema's *default*
        # registry still downloads remote $refs (deprecated, with a warning). An empty
        # registry of our own (jsonschema adds the bundled meta-schemas to it) has no
        # `retrieve`, so a remote or unknown $ref is Unresolvable instead of a request.
        validator = validator_cls(schema, registry=referencing.Registry())
        error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    except SchemaError:
        return "the task's output schema is not a valid JSON Schema"
    except referencing.exceptions.Unresolvable:
        return "the task's output schema has a $ref that cannot be resolved (none is fetched)"
    except Exception:  # a pattern it cannot compile, a $ref cycle (RecursionError), …
        return "the task's output schema could not be applied"
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "(root)"
    return f"output does not match the schema at {where}: {error.message[:200]}"
