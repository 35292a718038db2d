"""Agreement between humans and the automated gates, and between reviewers, under a filter.

A count is a reviewer's latest annotation of a trial (DESIGN §3: the one that counts). A
trial that two reviewers judged counts twice in a gate's matrix, once per reviewer, and its
cell's link lists it once: a cell counts judgments, its link lists trials. Defers abstain:
they are counted apart and never enter a matrix; so do trials whose gate did not decide (no
judge, an unparseable verdict, no scorers).

κ's interval resamples trials, not judgments (a cluster bootstrap, `rewards.agreement.
Clusters`): a trial's two or three judgments share its one gate value and are drawn
together. What each trial adds to a gate's matrix is read when an interval is first asked
for: the trials with two or more pass / fail judgments, grouped by what they add, in one
query (`multi_rated`; over every trial or one job's, from the tallies kept of them,
`MultiRatedTally`); every other judgment is a trial of its own. In a reviewer pair's
matrix every count is already one trial. A table too small or degenerate for an interval
(`rewards.agreement.kappa_refusal`) shows a dash and the reason.

Everything is counted by the database, from each reviewer's latest judgment of each trial
(`LatestJudgment`, which carries the gates of its trial): one GROUP BY gives every matrix of
the three comparisons and of one breakdown dimension, and one self-join on the trial gives
the reviewer pairs. Over every trial those two are read from the tallies the review app
keeps as judgments and gates change (`JudgmentTally`, `PairTally`), a few hundred rows
whatever the number of trials; under a filter by one job alone, from that job's
(`JobJudgmentTally`, `JobPairTally`), by the statements `review.science.tallies` keeps
beside their recount. Python only adds up grouped rows and computes the statistics
(`rewards.agreement`) from them, so the page costs the same number of queries whatever the
number of trials.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, cast
from urllib.parse import urlencode

from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Count, F, Q, QuerySet
from django.http import QueryDict
from django.urls import reverse

from review.filtering.fields import NONE_VALUE, judged_value
from review.filtering.form import TrialFilterForm
from review.models import LatestJudgment
from review.science import tallies
from rewards import agreement
from rewards.agreement import Clusters, Degenerate, Interval, IntervalResult, NoInterval
from rewards.cache import fingerprint
from rewards.models import Trial

GATE_LABELS = ("PASS", "FAIL")
HUMAN_LABELS = ("pass", "fail")
# The largest groups of a breakdown get their own matrix; the rest are summed up.
MAX_GROUPS = 12
# A breakdown row's interval is one of many on the page: fewer replicates keep it quick.
GROUP_REPLICATES = 500
MAX_PAIRS = 20
PairRow = tuple[int, int, str, str, str, str, int, int]


@dataclass(frozen=True)
class Comparison:
    """An automated outcome set against the humans: where it comes from and how to link it."""

    key: str
    label: str
    param: str  # the explorer filter for the automated side
    values: tuple[str, str]  # that filter's values for PASS and FAIL
    short: str  # its name in a sentence


COMPARISONS = (
    Comparison("judge", "Judge verdict", "judge_verdict", ("PASS", "FAIL"), "judge verdict"),
    Comparison(
        "verifier",
        "Verifier outcome (reward ≥ pass threshold)",
        "outcome",
        ("pass", "fail"),
        "verifier outcome",
    ),
    Comparison(
        "scorers", "Scorers OVERALL", "scorer_verdict", ("PASS", "FAIL"), "scorers' OVERALL"
    ),
)


@dataclass(frozen=True)
class Dimension:
    key: str
    label: str
    param: str
    note: str = ""  # what a reader must know about its matrices


DIMENSIONS = {
    d.key: d
    for d in (
        Dimension("source", "Task source", "source"),
        Dimension("judge_model", "Judge model", "judge_model"),
        Dimension(
            "failure_mode",
            "Failure mode",
            "failure_mode",
            note=(
                "A failure mode exists only on a FAIL verdict: the judge names one when it"
                " fails a trial. So by failure mode each judge matrix has a FAIL row only, and"
                " its κ is 0 or undefined by construction: read it for where reviewers pass"
                " what the judge failed, not for κ. Trials the judge passed are under (none)."
            ),
        ),
    )
}
# Task source: the judge, the verifier and the scorers each pass and fail within a source,
# so its matrices are the meaningful ones (failure mode makes every judge matrix degenerate).
DEFAULT_DIMENSION = "source"


@dataclass
class Cell:
    count: int
    url: str

    @property
    def trials_label(self) -> str:
        """Its link's accessible name: the count is judgments, the link lists their trials."""
        return f"the trials of these {self.count} judgment{'' if self.count == 1 else 's'}"


