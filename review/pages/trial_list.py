"""The trial list as pages show it: the explorer's rows, its sortable columns and their links,
and how a sort reads in words (the explorer, the queue, adjudication, the trial page)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.http import QueryDict
from django.urls import reverse

from review.filtering.form import TrialFilterForm
from review.filtering.paging import SORT_KEYS
from rewards.models import Trial

# Exactly what a row shows (and the keyset sorts on): no JSON, no long text, no blob.
ROW_FIELDS = (
    "id",
    "name",
    "agent_name",
    "model_name",
    "reward",
    "is_valid",
    "scorer_verdict",
    "judge_verdict",
    "run_badge",
    "exception_type",  # the run badge names a timeout
    "human_judgment",
    "gate_disagreement",
    "human_disagreement",
    "integrity",  # the reward cell's integrity marker
    "job__name",
    "task__name",
    "task__source",
    "started_at",
)
# Built once: `.values()` resolves fifteen paths and three joins, work every page repeated.
# Each request narrows a copy (`.all()`).
ROWS = Trial.objects.values(*ROW_FIELDS)


@dataclass(frozen=True)
class SortLink:
    label: str
    next_sort: str  # the `sort` value a click selects
    state: str  # ascending / descending / none
    href: str = ""  # the explorer with the current filter and `next_sort`


@dataclass(frozen=True)
class Column:
    label: str
    links: tuple[SortLink, ...] = ()
    numeric: bool = False
    minor: bool = False  # folded away on a phone

    @property
    def aria_sort(self) -> str:
        return next((link.state for link in self.links if link.state != "none"), "none")


# (header label, the sort keys its header links to, numeric, minor). Minor columns fold
# away on a phone, leaving the key ones: the trial, its reward and its run.
COLUMNS: tuple[tuple[str, tuple[str, ...], bool, bool], ...] = (
    ("Trial", ("id", "started"), False, False),
    ("Task", ("task",), False, True),
    ("Agent · model", ("agent", "model"), False, True),
    ("Reward", ("reward",), True, False),
    ("Scorers", (), False, True),
    ("Judge", (), False, True),
    ("Run", (), False, False),
    ("Human", (), False, True),
    ("Disagreement", (), False, True),
)


def sort_link(key: str, current: str) -> SortLink:
    label = SORT_KEYS[key].label
    if current.lstrip("-") == key:
        descending = current.startswith("-")
        return SortLink(
            label, key if descending else f"-{key}", "descending" if descending else "ascending"
        )
    # Numbers and ids read best high-to-low first; names A to Z.
    return SortLink(label, key if SORT_KEYS[key].kind is str else f"-{key}", "none")


def columns_for(sort: str, query: QueryDict | None = None) -> list[Column]:
    base = reverse("review:explorer")

    def with_href(link: SortLink) -> SortLink:
        linked = (query or QueryDict()).copy()
        linked["sort"] = link.next_sort
        return replace(link, href=f"{base}?{linked.urlencode()}")

    return [
        Column(label, tuple(with_href(sort_link(key, sort)) for key in keys), numeric, minor)
        for label, keys, numeric, minor in COLUMNS
    ]


@dataclass(frozen=True)
class Chip:
    """An active filter as the explorer summarises it, with the link that removes it."""

    label: str
    value: str
    remove_href: str


def filter_chips(form: TrialFilterForm, query: QueryDict) -> list[Chip]:
    base = reverse("review:explorer")
    chips = []
    for name, label, value in form.described_filters():
        if name in {"overlap", "blind"}:  # queue settings, not filters of the list
            continue
        rest = query.copy()
        rest.pop(name, None)
        encoded = rest.urlencode()
        chips.append(Chip(label, value, f"{base}?{encoded}" if encoded else base))
    return chips


def sorted_by(sort: str) -> str:
    key = SORT_KEYS[sort.lstrip("-")]
    if key.name == "id":
        return "ingested, newest first" if sort.startswith("-") else "ingested, oldest first"
    if key.name == "started":
        return "started, newest first" if sort.startswith("-") else "started, oldest first"
    direction = "descending" if sort.startswith("-") else "ascending"
    return f"{key.label.lower()}, {direction}"
