"""Two trajectories of a task aligned step by step (issue 24, item 3).

Each step is reduced to a signature: its source, and its tool calls (each tool's name and
its arguments as canonical JSON, whitespace collapsed), or, for a step without a tool call,
its message (whitespace collapsed, its first 200 characters). Observations are left out:
the same command run twice rarely prints the same thing (times, paths, ids), and the
question is what the agents did, not what the world answered.

The two signature sequences are aligned with the standard library's `difflib.SequenceMatcher`
(Ratcliff-Obershelp: the longest common block first, then recursively either side of it),
`autojunk` off so that a tool called often is not taken for noise. Agent runs of one task
share long identical stretches (the same setup, the same test command) around the points
where they part, which is what it finds best, and it needs no scoring scheme to tune. A
Needleman-Wunsch global alignment would give an optimal alignment under a chosen scoring,
but it fills an n-by-m table: four million cells for two 2,000-step runs, seconds of pure
Python and a table in memory per request, where `SequenceMatcher` takes milliseconds.

Its opcodes become rows: `same` (both steps, equal signatures), `changed` (a replaced
block's steps paired in order), and `only_a` / `only_b` (a step in one run only). The first
row that is not `same` is the first divergence. Each side's cost, tokens and elapsed time up
to each step (ATIF step metrics and timestamps) ride along, as does a short preview of each
step, so a page of rows shows without reading the trajectories again.

An alignment is computed once per pair of trial versions and kept in Django's cache under
`rewards.cache.alignment_key`, as a small head (row count, divergence, step counts) and its
pages of rows, so that showing a page never unpickles the whole alignment, and a page whose
rendering is kept unpickles none of its rows.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from django.core.cache import cache

from rewards import reports
from rewards.cache import ALIGNMENT_TTL, alignment_key, trial_version
from rewards.models import Trial, TrialDetail

PREVIEW_CHARS = 240
MESSAGE_SIGNATURE_CHARS = 200


@dataclass(frozen=True)
class StepSummary:
    number: int  # its position in the trajectory, from 1 (`reports.numbered_steps`)
    source: str
    tools: str  # the tools it called, by name
    preview: str
    tokens: int  # prompt and completion tokens of the run up to and with this step
    cost: float | None  # the run's cost up to this step (None: no step said)
    seconds: float | None  # since the run's first step (None: no timestamp)


@dataclass(frozen=True)
class Row:
    kind: str  # same / changed / only_a / only_b
    a: StepSummary | None
    b: StepSummary | None


@dataclass(frozen=True)
class Alignment:
    rows: list[Row]
    divergence: int | None  # the index of the first row that is not `same`
    a_steps: int
    b_steps: int


def _collapsed(text: str) -> str:
    return " ".join(text.split())


def signature(step: Mapping[str, Any]) -> str:
    source = reports.as_text(step.get("source"))
    calls = step.get("tool_calls")
    tools = []
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, Mapping):
            name = reports.as_text(call.get("function_name") or call.get("name"))
            arguments = call.get("arguments")
            try:
                text = json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
            except (TypeError, ValueError):
                text = reports.as_text(arguments)
            tools.append(f"{name}({_collapsed(text)})")
        else:
            tools.append(_collapsed(reports.as_text(call)))
    if tools:
        return f"{source}|" + "|".join(tools)
    message = _collapsed(reports.as_text(step.get("message")))
    return f"{source}|{message[:MESSAGE_SIGNATURE_CHARS]}"


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value)


def summaries(raw: Any) -> tuple[list[StepSummary], list[str]]:
    """Each step's summary (with the run's totals up to it) and signature, in order."""
    steps = reports.numbered_steps(raw)
    found: list[StepSummary] = []
    signatures: list[str] = []
    tokens = 0
    cost: float | None = None
    first: datetime | None = None
    for number, step in enumerate(steps, start=1):
        metrics = step.get("metrics")
        if isinstance(metrics, Mapping):
            tokens += int(_number(metrics.get("prompt_tokens")))
            tokens += int(_number(metrics.get("completion_tokens")))
            if "cost_usd" in metrics:
                cost = (cost or 0.0) + _number(metrics.get("cost_usd"))
        when = _time(step.get("timestamp"))
        seconds = None
        if when is not None:
            first = first or when
            try:
                seconds = (when - first).total_seconds()
            except TypeError:  # one naive, one aware
                seconds = None
        parts = reports.step_parts(step)
        calls = [p.name for p in parts if p.kind == "tool_call" and p.name]
        shown = next((p.text for p in parts if p.kind != "reasoning"), "")
        found.append(
            StepSummary(
                number=number,
                source=reports.as_text(step.get("source")),
                tools=", ".join(calls),
                preview=_collapsed(shown)[:PREVIEW_CHARS],
                tokens=tokens,
                cost=cost,
                seconds=seconds,
            )
        )
        signatures.append(signature(step))
    return found, signatures


def align(a_raw: Any, b_raw: Any) -> Alignment:
    a, a_signatures = summaries(a_raw)
    b, b_signatures = summaries(b_raw)
    matcher = difflib.SequenceMatcher(None, a_signatures, b_signatures, autojunk=False)
    rows: list[Row] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows.extend(Row("same", a[i1 + k], b[j1 + k]) for k in range(i2 - i1))
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        rows.extend(Row("changed", a[i1 + k], b[j1 + k]) for k in range(paired))
        rows.extend(Row("only_a", a[i], None) for i in range(i1 + paired, i2))
        rows.extend(Row("only_b", None, b[j]) for j in range(j1 + paired, j2))
    divergence = next((index for index, row in enumerate(rows) if row.kind != "same"), None)
    return Alignment(rows=rows, divergence=divergence, a_steps=len(a), b_steps=len(b))


def _version(trial: Trial) -> tuple[str, str]:
    return trial_version(trial)


@dataclass(frozen=True)
class Head:
    """What a page of an alignment needs besides its rows."""

    key: str  # the alignment's cache key: also what a rendered page is cached under
    rows: int
    divergence: int | None
    a_steps: int
    b_steps: int

    def pages(self, size: int) -> int:
        return max(1, -(-self.rows // size))


@dataclass
class AlignedPage:
    head: Head
    number: int  # from 1, within the alignment's pages
    load: Callable[[], list[Row]] = field(repr=False)

    @cached_property
    def rows(self) -> list[Row]:
        """The page's rows, read (or computed) when first asked for: a page whose rendering
        is kept (`{% cache %}` aligned-steps) reads none."""
        return self.load()


def alignment_for(a: Trial, b: Trial, page: int, size: int) -> AlignedPage:
    """One page of the two trials' trajectories aligned. The alignment is kept in the cache
    as its head and its pages of `size` rows, so a page reads its head in one round trip
    and unpickles its own rows only when they are shown; on a miss it is computed (one
    query for both trajectories) and kept whole. A trial stored again is another key."""
    key = alignment_key(a.pk, _version(a), b.pk, _version(b))
    head: Head | None = cache.get(f"{key}:head")
    if head is not None:
        number = min(max(1, page), head.pages(size))

        def load() -> list[Row]:
            rows: list[Row] | None = cache.get(f"{key}:{size}:{number}")
            if rows is None:  # the page left the cache before its head
                return _aligned(a, b, key, size)[1][number - 1]
            return rows

        return AlignedPage(head, number, load)
    head, pages = _aligned(a, b, key, size)
    number = min(max(1, page), head.pages(size))
    return AlignedPage(head, number, lambda: pages[number - 1])


def _aligned(a: Trial, b: Trial, key: str, size: int) -> tuple[Head, list[list[Row]]]:
    """The two trials aligned (one query for both trajectories), kept as head and pages."""
    trajectories = dict(
        TrialDetail.objects.filter(trial__in=[a.pk, b.pk]).values_list("trial_id", "trajectory")
    )
    aligned = align(trajectories.get(a.pk), trajectories.get(b.pk))
    head = Head(key, len(aligned.rows), aligned.divergence, aligned.a_steps, aligned.b_steps)
    pages = [aligned.rows[n * size : (n + 1) * size] for n in range(head.pages(size))]
    kept: dict[str, Any] = {f"{key}:head": head}
    kept.update({f"{key}:{size}:{n}": rows for n, rows in enumerate(pages, start=1)})
    cache.set_many(kept, ALIGNMENT_TTL)
    return head, pages