# What a trial judged by two or more reviewers adds to one gate matrix: (the gate's row,
# its pass judgments, its fail judgments, how many such trials).
MultiRated = dict[tuple[str, str | None], list[tuple[int, int, int, int]]]


class Intervals:
    """The κ intervals of a page's matrices, computed together the first time the page asks
    for one (those the cache lacks in one array computation, not one per matrix): a page
    whose HTML is kept asks for none, and reads no trial's judgments.

    `multi_rated` reads what the trials judged more than once add to each gate matrix (one
    query, `multi_rated`), the units its cluster bootstrap resamples."""

    def __init__(self, multi_rated: Callable[[], MultiRated] | None = None) -> None:
        self.matrices: list[Matrix] = []
        self.multi_rated = multi_rated
        self.loaded = False

    def load(self) -> None:
        if self.loaded:
            return
        self.loaded = True
        multi = self.multi_rated() if self.multi_rated is not None else {}
        pending = [(m.units(multi), m.replicates) for m in self.matrices]
        for matrix, interval in zip(self.matrices, agreement.kappa_intervals(pending), strict=True):
            matrix.interval_of_batch = interval


# Fewer trials than this under a matrix: no interval (rewards.agreement.kappa_refusal).
MIN_TRIALS = agreement.MIN_UNITS
_REASONS = {
    Degenerate.EMPTY: "nothing counted",
    Degenerate.TOO_FEW: f"fewer than {MIN_TRIALS} trials",
    Degenerate.ALL_AGREE: "no disagreement: κ is 1 in every resample",
    Degenerate.NO_SPREAD: "every resample gives the same κ",
}


_NOT_YET = object()


