"""Agreement and comparison statistics, computed from counts.

Every function here takes counts that the database already aggregated (a confusion matrix,
pair counts, a paired 2x2 table) and never a row per trial, so the cost is the same for ten
trials or a million. The formulas are written out by hand on the standard library, and
each is a handful of arithmetic operations, so a page computes all of them on every view.

- Cohen's κ: (p_o - p_e) / (1 - p_e) over a square confusion matrix, with a large-sample
  interval (`kappa_variance`).
- Krippendorff's alpha (nominal): 1 - (n - 1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c·n_k over the
  coincidence matrix, which is built from pair counts: an unordered pair of values (a, b) on
  a unit rated by m raters adds 1/(m - 1) to o_ab and to o_ba.
- McNemar's test on the discordant pairs b and c of a paired 2x2 table: exact two-sided
  binomial (p = 0.5) while b + c < EXACT_BELOW, else χ² with continuity correction.
- Pass-rate delta of two paired runs, with the Agresti-Min paired interval.

A statistic that is undefined for its counts (no data, or chance agreement of 1) is None,
never a made-up number.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Matrix = Sequence[Sequence[float]]

LEVEL = 0.95
# Below this many discordant pairs McNemar's χ² approximation is poor; the exact binomial
# test is used instead (and it is cheap there).
EXACT_BELOW = 25


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    level: float
    method: str


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


# --- intervals ------------------------------------------------------------------------------
@functools.cache
def _z(level: float) -> float:
    """The two-sided standard normal quantile of a confidence level (1.959964 for 95%)."""
    return statistics.NormalDist().inv_cdf(1 - (1 - level) / 2)


def _clipped(centre: float, half: float, level: float, method: str) -> Interval:
    return Interval(
        low=max(-1.0, centre - half), high=min(1.0, centre + half), level=level, method=method
    )


def kappa_variance(counts: Matrix) -> float | None:
    """The large-sample variance of Cohen's κ (Fleiss, Cohen & Everitt, 1969).

    With cell proportions p_ij, row totals r_i, column totals c_j, p_e as for κ and n items:
        A = Σ_i p_ii (1 - (r_i + c_i)(1 - κ))²
        B = (1 - κ)² Σ_{i≠j} p_ij (c_i + r_j)²
        C = (κ - p_e (1 - κ))²
        Var(κ) = (A + B - C) / (n (1 - p_e)²)
    It is the variance of κ over resamples of the table's items (a multinomial draw of its
    cells) as the number of items grows, so it needs the counts only. None when κ is.
    """
    kappa = cohen_kappa(counts)
    return None if kappa is None else _kappa_variance(counts, kappa)


def _kappa_variance(counts: Matrix, kappa: float) -> float:
    size = len(counts)
    n = sum(sum(row) for row in counts)
    p = [[counts[i][j] / n for j in range(size)] for i in range(size)]
    rows = [sum(row) for row in p]
    cols = [sum(p[i][j] for i in range(size)) for j in range(size)]
    expected = sum(rows[i] * cols[i] for i in range(size))
    a = sum(p[i][i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in range(size))
    b = (1 - kappa) ** 2 * sum(
        p[i][j] * (cols[i] + rows[j]) ** 2 for i in range(size) for j in range(size) if i != j
    )
    c = (kappa - expected * (1 - kappa)) ** 2
    # A + B - C is a sum of squares in disguise; rounding can leave it a hair below zero.
    return max(0.0, a + b - c) / (n * (1 - expected) ** 2)


def kappa_interval(counts: Matrix, *, level: float = LEVEL) -> Interval | None:
    """κ ± z·SE with the large-sample variance above, kept within [-1, 1].

    A handful of arithmetic operations per matrix, so a page computes every interval on
    every view (a resampling bootstrap costs milliseconds per matrix in Python, and an
    agreement page shows up to forty). Same counts, same interval.
    """
    kappa = cohen_kappa(counts)
    if kappa is None:
        return None
    half = _z(level) * math.sqrt(_kappa_variance(counts, kappa))
    return _clipped(kappa, half, level, "large-sample")


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


def delta_interval(counts: PairedCounts, *, level: float = LEVEL) -> Interval | None:
    """Interval for B's pass rate minus A's on paired tasks (Agresti & Min, 2005).

    The paired Wald interval after adding ½ to each of the four cells: with b tasks passed
    only in A, c only in B and n tasks, n' = n + 2, d' = (c - b) / n' and
        Var = ((b + c + 1) / n' - d'²) / n'
    it is d' ± z·√Var, kept within [-1, 1]. The added halves keep it honest where few
    tasks changed (the unadjusted interval collapses to a point when none did), and it
    needs only the counts. None without tasks.
    """
    if counts.n <= 0:
        return None
    n = counts.n + 2
    delta = (counts.b_only - counts.a_only) / n
    variance = ((counts.a_only + counts.b_only + 1) / n - delta**2) / n
    return _clipped(delta, _z(level) * math.sqrt(max(0.0, variance)), level, "Agresti-Min")


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
