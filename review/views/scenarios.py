"""Scenarios (seed 003, "Configuring scorers"): staff edit versioned scorer lists.

A save never changes a version: it stores the next one, so tasks seeded from earlier
versions keep grading as they were seeded ("Scorers freeze at seed time").
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
from rewards import rules
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
        name = self.cleaned_data["name"].strip()
        if self.creating and Scenario.objects.filter(name=name).exists():
            raise forms.ValidationError(f"A scenario named “{name}” already exists.")
        return name

    def clean_scorers(self) -> list[config.ScorerSpec]:
        try:
            data = rules.loads_bounded(self.cleaned_data["scorers"])
        except rules.ArtifactError as exc:
            raise forms.ValidationError(f"The scorers are {exc}.") from None
        try:
            return config.parse_scorers(data)
        except config.ScenarioError as exc:
            raise forms.ValidationError(exc.problems) from None


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


def _detail_context(scenario: Scenario, form: ScenarioForm | None = None) -> dict[str, Any]:
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
    """Store the edited scorers as the scenario's next version."""
    scenario = get_object_or_404(Scenario, pk=pk)
    form = ScenarioForm(request.POST, creating=False)
    if not form.is_valid():
        context = _detail_context(scenario, form)
        return render(request, "review/scenario_detail.html", context, status=400)
    version = scenarios.save_version(
        scenario,
        config.dump_specs(form.cleaned_data["scorers"]),
        author=request.user.get_username(),
        description=form.cleaned_data["description"],
    )
    messages.success(
        request,
        f"Saved v{version.number}. Tasks already seeded keep the version they froze.",
    )
    return redirect("review:scenario-detail", pk=scenario.pk)
