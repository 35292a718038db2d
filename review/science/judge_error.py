"""How often the judge is right, and the pass rate once its errors are counted: the formulas.

Everything here takes counts and returns numbers; nothing reads the database (that is
`review.science.calibration`).

- **Wilson score interval** for a binomial proportion x / n (Wilson 1927; Newcombe 1998,
  method 3): centre (x + z²/2) / (n + z²), half-width z / (n + z²) · √(x(n - x)/n + z²/4).
  Chosen over Clopper-Pearson because it is a closed formula (no beta quantiles, so no scipy),
  its coverage is close to nominal, and it stays inside [0, 1] with a real width at x = 0 and
  x = n, where a Wald interval shows [1, 1]. n = 0 has no interval.
- **Rogan-Gladen** (1978): a judge with sensitivity Se (TPR: it says PASS when the humans
  say pass) and specificity Sp (TNR) that passes a share q of trials implies a true pass rate
  p = (q + Sp - 1) / (Se + Sp - 1). Undefined when Se + Sp ≤ 1 (the judge is no better than a
  coin); outside [0, 1] it is clamped, and the result says so.
- **Its interval** carries the three sources of uncertainty (the judged trials, the human-pass
  and the human-fail labelled trials): a Monte Carlo over three independent binomial
  proportions, each drawn from its Jeffreys distribution Beta(x + ½, n - x + ½) (a
  parametric bootstrap that, unlike resampling the observed rate, still varies a judge that
  was right on every labelled trial), the estimate recomputed for each draw and clamped, and
  the percentile interval taken. A fixed seed makes it reproducible. Draws where the judge
  falls to chance (Se + Sp ≤ 1) have no estimate; when they are more than the interval's tail
  allows, no interval is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from rewards.agreement import LEVEL, SEED, Interval

# Monte Carlo draws for the corrected pass rate's interval: the percentiles move by well
# under 0.005 between seeds at this size.
CORRECTION_DRAWS = 20_000


def z_of(level: float = LEVEL) -> float:
    """The two-sided normal quantile for `level` (1.959964 for 95%)."""
    return NormalDist().inv_cdf(0.5 + level / 2)


def wilson_interval(successes: int, n: int, level: float = LEVEL) -> Interval | None:
    """Wilson's score interval for successes / n; None when n is 0."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError("successes must be between 0 and n")
    z = z_of(level)
    z2 = z * z
    centre = (successes + z2 / 2) / (n + z2)
    half = z / (n + z2) * math.sqrt(successes * (n - successes) / n + z2 / 4)
    # At x = 0 (or n) the bound is exactly 0 (or 1); rounding must not push it past.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(low, high, level, 0)


@dataclass(frozen=True)
class Corrected:
    """A judge's raw pass rate corrected for its measured errors (Rogan-Gladen)."""

    raw: float  # the judge's pass rate, q
    estimate: float | None  # p, clamped to [0, 1]; None when the judge is no better than chance
    unclamped: float | None  # p before clamping
    interval: Interval | None
    reason: str  # why there is no estimate or no interval; '' when both are there

    @property
    def clamped(self) -> bool:
        return self.unclamped is not None and self.estimate != self.unclamped


def rogan_gladen(raw: float, sensitivity: float, specificity: float) -> float | None:
    """The true pass rate a judge with these error rates implies, unclamped; None when
    Se + Sp ≤ 1 (the judge's verdicts carry no information about the truth)."""
    youden = sensitivity + specificity - 1
    if youden <= 0:
        return None
    return (raw + specificity - 1) / youden


def corrected_pass_rate(
    passed: int,
    judged: int,
    true_pos: int,
    positives: int,
    true_neg: int,
    negatives: int,
    *,
    level: float = LEVEL,
    draws: int = CORRECTION_DRAWS,
    seed: int = SEED,
) -> Corrected | None:
    """The pass rate of `judged` trials the judge passed `passed` of, corrected by the
    judge's TPR (true_pos of `positives` human-pass trials) and TNR (true_neg of `negatives`
    human-fail trials). None when nothing was judged."""
    if judged <= 0:
        return None
    raw = passed / judged
    if positives <= 0 or negatives <= 0:
        return Corrected(raw, None, None, None, "no labelled trials of one kind")
    unclamped = rogan_gladen(raw, true_pos / positives, true_neg / negatives)
    if unclamped is None:
        return Corrected(raw, None, None, None, "the judge does no better than chance")
    estimate = min(1.0, max(0.0, unclamped))
    rng = np.random.default_rng(seed)
    q = rng.beta(passed + 0.5, judged - passed + 0.5, draws)
    se = rng.beta(true_pos + 0.5, positives - true_pos + 0.5, draws)
    sp = rng.beta(true_neg + 0.5, negatives - true_neg + 0.5, draws)
    youden = se + sp - 1
    defined = youden > 0
    tail = (1 - level) / 2
    if (~defined).mean() > tail:
        reason = "the judge is too close to chance for an interval"
        return Corrected(raw, estimate, unclamped, None, reason)
    values = np.clip((q[defined] + sp[defined] - 1) / youden[defined], 0.0, 1.0)
    # The undefined draws are left out; there are fewer than the tail, so the percentiles
    # move by less than the tail's share.
    low, high = np.quantile(values, [tail, 1 - tail])
    return Corrected(raw, estimate, unclamped, Interval(float(low), float(high), level, draws), "")
