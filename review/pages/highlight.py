"""Highlight character ranges of a text part: step comments today, judge citations next.

`highlight` cuts a text at the ranges' ends into segments, each knowing which ranges cover
it; `templates/review/includes/highlighted_text.html` shows them, escaped, a covered segment
inside `<mark>`. The text is agent-written (DESIGN §9): nothing here builds markup.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Range:
    """A range of the text, `start` included, `end` excluded, and what it belongs to: `ref`
    is the anchor of its comment (or citation) on the page, `label` a short title."""

    start: int
    end: int
    ref: str
    label: str = ""


@dataclass(frozen=True)
class Segment:
    text: str
    refs: tuple[str, ...] = ()  # the ranges that cover it, in the order given
    labels: tuple[str, ...] = ()

    @property
    def marked(self) -> bool:
        return bool(self.refs)

    @property
    def first_ref(self) -> str:
        return self.refs[0] if self.refs else ""


def highlight(text: str, ranges: Iterable[Range]) -> list[Segment]:
    """`text` cut into segments at every range's ends; ranges are clamped to the text (a
    range past a shown text's cut marks what is left of it) and empty ones dropped, and
    overlapping ranges mark their common part once, naming them all."""
    size = len(text)
    kept = [
        Range(max(0, r.start), min(size, r.end), r.ref, r.label)
        for r in ranges
        if min(size, r.end) > max(0, r.start)
    ]
    if not kept:
        return [Segment(text)] if text else []
    cuts = sorted({0, size, *(r.start for r in kept), *(r.end for r in kept)})
    segments = []
    for begin, finish in itertools.pairwise(cuts):
        covering = [r for r in kept if r.start <= begin and finish <= r.end]
        segments.append(
            Segment(
                text[begin:finish],
                tuple(r.ref for r in covering),
                tuple(r.label for r in covering if r.label),
            )
        )
    return segments
