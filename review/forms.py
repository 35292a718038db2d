"""Forms of the review pages: the trial page's annotation form and query string, the
queue's skip, saving an explorer view, and the parameters of the agreement and compare pages
(which their API resources read too).

The annotation form is a plain Form, not a ModelForm: the reviewer, the time and what the
reviewer saw are set by the server, so a posted `reviewer` or `reward` has nowhere to go.
"""

from __future__ import annotations

import zipfile
from functools import partial
from typing import Any, cast

from django import forms
from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import QueryDict
from django.template.defaultfilters import filesizeformat

from review import defects
from review.filtering.fields import JobChoices, JobSelect, rendered_key
from review.filtering.form import TrialFilterForm
from review.models import (
    MAX_COMMENT_RANGE,
    Annotation,
    CalibrationRule,
    CommentTarget,
    DefectEntry,
    FindingReview,
    GoldLabel,
    SavedView,
    StepComment,
)
from review.science import agreement
from rewards.models import IngestUpload, Job, Task

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


class StepCommentForm(forms.Form):
    """A comment on a step of the trajectory, or on a range of one of its parts' text.

    Without JavaScript a reviewer names the step and the part; static/js/steps.js fills
    them, and the range, from a text selection. The range is checked against the stored
    text when the comment is added (`review.models.resolve_target`); the author and the
    time are the server's.
    """

    step = forms.IntegerField(min_value=1, label="Step")
    part = forms.ChoiceField(choices=StepComment.Part.choices, label="Part")
    part_index = forms.IntegerField(
        min_value=0, max_value=32767, required=False, widget=forms.HiddenInput
    )
    start = forms.IntegerField(min_value=0, required=False, widget=forms.HiddenInput)
    end = forms.IntegerField(min_value=1, required=False, widget=forms.HiddenInput)
    # The selected text, as the browser read it; never stripped (its spaces are part of it).
    quote = forms.CharField(
        required=False, strip=False, max_length=MAX_COMMENT_RANGE, widget=forms.HiddenInput
    )
    text = forms.CharField(
        max_length=20000, label="Comment", widget=forms.Textarea(attrs={"rows": 3})
    )
    supersedes = forms.IntegerField(min_value=1, required=False, widget=forms.HiddenInput)

    @classmethod
    def correcting(cls, comment: StepComment) -> StepCommentForm:
        """The form aimed where `comment` is, set to supersede it."""
        return cls(
            initial={
                "step": comment.step,
                "part": comment.part,
                "part_index": comment.part_index,
                "start": comment.start,
                "end": comment.end,
                "quote": comment.quote,
                "supersedes": comment.pk,
            }
        )

    def target(self) -> CommentTarget:
        data = self.cleaned_data
        return CommentTarget(
            step=data["step"],
            part=data["part"],
            part_index=data.get("part_index") or 0,
            start=data.get("start"),
            end=data.get("end"),
            quote=data.get("quote") or "",
        )


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
    # A fact check whose cited quotes the trajectory marks: `<verdict id>.<check index>`.
    cite = forms.RegexField(regex=r"^[0-9]{1,18}\.[0-9]{1,6}$", required=False)
    # "Comment" on a step without JavaScript: the comment form opens for that step.
    comment_step = forms.IntegerField(min_value=1, required=False)
    # "Correct" on one of the reviewer's comments: the form set to supersede it.
    correct = forms.IntegerField(min_value=1, required=False)
    # The step the trajectory is opened at: the chunk of steps holding it is shown
    # (`review.pages.steps`); deep links to a later step carry it.
    at = forms.IntegerField(min_value=1, required=False)

    def _cleaned(self) -> dict[str, Any]:
        self.is_valid()
        return getattr(self, "cleaned_data", {})

    # The tab the page opens on when none was asked for: the trajectory, unless the view
    # found the trial has none (`review.views.trial.opening_tab`).
    opening_tab = DEFAULT_TAB

    @property
    def current_tab(self) -> str:
        return self._cleaned().get("tab") or self.opening_tab

    @property
    def tab_chosen(self) -> bool:
        return bool(self._cleaned().get("tab"))

    @property
    def open_positions(self) -> set[int] | None:
        if "open" not in self.data:
            return None
        raw = self._cleaned().get("open") or ""
        return {int(part) for part in raw.split(",") if part.strip().isdigit()}

    @property
    def commenting_step(self) -> int | None:
        step: int | None = self._cleaned().get("comment_step")
        return step

    @property
    def at_step(self) -> int | None:
        step: int | None = self._cleaned().get("at")
        return step

    @property
    def correcting(self) -> int | None:
        comment_id: int | None = self._cleaned().get("correct")
        return comment_id

    @property
    def in_queue(self) -> bool:
        return bool(self._cleaned().get("queue"))

    @property
    def cited(self) -> tuple[int, int] | None:
        """The verdict id and fact-check index named by `cite`, if any."""
        raw = self._cleaned().get("cite") or ""
        if not raw:
            return None
        verdict, index = raw.split(".")
        return int(verdict), int(index)

    @property
    def is_filtered(self) -> bool:
        """The trajectory filter was submitted (`step_kinds` are the ones ticked)."""
        return bool(self._cleaned().get("filtered"))

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