@dataclass
class Matrix:
    """A 2x2 confusion matrix: rows the automated outcome, columns the human judgment (or
    reviewer A's judgment and reviewer B's)."""

    counts: list[list[int]]
    urls: list[list[str]]
    replicates: int = agreement.REPLICATES
    # A gate matrix: (comparison, group or None for every group), where its trials judged
    # more than once are found (`MultiRated`). None: every count is one trial (a pair's).
    unit_key: tuple[str, str | None] | None = None
    rows_name: str = "the gate"  # who the rows are, for the reason there is no interval
    columns_name: str = "the reviewers"
    # The intervals computed with the page's other matrices (`Intervals`), if it has any.
    batch: Intervals | None = field(default=None, repr=False, compare=False)
    interval_of_batch: Any = field(default=_NOT_YET, repr=False, compare=False)

    @cached_property
    def n(self) -> int:
        return sum(sum(row) for row in self.counts)

    @cached_property
    def rows(self) -> list[tuple[str, list[Cell]]]:
        return [
            (label, [Cell(c, u) for c, u in zip(counts, urls, strict=True)])
            for label, counts, urls in zip(GATE_LABELS, self.counts, self.urls, strict=True)
        ]

    @property
    def cells(self) -> list[Cell]:
        """Every cell, row by row: pass·pass, pass·fail, fail·pass, fail·fail."""
        return [cell for _, cells in self.rows for cell in cells]

    @property
    def observed(self) -> float | None:
        return (self.counts[0][0] + self.counts[1][1]) / self.n if self.n else None

    @cached_property
    def kappa(self) -> float | None:
        return agreement.cohen_kappa(self.counts)

    def units(self, multi: MultiRated) -> Clusters:
        """The trials its counts come from, as the bootstrap resamples them: those judged
        more than once (`multi`) with all their judgments, every other judgment one trial."""
        if self.unit_key is None:
            return Clusters.of_cells(self.counts)
        singles = [list(row) for row in self.counts]
        profiles: list[tuple[list[int], int]] = []
        for row, passes, fails, trials in multi.get(self.unit_key, []):
            singles[row][0] -= passes * trials
            singles[row][1] -= fails * trials
            cells = [0, 0, 0, 0]
            cells[2 * row], cells[2 * row + 1] = passes, fails
            profiles.append((cells, trials))
        for index, count in enumerate(c for row in singles for c in row):
            one = [0, 0, 0, 0]
            one[index] = 1
            # Below 0 only when a judgment was written between the counts and this read.
            profiles.append((one, max(count, 0)))
        return Clusters.of(2, profiles)

    @cached_property
    def interval_result(self) -> IntervalResult:
        if self.batch is not None:
            self.batch.load()
        if self.interval_of_batch is not _NOT_YET:
            batched: IntervalResult = self.interval_of_batch
            return batched
        return agreement.kappa_interval(self.units({}), replicates=self.replicates)

    @property
    def interval(self) -> Interval | None:
        result = self.interval_result
        return result if isinstance(result, Interval) else None

    @property
    def no_interval(self) -> str:
        """Why κ has no interval (a dash and this on the page), or '' when it has one."""
        result = self.interval_result
        if not isinstance(result, NoInterval):
            return ""
        if result.reason is Degenerate.ROWS_CONSTANT and self.unit_key is None:
            return f"{self.rows_name} gave one judgment only"  # a reviewer, in a pair
        if result.reason is Degenerate.ROWS_CONSTANT:
            return f"{self.rows_name} never varies here"
        if result.reason is Degenerate.COLUMNS_CONSTANT:
            return f"{self.columns_name} gave one judgment only"
        return _REASONS.get(result.reason, str(result.reason))

    def as_dict(self) -> dict[str, Any]:
        interval = self.interval
        return {
            "n": self.n,
            "counts": {
                auto: dict(zip(HUMAN_LABELS, row, strict=True))
                for auto, row in zip(GATE_LABELS, self.counts, strict=True)
            },
            "observed_agreement": self.observed,
            "kappa": self.kappa,
            "kappa_ci": [interval.low, interval.high] if interval else None,
            "kappa_no_interval": self.no_interval or None,
        }


@dataclass
class Group:
    value: str
    matrix: Matrix

    @property
    def label(self) -> str:
        return self.value or NONE_VALUE


@dataclass
class ComparisonResult:
    comparison: Comparison
    overall: Matrix
    groups: list[Group]
    other_groups: int  # groups beyond MAX_GROUPS
    other_count: int  # their judgments
    undecided: int  # judgments whose gate did not decide (no judge, no scorers, unparseable)


@dataclass
class ReviewerPair:
    a: str
    b: str
    matrix: Matrix  # rows: a's judgment, columns: b's

    @property
    def kappa(self) -> float | None:
        return self.matrix.kappa


@dataclass
class ReviewerAgreement:
    pairs: list[ReviewerPair]
    more_pairs: int
    alpha: float | None
    pairable: int  # judgments on trials with two or more reviewers
    coincidence: list[list[float]] = field(default_factory=list)


@dataclass
class Report:
    comparisons: list[ComparisonResult]
    dimension: Dimension
    judgments: int  # latest annotations under the filter
    defers: int
    reviewers: ReviewerAgreement
    # Judgments of trials left out (`review.science.exclusions`): not in any figure above.
    left_out: int = 0

    @cached_property
    def sections(self) -> list[tuple[ComparisonResult, str]]:
        """Each comparison with the cache key of its HTML: everything its section shows
        (every count, label and link of its matrices, each field nested in its repr), the
        breakdown, and the reviewer pairs (κ's intervals follow from the counts and from
        which trials were judged more than once, which the pairs count). A new judgment
        re-renders the sections whose counts it changed; the others are kept."""
        return [
            (result, fingerprint(result, self.dimension, self.reviewers))
            for result in self.comparisons
        ]

    @cached_property
    def reviewers_fingerprint(self) -> str:
        """The cache key of the reviewer pairs' HTML: their counts, names and links (a pair's
        κ interval follows from its counts, every count one trial)."""
        return fingerprint(self.reviewers)


