"""Agreement and comparison statistics, computed from counts.

Every function here takes counts that the database already aggregated (a confusion matrix,
pair counts, a paired 2x2 table) and never a row per trial, so the cost is the same for ten
trials or a million. The formulas are written out by hand; the bootstrap resamples the
cell counts (numpy draws every replicate's multinomial at once and the statistic is computed
over all of them as arrays), so it needs no per-row loop either.

- Cohen's κ: (p_o - p_e) / (1 - p_e) over a square confusion matrix.
- Krippendorff's alpha (nominal): 1 - (n - 1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c·n_k over the
  coincidence matrix, which is built from pair counts: an unordered pair of values (a, b) on
  a unit rated by m raters adds 1/(m - 1) to o_ab and to o_ba.
- McNemar's test on the discordant pairs b and c of a paired 2x2 table: exact two-sided
  binomial (p = 0.5) while b + c < EXACT_BELOW, else χ² with continuity correction.
- Pass-rate delta of two paired runs, with a percentile bootstrap interval.

A statistic that is undefined for its counts (no data, or chance agreement of 1) is None,
never a made-up number.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rewards.cache import cached_intervals, interval_key

Matrix = Sequence[Sequence[float]]

REPLICATES = 1000
LEVEL = 0.95
SEED = 20261123
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


# --- resampling the cells -------------------------------------------------------------------
def _draws(cells: Sequence[int], replicates: int, seed: int) -> npt.NDArray[np.int64]:
    """`replicates` multinomial draws of the table's n items into its cells (one row each).

    Resampling items with replacement is a multinomial draw over the cells with the observed
    proportions, so a replicate costs the same for ten items or a million.
    """
    counts = np.asarray(cells, dtype=np.int64)
    n = int(counts.sum())
    rng = np.random.Generator(np.random.PCG64(seed))
    return rng.multinomial(n, counts / n, size=replicates)


def _intervals(
    values: npt.NDArray[np.float64], replicates: int, level: float
) -> list[Interval | None]:
    """Each row's percentile interval over its replicates whose statistic is defined (not
    NaN), each end interpolated linearly between the order statistics around it (numpy's
    default method)."""
    ordered = np.sort(values, axis=1)  # NaN sorts last
    defined = (values.shape[1] - np.isnan(values).sum(axis=1)).tolist()
    tail = (1 - level) / 2
    intervals: list[Interval | None] = []
    for row, count in zip(ordered, defined, strict=True):
        # Replicates where the statistic is undefined are left out; when most are, the
        # interval would describe a few lucky draws, so there is none.
        if count < replicates / 2:
            intervals.append(None)
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


def kappa_intervals(
    tables: Iterable[tuple[Matrix, int]], *, level: float = LEVEL, seed: int = SEED
) -> list[Interval | None]:
    """Percentile bootstrap intervals for Cohen's kappa of each (matrix, replicates).

    Each resamples its matrix's cell counts from its own generator seeded with `seed`, so a
    matrix has the same interval whatever it is computed with: it is kept in the cache by
    its counts (rewards.cache), and the ones not kept yet are computed together (one array
    computation for all of a page's matrices).
    """
    keys = []
    wanted: dict[str, tuple[tuple[int, ...], int, int]] = {}
    for counts, replicates in tables:
        size = _square(counts)
        cells = tuple(int(c) for row in counts for c in row)
        key = interval_key("kappa", cells, size, replicates, level, seed)
        keys.append(key)
        wanted[key] = (cells, size, replicates)

    def compute(missing: dict[str, tuple[tuple[int, ...], int, int]]) -> dict[str, Interval | None]:
        by_shape: dict[tuple[int, int], dict[str, tuple[int, ...]]] = {}
        for key, (cells, size, replicates) in missing.items():
            by_shape.setdefault((size, replicates), {})[key] = cells
        computed: dict[str, Interval | None] = {}
        for (size, replicates), cells_of in by_shape.items():
            intervals = _kappa_intervals(list(cells_of.values()), size, replicates, level, seed)
            computed.update(zip(cells_of, intervals, strict=True))
        return computed

    found = cached_intervals(wanted, compute)
    return [found[key] for key in keys]


def _kappa_intervals(
    tables: list[tuple[int, ...]], size: int, replicates: int, level: float, seed: int
) -> list[Interval | None]:
    drawn = [i for i, cells in enumerate(tables) if sum(cells) > 0]
    intervals: list[Interval | None] = [None] * len(tables)
    if drawn:
        draws = np.concatenate([_draws(tables[i], replicates, seed) for i in drawn])
        kappas = _kappas(draws, size).reshape(len(drawn), replicates)
        for i, interval in zip(drawn, _intervals(kappas, replicates, level), strict=True):
            intervals[i] = interval
    return intervals


def kappa_interval(
    counts: Matrix,
    *,
    replicates: int = REPLICATES,
    level: float = LEVEL,
    seed: int = SEED,
) -> Interval | None:
    """Percentile bootstrap interval for Cohen's kappa, resampling the matrix's cell counts.

    Deterministic (fixed seed), so the answer for the same counts is kept in the cache.
    """
    return kappa_intervals([(counts, replicates)], level=level, seed=seed)[0]


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


def delta_interval(
    counts: PairedCounts,
    *,
    replicates: int = REPLICATES,
    level: float = LEVEL,
    seed: int = SEED,
) -> Interval | None:
    """Paired percentile bootstrap interval for B's pass rate minus A's.

    Resampling tasks (not trials of each run separately) keeps the pairing: a draw is a
    multinomial over the four cells of the paired table. Deterministic (fixed seed), so
    the answer for the same counts is kept in the cache, like kappa's.
    """
    key = interval_key("delta", tuple(counts.cells), replicates, level, seed)
    found = cached_intervals(
        {key: counts.cells},
        lambda missing: {
            k: _delta_interval(cells, replicates, level, seed) for k, cells in missing.items()
        },
    )
    return found[key]


def _delta_interval(cells: list[int], replicates: int, level: float, seed: int) -> Interval | None:
    n = sum(cells)
    if n <= 0:
        return None
    draws = _draws(cells, replicates, seed)
    return _intervals(((draws[:, 2] - draws[:, 1]) / n)[np.newaxis], replicates, level)[0]


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
