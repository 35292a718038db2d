"""Agreement and comparison statistics, computed from counts.

Every function here takes counts that the database already aggregated (a confusion matrix,
pair counts, a paired 2x2 table) and never a row per trial, so the cost is the same for ten
trials or a million. The formulas are written out by hand; the bootstrap resamples
counts of units (numpy draws every replicate's multinomial at once and the statistic is
computed over all of them as arrays), so it needs no per-row loop either.

- Cohen's κ: (p_o - p_e) / (1 - p_e) over a square confusion matrix.
- Krippendorff's alpha (nominal): 1 - (n - 1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c·n_k over the
  coincidence matrix, which is built from pair counts: an unordered pair of values (a, b) on
  a unit rated by m raters adds 1/(m - 1) to o_ab and to o_ba.
- McNemar's test on the discordant pairs b and c of a paired 2x2 table: exact two-sided
  binomial (p = 0.5) while b + c < EXACT_BELOW, else χ² with continuity correction.
- Pass-rate delta of two paired runs, with a percentile bootstrap interval over tasks.

Intervals resample units, never judgments: `Clusters` says what one unit (a trial) adds to a
table, so a trial judged by three reviewers is drawn whole, its three judgments together.
Whether a statistic gets an interval is decided from its counts before resampling
(`kappa_refusal`, `delta_refusal`: too few units, a constant rater, no disagreement, no
change), so it never depends on the draws; a refused one is a `NoInterval` with its reason,
never a point shown as [x, x]. The bootstrap is seeded, so the same counts give the same
interval.

A statistic that is undefined for its counts (no data, or chance agreement of 1) is None,
never a made-up number.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from rewards.cache import cached_intervals, interval_key

Matrix = Sequence[Sequence[float]]

REPLICATES = 1000
LEVEL = 0.95
SEED = 20261123
# Fewer units than this (trials for κ, tasks for a delta) get no interval: a percentile
# bootstrap of a handful of units describes the handful, not the uncertainty.
MIN_UNITS = 10
# Below this many discordant pairs McNemar's χ² approximation is poor; the exact binomial
# test is used instead (and it is cheap there).
EXACT_BELOW = 25


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    level: float
    replicates: int


# --- Cohen's κ ------------------------------------------------------------------------------
def _square(counts: Matrix) -> int:
    size = len(counts)
    if any(len(row) != size for row in counts):
        raise ValueError("a confusion matrix must be square")
    return size


def cohen_kappa(counts: Matrix) -> float | None:
    """Cohen's κ of a square confusion matrix (rows: rater A, columns: rater B)."""
    size = _square(counts)
    n = sum(sum(row) for row in counts)
    if n <= 0:
        return None
    observed = sum(counts[i][i] for i in range(size)) / n
    rows = [sum(row) for row in counts]
    cols = [sum(counts[i][j] for i in range(size)) for j in range(size)]
    expected = sum(rows[i] * cols[i] for i in range(size)) / (n * n)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1 - expected)


# --- resampling units -----------------------------------------------------------------------
class Degenerate(StrEnum):
    """Why a statistic gets no interval: decided from the counts before any resampling
    (`kappa_refusal`, `delta_refusal`), except NO_SPREAD, which the resamples show."""

    EMPTY = "nothing counted"
    TOO_FEW = "too few units"
    ROWS_CONSTANT = "the rows' rater gave one value only"
    COLUMNS_CONSTANT = "the columns' rater gave one value only"
    ALL_AGREE = "no disagreement"
    NONE_AGREE = "no agreement"
    NO_CHANGE = "no unit changed"
    ONE_CELL = "every unit in one cell"
    NO_SPREAD = "every resample gives the same value"


@dataclass(frozen=True)
class NoInterval:
    """No interval, and why (a dash on the page, never [x, x])."""

    reason: Degenerate


type IntervalResult = Interval | NoInterval
Cells = tuple[int, ...]