class AlignedPageForm(forms.Form):
    """`?page=N`: the page of aligned steps shown side by side (from 1)."""

    page = forms.IntegerField(min_value=1, max_value=1_000_000, required=False)

    @property
    def page_number(self) -> int:
        self.is_valid()
        return getattr(self, "cleaned_data", {}).get("page") or 1


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


class GoldLabelForm(forms.Form):
    """Staff mark a trial as gold (or retire it) with a reference judgment and a rationale."""

    reference = forms.ChoiceField(choices=GoldLabel.Reference.choices, widget=forms.RadioSelect)
    rationale = forms.CharField(
        max_length=5000,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Why this is the right judgment; reviewers never see it.",
    )


# Guidelines are read in the review pane, beside the trial: long enough for a page of rules.
MAX_GUIDELINES = 20_000
MAX_CATEGORY_DEFINITIONS = 50


class GuidelinesForm(forms.Form):
    """A saved view's guidelines (markdown) and category definitions, one `name: definition`
    per line."""

    guidelines = forms.CharField(
        required=False, max_length=MAX_GUIDELINES, widget=forms.Textarea(attrs={"rows": 8})
    )
    category_definitions = forms.CharField(
        required=False,
        max_length=MAX_GUIDELINES,
        label="Category definitions",
        widget=forms.Textarea(
            attrs={"rows": 4, "placeholder": "tests-edited: the agent changed a test"}
        ),
        help_text="One per line: the category, a colon, what it means.",
    )

    @staticmethod
    def lines_of(definitions: list[list[str]]) -> str:
        return "\n".join(f"{name}: {meaning}" for name, meaning in definitions)

    def clean_category_definitions(self) -> list[list[str]]:
        definitions: list[list[str]] = []
        seen: set[str] = set()
        for number, line in enumerate(self.cleaned_data["category_definitions"].splitlines(), 1):
            if not line.strip():
                continue
            name, colon, meaning = line.partition(":")
            name, meaning = name.strip(), meaning.strip()
            if not colon or not name or not meaning:
                raise forms.ValidationError(
                    f"Line {number} is not “category: definition”.", code="format"
                )
            if len(name) > 100:
                raise forms.ValidationError(f"Line {number}: the category is over 100 characters.")
            if name in seen:
                raise forms.ValidationError(f"Line {number}: “{name}” is defined twice.")
            seen.add(name)
            definitions.append([name, meaning])
        if len(definitions) > MAX_CATEGORY_DEFINITIONS:
            raise forms.ValidationError(f"At most {MAX_CATEGORY_DEFINITIONS} categories.")
        return definitions


