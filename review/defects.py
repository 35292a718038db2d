"""The defective-task ledger: who said a task is broken, how, and on what evidence.

A task's entries (`review.models.DefectEntry`) are append-only; its newest entry says where
it stands: proposed, confirmed or cleared. Reviewers propose (and add evidence to a proposal);
experts and staff confirm, clear, or reopen one by proposing it again (`review.roles`). A
reviewer cannot undo a confirmation: a proposal on a confirmed task would lift its exclusion
from the pass rates, so that is the experts' to decide.

Evidence is a list of links inside Trialdesk (a trial, a step of its trajectory
`/trials/12/#step-3`, an annotation, a job, an explorer filter): each is checked to resolve
to one of Trialdesk's pages and stored as its path, query and fragment, never as a URL to
elsewhere. A trial named by a link must exist.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.urls import Resolver404, resolve
from django.utils.http import url_has_allowed_host_and_scheme

from review.models import DefectEntry
from rewards.cache import forget_left_out
from rewards.models import Task, Trial

State = DefectEntry.State
MAX_LINKS = 20
MAX_LINK_LENGTH = 500
_FRAGMENT = re.compile(r"[A-Za-z0-9_-]{1,64}")
# A bare number is a trial id.
_TRIAL_ID = re.compile(r"[0-9]{1,18}")
# A stored link to a trial's page (or a page of it): its id.
_TRIAL_LINK = re.compile(r"^/trials/([0-9]{1,18})/")


class LedgerRefused(Exception):
    """The author may not add this state to the task's ledger now."""


def allowed_states(*, can_settle: bool, current: str | None) -> list[str]:
    """The states an author may record on a task whose newest entry is `current`."""
    if can_settle:
        return [State.PROPOSED, State.CONFIRMED, State.CLEARED]
    if current == State.CONFIRMED:
        return []
    return [State.PROPOSED]


def clean_evidence(text: str, *, host: str = "") -> list[str]:
    """Links (one a line, or separated by spaces or commas) checked to point inside
    Trialdesk; each returned as its path with its query and fragment.

    `host` is the request's: a full URL must name it (or an allowed host) over http(s).
    """
    links: list[str] = []
    problems: list[str] = []
    trial_ids: dict[int, str] = {}
    for raw in re.split(r"[\s,]+", text.strip()):
        if not raw:
            continue
        if len(raw) > MAX_LINK_LENGTH:
            problems.append(f"A link is longer than {MAX_LINK_LENGTH} characters.")
            continue
        if _TRIAL_ID.fullmatch(raw):
            raw = f"/trials/{raw}/"
        link, trial_id, problem = _clean_link(raw, host)
        if problem:
            problems.append(f"{raw[:80]}: {problem}")
            continue
        if trial_id is not None:
            trial_ids[trial_id] = raw[:80]
        if link not in links:
            links.append(link)
    if len(links) > MAX_LINKS:
        problems.append(f"At most {MAX_LINKS} links.")
    if trial_ids:
        found = set(Trial.objects.filter(pk__in=list(trial_ids)).values_list("pk", flat=True))
        problems.extend(f"{trial_ids[pk]}: no such trial." for pk in trial_ids if pk not in found)
    if problems:
        raise ValidationError(problems)
    return links


def _clean_link(raw: str, host: str) -> tuple[str, int | None, str]:
    """(the stored link, the trial it names if any, a problem or '')."""
    parts = urlsplit(raw)
    if parts.scheme or parts.netloc:
        allowed = {host, *settings.ALLOWED_HOSTS} - {"", "*"}
        if parts.scheme not in ("http", "https") or not url_has_allowed_host_and_scheme(
            raw, allowed_hosts=allowed, require_https=False
        ):
            return "", None, "not a link inside Trialdesk."
    path = parts.path or ""
    if not path.startswith("/"):
        return "", None, "not a link inside Trialdesk (start it with /)."
    try:
        match = resolve(path)
    except Resolver404:
        return "", None, "no such page in Trialdesk."
    if match.namespace != "review":
        return "", None, "not a page of trials, jobs or reviews."
    if parts.fragment and not _FRAGMENT.fullmatch(parts.fragment):
        return "", None, "the part after # is not a place on the page."
    link = path + (f"?{parts.query}" if parts.query else "")
    link += f"#{parts.fragment}" if parts.fragment else ""
    trial_id = match.kwargs.get("pk") if match.url_name == "trial-detail" else None
    return link, trial_id, ""


