"""Trials left out of the pass rates, and why: one place for every reason.

A trial's stored reward never changes. What changes is whether a figure counts it: by
default, the job page, compare, agreement and judge calibration (its labelled trials, and
the judged trials of a corrected pass rate: `review.science.calibration`) leave out the
trials that a reason names, and say so ("12 trials of 2 tasks left out"); a visible switch
on each page (a query parameter per reason, `?include_defective=1`) puts them back.

A reason names tasks (every trial of a task that is confirmed defective) or single trials
(a confirmed reward hack): `Reason.excluded()` gives both, and the rest of this module does
not care which. Reasons today: `DefectiveTasks` (the ledger, `review.defects`) and
`ConfirmedHacks` (reward-integrity findings a person confirmed, `review.integrity`).

The pages' figures come from kept tallies (`review.science.job_tallies`), which count every
trial. The trials left out are few (a task's, not a job's), so their contribution is counted
from those trials alone, by the tallies' own rules, and subtracted: the figures without them,
exactly, at the cost of one grouped query over their rows (`job_tallies.contributions`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from django import forms
from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Q, QuerySet

from review import defects, integrity
from review.models import DefectEntry
from review.science import job_tallies
from rewards.cache import LEFT_OUT, LEFT_OUT_TTL
from rewards.models import Integrity, Trial


@dataclass(frozen=True)
class Excluded:
    """What a reason leaves out: whole tasks, and single trials."""

    task_ids: frozenset[int] = frozenset()
    trial_ids: frozenset[int] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.task_ids or self.trial_ids)

    def __or__(self, other: Excluded) -> Excluded:
        return Excluded(self.task_ids | other.task_ids, self.trial_ids | other.trial_ids)


class Reason(Protocol):
    key: str  # stable, for the API and the manifest
    label: str  # what the note says they are: "confirmed defective"
    param: str  # the switch: `?<param>=1` puts the trials back

    def excluded(self) -> Excluded: ...

    def records(self, excluded: Excluded) -> list[dict[str, Any]]:
        """Why: the confirmed records behind `excluded`, as JSON, each naming its `task_id`
        or `trial_id` (an export's manifest)."""
        ...


def named_now() -> Excluded:
    """The tasks confirmed defective and the trials with a confirmed reward hack, now: kept
    in the shared cache (`rewards.cache.LEFT_OUT`, dropped when either changes), else read in
    one query. Every job page, comparison and agreement page asks; both change rarely."""
    kept: tuple[list[int], list[int]] | None = cache.get(LEFT_OUT)
    if kept is None:
        # One statement for both: the ORM's union refuses the ordered subquery that finds each
        # task's newest entry, so it is written here (portable SQL; names from the models).
        entries = DefectEntry._meta.db_table
        trials = Trial._meta.db_table
        sql = (
            f"SELECT 'task', d.task_id FROM {entries} d WHERE d.state = %s"  # noqa: S608
            f" AND d.id = (SELECT MAX(e.id) FROM {entries} e WHERE e.task_id = d.task_id)"
            f" UNION ALL SELECT 'trial', t.id FROM {trials} t WHERE t.integrity = %s"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [DefectEntry.State.CONFIRMED, Integrity.CONFIRMED])
            rows = cursor.fetchall()
        kept = (
            sorted(pk for kind, pk in rows if kind == "task"),
            sorted(pk for kind, pk in rows if kind == "trial"),
        )
        cache.set(LEFT_OUT, kept, LEFT_OUT_TTL)
    return Excluded(frozenset(kept[0]), frozenset(kept[1]))


class DefectiveTasks:
    """Every trial of a task whose newest ledger entry confirms it defective."""

    key = "defective_task"
    label = "tasks confirmed defective"
    param = "include_defective"

    def excluded(self) -> Excluded:
        """The tasks confirmed defective now (kept, `named_now`)."""
        return Excluded(task_ids=named_now().task_ids)

    def records(self, excluded: Excluded) -> list[dict[str, Any]]:
        """The confirming entries of the tasks (each task's newest): one query."""
        entries = defects.confirmed_entries(excluded.task_ids)
        return [defects.entry_dict(entry) for entry in entries]


class ConfirmedHacks:
    """Each trial with a reward-integrity finding a person confirmed: the reward was reached,
    not earned. Its stored reward is unchanged."""

    key = "confirmed_hack"
    label = "trials with a confirmed reward hack"
    param = "include_hacks"

    def excluded(self) -> Excluded:
        """The trials with a confirmed finding now (kept, `named_now`)."""
        return Excluded(trial_ids=named_now().trial_ids)

    def records(self, excluded: Excluded) -> list[dict[str, Any]]:
        """The confirmed findings of the trials, with who confirmed them and why: one query."""
        return integrity.confirmed_findings(Trial.objects.filter(pk__in=sorted(excluded.trial_ids)))


REASONS: tuple[Reason, ...] = (DefectiveTasks(), ConfirmedHacks())


class SwitchForm(forms.Form):
    """The switches of a page's query string: each reason's parameter, 1 to include."""

    def __init__(self, data: Mapping[str, Any] | None = None, reasons: Sequence[Reason] = REASONS):
        super().__init__(data)
        self.reasons = reasons
        for reason in reasons:
            self.fields[reason.param] = forms.BooleanField(required=False)

    def included(self) -> frozenset[str]:
        """The keys of the reasons whose trials the page counts (a mangled value: none)."""
        if not self.is_valid():
            return frozenset()
        return frozenset(r.key for r in self.reasons if self.cleaned_data.get(r.param))


@dataclass(frozen=True)
class Applied:
    """A reason on a page: what it names, and whether the switch put it back."""

    reason: Reason
    excluded: Excluded
    included: bool


@dataclass
class Exclusions:
    """What is left out of some jobs' figures, and what it would have added.

    `rows` are the left-out trials' contributions to the kept tallies, negated
    (`job_tallies.CONTRIBUTION_KEY`, then the counters): added to a page's tally rows, they
    take those trials out. Empty when nothing is left out (or the switches put it all back).
    """

    applied: list[Applied]
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    # The same trials counted whether or not the switch put them back, for the note.
    named: list[tuple[Any, ...]] = field(default_factory=list)

    @property
    def left_out(self) -> bool:
        return bool(self.rows)

    @property
    def active(self) -> Excluded:
        """What the reasons name that the switches did not put back (of every job)."""
        active = Excluded()
        for a in self.applied:
            if not a.included:
                active |= a.excluded
        return active

    def leaves_out_of(self, job_id: int) -> bool:
        """Whether the figures leave out some trials of this job."""
        return any(row[0] == job_id for row in self.rows)

    @property
    def included(self) -> bool:
        """Some reason names trials of these jobs, and the switch counts them."""
        return any(a.included for a in self.applied) and bool(self.named)

    @property
    def trials(self) -> int:
        """How many trials of the jobs the reasons name."""
        trials = job_tallies.COUNTER_NAMES.index("trials") + len(job_tallies.CONTRIBUTION_KEY)
        return sum(row[trials] for row in self.named)

    @property
    def tasks(self) -> int:
        """Of how many tasks."""
        return len({row[1] for row in self.named})

    @property
    def switches(self) -> list[Applied]:
        """The reasons that name trials of these jobs: each gets a switch on the page."""
        return [a for a in self.applied if a.excluded] if self.named else []

    def job_rows(self, job_id: int) -> list[tuple[Any, ...]]:
        """The rows to add to one job's tally rows (`stats.BREAKDOWN_COLUMNS`' shape)."""
        return [row[2:] for row in self.rows if row[0] == job_id]

    def by_job_task(self) -> dict[tuple[int, int], dict[str, int]]:
        """The rows to add, summed per job and task, by counter name."""
        summed: dict[tuple[int, int], dict[str, int]] = defaultdict(
            lambda: dict.fromkeys(job_tallies.COUNTER_NAMES, 0)
        )
        width = len(job_tallies.CONTRIBUTION_KEY)
        for row in self.rows:
            counters = summed[row[0], row[1]]
            for name, value in zip(job_tallies.COUNTER_NAMES, row[width:], strict=True):
                counters[name] += value
        return dict(summed)


def _negated(rows: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    width = len(job_tallies.CONTRIBUTION_KEY)
    return [(*row[:width], *(-int(v) for v in row[width:])) for row in rows]


def chosen(
    included: frozenset[str] = frozenset(), reasons: Sequence[Reason] = REASONS
) -> tuple[list[Applied], Excluded, Excluded]:
    """Each reason applied, what they name together, and what they leave out (those the
    switches did not put back)."""
    applied = [Applied(r, r.excluded(), r.key in included) for r in reasons]
    named, active = Excluded(), Excluded()
    for a in applied:
        named |= a.excluded
        if not a.included:
            active |= a.excluded
    return applied, named, active


def trials_of(excluded: Excluded) -> Q:
    """The trials `excluded` names, as a condition on trials."""
    return Q(task_id__in=sorted(excluded.task_ids)) | Q(pk__in=sorted(excluded.trial_ids))


def for_jobs(
    job_ids: Sequence[int],
    included: frozenset[str] = frozenset(),
    reasons: Sequence[Reason] = REASONS,
) -> Exclusions:
    """What the reasons leave out of the jobs' figures, unless `included` names them.

    What each reason names (the ledger's from the cache, else one query), and one query over
    the named trials of the jobs when any are named (their contribution): none over the
    jobs' other trials.
    """
    applied, named, active = chosen(included, reasons)
    if not named:
        return Exclusions(applied)
    counted = job_tallies.contributions(
        connection, list(job_ids), sorted(named.task_ids), sorted(named.trial_ids)
    )
    if active == named:
        rows = counted
    elif not active:
        rows = []
    else:
        rows = job_tallies.contributions(
            connection, list(job_ids), sorted(active.task_ids), sorted(active.trial_ids)
        )
    return Exclusions(applied, rows=_negated(rows), named=counted)


# --- an export's manifest --------------------------------------------------------------------
MANIFEST_VERSION = 1
MANIFEST_RULE = (
    "Trialdesk's pass rates (the job page, compare, agreement) leave out, by default, the"
    " trials listed under left_out; this export holds every trial of its filter. Leave out the"
    " trials of these tasks (and these trial ids) to reproduce those figures, or keep them to"
    " reproduce the figures with the switch on."
)


def manifest(
    trials: QuerySet[Trial], query: str, generated_at: datetime, reasons: Sequence[Reason] = REASONS
) -> dict[str, Any]:
    """What an export of `trials` (the filter `query`) should know of what is left out: per
    reason, the tasks (with their trials in the export) and trials it names, each with the
    confirmed record that says why.

    Per reason: what it names (cached), its records (one query), and, when it names any,
    one grouped count of the export's trials of those tasks and one probe of those trials.
    """
    left_out = []
    confirmed: list[dict[str, Any]] = []
    for reason in reasons:
        excluded = reason.excluded()
        records = reason.records(excluded) if excluded else []
        confirmed.extend(records)
        by_task = {r["task_id"]: r for r in records if r.get("task_id") is not None}
        by_trial = {r["trial_id"]: r for r in records if r.get("trial_id") is not None}
        counts: dict[int, int] = {}
        trial_ids: list[int] = []
        if excluded.task_ids:
            counts = dict(
                trials.filter(task_id__in=sorted(excluded.task_ids))
                .order_by()
                .values("task_id")
                .annotate(n=Count("id"))
                .values_list("task_id", "n")
            )
        if excluded.trial_ids:
            trial_ids = sorted(
                trials.filter(id__in=sorted(excluded.trial_ids))
                .order_by()
                .values_list("id", flat=True)
            )
        left_out.append(
            {
                "reason": reason.key,
                "label": reason.label,
                "switch": f"{reason.param}=1",
                "trials": sum(counts.values()) + len(trial_ids),
                "tasks": [
                    {**_task_of(by_task[task_id]), "trials": n, "why": by_task[task_id]}
                    for task_id, n in sorted(counts.items())
                    if task_id in by_task
                ],
                "trial_ids": [
                    {"trial_id": trial_id, "why": by_trial.get(trial_id)} for trial_id in trial_ids
                ],
            }
        )
    return {
        "manifest": "trialdesk-export",
        "version": MANIFEST_VERSION,
        "generated_at": generated_at.isoformat(),
        "filter": query,
        "rule": MANIFEST_RULE,
        "left_out": left_out,
        "confirmed_entries": sorted(
            confirmed, key=lambda r: (r.get("task_id") or 0, r.get("trial_id") or 0)
        ),
    }


def _task_of(record: dict[str, Any]) -> dict[str, Any]:
    return {key: record[key] for key in ("task_id", "task", "source") if key in record}
