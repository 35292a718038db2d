"""JSON made storable, for every reader alike: what no column can hold is kept as text and
reported, never a reason to lose the trial (DESIGN §4: a readable reward is always stored).

Two things in a well-formed JSON document cannot be stored as they are:
- text that cannot be encoded: a lone surrogate escape (`"x\\ud800y"`) is valid JSON, but
  neither UTF-8 nor PostgreSQL nor SQLite takes the character. It is kept escaped (the six
  characters `\\ud800`), so a reviewer still sees what was written;
- numbers outside a double's range, and NaN or Infinity (which are not JSON but which
  Python and pydantic read): jsonb refuses them, orjson would write them as `null` without
  a word. The value becomes `null` and its text is kept in the problem (`raw`).
Each spot is an `IngestProblem` naming its field, so the trial page lists it.

The fast path is untouched: orjson reads only documents that need none of this
(`formats.loads_fast`), so the careful reading, and the walk over the value, happen only
for a document orjson refused.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from rewards.formats import NOT_FAST, loads_careful, loads_fast
from rewards.schemas import IngestProblem

# What a problem keeps of a number's text, or of an escaped string.
RAW_LIMIT = 4096
# A JSON string escape that may be half of a surrogate pair: only then can a parsed string
# hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Bundle lines are parsed by pydantic, which reads NaN, Infinity and overflowing numbers
# without complaint. Looked for in the line with its digits read as "1", "E" as "e" and
# "+" dropped: a number beyond a double has 309 digits or more, or an exponent of three.
_NUMBER_SHAPE = bytes.maketrans(b"0123456789E", b"1" * 10 + b"e")
_LONG_NUMBER = b"1" * 309
_BIG_EXPONENT = b"1e111"
# What stands before a number in JSON text (a sign aside); a letter or a quote there means
# the digits are inside a string, such as a hex digest.
_BEFORE_NUMBER = frozenset(b":,[ \t\r\n")


class _Unstorable(str):
    """A number's (or a constant's) text, standing in for a value no column can hold."""


def _constant(name: str) -> _Unstorable:
    return _Unstorable(name)


def _float(text: str) -> float | _Unstorable:
    value = float(text)
    return value if math.isfinite(value) else _Unstorable(text)


def _int(text: str) -> int | _Unstorable:
    # Python reads integers of any length (up to its digit limit); one beyond a double's
    # range is what no reader of our JSON (a browser, a spreadsheet, `float()` in the
    # trial page) can take, so it is treated as an overflowing float is.
    if len(text) < 300:
        return int(text)
    try:
        value = int(text)
        float(value)
    except (ValueError, OverflowError):
        return _Unstorable(text)
    return value


def loads_storable(raw: bytes, max_depth: int, file: str) -> tuple[Any, list[IngestProblem]]:
    """A JSON file's value, with every unstorable spot mended; raises ArtifactError as
    `formats.loads_bounded` does for a document that cannot be read at all."""
    value = loads_fast(raw, max_depth)
    if value is not NOT_FAST:
        return value, []
    return mend(
        loads_marked(raw, max_depth),
        file,
        # A UTF-16 or UTF-32 document hides its escapes from a byte search: looked at whole.
        surrogates=_SURROGATE_ESCAPE_BYTES.search(raw) is not None or b"\x00" in raw[:4],
    )


def loads_line(text: str, max_depth: int, file: str) -> tuple[Any, list[IngestProblem]]:
    """A bundle line's value read carefully and mended (the line as text, already decoded)."""
    return mend(loads_marked(text, max_depth), file, surrogates=may_hold_surrogates(text))


def loads_marked(raw: bytes | str, max_depth: int) -> Any:
    """The document read carefully, each value no column can hold still standing as its
    text, for `mend` to turn into problems (one document holding several bundles is mended
    one bundle at a time); raises ArtifactError as `formats.loads_bounded` does."""
    return loads_careful(
        raw, max_depth, parse_constant=_constant, parse_float=_float, parse_int=_int
    )


