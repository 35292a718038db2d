"""What an ingest run reports: ingested, unchanged, updated, invalid (with reasons) and
unreadable, then the trials stored with ingestion problems. `manage.py ingest`, the API's
`POST /api/ingest` and the upload page count alike: a trial stored with its reward rejected
counts as stored and as invalid, as the explorer's validity filter counts it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rewards.ingest.files import Problem
from rewards.ingest.outcomes import WriteOutcome
from rewards.ingest.prepared import PreparedTrial

STATUSES = ("ingested", "unchanged", "updated", "invalid", "unreadable")
LINE_LIMIT = 500
# Trials stored with ingestion problems named one per line; the rest are counted (the
# explorer's "Has ingestion problems" filter lists them all).
PROBLEM_LINES = 20
# Characters a terminal would act on (C0/C1 controls, DEL) or that reorder text (bidi
# controls): names and reasons come from agent-written files, so they are shown escaped.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def printable(text: str, limit: int = LINE_LIMIT) -> str:
    """Text safe to print to a terminal: controls escaped, length bounded."""
    out = []
    for char in text[: limit + 1]:
        if char in _BIDI or (not char.isprintable() and char != " "):
            out.append(char.encode("unicode_escape").decode("ascii"))
        else:
            out.append(char)
    clipped = "".join(out)
    return clipped[:limit] + "…" if len(text) > limit else clipped


def stored_as_invalid(outcome: WriteOutcome, prepared: PreparedTrial | None) -> str:
    """Why a trial just stored (ingested or updated) is not valid, '' when it is valid or
    was not stored by this run."""
    if outcome.status in ("invalid", "unchanged") or prepared is None or not prepared.rejected:
        return ""
    return f"stored as invalid: {prepared.rejected}"


@dataclass
class IngestReport:
    counts: Counter[str] = field(default_factory=Counter)
    invalid: list[tuple[str, str]] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    with_problems: list[tuple[str, str]] = field(default_factory=list)
    jobs: set[str] = field(default_factory=set)  # the jobs of the trials stored or unchanged

    def outcome(self, outcome: WriteOutcome, prepared: PreparedTrial | None = None) -> None:
        self.counts[outcome.status] += 1
        if outcome.status != "invalid":
            self.jobs.add(outcome.job)
        name = outcome.name
        if prepared is not None and prepared.where and not outcome.where:
            name = f"{name} ({prepared.where})"
        if outcome.status == "invalid":
            self.invalid.append((name, outcome.reason))
            return
        if outcome.status == "unchanged" or prepared is None:
            return
        if rejected := stored_as_invalid(outcome, prepared):
            # Stored, but not valid (a rejected reward is stored as 0, the reason in its
            # errors): counted invalid, as the explorer's validity filter counts it.
            self.counts["invalid"] += 1
            self.invalid.append((name, rejected))
        if prepared.problems:
            self.with_problems.append((name, prepared.first_problem))

    def problem(self, problem: Problem) -> None:
        self.counts[problem.kind] += 1
        target = self.invalid if problem.kind == "invalid" else self.unreadable
        target.append((problem.name, problem.reason))

    def changes(self) -> str:
        """What a pass of `--follow` changed, in one line ('' for nothing)."""
        counts = [f"{status} {self.counts[status]}" for status in STATUSES[:4]]
        if not (self.counts["ingested"] or self.counts["updated"] or self.counts["invalid"]):
            return ""
        names = [printable(name, 80) for name, _ in self.invalid[:3]]
        return ", ".join(counts) + (f" ({'; '.join(names)})" if names else "")

    def lines(self) -> list[str]:
        head = ", ".join(f"{status} {self.counts[status]}" for status in STATUSES)
        lines = [f"Summary: {head}"]
        for name, reason in self.invalid:
            lines.append(f"invalid: {printable(name)}: {printable(reason)}")
        for name, reason in self.unreadable:
            lines.append(f"unreadable: {printable(name)}: {printable(reason)}")
        for name, reason in self.with_problems[:PROBLEM_LINES]:
            lines.append(f"stored with ingestion problems: {printable(name)}: {printable(reason)}")
        hidden = len(self.with_problems) - PROBLEM_LINES
        if hidden > 0:
            lines.append(
                f"stored with ingestion problems: {hidden} more trials "
                "(the explorer's 'Has ingestion problems' filter lists them)"
            )
        return lines
