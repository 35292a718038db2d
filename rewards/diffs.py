"""Reading a unified diff: the changed lines of each file.

The scorer engine (`rewards.scoring`) reads the diff git gives it for a workspace, and the
integrity detectors (`rewards.integrity`) read the workspace diff stored with a trial: one
reading for both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Skip markers in a changed line (seed 003's `no_new_skips`; the integrity detectors read
# added lines for them too).
SKIP_MARKERS = re.compile(
    r"pytest\.mark\.(?:skip|skipif|xfail)\b"
    r"|\bpytest\.(?:skip|xfail|importorskip)\s*\("
    r"|@(?:unittest\.)?skip(?:If|Unless)?\b"
    r"|\bskipTest\s*\("
    r"|@(?:unittest\.)?expectedFailure\b"
    r"|\b(?:it|test|describe|context)\.(?:skip|todo)\b"
    r"|\bx(?:it|test|describe)\s*\("
    r"|\bt\.Skip(?:Now|f)?\s*\("
    r"|#\[ignore\]"
    r"|@(?:Disabled|Ignore)\b"
)


@dataclass
class FileLines:
    """A file's changed lines: added ones with their new line number, removed ones."""

    added: list[tuple[int, str]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote_path(text: str) -> str:
    """A path as git prints it in a patch header: C-quoted when it holds unusual bytes."""
    if not (len(text) >= 2 and text.startswith('"') and text.endswith('"')):
        return text
    body, out, index = text[1:-1], bytearray(), 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            nxt = body[index + 1]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                index += 2
                continue
            if body[index + 1 : index + 4].isdigit():
                out.append(int(body[index + 1 : index + 4], 8) & 0xFF)
                index += 4
                continue
        out.extend(char.encode("utf-8", "surrogateescape"))
        index += 1
    return out.decode("utf-8", "replace")


def _header_path(line: str) -> str | None:
    """`--- a/x` / `+++ b/x` → `x`; `/dev/null` → None."""
    name = line[4:]
    # git ends a header whose name holds a space with a tab, so the name is unambiguous.
    name = name.removesuffix("\t")
    if name == "/dev/null":
        return None
    name = unquote_path(name)
    return name[2:] if name[:2] in {"a/", "b/"} else name


def parse_line_diff(text: str) -> dict[str, FileLines]:
    """Added and removed lines per file from a `--unified=0` patch (binary files have none)."""
    lines: dict[str, FileLines] = {}
    current: FileLines | None = None
    old_name: str | None = None
    new_line = 0
    in_hunk = False
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            current, old_name, in_hunk = None, None, False
        elif not in_hunk and line.startswith("--- "):
            old_name = _header_path(line)
        elif not in_hunk and line.startswith("+++ "):
            name = _header_path(line) or old_name
            if name is not None:
                current = lines.setdefault(name, FileLines())
        elif line.startswith("@@"):
            match = _HUNK.match(line)
            in_hunk = match is not None
            new_line = int(match.group(1)) if match else 0
        elif in_hunk and current is not None:
            if line.startswith("+"):
                current.added.append((new_line, line[1:]))
                new_line += 1
            elif line.startswith("-"):
                current.removed.append(line[1:])
    return lines