class CalibrationRuleForm(forms.ModelForm[CalibrationRule]):
    """The judge admission rule, as staff set it on the calibration page (never the salt)."""

    class Meta:
        model = CalibrationRule
        fields = ["min_tpr_lower", "min_tnr_lower", "min_labelled"]
        labels = {
            "min_tpr_lower": "TPR lower bound at least",
            "min_tnr_lower": "TNR lower bound at least",
            "min_labelled": "Human-pass and human-fail trials in the test part, each at least",
        }
        widgets = {
            "min_tpr_lower": forms.NumberInput(attrs={"min": 0, "max": 1, "step": "0.01"}),
            "min_tnr_lower": forms.NumberInput(attrs={"min": 0, "max": 1, "step": "0.01"}),
            "min_labelled": forms.NumberInput(attrs={"min": 1, "step": 1}),
        }

    def clean_min_tpr_lower(self) -> float:
        return _unit(self.cleaned_data["min_tpr_lower"])

    def clean_min_tnr_lower(self) -> float:
        return _unit(self.cleaned_data["min_tnr_lower"])

    def clean_min_labelled(self) -> int:
        value: int = self.cleaned_data["min_labelled"]
        if value < 1:
            raise forms.ValidationError("At least one labelled trial of each kind.")
        return value


def _unit(value: float) -> float:
    if not 0 <= value <= 1:
        raise forms.ValidationError("A rate's bound is between 0 and 1.")
    return value


class DefectEntryForm(forms.Form):
    """An entry of the defective-task ledger (`review.defects`). The author and the time
    are the server's; which states the author may choose is the view's (`review.roles`)."""

    task = forms.ModelChoiceField(queryset=Task.objects.none(), label="Task")
    state = forms.ChoiceField(choices=DefectEntry.State.choices, label="This task is")
    category = forms.ChoiceField(choices=DefectEntry.Category.choices, label="Category")
    rationale = forms.CharField(
        max_length=20000,
        widget=forms.Textarea(attrs={"rows": 4}),
        error_messages={"required": "Say why."},
    )
    evidence = forms.CharField(
        required=False,
        max_length=defects.MAX_LINKS * (defects.MAX_LINK_LENGTH + 1),
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Evidence",
        help_text=(
            "Links inside Trialdesk, one a line: a trial (or its id), a step"
            " (/trials/12/#step-3), an annotation, a job, an explorer filter."
        ),
    )

    def __init__(
        self,
        data: QueryDict | None = None,
        *,
        tasks: QuerySet[Task],
        states: list[str],
        host: str = "",
        initial: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(data, initial=initial)
        self.host = host
        task_field = cast(forms.ModelChoiceField[Task], self.fields["task"])
        task_field.queryset = tasks
        state_field = cast(forms.ChoiceField, self.fields["state"])
        state_field.choices = [c for c in DefectEntry.State.choices if c[0] in states]

    def clean_evidence(self) -> list[str]:
        return defects.clean_evidence(self.cleaned_data.get("evidence") or "", host=self.host)


class UploadForm(forms.Form):
    """The staff upload page: one `.jsonl` bundle or one zipped Harbor job folder, at most
    `TRIALDESK_UPLOAD_MAX_BYTES`. Only its name and size are checked here; a worker reads it."""

    file = forms.FileField(label="A .jsonl bundle or a zipped Harbor job folder")

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        limit = upload_limit()
        if upload.size > limit:
            raise forms.ValidationError(too_large_message(upload.size, limit))
        kind = upload_kind(upload.name or "")
        if kind is None:
            raise forms.ValidationError(
                "Upload a .jsonl bundle or a .zip of a Harbor job folder (the name says which)."
            )
        if kind == IngestUpload.Kind.ZIP and not zipfile.is_zipfile(upload):
            raise forms.ValidationError("This file is not a zip archive.")
        upload.seek(0)
        return upload

    @property
    def kind(self) -> IngestUpload.Kind:
        kind = upload_kind(self.cleaned_data["file"].name or "")
        assert kind is not None
        return kind


def upload_limit() -> int:
    return int(settings.TRIALDESK_UPLOAD_MAX_BYTES)


def too_large_message(size: int, limit: int) -> str:
    return (
        f"This file is {filesizeformat(size)}; uploads are limited to {filesizeformat(limit)} "
        "(TRIALDESK_UPLOAD_MAX_BYTES). Ingest a larger job with `manage.py ingest PATH`."
    )


def upload_kind(name: str) -> IngestUpload.Kind | None:
    lowered = name.lower()
    if lowered.endswith(".jsonl"):
        return IngestUpload.Kind.BUNDLE
    if lowered.endswith(".zip"):
        return IngestUpload.Kind.ZIP
    return None


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