def trials_named(links: Iterable[str]) -> list[int]:
    """The ids of the trials stored links point at, in order, once each."""
    found = (_TRIAL_LINK.match(link) for link in links)
    return list(dict.fromkeys(int(m.group(1)) for m in found if m))


def relinked(links: Iterable[str], ids: Mapping[int, int]) -> list[str]:
    """The links with each trial id in `ids` replaced by the id it maps to (a ledger entry
    read from a bundle: the trial's id in the database the bundle came from, and here)."""

    def swap(match: re.Match[str]) -> str:
        old = int(match.group(1))
        return f"/trials/{ids.get(old, old)}/"

    return [_TRIAL_LINK.sub(swap, link, count=1) for link in links]


def current_state(task: Task | int) -> str | None:
    """The task's newest entry's state; None when it has none."""
    task_id = task if isinstance(task, int) else task.pk
    state: str | None = (
        DefectEntry.objects.filter(task_id=task_id)
        .order_by("-id")
        .values_list("state", flat=True)
        .first()
    )
    return state


def record(
    *,
    task_id: int,
    author: Any,
    can_settle: bool,
    state: str,
    category: str,
    rationale: str,
    evidence: Sequence[str] = (),
) -> DefectEntry:
    """Add an entry to the task's ledger, checked against its newest entry.

    The task row is locked first (SELECT … FOR UPDATE on PostgreSQL; SQLite's IMMEDIATE
    transactions already serialise writers), so two people settling a task at once each
    decide against the other's entry.
    """
    with transaction.atomic():
        Task.objects.select_for_update().only("pk").get(pk=task_id)
        current = current_state(task_id)
        if state not in allowed_states(can_settle=can_settle, current=current):
            raise LedgerRefused(
                "Only experts and staff can change a task that is confirmed defective."
                if current == State.CONFIRMED
                else "Only experts and staff can confirm or clear a task."
            )
        entry = DefectEntry.objects.create(
            task_id=task_id,
            author=author,
            state=state,
            category=category,
            rationale=rationale,
            evidence=list(evidence),
        )
        # What pass rates leave out is kept (review.science.exclusions): read afresh.
        forget_left_out()
    return entry


@dataclass(frozen=True)
class LedgerRow:
    """A task on the ledger: its newest entry and how many it has."""

    entry: DefectEntry
    entries: int

    @property
    def task(self) -> Task:
        return self.entry.task


# The ledger page's order: what changes the figures first.
_STATE_ORDER = {State.CONFIRMED: 0, State.PROPOSED: 1, State.CLEARED: 2}


def ledger(state: str = "") -> list[LedgerRow]:
    """Every task with an entry, with its newest one: one query."""
    counts = (
        DefectEntry.objects.filter(task=OuterRef("task"))
        .order_by()
        .values("task")
        .annotate(n=Count("pk"))
        .values("n")
    )
    rows: QuerySet[DefectEntry] = (
        DefectEntry.objects.current()
        .select_related("task", "author")
        .defer("task__instruction", "task__output_schema", "task__scorer_specs")
        .annotate(entries=Subquery(counts))
    )
    if state:
        rows = rows.filter(state=state)
    found = [LedgerRow(entry, entry.entries) for entry in rows]  # type: ignore[attr-defined]
    return sorted(found, key=lambda r: (_STATE_ORDER[State(r.entry.state)], -r.entry.pk))


def history(task: Task) -> list[DefectEntry]:
    """The task's entries, oldest first, with their authors."""
    return list(DefectEntry.objects.filter(task=task).select_related("author").order_by("id"))


def confirmed_entries(task_ids: Iterable[int]) -> list[DefectEntry]:
    """The newest entries of these tasks that confirm them defective, with task and author."""
    return list(
        DefectEntry.objects.confirmed()
        .filter(task_id__in=sorted(task_ids))
        .select_related("task", "author")
        .only(
            "id",
            "created_at",
            "state",
            "category",
            "rationale",
            "evidence",
            "task__id",
            "task__name",
            "task__source",
            "task__checksum",
            "author__id",
            "author__username",
        )
        .order_by("task_id")
    )


def entry_dict(entry: DefectEntry) -> dict[str, Any]:
    """An entry as the API and the exports' manifests give it."""
    return {
        "id": entry.pk,
        "task_id": entry.task_id,
        "task": entry.task.name,
        "source": entry.task.source,
        "checksum": entry.task.checksum,
        "state": entry.state,
        "category": entry.category,
        "rationale": entry.rationale,
        "evidence": list(entry.evidence),
        "author": entry.author.get_username(),
        "created_at": entry.created_at.isoformat(),
    }
