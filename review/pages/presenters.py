"""Read stored artifacts back into small typed shapes the templates can show.

Everything here reads data that an agent under evaluation may have written (DESIGN §9): it
is parsed defensively (any shape may arrive), never trusted as markup (templates escape it)
and never fetched. Nothing here decides a scoring rule; those live in `rewards.rules`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from review.models import StepComment
from review.pages import highlight
from rewards import reports, rules
from rewards.models import ErrorTag, ScorerResult, TrialDetail
from rewards.reports import as_text
from rewards.rubric import RubricError, normalise
from rewards.schemas import DetailsDimension

MAX_PART_CHARS = 50_000

# Seed 003, "When the gates disagree": what each named disagreement indicates.
DISAGREEMENT_EXPLANATIONS = {
    rules.JUDGE_PASS_SCORERS_FAIL: (
        "Semantically plausible output that violated a hard mechanical constraint."
    ),
    rules.SCORERS_PASS_JUDGE_FAIL: (
        "Mechanical checks passed but semantic completion was not convincing."
    ),
    rules.ADVISORY_FAIL: ("A heuristic warning that does not fail the run but should be reviewed."),
    rules.HUMAN_PASS_AUTOMATED_FAIL: (
        "Reviewers judged it a pass; the reward is below the task's pass threshold."
    ),
    rules.HUMAN_FAIL_AUTOMATED_PASS: (
        "Reviewers judged it a fail; the reward reaches the task's pass threshold."
    ),
}


def clip(text: str, limit: int = MAX_PART_CHARS) -> tuple[str, int]:
    """The text cut at `limit` characters, and how many characters were cut."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


# --- scorers ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScorerRow:
    scorer: ScorerResult
    expanded: bool
    # The page's `open` parameter with this row flipped: the no-JavaScript link.
    toggle_open: str
    # The row's two links, built by the view (review.views.trial._scorer_links), which
    # reverses each URL once for the card: the page with this row flipped, for a click
    # without JavaScript, and this row in its other state, for htmx.
    toggle_url: str = ""
    fragment_url: str = ""

    @property
    def anchor(self) -> str:
        """The row's element id (and the toggle link's fragment)."""
        return f"scorer-{self.scorer.position}"

    @property
    def config_text(self) -> str:
        return as_text(self.scorer.config) if self.scorer.config else ""


def scorer_rows(
    scorers: Sequence[ScorerResult], open_positions: set[int] | None
) -> list[ScorerRow]:
    """Rows of the Scorers card; hard failures start expanded (seed 003)."""
    if open_positions is None:
        open_positions = {s.position for s in scorers if s.is_hard_failure}
    rows = []
    for scorer in scorers:
        expanded = scorer.position in open_positions
        flipped = open_positions ^ {scorer.position}
        rows.append(
            ScorerRow(
                scorer=scorer,
                expanded=expanded,
                toggle_open=",".join(str(p) for p in sorted(flipped)),
            )
        )
    return rows


# --- judge --------------------------------------------------------------------------------
@dataclass(frozen=True)
class CitationLink:
    """A fact check's citation as the matrix shows it: a link to the step that holds the
    quote (the page marks it), or the quote marked "citation not found"."""

    step: str
    quote: str
    url: str = ""  # empty: the quote was not found in its step


@dataclass(frozen=True)
class FactCheckRow:
    claim: str
    status: str
    evidence: str
    tone: str  # ok / bad / neutral: a CSS hint; the status text is always shown
    citations: list[CitationLink] = field(default_factory=list)


_OK_STATUSES = {"supported", "verified", "true", "pass", "passed", "correct", "confirmed"}
_BAD_STATUSES = {"contradicted", "refuted", "false", "fail", "failed", "incorrect", "unsupported"}


