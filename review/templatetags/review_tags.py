"""Badges and small formatting for the review templates.

Badges read without colour: a glyph and the word, the colour only repeats them. A badge is
one small `format_html` (every argument escaped); larger markup lives in the templates.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from review import roles
from review.http import path_of
from review.pages import text
from rewards import rules
from rewards.models import Disagreement, HumanDisagreement

register = template.Library()

# value -> (css class, glyph, word)
_GATE = {
    "PASS": ("pass", "✓", "PASS"),
    "FAIL": ("fail", "✗", "FAIL"),
    "NA": ("na", "○", "N/A"),
    "N/A": ("na", "○", "N/A"),
    "UNPARSEABLE": ("unparseable", "?", "UNPARSEABLE"),
    "": ("none", "·", "not run"),
}
_HUMAN = {
    "pass": ("pass", "✓", "pass"),
    "fail": ("fail", "✗", "fail"),
    "defer": ("defer", "…", "defer"),
    "mixed": ("mixed", "±", "mixed"),
    "": ("none", "·", "unreviewed"),
}


def _badge(css: str, glyph: str, word: str, title: str = "") -> SafeString:
    if title:
        return format_html(
            '<span class="badge badge-{}" title="{}"><span class="glyph" aria-hidden="true">'
            "{}</span> {}</span>",
            css,
            title,
            glyph,
            word,
        )
    return format_html(
        '<span class="badge badge-{}"><span class="glyph" aria-hidden="true">{}</span> {}</span>',
        css,
        glyph,
        word,
    )


@register.simple_tag
def gate_badge(value: Any, not_run: str = "") -> SafeString:
    """PASS / FAIL / N/A / UNPARSEABLE; `not_run` names a gate that did not run."""
    css, glyph, word = _GATE.get(str(value or ""), ("none", "·", str(value)))
    if not value and not_run:
        word = not_run
    return _badge(css, glyph, word)


# The run badge says whether the run ended cleanly, not whether the task was solved: never
# green, so a completed run beside reward 0 does not read as "solved".
_RUN = {
    rules.RUN_COMPLETED: ("run-done", "■"),
    rules.RUN_ERRORED: ("fail", "✗"),
    rules.RUN_TIMED_OUT: ("warn", "!"),
    rules.RUN_CANCELLED: ("na", "○"),
    rules.RUN_RUNNING: ("none", "·"),
}


@register.simple_tag
def run_badge(value: Any, exception_type: Any = "") -> SafeString:
    """Completed / errored / timed out / cancelled / running, with the exception as title."""
    outcome = rules.run_outcome(str(value or ""), str(exception_type or ""))
    css, glyph = _RUN[outcome]
    title = str(exception_type or "")
    if not title and outcome == rules.RUN_ERRORED:
        title = "the verifier did not finish"
    return _badge(css, glyph, outcome, title)


@register.simple_tag
def human_badge(value: Any) -> SafeString:
    css, glyph, word = _HUMAN.get(str(value or ""), ("none", "·", str(value)))
    return _badge(css, glyph, word)


@register.simple_tag
def validity_badge(is_valid: bool) -> SafeString:
    if is_valid:
        return _badge("pass", "✓", "valid")
    return _badge("fail", "✗", "invalid")


@register.simple_tag
def check_chip(ok: bool, label: str) -> SafeString:
    css, glyph = ("pass", "✓") if ok else ("fail", "✗")
    return format_html(
        '<span class="chip chip-{}"><span class="glyph" aria-hidden="true">{}</span> {}'
        '<span class="visually-hidden">: {}</span></span>',
        css,
        glyph,
        label,
        "yes" if ok else "no",
    )


# The named disagreements' labels, gate and human alike (their values differ).
_DISAGREEMENT_LABELS = {**dict(Disagreement.choices), **dict(HumanDisagreement.choices)}


@register.filter
def disagreement_label(value: Any) -> str:
    """A named disagreement as a person reads it (for rows read by `.values()`, which have
    no `get_…_display`)."""
    return str(_DISAGREEMENT_LABELS.get(value, value))


@register.filter
def score(value: Any, digits: int = 2) -> str:
    """A 0 to 1 score with fixed decimals; an em dash when there is none."""
    if value is None or value == "":
        return "—"
    try:
        return f"{float(value):.{int(digits)}f}"
    except (TypeError, ValueError):
        return str(value)


@register.filter
def percent(value: Any) -> str:
    if value is None:
        return "—"
    return f"{float(value) * 100:.0f}%"


@register.filter
def duration(seconds: Any) -> str:
    if seconds is None:
        return "—"
    total = float(seconds)
    if total < 60:
        return f"{total:.1f} s"
    minutes, secs = divmod(round(total), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


@register.filter
def tokens(value: Any) -> str:
    if value is None:
        return "—"
    return f"{int(value):,}"


@register.simple_tag
def role_of(user: AbstractBaseUser | AnonymousUser) -> str:
    return roles.role_label(user)


@register.simple_tag
def permissions_of(user: AbstractBaseUser | AnonymousUser) -> dict[str, bool]:
    """What the navigation offers, by the same rules the views check (`review.roles`)."""
    return {
        "annotate": roles.can_annotate(user),
        "adjudicate": roles.can_adjudicate(user),
        "calibration": roles.can_see_calibration(user),
        "manage": roles.can_ingest(user),
    }


@register.filter
def rating_word(value: Any) -> str:
    return "—" if value is None else f"{value}/5"


# The main navigation: (label, URL name, the URL names it is current on, who sees it).
_NAV: tuple[tuple[str, str, frozenset[str], str], ...] = (
    ("Explorer", "review:explorer", frozenset({"explorer", "trial-detail"}), ""),
    ("Queue", "review:queue", frozenset({"queue"}), "annotate"),
    (
        "Adjudication",
        "review:adjudication-queue",
        frozenset({"adjudication-queue", "adjudicate"}),
        "adjudicate",
    ),
    ("Saved views", "review:saved-views", frozenset({"saved-views", "saved-view-create"}), ""),
    ("Jobs", "review:job-list", frozenset({"job-list", "job-detail"}), ""),
    ("Agreement", "review:agreement", frozenset({"agreement"}), ""),
    ("Reviewers", "review:reviewers", frozenset({"reviewers"}), "annotate"),
    ("Compare", "review:compare", frozenset({"compare", "compare-trials"}), ""),
    ("Calibration", "review:calibration", frozenset({"calibration"}), "calibration"),
    (
        "Defective tasks",
        "review:defect-ledger",
        frozenset({"defect-ledger", "defect-task", "defect-report"}),
        "",
    ),
    (
        "Scenarios",
        "review:scenario-list",
        frozenset({"scenario-list", "scenario-detail"}),
        "manage",
    ),
    ("Batches", "review:batch-list", frozenset({"batch-list", "batch-detail"}), "manage"),
    ("Upload", "review:upload", frozenset({"upload", "upload-detail"}), "manage"),
    ("Admin", "admin:index", frozenset(), "manage"),
)


@register.simple_tag
def path(name: str) -> str:
    """`{% url name %}` for a URL without arguments, reversed once per process
    (`review.http.path_of`): the base page and the explorer link to a dozen of them."""
    return path_of(name)


@register.simple_tag(takes_context=True)
def main_nav_links(context: Any) -> list[tuple[str, str, bool]]:
    """(label, path, is the current page) of each main navigation link the user may follow:
    the same rules as the views (`review.roles`). base.html writes the links."""
    user, request = context["user"], context["request"]
    match = getattr(request, "resolver_match", None)
    here = match.url_name if match else None
    may = permissions_of(user)
    return [
        (label, path_of(name), here in current)
        for label, name, current, needs in _NAV
        if not needs or may[needs]
    ]


# --- agent-written text (review.pages.text) -----------------------------------------------------
@register.filter
def terminal(value: Any) -> text.TerminalText:
    """Text with its ANSI colour read into segments, for review/includes/terminal_text.html."""
    return text.terminal(value if isinstance(value, str) else str(value or ""))


@register.filter
def markdown(value: Any) -> text.Markdown:
    """Agent markdown rendered with raw HTML off and sanitised by nh3 (review.pages.text):
    the one place agent text is marked safe, after sanitising it."""
    rendered = text.markdown(value if isinstance(value, str) else str(value or ""))
    return text.Markdown(mark_safe(rendered.html), rendered.plain)


@register.filter
def visible_escapes(value: Any) -> str:
    """The text as stored, its escape characters shown as ␛ (a browser shows none)."""
    return str(value or "").replace(text.ESC, "␛")
