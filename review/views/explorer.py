"""Data Explorer: one row per trial, filtered, sorted and walked by keyset."""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import push_url

from review.filters import SORT_KEYS, TrialFilterForm
from review.http import HttpRequest, wants_fragment
from review.roles import browse_required, can_annotate, can_export
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
    "human_judgment",
    "gate_disagreement",
    "human_disagreement",
    "job__name",
    "task__name",
    "task__source",
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

    @property
    def aria_sort(self) -> str:
        return next((link.state for link in self.links if link.state != "none"), "none")


# (header label, the sort keys its header links to, numeric)
COLUMNS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("Trial", ("id",), False),
    ("Task", ("task",), False),
    ("Agent · model", ("agent", "model"), False),
    ("Reward", ("reward",), True),
    ("Scorers", (), False),
    ("Judge", (), False),
    ("Run", (), False),
    ("Human", (), False),
    ("Disagreement", (), False),
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
        Column(label, tuple(with_href(sort_link(key, sort)) for key in keys), numeric)
        for label, keys, numeric in COLUMNS
    ]


def sorted_by(sort: str) -> str:
    key = SORT_KEYS[sort.lstrip("-")]
    if key.name == "id":
        return "newest first" if sort.startswith("-") else "oldest first"
    direction = "descending" if sort.startswith("-") else "ascending"
    return f"{key.label.lower()}, {direction}"


@require_GET
@login_required
@vary_on_headers("HX-Request")
@browse_required
def explorer(request: HttpRequest) -> HttpResponse:
    form = TrialFilterForm(request.GET)
    # Plain rows (dicts), not model instances: a third of the page's time went to building
    # 51 trials with their job and task.
    page = form.page(ROWS.all())
    query = form.canonical_query()
    encoded = query.urlencode()
    # Each row's link, the page's filter on it: one reverse for the page and an f-string per
    # row (a `{% url %}` per row cost a tenth of the page).
    before, after = reverse("review:trial-detail", args=[0]).rsplit("0", 1)
    after += f"?{encoded}" if encoded else ""
    for row in page.rows:
        row["url"] = f"{before}{row['id']}{after}"
    context = {
        "form": form,
        "page": page,
        "query": query,
        "encoded": encoded,  # the query string, written once for the page's several links
        "columns": columns_for(form.current_sort, query),
        "sorted_by": sorted_by(form.current_sort),
        # The roles were read (and cached on the user) by browse_required: no query here.
        "can_annotate": can_annotate(request.user),
        "can_export": can_export(request.user),
    }
    if not wants_fragment(request):
        return render(request, "review/explorer.html", context)
    if page.is_continuation:
        # Scrolling on: the next rows, appended; the URL stays on the filter.
        return render(request, "review/explorer.html#rows", context)
    response = render(request, "review/explorer.html#results", context)
    # The pushed URL carries only the filters in use, not every empty form field.
    url = reverse("review:explorer")
    return push_url(response, f"{url}?{encoded}" if query else url)
