"""Scenarios (seed 003, "Configuring scorers"): versioned scorer lists that tasks freeze.

"Scorers are configured on a coding scenario, not per task … When a task is created, the
scenario scorers are snapshotted into task seed. Later scenario edits do not alter grading of
already-seeded tasks." A save never changes a version: it adds the next one. A task copies
the specs of the version it was seeded from into `Task.scorer_specs` and keeps a link to that
version, so the page can say which one it froze.
"""

from __future__ import annotations

import copy
from typing import Any

from django.db import transaction
from django.db.models import Max

from rewards.models import Scenario, ScenarioVersion, Task
from rewards.scoring import config


def save_version(
    scenario: Scenario, specs: Any, *, author: str = "", description: str | None = None
) -> ScenarioVersion:
    """Validate `specs` (raises config.ScenarioError) and store them as the next version."""
    parsed = config.parse_scorers(specs)
    with transaction.atomic():
        # Locking the scenario row serialises two staff saving at once: each gets a number.
        locked = Scenario.objects.select_for_update().get(pk=scenario.pk)
        if description is not None and description != locked.description:
            locked.description = description
            locked.save(update_fields=["description"])
        last = locked.versions.aggregate(last=Max("number"))["last"] or 0
        return ScenarioVersion.objects.create(
            scenario=locked,
            number=last + 1,
            scorer_specs=config.dump_specs(parsed),
            created_by=author[:150],
        )


def create_scenario(
    name: str, specs: Any, *, author: str = "", description: str = ""
) -> ScenarioVersion:
    parsed = config.parse_scorers(specs)  # refused before a row is made
    with transaction.atomic():
        scenario = Scenario.objects.create(name=name, description=description)
        return ScenarioVersion.objects.create(
            scenario=scenario,
            number=1,
            scorer_specs=config.dump_specs(parsed),
            created_by=author[:150],
        )


def current_version(name: str) -> ScenarioVersion | None:
    return (
        ScenarioVersion.objects.filter(scenario__name=name)
        .select_related("scenario")
        .order_by("-number")
        .first()
    )


def snapshot(version: ScenarioVersion) -> list[dict[str, Any]]:
    """The specs a task freezes: a copy, so nothing a task holds is shared with the version."""
    return copy.deepcopy(list(version.scorer_specs))


def link_seeded_task(task_id: int, version: ScenarioVersion) -> None:
    """Record which version a newly seeded task froze; a task already linked keeps its own."""
    Task.objects.filter(pk=task_id, scenario_version__isnull=True).update(scenario_version=version)
