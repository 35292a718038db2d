"""Forms of the review pages: the trial page's annotation form and query string, the
queue's skip, saving an explorer view, and the parameters of the agreement and compare pages
(which their API resources read too).

The annotation form is a plain Form, not a ModelForm: the reviewer, the time and what the
reviewer saw are set by the server, so a posted `reviewer` or `reward` has nowhere to go.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.http import QueryDict

from review.filtering.fields import JobChoices, JobSelect, rendered_key
from review.filtering.form import TrialFilterForm
from review.models import Annotation, FindingReview, SavedView
from review.science import agreement
from rewards.models import Job

MAX_CATEGORIES = 20
MAX_CATEGORY_LENGTH = 64


class AnnotationForm(forms.Form):
    judgment = forms.ChoiceField(
        choices=Annotation.Judgment.choices, widget=forms.RadioSelect, label="Judgment"
    )
    categories = forms.CharField(
        required=False,
        max_length=2000,
        label="Categories",
        help_text="Comma-separated, e.g. unit mismatch, tool failure",
    )
    notes = forms.CharField(
        required=False, max_length=20000, widget=forms.Textarea(attrs={"rows": 4})
    )
    reviewer_discipline = forms.CharField(required=False, max_length=100, label="Discipline")

    def clean_categories(self) -> list[str]:
        raw: str = self.cleaned_data.get("categories") or ""
        categories: list[str] = []
        for part in raw.split(","):
            name = " ".join(part.split())
            if name and name not in categories:
                categories.append(name)
        if len(categories) > MAX_CATEGORIES:
            raise forms.ValidationError(f"At most {MAX_CATEGORIES} categories.")
        if any(len(name) > MAX_CATEGORY_LENGTH for name in categories):
            raise forms.ValidationError(
                f"Each category is at most {MAX_CATEGORY_LENGTH} characters."
            )
        return categories


# Harbor's viewer's tabs first (the ones read from the trial folder when opened:
# rewards.ingest.trial_files), then the contract format's diff and command output.
TAB_CHOICES = [
    ("trajectory", "Trajectory"),
    ("agent-logs", "Agent logs"),
    ("verifier", "Verifier logs"),
    ("trial-log", "Trial log"),
    ("artifacts", "Artifacts"),
    ("analysis", "Analysis"),
    ("exception", "Exception"),
    ("diff", "Workspace diff"),
    ("output", "Command output"),
]
DEFAULT_TAB = "trajectory"

STEP_KIND_CHOICES = [
    ("message", "Messages"),
    ("tool_call", "Tool calls"),
    ("observation", "Observations"),
    ("reasoning", "Reasoning"),
]
STEP_KINDS = [kind for kind, _ in STEP_KIND_CHOICES]


class TrialPageForm(forms.Form):
    """The trial page's query string: open tab, expanded scorer rows, trajectory filter."""

    tab = forms.ChoiceField(choices=TAB_CHOICES, required=False)
    # Positions of the expanded scorer rows; absent means "the default" (hard failures).
    open = forms.CharField(required=False, max_length=1000)
    show = forms.MultipleChoiceField(
        choices=STEP_KIND_CHOICES, required=False, widget=forms.CheckboxSelectMultiple
    )
    # Set by the trajectory filter form, so that "nothing ticked" differs from "no filter".
    filtered = forms.BooleanField(required=False, widget=forms.HiddenInput)
    # The page was opened from the review queue: show the queue's Skip / Next controls.
    queue = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def _cleaned(self) -> dict[str, Any]:
        self.is_valid()
        return getattr(self, "cleaned_data", {})

    @property
    def current_tab(self) -> str:
        return self._cleaned().get("tab") or DEFAULT_TAB

    @property
    def open_positions(self) -> set[int] | None:
        if "open" not in self.data:
            return None
        raw = self._cleaned().get("open") or ""
        return {int(part) for part in raw.split(",") if part.strip().isdigit()}

    @property
    def in_queue(self) -> bool:
        return bool(self._cleaned().get("queue"))

    @property
    def step_kinds(self) -> list[str]:
        cleaned = self._cleaned()
        if not cleaned.get("filtered"):
            return list(STEP_KINDS)
        return list(cleaned.get("show") or [])


