"""Where a trial page was opened from, and the links that walk that list (previous, next,
back, the queue), keeping the open tab."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from django.http import QueryDict
from django.urls import reverse

from review.filtering.form import TrialFilterForm
from review.forms import TrialPageForm
from review.http import with_query
from review.pages.trial_list import sorted_by
from rewards.models import Trial


def trial_url(trial: Trial, fragment: str = "", query: QueryDict | None = None) -> str:
    url = with_query(reverse("review:trial-detail", args=[trial.pk]), query or QueryDict())
    return f"{url}#{fragment}" if fragment else url


@dataclass(frozen=True)
class TrialNav:
    """Where the page was opened from: the explorer's filter and sort, and maybe the queue.

    The explorer links each row with its canonical filter query, so the page knows its list:
    previous / next walk that list (keeping the open tab) and "back" returns to it. Its
    links are built once each, however often the page shows them.
    """

    filters: QueryDict  # the canonical filter and sort, nothing else
    tab: str
    in_queue: bool
    is_filtered: bool
    sorted_by: str
    previous_id: int | None = None
    next_id: int | None = None
    view: int | None = None  # the saved view the queue was opened from (its guidelines)

    @classmethod
    def of(
        cls, filters: TrialFilterForm, state: TrialPageForm, trial: Trial | None = None
    ) -> TrialNav:
        return cls(
            filters=filters.canonical_query(),
            tab=state.current_tab,
            in_queue=state.in_queue,
            is_filtered=filters.is_filtered,
            sorted_by=sorted_by(filters.current_sort),
            previous_id=getattr(trial, "previous_id", None),
            next_id=getattr(trial, "next_id", None),
            view=filters.cleaned_value("view"),
        )

    @property
    def page_query(self) -> QueryDict:
        """What every link and form of this page carries along (the tab aside)."""
        query = self.filters.copy()
        if self.in_queue:
            query["queue"] = "1"
        return query

    @cached_property
    def hidden_fields(self) -> list[tuple[str, str]]:
        return [(name, value) for name, values in self.page_query.lists() for value in values]

    def tab_url(self, page_url: str, tab: str) -> str:
        """`page_url` (the trial's) opened on `tab`."""
        query = self.page_query
        query["tab"] = tab
        return with_query(page_url, query)

    def _neighbour_url(self, pk: int | None) -> str:
        if pk is None:
            return ""
        # A neighbour is a plain list walk: the queue's lease is for this trial only.
        query = self.filters.copy()
        query["tab"] = self.tab
        return with_query(reverse("review:trial-detail", args=[pk]), query)

    @cached_property
    def previous_url(self) -> str:
        return self._neighbour_url(self.previous_id)

    @cached_property
    def next_url(self) -> str:
        return self._neighbour_url(self.next_id)

    @cached_property
    def list_url(self) -> str:
        return with_query(reverse("review:explorer"), self.filters)

    @cached_property
    def queue_url(self) -> str:
        return with_query(reverse("review:queue"), self.filters)

    @cached_property
    def claim_url(self) -> str:
        return with_query(reverse("review:queue-claim"), self.filters)

    @cached_property
    def skip_url(self) -> str:
        return with_query(reverse("review:queue-skip"), self.filters)

    @cached_property
    def annotate_url_query(self) -> str:
        """The annotation form's query string: after a plain POST the page comes back as it was."""
        query = self.page_query
        query["tab"] = self.tab
        return query.urlencode()
