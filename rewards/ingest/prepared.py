"""A bundle turned into the rows it stores, ready to insert without the ORM.

`prepare` makes one trial's rows from the bundle-to-row mapping (`mapping`), as values
encoded for the database (`copytext`), kept as plain data without building an instance.
It runs wherever the bundle was read, a reader process included, so the process holding
the database connection only looks up, inserts and links: the costly part (validation,
digest, summary, JSON text) is spread over the cores. A `PreparedTrial` pickles as
strings and numbers, not as a tree of pydantic models.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from django.utils import timezone

from rewards.ingest.copytext import Row, row_of
from rewards.ingest.digest import as_stored
from rewards.ingest.discover import Item, read_item
from rewards.ingest.mapping import child_values, summary_of, trial_columns_of
from rewards.ingest.outcomes import WRITE_ERRORS, WriteOutcome, db_reason
from rewards.models import Integrity, IntegrityFinding, Trial, unsaved_values
from rewards.schemas import JobRecord, TaskRecord, TrialBundle

log = logging.getLogger(__name__)


@dataclass(slots=True)
class PreparedTrial:
    """One trial's rows and what the writer needs to decide about them."""

    job: JobRecord
    task: TaskRecord
    uid: UUID
    name: str
    digest: str  # the content digest
    fingerprint: str  # the folder's, when read from one
    trial: Row  # its columns (`column_plan(Trial)` order), name, digest and fingerprint among them
    children: dict[str, list[Row]]  # model label → rows
    problems: int = 0
    first_problem: str = ""
    # Or step comments, finding reviews, ledger entries: the review app stores them all.
    has_annotations: bool = False
    # Why its result is not valid (the current result's first validity error: a rejected or
    # missing reward…), if it is not: the trial is stored, and the run's summary counts it
    # invalid, as the explorer's validity filter does.
    rejected: str = ""
    # Where the bundle can be read again: a discovered item and the run's `--job`.
    source: Item | None = None
    job_override: str | None = None
    where: str = ""  # a bundle line's `FILE line N` (`WriteOutcome.where`)
    # The bundle itself when it was read in this process; a reader process leaves it out
    # (the writer reads the trial again in the rare case it needs it: an update).
    bundle: TrialBundle | None = field(default=None, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        state = {name: getattr(self, name) for name in self.__slots__}
        state["bundle"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    @property
    def key(self) -> tuple[str, str]:
        return (self.job.name, self.name)

    def load(self) -> TrialBundle:
        """The bundle, read again from its folder when it was prepared in a reader process."""
        if self.bundle is None:
            reads = read_item(self.source, self.job_override) if self.source else iter(())
            read = next(iter(reads), None)
            if not isinstance(read, TrialBundle):
                raise ValueError("its files changed or vanished while it was being ingested")
            self.bundle = read
        return self.bundle


def prepare(bundle: TrialBundle, digest: str, *, fingerprint: str = "") -> PreparedTrial:
    """The rows `bundle` stores (the bundle and digest as `digest.as_stored` gives them)."""
    now = timezone.now()  # the children's own times (a result's `evaluated_at`…)
    record = bundle.trial
    # The rows as `unsaved` instances would hold them, built without the instances.
    trial = unsaved_values(Trial, name=record.name, uid=record.uid, **trial_columns_of(bundle))
    # The human side is a new trial's default; only the task's pass threshold is read.
    trial.update(
        Trial.summary_values(
            summary_of(bundle, bundle.current_result),
            trial["human_judgment"],
            bundle.task.pass_threshold,
        )
    )
    trial["content_digest"], trial["source_fingerprint"] = digest, fingerprint
    values_by_model = child_values(bundle, now)
    # A new trial's findings are all open: flagged when it has any.
    trial["integrity"] = Integrity.of(
        IntegrityFinding.Status.OPEN for _ in values_by_model[IntegrityFinding]
    )
    children = {
        model._meta.label: [row_of(model, unsaved_values(model, **values)) for values in rows]
        for model, rows in values_by_model.items()
    }
    problems = record.ingest_problems
    first = ""
    if problems:
        where = f"{problems[0].file} {problems[0].field}".strip()
        more = len(problems) - 1
        first = f"{where}: {problems[0].message}" + (f" (and {more} more)" if more else "")
    return PreparedTrial(
        job=bundle.job,
        task=bundle.task,
        uid=record.uid,
        name=record.name,
        digest=digest,
        fingerprint=fingerprint,
        trial=row_of(Trial, trial),
        children=children,
        problems=len(problems),
        first_problem=first,
        has_annotations=bundle.carries_review_records,
        rejected=next(iter(bundle.current_result.validity.errors), ""),
        bundle=bundle,
    )


def prepare_or_refuse(
    bundle: TrialBundle, *, fingerprint: str = "", where: str = ""
) -> PreparedTrial | WriteOutcome:
    """A bundle's rows (`prepare`), or the "invalid" outcome that says why it has none."""
    try:
        checked, digest = as_stored(bundle)
        prepared = prepare(checked, digest, fingerprint=fingerprint)
        prepared.where = where
        return prepared
    except WRITE_ERRORS as exc:
        reason = db_reason(exc)
    except Exception as exc:  # a bug must not lose the other trials
        log.exception("could not prepare %s/%s", bundle.job.name, bundle.trial.name)
        reason = f"could not be stored ({type(exc).__name__})"
    return WriteOutcome("invalid", bundle.job.name, bundle.trial.name, reason=reason, where=where)