def _found_citations(item: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    citations = item.get("citations")
    return [c for c in citations if isinstance(c, Mapping)] if isinstance(citations, list) else []


def _citation_links(
    item: Mapping[str, Any], page_url: str, verdict_id: int | None, index: int
) -> list[CitationLink]:
    """The check's citations; a found one links to the page marking the check's quotes
    (`?cite=<verdict>.<check>`) at its step's anchor."""
    links = []
    for citation in _found_citations(item):
        step = citation.get("step")
        found = citation.get("found") is True and isinstance(step, int) and verdict_id is not None
        links.append(
            CitationLink(
                step=as_text(step),
                quote=as_text(citation.get("quote")),
                url=f"{page_url}?cite={verdict_id}.{index}#step-{step}" if found else "",
            )
        )
    return links


def fact_check_rows(
    raw: Any, page_url: str = "", verdict_id: int | None = None
) -> list[FactCheckRow]:
    """The fact-check matrix of the verdict `verdict_id` (whose `fact_checks` is `raw`)."""
    rows = []
    for index, item in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(item, Mapping):
            rows.append(FactCheckRow(as_text(item), "", "", "neutral"))
            continue
        status = as_text(item.get("status"))
        lowered = status.strip().lower()
        tone = "ok" if lowered in _OK_STATUSES else "bad" if lowered in _BAD_STATUSES else "neutral"
        rows.append(
            FactCheckRow(
                as_text(item.get("claim")),
                status,
                as_text(item.get("evidence")),
                tone,
                _citation_links(item, page_url, verdict_id, index),
            )
        )
    return rows


# Where a cited fact check's quotes are, by (step number, part index): character ranges.
Marks = dict[tuple[int, int], list[tuple[int, int]]]
# The highlight a followed citation's quote carries (review.pages.highlight.Range.ref).
CITED_REF = "cited-quote"


def citation_marks(fact_checks: Any, index: int) -> Marks:
    """The ranges to mark for fact check `index` of a verdict's stored `fact_checks`: its
    found citations (checked when the verdict was stored, `rewards.citations`)."""
    checks = fact_checks if isinstance(fact_checks, list) else []
    item = checks[index] if 0 <= index < len(checks) else None
    marks: Marks = {}
    for citation in _found_citations(item) if isinstance(item, Mapping) else []:
        step, part = citation.get("step"), citation.get("part")
        start, end = citation.get("start"), citation.get("end")
        values = (step, part, start, end)
        if citation.get("found") is True and all(
            isinstance(v, int) and not isinstance(v, bool) for v in values
        ):
            marks.setdefault((step, part), []).append((start, end))  # type: ignore[arg-type]
    return marks


# --- reward breakdown ---------------------------------------------------------------------
@dataclass(frozen=True)
class BreakdownRow:
    """One row of the breakdown tree, flattened for a table (`depth` indents it).

    `kind`: "dimension" (seed 000's `{score, max_score, evidence}`), "group" (an object or
    list whose rows follow, one level deeper: RewardKit's nested details), "record" (an
    object of plain values, shown as `key: value` pairs), "value" (anything else, as text).
    """

    name: str
    depth: int
    kind: str
    score: float | None = None
    max_score: float | None = None
    normalised: float | None = None
    evidence: str = ""
    fields: tuple[tuple[str, str], ...] = ()
    text: str = ""


BREAKDOWN_DEPTH = 6
BREAKDOWN_ROWS = 400
_PLAIN = (str, int, float, bool, type(None))


def _item_name(index: int, item: Any) -> str:
    """A list item's name: its own `name`, `id` or `title` if it has one, else its place."""
    if isinstance(item, Mapping):
        for key in ("name", "id", "title"):
            value = item.get(key)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
                return str(value)
    return f"[{index}]"


def _dimension(name: str, depth: int, value: Mapping[str, Any]) -> BreakdownRow | None:
    try:
        dimension = DetailsDimension.model_validate(value)
    except ValidationError:
        return None
    try:
        normalised: float | None = normalise(dimension)
    except RubricError:
        normalised = None
    extra = tuple(
        (str(k), as_text(v))
        for k, v in value.items()
        if k not in {"score", "max_score", "evidence"} and isinstance(v, _PLAIN)
    )
    return BreakdownRow(
        name,
        depth,
        "dimension",
        score=dimension.score,
        max_score=dimension.max_score,
        normalised=normalised,
        evidence=dimension.evidence or "",
        fields=extra,
    )


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _criterion(name: str, depth: int, value: Mapping[str, Any]) -> BreakdownRow | None:
    """A RewardKit criterion of Harbor's reward-details.json, `{name, value, weight?,
    error?, …}`: its value is a score out of 1. None for anything else."""
    score = _number(value.get("value"))
    if score is None or "score" in value or not all(isinstance(v, _PLAIN) for v in value.values()):
        return None
    extra = tuple(
        (str(k), as_text(v))
        for k, v in value.items()
        if k not in {"name", "id", "title", "value", "error"}
    )
    error = value.get("error")
    return BreakdownRow(
        name,
        depth,
        "dimension",
        score=score,
        max_score=1.0,
        normalised=score,
        evidence=error if isinstance(error, str) else "",
        fields=extra,
    )


def breakdown_rows(breakdown: Any) -> list[BreakdownRow]:
    """The breakdown as stored, as a tree: details.json's dimensions, RewardKit's groups.

    Any shape is shown, nothing is dropped: deeper than BREAKDOWN_DEPTH a part is shown as
    its JSON text, and past BREAKDOWN_ROWS rows the rest is counted.
    """
    rows: list[BreakdownRow] = []
    hidden = 0

    def walk(name: str, value: Any, depth: int) -> None:
        nonlocal hidden
        if len(rows) >= BREAKDOWN_ROWS:
            hidden += 1
            return
        if isinstance(value, Mapping):
            row = _dimension(name, depth, value) or _criterion(name, depth, value)
            if row is not None:
                rows.append(row)
                return
            score = _number(value.get("score"))
            criteria = value.get("criteria")
            if score is not None and isinstance(criteria, list) and depth < BREAKDOWN_DEPTH:
                # A RewardKit group: its score out of 1, its criteria beneath it.
                rows.append(
                    BreakdownRow(
                        name,
                        depth,
                        "dimension",
                        score,
                        1.0,
                        score,
                        fields=tuple(
                            (str(k), as_text(v))
                            for k, v in value.items()
                            if k not in {"score", "criteria"} and isinstance(v, _PLAIN)
                        ),
                    )
                )
                for index, item in enumerate(criteria):
                    walk(_item_name(index, item), item, depth + 1)
                return
            if all(isinstance(v, _PLAIN) for v in value.values()):
                fields = tuple((str(k), as_text(v)) for k, v in value.items())
                rows.append(BreakdownRow(name, depth, "record", fields=fields))
                return
        if isinstance(value, Mapping | list) and depth < BREAKDOWN_DEPTH:
            rows.append(BreakdownRow(name, depth, "group"))
            items = value.items() if isinstance(value, Mapping) else enumerate(value)
            for key, item in items:
                child = _item_name(key, item) if isinstance(key, int) else str(key)
                walk(child, item, depth + 1)
            return
        rows.append(BreakdownRow(name, depth, "value", text=as_text(value)))

    if isinstance(breakdown, Mapping):
        for name, value in breakdown.items():
            walk(str(name), value, 0)
    elif breakdown is not None:
        walk("(details)", breakdown, 0)
    if hidden:
        rows.append(BreakdownRow(f"… {hidden} more parts", 0, "value", text="see the raw file"))
    return rows


@dataclass(frozen=True)
class IngestProblemRow:
    file: str
    field: str
    message: str
    raw: str


def ingest_problems(detail: TrialDetail | None) -> list[IngestProblemRow]:
    """The trial's ingestion problems as stored (any shape tolerated: a bundle sent them)."""
    stored = detail.ingest_problems if detail is not None else None
    rows = []
    for item in stored if isinstance(stored, list) else []:
        if isinstance(item, Mapping):
            rows.append(
                IngestProblemRow(
                    as_text(item.get("file")),
                    as_text(item.get("field")),
                    as_text(item.get("message")),
                    as_text(item.get("raw")),
                )
            )
    return rows


def metric_rows(metrics: Any) -> list[tuple[str, str]]:
    if not isinstance(metrics, Mapping):
        return []
    return [(str(k), as_text(v)) for k, v in metrics.items()]


# --- header -------------------------------------------------------------------------------
def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def seconds_between(start: Any, end: Any) -> float | None:
    a = start if isinstance(start, datetime) else _parse_time(start)
    b = end if isinstance(end, datetime) else _parse_time(end)
    if a is None or b is None or (a.tzinfo is None) != (b.tzinfo is None):
        return None
    return (b - a).total_seconds()


def phase_timings(timings: Any) -> list[tuple[str, float]]:
    """Harbor's timing blocks (`{phase: {started_at, finished_at}}`) as (phase, seconds)."""
    if not isinstance(timings, Mapping):
        return []
    phases = []
    for name, block in timings.items():
        if isinstance(block, Mapping):
            seconds = seconds_between(block.get("started_at"), block.get("finished_at"))
            if seconds is not None:
                phases.append((str(name).replace("_", " "), seconds))
    return phases


def exception_time(timings: Any) -> datetime | None:
    """When the trial's exception occurred, as Harbor recorded it (kept in the timings)."""
    if not isinstance(timings, Mapping):
        return None
    return _parse_time(timings.get("exception_occurred_at"))


def tags_by_source(tags: Iterable[ErrorTag]) -> list[tuple[str, list[ErrorTag]]]:
    groups: dict[str, list[ErrorTag]] = {}
    for tag in tags:
        groups.setdefault(tag.source, []).append(tag)
    order: list[str] = [s for s in ("mechanical", "judge", "human") if s in groups]
    order += sorted(str(s) for s in set(groups) - set(order))
    return [(source, groups[source]) for source in order]


# --- trajectory (ATIF) --------------------------------------------------------------------
@dataclass(frozen=True)
class StepPart:
    kind: str  # message / reasoning / tool_call / observation
    label: str
    text: str
    cut: int = 0
    name: str = ""  # the tool's name, as the agent wrote it
    ordinal: int = 0  # which part of its kind in the step (a step makes several tool calls)
    # A followed citation's quotes in this part (`citation_marks`), highlighted with any
    # comments' ranges.
    marks: tuple[highlight.Range, ...] = ()
    # The shown text cut at highlighted ranges; empty: nothing highlighted.
    segments: tuple[highlight.Segment, ...] = ()


@dataclass(frozen=True)
class Step:
    number: str
    source: str
    timestamp: str
    model: str
    parts: list[StepPart]
    # Its 1-based position in the trajectory: the `step-N` anchor, what comments name and the
    # number the judge cites it by (`rewards.reports.numbered_steps`).
    index: int = 0
    cited: bool = False  # a part holds a followed citation's quote
    comments: tuple[StepComment, ...] = ()  # shown beside it, oldest first (`with_comments`)

    @property
    def source_class(self) -> str:
        """A CSS class from a fixed set; the source itself is agent-written text."""
        return self.source if self.source in {"user", "agent", "system"} else "other"


@dataclass(frozen=True)
class Trajectory:
    steps: list[Step]
    counts: dict[str, int] = field(default_factory=dict)
    total_steps: int = 0
    schema: str = ""
    unreadable: str = ""  # the raw text when the trajectory has no steps we can read


def _step_parts(step: Mapping[str, Any]) -> list[StepPart]:
    parts = []
    seen: dict[str, int] = {}
    for part in reports.step_parts(step):
        shown, cut = clip(part.text)
        ordinal = seen.get(part.kind, 0)
        seen[part.kind] = ordinal + 1
        parts.append(StepPart(part.kind, part.label, shown, cut, part.name, ordinal))
    return parts


@dataclass(frozen=True)
class Presented:
    """Every step of a trajectory with all its parts, nothing filtered or marked yet: what
    the trial page keeps (`review.pages.steps`) and `shown` narrows to a filter."""

    steps: list[Step]
    counts: dict[str, int] = field(default_factory=dict)
    total_steps: int = 0
    schema: str = ""
    unreadable: str = ""


def presented(raw: Any) -> Presented:
    """ATIF steps (user, agent, system) broken into parts."""
    if raw is None:
        return Presented(steps=[])
    steps_raw = reports.steps(raw)
    if steps_raw is None:
        shown, _ = clip(as_text(raw))
        return Presented(steps=[], unreadable=shown)
    counts = dict.fromkeys(reports.STEP_PART_KINDS, 0)
    steps = []
    for index, item in enumerate(steps_raw, start=1):
        parts = _step_parts(item)
        for part in parts:
            counts[part.kind] = counts.get(part.kind, 0) + 1
        steps.append(
            Step(
                number=as_text(item.get("step_id", index)),
                source=as_text(item.get("source", "")),
                timestamp=as_text(item.get("timestamp", "")),
                model=as_text(item.get("model_name", "")),
                parts=parts,
                index=index,
            )
        )
    schema = as_text(raw.get("schema_version", "")) if isinstance(raw, Mapping) else ""
    return Presented(steps=steps, counts=counts, total_steps=len(steps_raw), schema=schema)


def shown(steps: Iterable[Step], kinds: Sequence[str], marks: Marks | None = None) -> list[Step]:
    """Presented steps keeping only the parts of `kinds` (a step with none left is left
    out), the ranges in `marks` (a cited fact check's quotes, by step and part position)
    marked."""
    wanted = set(kinds)
    found = []
    for step in steps:
        parts = step.parts
        if marks:
            parts = [
                _marked(part, marks.get((step.index, position), []))
                for position, part in enumerate(parts)
            ]
        visible = [p for p in parts if p.kind in wanted]
        if visible:
            found.append(replace(step, parts=visible, cited=any(p.marks for p in visible)))
    return found


def _marked(part: StepPart, ranges: Sequence[tuple[int, int]]) -> StepPart:
    if not ranges:
        return part
    marks = tuple(
        highlight.Range(start, end, CITED_REF, "cited by the judge") for start, end in ranges
    )
    return replace(part, marks=marks, segments=tuple(highlight.highlight(part.text, marks)))


def trajectory(raw: Any, kinds: Sequence[str], marks: Marks | None = None) -> Trajectory:
    """ATIF steps (user, agent, system) broken into parts, keeping only `kinds`; the
    ranges in `marks` (a cited fact check's quotes) are marked."""
    whole = presented(raw)
    return Trajectory(
        steps=shown(whole.steps, kinds, marks),
        counts=whole.counts,
        total_steps=whole.total_steps,
        schema=whole.schema,
        unreadable=whole.unreadable,
    )


def with_comments(trajectory: Trajectory, comments: Sequence[StepComment]) -> Trajectory:
    """The trajectory with each comment beside its step and its range highlighted in its part.

    A superseded comment (one a newer comment corrects) is listed in the annotations panel
    only. Only the commented steps are rebuilt: a long trajectory with a few comments costs
    a few steps' work.
    """
    current = current_comments(comments)
    if not current:
        return trajectory
    by_step: dict[int, list[StepComment]] = {}
    for comment in current:
        by_step.setdefault(comment.step, []).append(comment)
    steps = [
        _commented_step(step, by_step[step.index]) if step.index in by_step else step
        for step in trajectory.steps
    ]
    return replace(trajectory, steps=steps)


def current_comments(comments: Sequence[StepComment]) -> list[StepComment]:
    """The comments no newer comment supersedes, in their order."""
    superseded = {c.supersedes_id for c in comments if c.supersedes_id is not None}
    return [c for c in comments if c.pk not in superseded]


def _commented_step(step: Step, comments: list[StepComment]) -> Step:
    parts = []
    for part in step.parts:
        ranges = [
            highlight.Range(c.start, c.end, c.anchor, f"comment by {c.author.get_username()}")
            for c in comments
            if c.part == part.kind
            and c.part_index == part.ordinal
            and c.start is not None
            and c.end is not None
        ]
        if ranges:
            both = [*part.marks, *ranges]
            part = replace(part, segments=tuple(highlight.highlight(part.text, both)))
        parts.append(part)
    return replace(step, parts=parts, comments=tuple(comments))


# --- workspace diff -----------------------------------------------------------------------
@dataclass(frozen=True)
class DiffLine:
    kind: str  # file / meta / hunk / add / del / ctx / note
    text: str


@dataclass(frozen=True)
class DiffFile:
    name: str
    added: int
    removed: int


@dataclass(frozen=True)
class Diff:
    lines: list[DiffLine]
    files: list[DiffFile]
    cut: int = 0


_META_PREFIXES = (
    "index ",
    "--- ",
    "+++ ",
    "new file mode",
    "deleted file mode",
    "old mode",
    "new mode",
    "similarity index",
    "dissimilarity index",
    "rename from",
    "rename to",
    "copy from",
    "copy to",
    "Binary files",
)


def diff(text: str, limit: int = 400_000) -> Diff:
    """Classify the lines of a unified diff; the template colours them by class.

    A small state machine: header lines (`--- a/x`) only count as headers between a
    `diff --git` line and the file's first hunk, so a removed line that itself starts with
    `--` stays a removal.
    """
    shown, cut = clip(text, limit)
    lines: list[DiffLine] = []
    files: list[list[Any]] = []
    in_header = False
    for line in shown.splitlines():
        if line.startswith("diff --git ") or line.startswith("diff -"):
            in_header = True
            name = line.split(" b/", 1)[-1] if " b/" in line else line[5:]
            files.append([name, 0, 0])
            lines.append(DiffLine("file", line))
        elif line.startswith("@@"):
            in_header = False
            lines.append(DiffLine("hunk", line))
        elif (in_header or not files) and line.startswith(_META_PREFIXES):
            if line.startswith("+++ ") and not files:
                files.append([line[4:].removeprefix("b/"), 0, 0])
            lines.append(DiffLine("meta", line))
        elif line.startswith("+"):
            if files:
                files[-1][1] += 1
            lines.append(DiffLine("add", line))
        elif line.startswith("-"):
            if files:
                files[-1][2] += 1
            lines.append(DiffLine("del", line))
        elif line.startswith("\\"):
            lines.append(DiffLine("note", line))
        else:
            lines.append(DiffLine("ctx", line))
    return Diff(lines=lines, files=[DiffFile(*f) for f in files], cut=cut)


def raw_artifact_files(raw: Any) -> list[tuple[str, str]]:
    if not isinstance(raw, Mapping):
        return []
    return [(str(name), clip(as_text(content))[0]) for name, content in sorted(raw.items())]
