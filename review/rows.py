"""Table rows as HTML built in Python, one `format_html` per row: the explorer's trials, the
trial page's Scorers card and a trajectory's steps.

Fifty rows of nine cells through the template engine (a tag, a filter or an `{% if %}` per
cell) cost several times the query that fetched them, and so did a dozen scorer rows or a
trajectory's steps on the trial page; one formatted string per row keeps the pages within
their budgets (DESIGN §7).
Names come from artifacts an agent may have written: every value is escaped, by what
Django's `escape` does (`html.escape`, quotes included; once per distinct text on a page) or
by `format_html`; the badges are the same `format_html` helpers the templates use. Only a
whole row, every part of it escaped, is marked safe.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from review.templatetags.review_tags import gate_badge, human_badge, score
from rewards.models import Disagreement, HumanDisagreement

if TYPE_CHECKING:
    from review.pages.presenters import ScorerRow, Step, StepPart
    from review.views.explorer import Column

_ROW = (
    "<tr{}>"
    '<td class="cell-trial"><a class="clip" href="{}" title="{}">{}</a>'
    '<span class="sub clip" title="{}">{}</span></td>'
    '<td class="cell-task"><span class="clip" title="{}">{}</span>{}</td>'
    '<td class="cell-agent"><span class="clip" title="{}">{}</span>'
    '<span class="sub clip" title="{}">{}</span></td>'
    '<td class="num reward">{}{}</td>'
    "<td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
    '<td class="cell-disagreement">{}{}</td>'
    "</tr>\n"
)
_VALID = SafeString(
    '<span class="sub validity validity-ok"><span aria-hidden="true">✓</span> valid</span>'
)
_INVALID = SafeString(
    '<span class="sub validity validity-bad"><span aria-hidden="true">✗</span> invalid</span>'
)
_DISAGREES = SafeString(' class="disagrees"')
_NOTHING = SafeString("")
_GATE_LABELS = dict(Disagreement.choices)
_HUMAN_LABELS = dict(HumanDisagreement.choices)


# A badge depends only on its value, and a column holds a handful of values: built once.
_gate = lru_cache(maxsize=64)(gate_badge)
_human = lru_cache(maxsize=64)(human_badge)


@lru_cache(maxsize=64)
def _flag(css: str, label: str) -> SafeString:
    return format_html(
        '<span class="{}"><span class="glyph" aria-hidden="true">⚑</span> {}</span>', css, label
    )


def trial_rows(trials: Iterable[dict[str, Any]], query: str) -> SafeString:
    """The explorer's `<tr>`s; `query` (an urlencoded filter, maybe empty) rides on each link.

    Each trial is a row of `Trial.objects.values(*ROW_FIELDS)` (the explorer's fields, the
    job's and task's names by their paths).
    """
    # One reverse for the page: the trial URL around a placeholder id, filled in per row
    # (escaped once: the id between is an integer).
    before, after = reverse("review:trial-detail", args=[0]).rsplit("0", 1)
    after += f"?{query}" if query else ""
    before, after = _escape(before), _escape(after)
    # Jobs, tasks, agents and models repeat down a page: each text is escaped once.
    escaped: dict[str, str] = {}

    def text(value: str) -> str:
        found = escaped.get(value)
        if found is None:
            found = escaped[value] = _escape(value)
        return found

    # Every cell is escaped (or markup built by format_html) by `_cells`, so the row is
    # filled in by plain `str.format`: format_html would escape-check 21 values a row again.
    return SafeString("".join(_ROW.format(*_cells(trial, before, after, text)) for trial in trials))


def _escape(value: str) -> str:
    """Django's `escape` (the standard library's, quotes included) as plain text, without its
    lazy-text check: a page escapes a hundred and more names, and each is put into a row
    that is marked safe as a whole."""
    return html.escape(str(value))


@lru_cache(maxsize=1024)
def _reward(value: float | None) -> str:
    """A reward cell's number: rewards repeat down a page (0, 1 and a few partial ones)."""
    return _escape(score(value))


