"""The explorer's table rows as HTML built in Python, one `format_html` per row.

Fifty rows of nine cells through the template engine (a tag, a filter or an `{% if %}` per
cell) cost several times the query that fetched them; one formatted string per row keeps
the page within its budget (DESIGN §7). Names come from artifacts an agent may have written:
every value is escaped by Django's `escape` (once per distinct text on a page) and the row
assembled by `format_html`; the badges are the same `format_html` helpers the templates use,
so nothing here is marked safe by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from django.urls import reverse
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString

from review.templatetags.review_tags import gate_badge, human_badge, score
from rewards.models import Disagreement, HumanDisagreement

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


def _flag(css: str, label: str) -> SafeString:
    return format_html(
        '<span class="{}"><span class="glyph" aria-hidden="true">⚑</span> {}</span>', css, label
    )


def trial_rows(trials: Iterable[dict[str, Any]], query: str) -> SafeString:
    """The explorer's `<tr>`s; `query` (an urlencoded filter, maybe empty) rides on each link.

    Each trial is a row of `Trial.objects.values(*ROW_FIELDS)` (the explorer's fields, the
    job's and task's names by their paths).
    """
    # One reverse for the page: the trial URL around a placeholder id, filled in per row.
    before, after = reverse("review:trial-detail", args=[0]).rsplit("0", 1)
    after += f"?{query}" if query else ""
    # Jobs, tasks, agents and models repeat down a page: each text is escaped once.
    escaped: dict[str, SafeString] = {}

    def text(value: str) -> SafeString:
        found = escaped.get(value)
        if found is None:
            found = escaped[value] = escape(value)
        return found

    return format_html_join("", _ROW, (_cells(trial, before, after, text) for trial in trials))


def _cells(
    trial: dict[str, Any], before: str, after: str, text: Callable[[str], SafeString]
) -> tuple[object, ...]:
    name, job = text(trial["name"]), text(trial["job__name"])
    task_name, source = text(trial["task__name"]), text(trial["task__source"])
    agent, model = text(trial["agent_name"]), text(trial["model_name"])
    gate, human = trial["gate_disagreement"], trial["human_disagreement"]
    return (
        _DISAGREES if gate or human else _NOTHING,
        f"{before}{trial['id']}{after}",
        name,
        name,
        job,
        job,
        task_name,
        task_name,
        format_html('<span class="sub clip" title="{}">{}</span>', source, source)
        if source
        else _NOTHING,
        agent,
        agent or "—",
        model,
        model or "—",
        score(trial["reward"]),
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
