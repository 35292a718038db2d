"""Every kept tally against a recount from the trials and annotations.

The triggers keep the tallies (review migrations 0008 to 0011 and 0018); `manage.py retally`
recounts them all (data written with the triggers absent), and `retally --check` tells
whether they already equal a recount, changing nothing: what an operator runs after a
restore, and what the backup tests assert.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.db import models, transaction

from review.models import (
    JobJudgmentTally,
    JobMultiRatedTally,
    JobPairTally,
    JobTally,
    JudgmentTally,
    LatestJudgment,
    MultiRatedTally,
    PairTally,
    TrialReviewed,
)
from review.science import job_tallies, tallies

KEPT: tuple[type[models.Model], ...] = (
    LatestJudgment,
    JudgmentTally,
    PairTally,
    MultiRatedTally,
    JobJudgmentTally,
    JobPairTally,
    JobMultiRatedTally,
    JobTally,
    TrialReviewed,
)


def rebuild(connection: Any) -> None:
    """Recount the latest judgments, agreement's tallies and every job's tallies."""
    tallies.rebuild(connection)
    job_tallies.rebuild(connection)


def drifted(connection: Any) -> list[str]:
    """The kept tables whose rows differ from a recount; nothing is changed (the recount
    is rolled back)."""
    with transaction.atomic():
        kept = {model: rows(model) for model in KEPT}
        rebuild(connection)
        counted = {model: rows(model) for model in KEPT}
        transaction.set_rollback(True)
    return [model._meta.db_table for model in KEPT if kept[model] != counted[model]]


def rows(model: type[models.Model]) -> Counter[tuple[Any, ...]]:
    """A kept table's rows without their ids, as a multiset. A key whose trials or
    judgments all went keeps a row of zeros, which a recount does not write: left out."""
    names = [
        field.attname
        for field in model._meta.concrete_fields
        if not isinstance(field, models.AutoField)
    ]
    found = model._default_manager.values_list(*names)
    if model is JobTally:
        found = found.exclude(trials=0)
    elif "n" in names:
        found = found.exclude(n=0)
    return Counter(found)