# --- links ----------------------------------------------------------------------------------
class ExplorerLinks:
    """The explorer under the page's filter, narrowed further to one cell's trials.

    `judged` conditions are added to the page's own (all must hold), so a cell of a page
    already filtered by judgments lists exactly its trials; other parameters replace the
    page's value, which can only differ for a cell that counted nothing (and is not linked).
    The page's parameters are read once: a page has a hundred links or more.
    """

    def __init__(self, base: QueryDict) -> None:
        self.path = reverse("review:explorer")
        # Each parameter of the page encoded once, beside its name.
        self.encoded = [
            (k, urlencode([(k, v)])) for k, values in base.lists() if k != "after" for v in values
        ]

    def url(self, judged: tuple[tuple[str | None, str], ...] = (), **params: str) -> str:
        parts = [encoded for k, encoded in self.encoded if k not in params]
        parts.extend(_encoded(k, v) for k, v in params.items())
        parts.extend(_encoded("judged", judged_value(*c)) for c in judged)
        return f"{self.path}?{'&'.join(parts)}"


@lru_cache(maxsize=4096)
def _encoded(name: str, value: str) -> str:
    """`name=value` for a query string; the same few dozen come back on every page."""
    return urlencode([(name, value)])


def _matrix(
    counts: list[list[int]],
    links: ExplorerLinks,
    comparison: Comparison,
    group_value: str | None,
    replicates: int = agreement.REPLICATES,
    **group: str,
) -> Matrix:
    urls = [
        [links.url(((None, human),), **{comparison.param: auto}, **group) for human in HUMAN_LABELS]
        for auto in comparison.values
    ]
    return Matrix(
        counts=counts,
        urls=urls,
        replicates=replicates,
        unit_key=(comparison.key, group_value),
        rows_name=f"the {comparison.short}",
    )


def _pair_urls(links: ExplorerLinks, a: str, b: str) -> list[list[str]]:
    """Each cell of a reviewer pair's matrix: the trials a judged one way and b the other."""
    return [
        [links.url(((a, a_judgment), (b, b_judgment))) for b_judgment in HUMAN_LABELS]
        for a_judgment in HUMAN_LABELS
    ]


# --- the counts -----------------------------------------------------------------------------
def filtered_trials(form: TrialFilterForm) -> QuerySet[Trial, Any] | None:
    """The ids of the trials under the filter, or None when it narrows nothing."""
    trials = form.filter(Trial.objects.all())
    return trials.order_by().values("pk") if trials.query.has_filters() else None


def counted(form: TrialFilterForm) -> QuerySet[LatestJudgment]:
    """The latest judgment of each reviewer on each trial under the filter."""
    rows = form.counted_judgments()
    trials = filtered_trials(form)
    return rows if trials is None else rows.filter(trial__in=trials)


def _reads_tallies(form: TrialFilterForm) -> bool:
    """Whether kept tally rows count the filter's judgments: every trial's when nothing
    narrows the trials, one job's when the job alone does."""
    return form.only_job is not None or filtered_trials(form) is None


def _tallied_job(form: TrialFilterForm) -> int | None:
    """The job whose kept tallies count the filter's judgments, or None for every trial's
    (when `_reads_tallies`)."""
    job = form.only_job
    return job.pk if job is not None else None


# The columns of `tallies.judgment_counts`, named as `_grouped_latest` names its own.
_GROUPED_KEYS = ("verifier", "judge", "scorers", "human", "group", "count")


def grouped_counts(form: TrialFilterForm, dimension: Dimension) -> list[dict[str, Any]]:
    """One query: judgments counted by every gate, the human judgment and the group.

    Over every trial, or one job's, the kept tallies are summed (a few hundred rows); under
    any other filter the latest judgments of its trials are grouped, by the gates they carry.
    """
    return list(_grouped(form, dimension))


