"""How many trials a filter matches, without counting a million rows per request.

DESIGN §7: the explorer never runs a `COUNT(*)` over the table. A filter made only of what
the kept tallies are keyed by (job, task, agent, model, failure mode: `JobTally`, kept by
triggers) is counted exactly from those few rows. Any other filter is counted by a probe
that reads at most `PROBE_LIMIT + 1` matching ids (`COUNT(*)` over a capped subquery, an
index range the filter's own index serves): exact up to the limit, beyond it "more than
PROBE_LIMIT", with the tallies of the filter's keyed part as the upper bound. A filter made
only of reviewers' latest judgments (the agreement page's links) is counted by agreement's
pair tallies when it names a reviewer pair's cell, else probed in the latest judgments alone,
without the trials, and bounded by agreement's judgment tallies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet, Sum

from review.choices import finished_job_trials
from review.filtering.form import TrialFilterForm
from review.models import JobTally, JudgmentTally, PairTally
from rewards.models import Trial

# Measured on PostgreSQL over 1,000,000 trials: a probe of 1,001 ids on a gate's index is
# well under a millisecond; one of 10,001 took 2-20 ms warm (the page itself is 3 ms).
PROBE_LIMIT = 1_000

# Filter field -> the JobTally column that holds the same value.
TALLIED = {
    "job": "job_id",
    "task": "task__name",
    "agent": "agent_name",
    "model": "model_name",
    "failure_mode": "failure_mode",
}
NOT_FILTERS = frozenset({"sort", "after", "overlap", "blind", "counted"})
# The filters on reviewers' latest judgments (`TrialFilterForm.judged_conditions`).
JUDGED = frozenset({"reviewer_judgment", "judged"})
# The judgments a reviewer pair's tallies count (a defer abstains).
PAIRED = frozenset({"pass", "fail"})


@dataclass(frozen=True)
class Count:
    """`exact` trials match, or, when `exact` is None, more than `at_least` and at most
    `at_most` (None: no bound known)."""

    exact: int | None
    at_least: int = 0
    at_most: int | None = None


def _tallied(form: TrialFilterForm) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, column in TALLIED.items():
        value = form.cleaned_value(name)
        if value not in (None, ""):
            values[column] = value.pk if name == "job" else value
    return values


def _tally_sum(keyed: dict[str, Any]) -> int:
    total = JobTally.objects.filter(**keyed).aggregate(n=Sum("trials"))["n"]
    return int(total or 0)


def matching(form: TrialFilterForm, queryset: QuerySet[Trial]) -> Count:
    """How many trials of `queryset` (every trial) `form` matches."""
    keyed = _tallied(form)
    in_use = set(form.fields_in_use(NOT_FILTERS))
    if in_use <= TALLIED.keys():
        if in_use == {"job"} and (kept := finished_job_trials(keyed["job_id"])) is not None:
            # A finished job's list: its count is kept with the job choices (no query).
            return Count(exact=kept)
        # One sum over the tally rows of the filter (a job's are a few dozen).
        return Count(exact=_tally_sum(keyed))
    judged = form.judged_trial_ids() if in_use <= JUDGED else None
    if judged is not None:
        paired = _pair_tally(form)
        if paired is not None:
            return Count(exact=paired)
        probed = _judged_probe(*judged)
        if probed <= PROBE_LIMIT:
            return Count(exact=probed)
        return Count(exact=None, at_least=PROBE_LIMIT, at_most=_judged_bound(form))
    probed = form.filter(queryset).order_by().values("id")[: PROBE_LIMIT + 1].count()
    if probed <= PROBE_LIMIT:
        return Count(exact=probed)
    return Count(exact=None, at_least=PROBE_LIMIT, at_most=_tally_sum(keyed))


def _pair_tally(form: TrialFilterForm) -> int | None:
    """The trials two named reviewers judged pass or fail as the form's two conditions say
    (a reviewer pair's cell), counted exactly by agreement's pair tallies: the number the
    cell shows. None for any other reviewer conditions."""
    conditions = form.judged_conditions()
    if len(conditions) != 2:
        return None
    (a, judgment_a), (b, judgment_b) = conditions
    if a is None or b is None or a == b or not {judgment_a, judgment_b} <= PAIRED:
        return None
    # A pair's tallies hold its reviewers in id order: either may be named first.
    cell = Q(
        reviewer_a__username=a, reviewer_b__username=b, judgment_a=judgment_a, judgment_b=judgment_b
    )
    swapped = Q(
        reviewer_a__username=b, reviewer_b__username=a, judgment_a=judgment_b, judgment_b=judgment_a
    )
    pairs = PairTally.objects.filter(cell | swapped, blind=form.blind_only)
    return int(pairs.aggregate(n=Sum("n"))["n"] or 0)


def _judged_probe(sql: str, params: list[Any]) -> int:
    """How many distinct trials `sql` (the form's `judged_trial_ids`) selects, counted up
    to PROBE_LIMIT + 1: an index range of the latest judgments, the trials not read.
    Probed through the trials instead, PostgreSQL walked the trials' primary key beside
    the judgments (10-15 ms over a million trials, more than the page's own query)."""
    # The form's SQL, every value a parameter.
    probe = f"SELECT COUNT(*) FROM (SELECT DISTINCT trial_id FROM ({sql}) judged LIMIT %s) n"  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(probe, [*params, PROBE_LIMIT + 1])
        row = cursor.fetchone()
    return int(row[0])


def _judged_bound(form: TrialFilterForm) -> int:
    """At most this many trials meet the form's reviewer conditions: each needs a latest
    judgment (blind, if only those are counted) of its kind, and agreement's judgment
    tallies count those. The fewest of any condition's, in one sum per judgment."""
    judgments = sorted({judgment for _, judgment in form.judged_conditions()})
    sums = JudgmentTally.objects.filter(blind=form.blind_only).aggregate(
        **{judgment: Sum("n", filter=Q(judgment=judgment)) for judgment in judgments}
    )
    return min(int(sums[judgment] or 0) for judgment in judgments)