@lru_cache(maxsize=256)
def _source(source: str) -> SafeString:
    return format_html('<span class="sub clip" title="{}">{}</span>', source, source)


def _cells(
    trial: dict[str, Any], before: str, after: str, text: Callable[[str], str]
) -> tuple[str, ...]:
    """A row's cells, each escaped already: texts by `text`, the link from the escaped
    `before` and `after` around the integer id, badges and flags by format_html."""
    name, job = text(trial["name"]), text(trial["job__name"])
    task_name, source = text(trial["task__name"]), trial["task__source"]
    agent, model = text(trial["agent_name"]), text(trial["model_name"])
    gate, human = trial["gate_disagreement"], trial["human_disagreement"]
    return (
        _DISAGREES if gate or human else _NOTHING,
        f"{before}{int(trial['id'])}{after}",
        name,
        name,
        job,
        job,
        task_name,
        task_name,
        _source(source) if source else _NOTHING,
        agent,
        agent or "—",
        model,
        model or "—",
        _reward(trial["reward"]),
        _VALID if trial["is_valid"] else _INVALID,
        _gate(trial["scorer_verdict"], "no scorers"),
        _gate(trial["judge_verdict"], "no judge"),
        _gate(trial["run_badge"], "running"),
        _human(trial["human_judgment"]),
        _flag("disagreement", _GATE_LABELS.get(gate, gate)) if gate else _NOTHING,
        _flag("disagreement disagreement-human", _HUMAN_LABELS.get(human, human))
        if human
        else _NOTHING,
    )


# --- the explorer's column headers ---------------------------------------------------------
_SORT_LINK = (
    '<a class="sort" data-state="{}" href="{}" hx-get="{}" hx-target="#results"'
    ' hx-swap="outerHTML" hx-push-url="true">{}<span class="sort-mark" aria-hidden="true">'
    "</span></a>"
)
_LINK_SEPARATOR = SafeString(' <span aria-hidden="true">·</span> ')
_NUMERIC = SafeString(' class="num"')


def header_cells(columns: Iterable[Column]) -> SafeString:
    """The explorer's `<th>`s: each sortable column's links to the list sorted by it (the
    current sort marked by `aria-sort`), a plain label otherwise."""
    cells = []
    for column in columns:
        content = _LINK_SEPARATOR.join(
            format_html(_SORT_LINK, link.state, link.href, link.href, link.label)
            for link in column.links
        )
        cells.append(
            format_html(
                '<th scope="col"{}{}>{}</th>\n',
                _NUMERIC if column.numeric else _NOTHING,
                format_html(' aria-sort="{}"', column.aria_sort) if column.links else _NOTHING,
                SafeString(content) if column.links else column.label,
            )
        )
    return SafeString("".join(cells))


# --- the trial page's Scorers card ------------------------------------------------------------
# One <tbody> per scorer, so that htmx swaps a row with its detail (the `scorer-row` partial of
# review/trial.html, which shows this).
_SCORER_ROW = (
    '<tbody id="{anchor}" class="{classes}">\n'
    "<tr>"
    '<th scope="row"><a class="toggle" href="{toggle_url}" hx-get="{fragment_url}"'
    ' hx-target="#{anchor}" hx-swap="outerHTML" aria-expanded="{expanded}"'
    ' aria-controls="{anchor}-detail"><span class="chevron" aria-hidden="true"></span>{name}</a>'
    "{advisory}{required}</th>"
    "<td>{type}{unknown}</td>"
    "<td>{badge}</td>"
    '<td class="num">{score}</td>'
    "</tr>\n"
    '<tr class="scorer-detail" id="{anchor}-detail"{hidden}><td colspan="4">{detail}</td></tr>\n'
    "</tbody>\n"
)
_ADVISORY = SafeString(
    ' <span class="tag tag-advisory" title="Advisory: its failure does not fail the run">'
    "advisory</span>"
)
_REQUIRED = SafeString(' <span class="tag tag-hard">required</span>')
_UNKNOWN_TYPE = SafeString(
    ' <span class="badge badge-warn" title="not in the scorer catalog">unknown type</span>'
)
_NOT_APPLICABLE = SafeString(
    '<span class="muted" title="Not applicable: neither passes nor fails">—</span>'
)
_HIDDEN = SafeString(" hidden")
_NO_DETAIL = SafeString('<p class="muted">No detail recorded.</p>')


