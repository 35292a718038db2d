"""Guidelines where the work is: a queue's saved view carries them, and each annotation made
in the queue records what it was made under (the guidelines' version, the time to review).

A queue opened from a saved view rides `view=<id>` in its query string (a TrialFilterForm
field that narrows nothing), so the trial page and the blind page know their queue.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db.models import Q

from review import claims
from review.filtering.form import TrialFilterForm
from review.models import SavedView


def queue_view(user: User, form: TrialFilterForm) -> SavedView | None:
    """The saved view the queue was opened from, if the user may see it (own or shared)."""
    return saved_view(user, form.cleaned_value("view"))


def saved_view(user: User, pk: int | None) -> SavedView | None:
    """The saved view `pk` (a filter's `view`), if the user may see it (own or shared)."""
    if pk is None:
        return None
    return (
        SavedView.objects.filter(Q(owner=user) | Q(shared=True), pk=pk)
        .only("id", "name", "owner_id", "shared", "guidelines", "category_definitions")
        .first()
    )


def guide(user: User, view_pk: int | None) -> SavedView | None:
    """The queue's saved view (the filter's `view`) when it has guidelines to show in the
    review pane."""
    view = saved_view(user, view_pk)
    return view if view is not None and view.guideline_version else None


@dataclass(frozen=True)
class ReviewStamp:
    """What an annotation records about how it was made."""

    seconds_to_review: int | None
    guideline_version: str | None

    @classmethod
    def of(cls, user: User, trial_id: int, form: TrialFilterForm) -> ReviewStamp:
        view = queue_view(user, form)
        return cls(
            seconds_to_review=claims.seconds_since_claimed(user, trial_id),
            guideline_version=(view.guideline_version or None) if view else None,
        )