@dataclass(frozen=True)
class Clusters:
    """A table's resampling units: each profile is the cells one unit adds to the table
    (flattened row by row) and how many units add exactly that.

    A unit is what is independent: a trial judged by three reviewers against one gate value
    adds three judgments to one row, and the bootstrap draws the trial, never one of its
    judgments alone. A table whose every count is a unit of its own is `of_cells`.
    """

    size: int
    profiles: tuple[tuple[Cells, int], ...]

    @classmethod
    def of(cls, size: int, profiles: Iterable[tuple[Sequence[int], int]]) -> Clusters:
        """Profiles merged and sorted (the same units always give the same `Clusters`), the
        ones of no unit dropped."""
        merged: dict[Cells, int] = {}
        for cells, units in profiles:
            if len(cells) != size * size:
                raise ValueError("a profile adds to every cell of a square table")
            if units < 0 or any(c < 0 for c in cells):
                raise ValueError("counts cannot be negative")
            if units and any(cells):
                key = tuple(int(c) for c in cells)
                merged[key] = merged.get(key, 0) + int(units)
        return cls(size, tuple(sorted(merged.items())))

    @classmethod
    def of_cells(cls, counts: Matrix) -> Clusters:
        """Each count of the table is that many units of one judgment each."""
        size = _square(counts)
        profiles = []
        for index, count in enumerate(int(c) for row in counts for c in row):
            one = [0] * (size * size)
            one[index] = 1
            profiles.append((one, count))
        return cls.of(size, profiles)

    @property
    def units(self) -> int:
        return sum(units for _, units in self.profiles)

    @property
    def cells(self) -> Cells:
        """The table: every unit's cells added up."""
        total = [0] * (self.size * self.size)
        for cells, units in self.profiles:
            for i, c in enumerate(cells):
                total[i] += c * units
        return tuple(total)

    @property
    def table(self) -> list[list[int]]:
        cells = self.cells
        return [list(cells[i * self.size : (i + 1) * self.size]) for i in range(self.size)]


def _draws(cells: Sequence[int], replicates: int, seed: int) -> npt.NDArray[np.int64]:
    """`replicates` multinomial draws of the table's n items into its cells (one row each).

    Resampling items with replacement is a multinomial draw over the cells with the observed
    proportions, so a replicate costs the same for ten items or a million.
    """
    counts = np.asarray(cells, dtype=np.int64)
    n = int(counts.sum())
    rng = np.random.Generator(np.random.PCG64(seed))
    return rng.multinomial(n, counts / n, size=replicates)


def _cluster_draws(clusters: Clusters, replicates: int, seed: int) -> npt.NDArray[np.int64]:
    """`replicates` resampled tables (one row each, cells row by row): the units drawn with
    replacement (a multinomial over the profiles), each adding its whole profile."""
    units = _draws([u for _, u in clusters.profiles], replicates, seed)
    profiles = np.asarray([cells for cells, _ in clusters.profiles], dtype=np.int64)
    drawn: npt.NDArray[np.int64] = units @ profiles
    return drawn


def _intervals(values: npt.NDArray[np.float64], level: float) -> list[IntervalResult]:
    """Each row's percentile interval over its replicates whose statistic is defined (not
    NaN), each end interpolated linearly between the order statistics around it (numpy's
    default method). Whether a row gets one was decided before resampling; a row whose
    resamples all give one value (a table degenerate in a way its cells do not show) gets
    none either: [x, x] would claim certainty."""
    ordered = np.sort(values, axis=1)  # NaN sorts last
    defined = (values.shape[1] - np.isnan(values).sum(axis=1)).tolist()
    tail = (1 - level) / 2
    intervals: list[IntervalResult] = []
    for row, count in zip(ordered, defined, strict=True):
        if count == 0 or row[0] == row[count - 1]:
            intervals.append(NoInterval(Degenerate.NO_SPREAD))
            continue
        low, high = (_quantile(row, count, q) for q in (tail, 1 - tail))
        intervals.append(Interval(low=low, high=high, level=level, replicates=count))
    return intervals


def _quantile(ordered: npt.NDArray[np.float64], defined: int, q: float) -> float:
    position = q * (defined - 1)
    lower = math.floor(position)
    upper = min(lower + 1, defined - 1)
    return float(ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower))


def _kappas(draws: npt.NDArray[np.int64], size: int) -> npt.NDArray[np.float64]:
    """Cohen's κ of each drawn matrix (a row of `draws`, flattened row by row); NaN where
    chance agreement is 1, where `cohen_kappa` says None."""
    # One contiguous vector per cell, so that each sum below is a plain vector addition.
    cell = np.ascontiguousarray(draws.T, dtype=np.float64)
    rows = [sum(cell[i * size + j] for j in range(size)) for i in range(size)]
    columns = [sum(cell[i * size + j] for i in range(size)) for j in range(size)]
    n = sum(rows)
    observed = sum(cell[i * size + i] for i in range(size)) / n
    expected = sum(r * c for r, c in zip(rows, columns, strict=True)) / (n * n)
    chance = 1 - expected
    kappas = np.full(len(draws), np.nan)
    # math.isclose(expected, 1.0) in cohen_kappa: within a relative 1e-9 of 1.
    np.divide(observed - expected, chance, out=kappas, where=np.abs(chance) > 1e-09)
    return kappas