def _grouped(form: TrialFilterForm, dimension: Dimension) -> Iterable[dict[str, Any]]:
    if _reads_tallies(form):
        tallied = tallies.judgment_counts(_tallied_job(form), form.blind_only, dimension.key)
        return [dict(zip(_GROUPED_KEYS, row, strict=True)) for row in tallied]
    return _grouped_latest(counted(form), form, dimension)


def _grouped_latest(
    rows: QuerySet[LatestJudgment], form: TrialFilterForm, dimension: Dimension
) -> QuerySet[Any]:
    gates = {"judge": F("judge_verdict"), "scorers": F("scorer_verdict")}
    return (
        rows.order_by()
        .values("verifier", **gates, human=F(form.counted_field), group=F(dimension.key))
        .annotate(count=Count("pk"))
    )


def _empty() -> list[list[int]]:
    return [[0, 0], [0, 0]]


# --- trials left out (review.science.exclusions) ---------------------------------------------
def _left_out_judgments(form: TrialFilterForm, left_out: Q) -> QuerySet[LatestJudgment]:
    """The judgments under the filter of the trials `left_out` names (a task's few)."""
    return counted(form).filter(trial__in=Trial.objects.filter(left_out).values("pk"))


def left_out_count(form: TrialFilterForm, left_out: Q) -> int:
    """How many judgments under the filter are of trials `left_out` names: one query."""
    return _left_out_judgments(form, left_out).count()


