"""Agreement and comparison statistics, computed from counts.

Every function here takes counts that the database already aggregated (a confusion matrix,
pair counts, a paired 2x2 table) and never a row per trial, so the cost is the same for ten
trials or a million. The formulas are written out by hand on the standard library; the
bootstrap resamples the cell counts (a multinomial draw per replicate, made of one binomial
draw per cell with `random.binomialvariate`), so it needs no per-row loop either.

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

import functools
import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

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
def _conditionals(weights: Sequence[float]) -> list[float]:
    """P(cell i | not in cells before i) for each cell but the last: fixed for every draw."""
    left = float(sum(weights))
    probabilities = []
    for weight in weights[:-1]:
        probabilities.append(min(1.0, max(0.0, weight / left)) if left > 0 else 0.0)
        left -= weight
    return probabilities


def _draw(rng: random.Random, n: int, conditionals: Sequence[float]) -> list[int]:
    draw: list[int] = []
    left = n
    for p in conditionals:
        x = rng.binomialvariate(left, p) if left else 0
        draw.append(x)
        left -= x
    draw.append(left)
    return draw


def multinomial(rng: random.Random, n: int, weights: Sequence[float]) -> list[int]:
    """One multinomial draw of `n` items into cells of the given weights.

    Sequential conditional binomials: cell i gets Bin(remaining, w_i / remaining weight),
    so a draw costs one binomial per cell whatever `n` is.
    """
    return _draw(rng, n, _conditionals(weights))


def _percentile(ordered: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of an ordered sample (numpy's default method)."""
    position = q * (len(ordered) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


def _bootstrap(
    cells: Sequence[int],
    statistic: Callable[[list[int]], float | None],
    replicates: int,
    level: float,
    seed: int,
) -> Interval | None:
    n = sum(cells)
    if n <= 0:
        return None
    rng = random.Random(seed)  # noqa: S311 (a reproducible resample, not a secret)
    conditionals = _conditionals(cells)
    values = []
    for _ in range(replicates):
        value = statistic(_draw(rng, n, conditionals))
        if value is not None:
            values.append(value)
    # Replicates where the statistic is undefined are left out; when most are, the interval
    # would describe a few lucky draws, so there is none.
    if len(values) < replicates / 2:
        return None
    values.sort()
    tail = (1 - level) / 2
    return Interval(
        low=_percentile(values, tail),
        high=_percentile(values, 1 - tail),
        level=level,
        replicates=len(values),
    )


def _kappa_2x2(draw: list[int]) -> float | None:
    """Cohen's kappa of a flattened 2x2 matrix: the bootstrap's inner loop, written out."""
    a, b, c, d = draw
    n = a + b + c + d
    expected = ((a + b) * (a + c) + (c + d) * (b + d)) / (n * n)
    if math.isclose(expected, 1.0):
        return None
    return ((a + d) / n - expected) / (1 - expected)


@functools.lru_cache(maxsize=4096)
def _kappa_interval(
    cells: tuple[int, ...], size: int, replicates: int, level: float, seed: int
) -> Interval | None:
    def kappa_of(draw: list[int]) -> float | None:
        return cohen_kappa([draw[i * size : (i + 1) * size] for i in range(size)])

    statistic = _kappa_2x2 if size == 2 else kappa_of
    return _bootstrap(cells, statistic, replicates, level, seed)


def kappa_interval(
    counts: Matrix,
    *,
    replicates: int = REPLICATES,
    level: float = LEVEL,
    seed: int = SEED,
) -> Interval | None:
    """Percentile bootstrap interval for Cohen's kappa, resampling the matrix's cell counts.

    Deterministic (fixed seed), so the answer for the same counts is remembered.
    """
    size = _square(counts)
    cells = tuple(int(c) for row in counts for c in row)
    return _kappa_interval(cells, size, replicates, level, seed)


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
    the answer for the same counts is remembered, like kappa's.
    """

    return _delta_interval(tuple(counts.cells), replicates, level, seed)


@functools.lru_cache(maxsize=1024)
def _delta_interval(
    cells: tuple[int, ...], replicates: int, level: float, seed: int
) -> Interval | None:
    n = sum(cells)

    def delta_of(draw: list[int]) -> float:
        return (draw[2] - draw[1]) / n

    return _bootstrap(cells, delta_of, replicates, level, seed)


def forget_intervals() -> None:
    """Drop the remembered intervals: the next request computes every one (benchmarks)."""
    _kappa_interval.cache_clear()
    _delta_interval.cache_clear()


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