class TrialFileForm(forms.Form):
    """`?path=…`: a file of the trial's folder, by its path inside it."""

    path = forms.CharField(max_length=1000)


class ScorerRowForm(forms.Form):
    """`?expanded=1` or `0`: the state a Scorers card row is asked for."""

    expanded = forms.ChoiceField(choices=[("0", "collapsed"), ("1", "expanded")], required=False)

    @property
    def expanded_value(self) -> bool:
        self.is_valid()
        return getattr(self, "cleaned_data", {}).get("expanded") == "1"


class QueueSkipForm(forms.Form):
    """The trial a reviewer passes over in the queue."""

    trial = forms.IntegerField(min_value=1, widget=forms.HiddenInput)


MAX_QUERY_LENGTH = 4000


class SavedViewForm(forms.Form):
    """Name the explorer's current filter. The owner is the logged-in user, never a field."""

    name = forms.CharField(max_length=100, label="Name")
    shared = forms.BooleanField(
        required=False, label="Shared", help_text="Everyone who can browse sees shared views."
    )
    query = forms.CharField(required=False, max_length=MAX_QUERY_LENGTH, widget=forms.HiddenInput)

    def __init__(self, *args: Any, owner: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.owner = owner

    def clean_name(self) -> str:
        name = " ".join((self.cleaned_data.get("name") or "").split())
        if not name:
            raise forms.ValidationError("Give the view a name.")
        if SavedView.objects.filter(owner=self.owner, name=name).exists():
            raise forms.ValidationError(f"You already have a view named “{name}”.")
        return name

    def clean_query(self) -> str:
        """Only what the explorer understands is kept, in the explorer's canonical form."""
        raw = (self.cleaned_data.get("query") or "").lstrip("?")
        return TrialFilterForm(QueryDict(raw)).canonical_query().urlencode()


class AgreementForm(forms.Form):
    """The page's own parameter: which dimension the breakdown is by."""

    by = forms.ChoiceField(
        choices=[(d.key, d.label) for d in agreement.DIMENSIONS.values()], required=False
    )

    @property
    def dimension(self) -> str:
        if self.is_valid() and self.cleaned_data["by"]:
            return str(self.cleaned_data["by"])
        return agreement.DEFAULT_DIMENSION


class CompareForm(forms.Form):
    """`?a=<job>&b=<job>`: the two runs, by id; the same job twice is refused."""

    a = forms.ModelChoiceField(
        queryset=Job.objects.only("id", "name").order_by("-id"),
        label="Run A",
        widget=JobSelect,
    )
    b = forms.ModelChoiceField(
        queryset=Job.objects.only("id", "name").order_by("-id"),
        label="Run B",
        widget=JobSelect,
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Both <select>s show the cached newest jobs, as the explorer's (and an older job
        # chosen in the URL); validation still looks each job up.
        for name in ("a", "b"):
            self.fields[name].widget.choices = JobChoices(
                empty_label="---------", chosen=partial(self._chosen, name)
            )

    def pick_key(self) -> str | None:
        """What the two <select>s' HTML depends on, as a cache key (`rendered_key`)."""
        return rendered_key(self)

    def _chosen(self, name: str) -> Job | None:
        """The job the URL names in field `name`, once validated; None otherwise."""
        if not self.is_bound:
            return None
        self.is_valid()
        job: Job | None = getattr(self, "cleaned_data", {}).get(name)
        return job

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        a, b = cleaned.get("a"), cleaned.get("b")
        if a is not None and a == b:
            self.add_error("b", "Choose two different runs.")
        return cleaned


class FindingReviewForm(forms.Form):
    """An expert's or staff member's word on a reward-integrity finding; the reviewer and
    the time are the server's."""

    decision = forms.ChoiceField(
        choices=FindingReview.Decision.choices, widget=forms.RadioSelect, label="Decision"
    )
    rationale = forms.CharField(
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 2}),
        error_messages={"required": "Give a rationale."},
    )