def _without(rows: list[dict[str, Any]], taken: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Grouped counts with the trials left out taken off: their own counts, negated."""
    return rows + [{**row, "count": -row["count"]} for row in taken]


def report(
    form: TrialFilterForm, dimension_key: str = DEFAULT_DIMENSION, left_out: Q | None = None
) -> Report:
    """The figures under the filter; without the trials `left_out` names, when given
    (their judgments grouped the same way, one query, and subtracted)."""
    dimension = DIMENSIONS.get(dimension_key, DIMENSIONS[DEFAULT_DIMENSION])
    rows = grouped_counts(form, dimension)
    taken = 0
    if left_out is not None:
        subtracted = list(_grouped_latest(_left_out_judgments(form, left_out), form, dimension))
        taken = sum(r["count"] for r in subtracted)
        rows = _without(rows, subtracted)
    links = ExplorerLinks(form.canonical_query())
    judgments = sum(r["count"] for r in rows)
    defers = sum(r["count"] for r in rows if r["human"] == "defer")
    results = []
    for comparison in COMPARISONS:
        overall = _empty()
        by_group: dict[str, list[list[int]]] = defaultdict(_empty)
        undecided = 0
        for row in rows:
            if row["human"] not in HUMAN_LABELS:
                continue
            auto = row[comparison.key]
            if auto not in GATE_LABELS:
                undecided += row["count"]
                continue
            i, j = GATE_LABELS.index(auto), HUMAN_LABELS.index(row["human"])
            overall[i][j] += row["count"]
            by_group[row["group"] or ""][i][j] += row["count"]
        # A group whose judgments were all left out counts none: not shown.
        ranked = sorted(
            ((value, counts) for value, counts in by_group.items() if sum(map(sum, counts))),
            key=lambda item: (-sum(map(sum, item[1])), item[0]),
        )
        shown, rest = ranked[:MAX_GROUPS], ranked[MAX_GROUPS:]
        results.append(
            ComparisonResult(
                comparison=comparison,
                overall=_matrix(overall, links, comparison, None),
                groups=[
                    Group(
                        value,
                        _matrix(
                            counts,
                            links,
                            comparison,
                            value,
                            GROUP_REPLICATES,
                            **{dimension.param: value or NONE_VALUE},
                        ),
                    )
                    for value, counts in shown
                ],
                other_groups=len(rest),
                other_count=sum(sum(map(sum, counts)) for _, counts in rest),
                undecided=undecided,
            )
        )
    reviewers = reviewer_agreement(form, links, left_out)
    # Every matrix's κ interval is computed with the others, when the page first asks. No
    # judgment on a trial with two or more reviewers (the pairs say so): every judgment is a
    # trial of its own, and there is nothing to read.
    batch = Intervals(
        (lambda: multi_rated(form, dimension, left_out)) if reviewers.pairable else None
    )
    batch.matrices = [
        *(m for result in results for m in (result.overall, *(g.matrix for g in result.groups))),
        *(pair.matrix for pair in reviewers.pairs),
    ]
    for matrix in batch.matrices:
        matrix.batch = batch
    return Report(
        comparisons=results,
        dimension=dimension,
        judgments=judgments,
        defers=defers,
        reviewers=reviewers,
        left_out=taken,
    )


def pair_counts(form: TrialFilterForm, left_out: Q | None = None) -> list[PairRow]:
    """(reviewer a, reviewer b, their usernames, a's judgment, b's judgment, raters on the
    trial, count).

    One query. Over every trial or one job's, the kept pair tallies; under another filter,
    the latest pass/fail judgments of its trials joined with themselves on the trial (a < b,
    so each pair of reviewers once) and with the number of reviewers on the trial, which
    Krippendorff's alpha needs to weigh each pair.
    """
    if left_out is not None:
        # The pairs of the trials left out, counted alike (a trial's pairs are all its own)
        # and subtracted.
        taken = _pairs_of(_left_out_judgments(form, left_out), form)
        kept = pair_counts(form)
        return kept + [(*row[:7], -row[7]) for row in taken]
    if _reads_tallies(form):
        rows = tallies.pair_counts(_tallied_job(form), form.blind_only)
        return [cast(PairRow, row) for row in rows]
    return _pairs_of(counted(form), form)


def _pairs_of(judgments: QuerySet[LatestJudgment], form: TrialFilterForm) -> list[PairRow]:
    field = form.counted_field
    latest = judgments.filter(**{f"{field}__in": HUMAN_LABELS}).order_by()
    inner, params = latest.values("trial_id", "reviewer_id", field).query.sql_with_params()
    users = connection.ops.quote_name(User._meta.db_table)
    sql = f"""
        WITH latest (trial_id, reviewer_id, judgment) AS ({inner}),
        raters AS (
            SELECT trial_id, COUNT(*) AS m FROM latest GROUP BY trial_id HAVING COUNT(*) > 1
        )
        SELECT a.reviewer_id, b.reviewer_id, ua.username, ub.username, a.judgment, b.judgment,
            r.m, COUNT(*)
        FROM latest a
        JOIN latest b ON b.trial_id = a.trial_id AND b.reviewer_id > a.reviewer_id
        JOIN raters r ON r.trial_id = a.trial_id
        JOIN {users} ua ON ua.id = a.reviewer_id
        JOIN {users} ub ON ub.id = b.reviewer_id
        GROUP BY a.reviewer_id, b.reviewer_id, ua.username, ub.username, a.judgment,
            b.judgment, r.m
    """  # noqa: S608 (the inner query is Django's, compiled with its parameters apart)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [cast(PairRow, tuple(row)) for row in cursor.fetchall()]


def reviewer_agreement(
    form: TrialFilterForm, links: ExplorerLinks, left_out: Q | None = None
) -> ReviewerAgreement:
    rows = pair_counts(form, left_out)
    coincidence = agreement.coincidences(
        ((a_j, b_j, m, n) for *_, a_j, b_j, m, n in rows), HUMAN_LABELS
    )
    by_pair: dict[tuple[int, int], list[list[int]]] = defaultdict(_empty)
    names: dict[int, str] = {}
    for a, b, a_name, b_name, a_j, b_j, _, n in rows:
        by_pair[(a, b)][HUMAN_LABELS.index(a_j)][HUMAN_LABELS.index(b_j)] += n
        names[a], names[b] = a_name, b_name
    ranked = sorted(
        ((pair, counts) for pair, counts in by_pair.items() if sum(map(sum, counts))),
        key=lambda item: (-sum(map(sum, item[1])), item[0]),
    )
    shown = ranked[:MAX_PAIRS]
    pairs = []
    for (a, b), counts in shown:
        a_name, b_name = names[a], names[b]
        urls = _pair_urls(links, a_name, b_name)
        matrix = Matrix(
            counts=counts,
            urls=urls,
            replicates=GROUP_REPLICATES,
            rows_name=a_name,
            columns_name=b_name,
        )
        pairs.append(ReviewerPair(a=a_name, b=b_name, matrix=matrix))
    return ReviewerAgreement(
        pairs=pairs,
        more_pairs=len(ranked) - len(shown),
        alpha=agreement.krippendorff_alpha_nominal(coincidence),
        pairable=round(sum(map(sum, coincidence))),
        coincidence=coincidence,
    )


def multi_rated(
    form: TrialFilterForm, dimension: Dimension, left_out: Q | None = None
) -> MultiRated:
    """What the trials with two or more pass / fail judgments under the filter add to each
    gate matrix (overall and per group of `dimension`), for the cluster bootstrap.

    One query. Over every trial or one job's, the kept tallies (`MultiRatedTally`,
    `JobMultiRatedTally`) summed by the gates and the group; under another filter, its
    latest judgments grouped by trial (with its gates and group, the same for all of its
    rows), kept where two or more reviewers passed or failed it, then grouped again by what
    they add. The trials `left_out` names are counted alike and subtracted from the kept
    rows, or left out of the grouping (a second query with the tallies, as for the
    matrices). Asked only when an interval is computed.
    """
    gates = ("verifier", "judge_verdict", "scorer_verdict", dimension.key)
    rows: list[tuple[Any, ...]]
    if _reads_tallies(form):
        rows = tallies.multi_rated_counts(_tallied_job(form), form.blind_only, dimension.key)
        if left_out is not None:
            taken = _multi_rated_rows(_left_out_judgments(form, left_out), form, gates)
            rows += [(*row[:-1], -row[-1]) for row in taken]
    else:
        judgments = counted(form)
        if left_out is not None:
            judgments = judgments.exclude(trial__in=Trial.objects.filter(left_out).values("pk"))
        rows = _multi_rated_rows(judgments, form, gates)
    # Each (gates, group, passes, fails) once, with its trials (less those left out).
    trials_of: dict[tuple[Any, ...], int] = defaultdict(int)
    for row in rows:
        trials_of[(*row[:3], row[3] or "", *row[4:6])] += row[6]
    # Then what they add to each matrix, alike additions summed: a matrix's units in as few
    # profiles as it has kinds of trial, whatever the other gates.
    keys = {"verifier": 0, "judge": 1, "scorers": 2}
    added: dict[tuple[str, str | None], dict[tuple[int, int, int], int]] = defaultdict(
        lambda: defaultdict(int)
    )
    for (*autos, group, passes, fails), trials in trials_of.items():
        if trials <= 0:
            continue
        for comparison in COMPARISONS:
            gate = autos[keys[comparison.key]]
            if gate not in GATE_LABELS:
                continue
            unit = (GATE_LABELS.index(gate), passes, fails)
            added[(comparison.key, None)][unit] += trials
            added[(comparison.key, group)][unit] += trials
    return {key: [(*unit, n) for unit, n in sorted(units.items())] for key, units in added.items()}


def _multi_rated_rows(
    judgments: QuerySet[LatestJudgment], form: TrialFilterForm, gates: tuple[str, ...]
) -> list[tuple[Any, ...]]:
    """(gates..., group, passes, fails, trials): `judgments` grouped by trial, kept where
    two or more are pass or fail, grouped again by what they add. One query."""
    field = form.counted_field
    per_trial = (
        judgments.filter(**{f"{field}__in": HUMAN_LABELS})
        .order_by()
        .values("trial_id", *gates)
        .annotate(
            passes=Count("pk", filter=Q(**{field: "pass"})),
            fails=Count("pk", filter=Q(**{field: "fail"})),
            raters=Count("pk"),
        )
        .filter(raters__gt=1)
    )
    inner, params = per_trial.query.sql_with_params()
    columns = ", ".join(connection.ops.quote_name(name) for name in (*gates, "passes", "fails"))
    sql = f"SELECT {columns}, COUNT(*) FROM ({inner}) per_trial GROUP BY {columns}"  # noqa: S608 (the inner query is Django's, compiled with its parameters apart)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [tuple(row) for row in cursor.fetchall()]
