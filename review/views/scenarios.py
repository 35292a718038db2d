"""Scenarios (seed 003, "Configuring scorers"): staff edit versioned scorer lists.

"In the scenario editor, each scorer is one row with: name, type, … required toggle": the
page edits rows (`ScorerRowForm`, a formset; each type's own fields show for the chosen type,
by CSS alone), or the same list as JSON. A save never changes a version: it stores the next
one, so tasks seeded from earlier versions keep grading as they were seeded ("Scorers freeze
at seed time"). Both editors validate through `rewards.scoring.config`, which names the scorer
and field of every problem.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError, transaction
from django.db.models import Count, Max
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from review.http import HttpRequest
from review.roles import staff_required
from rewards import formats, rules
from rewards.models import Scenario, ScenarioVersion
from rewards.scoring import config, scenarios

EXAMPLE: list[dict[str, Any]] = [
    {"name": "tests", "type": "command", "command": "pytest -q", "timeout_s": 600},
    {"name": "scope", "type": "allowed_paths", "patterns": ["src/**", "tests/**"]},
    {"name": "graded tests", "type": "tests_unmodified", "paths": ["tests/test_app.py"]},
    {"name": "no new skips", "type": "no_new_skips"},
]


class ScenarioForm(forms.Form):
    name = forms.CharField(max_length=255, required=False)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    scorers = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 18, "spellcheck": "false", "class": "code-input"}),
        help_text="A JSON list of scorers: name, type, required (optional) and the type's fields.",
    )

    def __init__(self, *args: Any, creating: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.creating = creating
        self.fields["name"].required = creating
        if not creating:
            del self.fields["name"]

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"].strip()
        if self.creating and Scenario.objects.filter(name=name).exists():
            raise forms.ValidationError(f"A scenario named “{name}” already exists.")
        return name

    def clean_scorers(self) -> list[config.ScorerSpec]:
        try:
            data = formats.loads_bounded(self.cleaned_data["scorers"])
        except formats.ArtifactError as exc:
            raise forms.ValidationError(f"The scorers are {exc}.") from None
        try:
            return config.parse_scorers(data)
        except config.ScenarioError as exc:
            raise forms.ValidationError(exc.problems) from None


# Fields a scorer row edits as one item per line.
LINE_LIST_FIELDS = frozenset({"patterns", "paths", "test_globset"})
REQUIRED_CHOICES = [("", "type default"), ("yes", "required"), ("no", "advisory")]


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


# The catalogue's types with their labels, for the editor's type column.
TYPE_CHOICES = [(t, rules.scorer_type_label(t)) for t in rules.SCORER_TYPES]


class ScorerRowForm(forms.Form):
    """One scorer: name, type, the required toggle and the type's own fields."""

    name = forms.CharField(max_length=255, required=False)
    type = forms.ChoiceField(choices=[("", "—"), *TYPE_CHOICES], required=False)
    required = forms.ChoiceField(choices=REQUIRED_CHOICES, required=False)
    command = forms.CharField(required=False, max_length=10_000)
    timeout_s = forms.IntegerField(required=False, label="Timeout (s)")
    patterns = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    limit = forms.IntegerField(required=False)
    path = forms.CharField(required=False, max_length=1024)
    paths = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    test_globset = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}), required=False, label="Test globs"
    )
    rubric = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)

    @staticmethod
    def initial_of(spec: dict[str, Any]) -> dict[str, Any]:
        initial = {key: value for key, value in spec.items() if key != "required"}
        for key in LINE_LIST_FIELDS & spec.keys():
            if isinstance(spec[key], list):
                initial[key] = "\n".join(str(item) for item in spec[key])
        if isinstance(spec.get("required"), bool):
            initial["required"] = "yes" if spec["required"] else "no"
        return initial

    def spec(self) -> dict[str, Any] | None:
        """The row as a scorer spec: the type's own fields only; None for an empty row."""
        data = self.cleaned_data
        if not data or data.get("DELETE") or not (data["name"] or data["type"]):
            return None
        spec: dict[str, Any] = {"name": data["name"], "type": data["type"]}
        if data["required"]:
            spec["required"] = data["required"] == "yes"
        for key in config.TYPE_FIELDS.get(data["type"], ()):
            value = data.get(key)
            if key in LINE_LIST_FIELDS:
                if value:
                    spec[key] = _lines(value)
                elif key != "test_globset":
                    spec[key] = []  # refused by the type's rules, with the field named
            elif value is not None and value != "":
                spec[key] = value
        return spec


ScorerRowFormSet = forms.formset_factory(ScorerRowForm, extra=2, can_delete=True)
ROWS_PREFIX = "scorer"


def row_formset(specs: list[dict[str, Any]]) -> Any:
    return ScorerRowFormSet(
        prefix=ROWS_PREFIX, initial=[ScorerRowForm.initial_of(spec) for spec in specs]
    )