def kappa_refusal(clusters: Clusters) -> Degenerate | None:
    """Why κ of these units gets no interval, or None when it gets one: decided from the
    counts before any resampling, so whether an interval shows never depends on the draws.

    - no unit, or fewer than MIN_UNITS: too few to say how κ varies;
    - a rater (the rows, or the columns) gave one value only: κ is 0 or undefined in every
      resample, whatever the other rater did (a gate that is always FAIL);
    - no disagreement at all: κ is 1 in every resample.
    """
    units = clusters.units
    if units == 0:
        return Degenerate.EMPTY
    if units < MIN_UNITS:
        return Degenerate.TOO_FEW
    table, size = clusters.table, clusters.size
    rows = [sum(row) for row in table]
    columns = [sum(table[i][j] for i in range(size)) for j in range(size)]
    if sum(1 for r in rows if r) < 2:
        return Degenerate.ROWS_CONSTANT
    if sum(1 for c in columns if c) < 2:
        return Degenerate.COLUMNS_CONSTANT
    if sum(rows) == sum(table[i][i] for i in range(size)):
        return Degenerate.ALL_AGREE
    return None


def _units(table: Matrix | Clusters) -> Clusters:
    return table if isinstance(table, Clusters) else Clusters.of_cells(table)


def kappa_intervals(
    tables: Iterable[tuple[Matrix | Clusters, int]], *, level: float = LEVEL, seed: int = SEED
) -> list[IntervalResult]:
    """Cluster (unit) percentile bootstrap intervals for Cohen's kappa of each (table,
    replicates); a plain matrix is a table whose every count is a unit of its own.

    A table `kappa_refusal` refuses gets its reason, without resampling. Each other one
    resamples its units from its own generator seeded with `seed`, so a table has the same
    interval whatever it is computed with: it is kept in the cache by its units
    (rewards.cache), and the ones not kept yet are computed together (one array computation
    for all of a page's tables).
    """
    results: list[IntervalResult | str] = []
    wanted: dict[str, tuple[Clusters, int]] = {}
    for table, replicates in tables:
        clusters = _units(table)
        refusal = kappa_refusal(clusters)
        if refusal is not None:
            results.append(NoInterval(refusal))
            continue
        key = interval_key("kappa", clusters, replicates, level, seed)
        results.append(key)
        wanted[key] = (clusters, replicates)

    def compute(missing: dict[str, tuple[Clusters, int]]) -> dict[str, IntervalResult]:
        by_shape: dict[tuple[int, int], dict[str, Clusters]] = {}
        for key, (clusters, replicates) in missing.items():
            by_shape.setdefault((clusters.size, replicates), {})[key] = clusters
        computed: dict[str, IntervalResult] = {}
        for (size, replicates), units_of in by_shape.items():
            intervals = _kappa_intervals(list(units_of.values()), size, replicates, level, seed)
            computed.update(zip(units_of, intervals, strict=True))
        return computed

    found = cached_intervals(wanted, compute) if wanted else {}
    return [found[r] if isinstance(r, str) else r for r in results]


def _kappa_intervals(
    tables: list[Clusters], size: int, replicates: int, level: float, seed: int
) -> list[IntervalResult]:
    draws = np.concatenate([_cluster_draws(units, replicates, seed) for units in tables])
    kappas = _kappas(draws, size).reshape(len(tables), replicates)
    return _intervals(kappas, level)


def kappa_interval(
    table: Matrix | Clusters,
    *,
    replicates: int = REPLICATES,
    level: float = LEVEL,
    seed: int = SEED,
) -> IntervalResult:
    """Cluster percentile bootstrap interval for Cohen's kappa (`kappa_intervals`), or why
    there is none. Deterministic (fixed seed), so the answer for the same units is kept in
    the cache."""
    return kappa_intervals([(table, replicates)], level=level, seed=seed)[0]


# --- Krippendorff's alpha -----------------------------------------------------------------------
def coincidences(
    pair_counts: Iterable[tuple[str, str, int, int]], labels: Sequence[str]
) -> list[list[float]]:
    """The coincidence matrix from `(value_a, value_b, raters_on_unit, count)` rows.

    Each row says: `count` unordered pairs of raters gave (value_a, value_b) on units that
    `raters_on_unit` raters rated. Such a pair adds 1/(m - 1) to o[a][b] and to o[b][a].
    Values outside `labels` and units with fewer than two raters are ignored.
    """
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0.0] * len(labels) for _ in labels]
    for a, b, raters, count in pair_counts:
        if a not in index or b not in index or raters < 2:
            continue
        weight = count / (raters - 1)
        matrix[index[a]][index[b]] += weight
        matrix[index[b]][index[a]] += weight
    return matrix


