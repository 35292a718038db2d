"""The note a page shows when trials are left out of its figures, with its switches."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import QueryDict

from review.science.calibration import Report
from review.science.exclusions import REASONS, Applied, Exclusions


@dataclass(frozen=True)
class Switch:
    """One reason's switch: its label, whether the page counts its trials, and the page's
    own query string with the switch turned the other way."""

    label: str
    included: bool
    toggled_query: str


@dataclass(frozen=True)
class ExclusionNote:
    trials: int  # how many (of `unit`) the reasons name
    tasks: int | None  # of how many tasks, when known
    left_out: bool  # the figures leave them out (else the switches put them all back)
    switches: list[Switch]
    unit: str = "trial"
    # The page's switches alone, as a query string: links to another page's figures
    # (calibration, its CSV) keep them.
    switched: str = ""

    @property
    def shown(self) -> bool:
        return bool(self.switches)


def switched_query(query: QueryDict) -> str:
    """The switches of a page's query string, and nothing else of it."""
    params = {reason.param for reason in REASONS}
    kept = QueryDict(mutable=True)
    for name in query:
        if name in params:
            kept.setlist(name, query.getlist(name))
    return kept.urlencode()


def _toggled(query: QueryDict, applied: Applied) -> str:
    toggled = query.copy()
    toggled.pop(applied.reason.param, None)
    if not applied.included:
        toggled[applied.reason.param] = "1"
    return toggled.urlencode()


def exclusion_note(exclusions: Exclusions, query: QueryDict) -> ExclusionNote:
    return ExclusionNote(
        trials=exclusions.trials,
        tasks=exclusions.tasks,
        left_out=exclusions.left_out,
        switches=[
            Switch(a.reason.label, a.included, _toggled(query, a)) for a in exclusions.switches
        ],
        switched=switched_query(query),
    )


def judgment_note(applied: list[Applied], judgments: int, query: QueryDict) -> ExclusionNote:
    """Agreement's note: how many judgments the reasons name under its filter."""
    active = any(a.excluded and not a.included for a in applied)
    return ExclusionNote(
        trials=judgments,
        tasks=None,
        left_out=active,
        switches=[
            Switch(a.reason.label, a.included, _toggled(query, a))
            for a in applied
            if a.excluded and judgments
        ],
        unit="judgment",
    )


def labelled_note(report: Report, query: QueryDict) -> ExclusionNote:
    """Calibration's note: how many labelled trials (of how many tasks) the reasons name, and
    a switch for each reason that names any."""
    counted = report.counted
    if counted is None:
        return ExclusionNote(trials=0, tasks=None, left_out=False, switches=[])
    return ExclusionNote(
        trials=counted.named_trials,
        tasks=counted.named_tasks,
        left_out=bool(counted.left_out),
        switches=[
            Switch(a.reason.label, a.included, _toggled(query, a))
            for a in report.applied
            if counted.named.get(a.reason.key)
        ],
        unit="labelled trial",
        switched=switched_query(query),
    )
