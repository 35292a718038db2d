"""Intervals for a proportion (k successes in n trials)."""

from __future__ import annotations

import math

# The normal quantile for a two-sided 95% interval.
Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of successes / n; None when n is 0.

    Unlike the plain normal interval it stays inside [0, 1] and does not collapse to a
    point at 0 or n successes: 10 of 10 gives about [0.72, 1.00], not [1.00, 1.00].
    """
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"{successes} successes in {n} trials")
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = (z / (1 + z2 / n)) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)
