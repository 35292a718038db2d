"""A judge's citations, checked against the trial's trajectory before a verdict is stored.

The judge is shown the trajectory as numbered steps (`[step N]`, N counting every step of
the trial in order: `reports.numbered_steps`) and each fact check may cite steps with a
short quote (`schemas.Citation`). A citation is kept only as what it can be shown to be:

- The quote is looked for in the cited step's parts (reasoning, message, tool calls,
  observations: `reports.step_parts`, their whole text, not the judge's bounded copy).
- Matching collapses whitespace (every run of spaces, tabs and newlines is one space, and
  the quote's ends are trimmed: judges reflow what they quote) and is otherwise exact and
  case-sensitive: a quote with a changed word, letter case or an ellipsis is not the step's
  text, and the page must not highlight text the step does not hold.
- The first occurrence wins: the earliest part, then the earliest position in it.
- Found: the range is kept as the part's index and the character offsets of the quote in
  that part's text (`start` inclusive, `end` exclusive), so the page marks it.
- Not found (no such step, no trajectory stored, an empty quote, or a quote the step does
  not hold): the fact check is kept and the citation is stored with `found` false, shown as
  "citation not found".

What a verdict says about its own citations' ranges is never trusted: every citation is
checked again wherever a verdict is stored, which also makes the check deterministic (an
exported bundle ingested again stores the same ranges).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rewards import reports
from rewards.schemas import Citation, FactCheck, JudgeVerdict

NOT_FOUND = "citation not found"


def normalised(text: str) -> str:
    """The quote as it is looked for: whitespace runs collapsed, its ends trimmed."""
    return " ".join(text.split())


def _collapsed(text: str) -> tuple[str, list[int]]:
    """`text` with each whitespace run as one space, and where each of its characters
    starts in `text`."""
    chars: list[str] = []
    starts: list[int] = []
    in_space = False
    for index, char in enumerate(text):
        if char.isspace():
            if in_space:
                continue
            in_space = True
            char = " "
        else:
            in_space = False
        chars.append(char)
        starts.append(index)
    return "".join(chars), starts


def find(text: str, needle: str) -> tuple[int, int] | None:
    """The range of `text` holding `needle` (already `normalised`), whitespace collapsed."""
    if not needle or needle.split(" ", 1)[0] not in text:
        return None  # cheap: most parts do not hold the quote's first word
    collapsed, starts = _collapsed(text)
    at = collapsed.find(needle)
    if at < 0:
        return None
    # The needle ends on a non-space character, which stands for itself in `text`.
    return starts[at], starts[at + len(needle) - 1] + 1


def locate(citation: Citation, steps: Sequence[Mapping[str, Any]]) -> Citation:
    """The citation with Trialdesk's finding: its range in the cited step, or not found."""
    needle = normalised(citation.quote)
    if 1 <= citation.step <= len(steps):
        for index, part in enumerate(reports.step_parts(steps[citation.step - 1])):
            span = find(part.text, needle)
            if span is not None:
                return Citation(
                    step=citation.step,
                    quote=citation.quote,
                    found=True,
                    part=index,
                    start=span[0],
                    end=span[1],
                )
    return Citation(step=citation.step, quote=citation.quote, found=False)


def checked_fact_checks(facts: Sequence[FactCheck], trajectory: Any) -> list[FactCheck]:
    steps = reports.numbered_steps(trajectory)
    return [
        fact.model_copy(update={"citations": [locate(c, steps) for c in fact.citations]})
        if fact.citations
        else fact
        for fact in facts
    ]


def has_citations(verdict: JudgeVerdict) -> bool:
    return any(fact.citations for fact in verdict.fact_checks)


def checked(verdict: JudgeVerdict, trajectory: Any) -> JudgeVerdict:
    """The verdict with every citation checked against `trajectory` (the trial's ATIF
    document as stored); the same verdict when it cites nothing."""
    if not has_citations(verdict):
        return verdict
    return verdict.model_copy(
        update={"fact_checks": checked_fact_checks(verdict.fact_checks, trajectory)}
    )