@dataclass(frozen=True)
class SpecRow:
    name: str
    type: str
    required: bool
    advisory: bool
    settings: str


def spec_rows(specs: list[dict[str, Any]]) -> list[SpecRow]:
    rows = []
    for spec in specs:
        kind = str(spec.get("type", ""))
        required = bool(spec.get("required", rules.default_required(kind)))
        settings = {k: v for k, v in spec.items() if k not in {"name", "type", "required"}}
        rows.append(
            SpecRow(
                name=str(spec.get("name", "")),
                type=kind,
                required=required,
                advisory=rules.is_advisory(kind, required),
                settings=json.dumps(settings, ensure_ascii=False) if settings else "",
            )
        )
    return rows


def _pretty(specs: list[dict[str, Any]]) -> str:
    return json.dumps(specs, indent=2, ensure_ascii=False)


@require_GET
@login_required
@staff_required
def scenario_list(request: HttpRequest) -> HttpResponse:
    rows = Scenario.objects.annotate(
        latest=Max("versions__number"), seeded=Count("versions__tasks")
    ).order_by("name")
    form = ScenarioForm(creating=True, initial={"scorers": _pretty(EXAMPLE)})
    return render(request, "review/scenario_list.html", {"rows": rows, "form": form})


@require_POST
@login_required
@staff_required
def scenario_create(request: HttpRequest) -> HttpResponse:
    form = ScenarioForm(request.POST, creating=True)
    if form.is_valid():
        data = form.cleaned_data
        try:
            with transaction.atomic():
                version = scenarios.create_scenario(
                    data["name"],
                    config.dump_specs(data["scorers"]),
                    author=request.user.get_username(),
                    description=data["description"],
                )
        except IntegrityError:
            form.add_error("name", f"A scenario named “{data['name']}” already exists.")
        else:
            messages.success(request, f"Created the scenario “{version.scenario.name}”, v1.")
            return redirect("review:scenario-detail", pk=version.scenario_id)
    rows = Scenario.objects.annotate(
        latest=Max("versions__number"), seeded=Count("versions__tasks")
    ).order_by("name")
    return render(request, "review/scenario_list.html", {"rows": rows, "form": form}, status=400)


def _detail_context(
    scenario: Scenario,
    form: ScenarioForm | None = None,
    formset: Any = None,
    problems: list[str] | None = None,
) -> dict[str, Any]:
    versions = list(
        ScenarioVersion.objects.filter(scenario=scenario)
        .annotate(seeded=Count("tasks"))
        .order_by("-number")
    )
    current = versions[0] if versions else None
    specs = list(current.scorer_specs) if current else []
    if form is None:
        form = ScenarioForm(
            creating=False,
            initial={"scorers": _pretty(specs), "description": scenario.description},
        )
    return {
        "scenario": scenario,
        "current": current,
        "rows": spec_rows(specs),
        "versions": versions,
        "form": form,
        "formset": formset if formset is not None else row_formset(specs),
        "problems": problems or [],
        "type_fields": config.TYPE_FIELDS,
        "json_open": form is not None and form.is_bound,
    }


@require_GET
@login_required
@staff_required
def scenario_detail(request: HttpRequest, pk: int) -> HttpResponse:
    scenario = get_object_or_404(Scenario, pk=pk)
    return render(request, "review/scenario_detail.html", _detail_context(scenario))


@require_POST
@login_required
@staff_required
def scenario_save(request: HttpRequest, pk: int) -> HttpResponse:
    """Store the edited scorers (rows, or the JSON list) as the scenario's next version."""
    scenario = get_object_or_404(Scenario, pk=pk)
    if request.POST.get("editor") == "rows":
        formset = ScorerRowFormSet(request.POST, prefix=ROWS_PREFIX)
        problems: list[str] = []
        specs: list[config.ScorerSpec] = []
        if formset.is_valid():
            raw = [spec for row in formset.forms if (spec := row.spec()) is not None]
            try:
                specs = config.parse_scorers(raw)
            except config.ScenarioError as exc:
                problems = exc.problems
        else:
            problems = ["Some rows have values of the wrong kind; see the marked fields."]
        if problems:
            context = _detail_context(scenario, formset=formset, problems=problems)
            return render(request, "review/scenario_detail.html", context, status=400)
        description = request.POST.get("description", scenario.description)
    else:
        form = ScenarioForm(request.POST, creating=False)
        if not form.is_valid():
            context = _detail_context(scenario, form)
            return render(request, "review/scenario_detail.html", context, status=400)
        specs = form.cleaned_data["scorers"]
        description = form.cleaned_data["description"]
    version = scenarios.save_version(
        scenario,
        config.dump_specs(specs),
        author=request.user.get_username(),
        description=description,
    )
    messages.success(
        request,
        f"Saved v{version.number}. Tasks already seeded keep the version they froze.",
    )
    return redirect("review:scenario-detail", pk=scenario.pk)