def krippendorff_alpha_nominal(coincidence: Matrix) -> float | None:
    """Krippendorff's alpha for nominal values from a coincidence matrix."""
    size = _square(coincidence)
    totals = [sum(row) for row in coincidence]
    n = sum(totals)
    if n <= 1:
        return None
    disagree = sum(coincidence[c][k] for c in range(size) for k in range(size) if c != k)
    expected = sum(totals[c] * totals[k] for c in range(size) for k in range(size) if c != k)
    if expected <= 0:
        return None
    return 1 - (n - 1) * disagree / expected


# --- paired runs ----------------------------------------------------------------------------
@dataclass(frozen=True)
class PairedCounts:
    """Outcomes of the same tasks in two runs A and B."""

    both_pass: int
    a_only: int  # passed in A, failed in B
    b_only: int  # failed in A, passed in B
    neither: int

    @property
    def n(self) -> int:
        return self.both_pass + self.a_only + self.b_only + self.neither

    @property
    def a_rate(self) -> float | None:
        return (self.both_pass + self.a_only) / self.n if self.n else None

    @property
    def b_rate(self) -> float | None:
        return (self.both_pass + self.b_only) / self.n if self.n else None

    @property
    def delta(self) -> float | None:
        """B's pass rate minus A's: only the discordant pairs move it."""
        return (self.b_only - self.a_only) / self.n if self.n else None

    @property
    def cells(self) -> list[int]:
        return [self.both_pass, self.a_only, self.b_only, self.neither]


def delta_refusal(counts: PairedCounts) -> Degenerate | None:
    """Why the delta gets no interval, or None when it gets one, decided from the counts
    before resampling: no task or fewer than MIN_UNITS; no task changed outcome (the delta
    is 0 in every resample); every task in one cell (all of them changed the same way, say:
    the delta is the same in every resample)."""
    if counts.n == 0:
        return Degenerate.EMPTY
    if counts.n < MIN_UNITS:
        return Degenerate.TOO_FEW
    if counts.a_only == counts.b_only == 0:
        return Degenerate.NO_CHANGE
    if sum(1 for c in counts.cells if c) == 1:
        return Degenerate.ONE_CELL
    return None


def delta_interval(
    counts: PairedCounts,
    *,
    replicates: int = REPLICATES,
    level: float = LEVEL,
    seed: int = SEED,
) -> IntervalResult:
    """Paired percentile bootstrap interval for B's pass rate minus A's, or why there is
    none (`delta_refusal`).

    The unit is the task: resampling tasks (not trials of each run separately) keeps the
    pairing, a draw being a multinomial over the four cells of the paired table.
    Deterministic (fixed seed), so the answer for the same counts is kept in the cache,
    like kappa's.
    """
    refusal = delta_refusal(counts)
    if refusal is not None:
        return NoInterval(refusal)
    key = interval_key("delta", tuple(counts.cells), replicates, level, seed)
    found = cached_intervals(
        {key: counts.cells},
        lambda missing: {
            k: _delta_interval(cells, replicates, level, seed) for k, cells in missing.items()
        },
    )
    return found[key]


def _delta_interval(cells: list[int], replicates: int, level: float, seed: int) -> IntervalResult:
    n = sum(cells)
    draws = _draws(cells, replicates, seed)
    return _intervals(((draws[:, 2] - draws[:, 1]) / n)[np.newaxis], level)[0]


@dataclass(frozen=True)
class McNemar:
    statistic: float | None  # χ² with continuity correction; None for the exact test
    p_value: float
    method: str  # "exact" or "chi2"


def mcnemar(b: int, c: int) -> McNemar:
    """McNemar's test on the discordant pairs: b passed only in A, c only in B."""
    if b < 0 or c < 0:
        raise ValueError("counts cannot be negative")
    n = b + c
    if n < EXACT_BELOW:
        if n == 0:
            return McNemar(statistic=None, p_value=1.0, method="exact")
        tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
        return McNemar(statistic=None, p_value=min(1.0, 2 * tail), method="exact")
    chi2 = (abs(b - c) - 1) ** 2 / n
    # The χ² distribution with one degree of freedom: P(X > x) = erfc(√(x/2)).
    return McNemar(statistic=chi2, p_value=math.erfc(math.sqrt(chi2 / 2)), method="chi2")