def scorer_row(row: ScorerRow) -> SafeString:
    """One row of the Scorers card: name (the expand toggle), type, verdict, score, and the
    detail, output tail and config when expanded. Hard failures are marked "required"."""
    scorer = row.scorer
    hard = scorer.is_hard_failure
    not_applicable = scorer.verdict == "NA"
    classes = "scorer"
    classes += " hard-failure" if hard else ""
    classes += " not-applicable" if not_applicable else ""
    classes += " expanded" if row.expanded else ""
    return format_html(
        _SCORER_ROW,
        anchor=row.anchor,
        classes=classes,
        toggle_url=row.toggle_url,
        fragment_url=row.fragment_url,
        expanded="true" if row.expanded else "false",
        name=scorer.name,
        advisory=_ADVISORY if scorer.is_advisory else _NOTHING,
        required=_REQUIRED if hard else _NOTHING,
        type=scorer.type_label,
        unknown=_NOTHING if scorer.is_known_type else _UNKNOWN_TYPE,
        badge=_gate(scorer.verdict),
        score=_NOT_APPLICABLE if not_applicable else score(scorer.score),
        hidden=_NOTHING if row.expanded else _HIDDEN,
        detail=_scorer_detail(row) if row.expanded else _NOTHING,
    )


def _scorer_detail(row: ScorerRow) -> SafeString:
    scorer, config = row.scorer, row.config_text
    parts = [
        format_html('<h3 class="eyebrow">{}</h3><pre class="{}">{}</pre>', title, css, text)
        for title, css, text in (
            ("Detail", "block", scorer.detail),
            ("Output tail", "block block-terminal", scorer.output_tail),
            ("Config", "block", config),
        )
        if text
    ]
    return SafeString("".join(parts)) if parts else _NO_DETAIL


# --- a trajectory's steps (review/includes/trajectory_steps.html shows them) ------------------
_STEP = (
    '<li class="step step-{source_class}">\n'
    '<div class="step-head"><span class="step-no">#{number}</span>'
    ' <span class="step-source">{source}</span>{model}{timestamp}</div>\n'
    "{parts}"
    "</li>\n"
)
_PART = (
    '<div class="part part-{kind}">'
    '<div class="part-label">{label}{name}</div>'
    '<pre class="block">{text}</pre>{cut}'
    "</div>\n"
)


def trajectory_step(step: Step) -> SafeString:
    """One ATIF step: its number, source, model and time, then its visible parts."""
    return format_html(
        _STEP,
        source_class=step.source_class,
        number=step.number,
        source=step.source or "step",
        model=format_html(' <span class="muted">{}</span>', step.model) if step.model else _NOTHING,
        timestamp=format_html(' <span class="muted step-time">{}</span>', step.timestamp)
        if step.timestamp
        else _NOTHING,
        parts=SafeString("".join(_step_part(part) for part in step.parts)),
    )


def _step_part(part: StepPart) -> SafeString:
    return format_html(
        _PART,
        kind=part.kind,
        label=part.label,
        name=format_html(' <code class="tool-name">{}</code>', part.name)
        if part.name
        else _NOTHING,
        text=part.text,
        cut=format_html('<p class="muted">{} more characters not shown.</p>', part.cut)
        if part.cut
        else _NOTHING,
    )