def may_hold_surrogates(text: str) -> bool:
    """Might this JSON text hold a lone surrogate (an escape of one half of a pair)?"""
    return _SURROGATE_ESCAPE.search(text) is not None


def line_may_hold_non_finite(line: bytes) -> bool:
    """Might pydantic read a NaN, an Infinity or an overflowing number from this line?

    C-speed byte searches, no parse (a few microseconds for a line that pydantic reads in
    tens); a false alarm (the word NaN in an agent's message) only sends the line the
    careful way, which reads it right all the same.
    """
    if b"NaN" in line or b"Infinity" in line:
        return True
    shape = line.translate(_NUMBER_SHAPE, b"+")
    if _LONG_NUMBER in shape:
        return True
    start = shape.find(_BIG_EXPONENT)
    while start != -1:
        # Back over the mantissa and its sign: a number stands after a delimiter.
        at = start
        while at > 0 and shape[at - 1] in b"1.":
            at -= 1
        if at > 0 and shape[at - 1] == ord("-"):
            at -= 1
        if at == 0 or shape[at - 1] in _BEFORE_NUMBER:
            return True
        start = shape.find(_BIG_EXPONENT, start + 1)
    return False


def mend(value: Any, file: str, *, surrogates: bool = True) -> tuple[Any, list[IngestProblem]]:
    """`value` with its unstorable numbers as null and its lone surrogates escaped; one
    problem a spot. (`surrogates=False`: the text shows none, so strings are not looked at.)"""
    problems: list[IngestProblem] = []
    mended = _mend(value, (), file, problems, surrogates)
    return mended, problems


def escape_surrogates(text: str) -> str:
    """Lone surrogates written as their `\\udXXX` escapes; any other text as it is."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _mend(
    value: Any, path: tuple[int | str, ...], file: str, problems: list[IngestProblem], text: bool
) -> Any:
    if isinstance(value, _Unstorable):
        problems.append(
            IngestProblem(
                file=file,
                field=dotted(path),
                message=f"{_what(value)}: no column can hold it, kept as text only",
                raw=str(value)[:RAW_LIMIT],
            )
        )
        return None
    if isinstance(value, float) and not math.isfinite(value):
        problems.append(
            IngestProblem(
                file=file,
                field=dotted(path),
                message=f"{_what(str(value))}: no column can hold it, kept as text only",
                raw=repr(value),
            )
        )
        return None
    if isinstance(value, str):
        if text and _LONE_SURROGATE.search(value):
            escaped = escape_surrogates(value)
            problems.append(
                IngestProblem(
                    file=file,
                    field=dotted(path),
                    message="text with a lone surrogate, which cannot be encoded: kept escaped",
                    raw=escaped[:RAW_LIMIT],
                )
            )
            return escaped
        return value
    if isinstance(value, dict):
        mended: dict[str, Any] = {}
        for key, item in value.items():
            if text and _LONE_SURROGATE.search(key):
                escaped = escape_surrogates(key)
                problems.append(
                    IngestProblem(
                        file=file,
                        field=dotted((*path, escaped)),
                        message=(
                            "a key with a lone surrogate, which cannot be encoded: kept escaped"
                        ),
                        raw=escaped[:RAW_LIMIT],
                    )
                )
                key = escaped
            mended[key] = _mend(item, (*path, key), file, problems, text)
        return mended
    if isinstance(value, list):
        return [_mend(item, (*path, i), file, problems, text) for i, item in enumerate(value)]
    return value


def _what(text: str) -> str:
    if text.lstrip("-+") in ("NaN", "nan"):
        return "NaN is not a number"
    if text.lstrip("-+") in ("Infinity", "inf"):
        return "Infinity is not a number"
    return "a number outside a double's range"


def dotted(path: Iterable[int | str]) -> str:
    """A field path as a reviewer reads it: `error_tags[1].source`."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
