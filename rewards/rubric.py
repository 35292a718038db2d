"""The rubric scorer of seed 000, "Reward rollup".

Each dimension is normalised to score / max_score and clamped to [0, 1]; the dimensions are
combined by `weighted_mean` (the default: Σ(n·w)/Σw) or `min` (the worst dimension wins).
The result is rounded to 4 decimals and lands in [0, 1]. Verifiers and judge pipelines call
this before they write reward.json; ingestion never recomputes a reward with it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

from rewards.schemas import DetailsDimension

Strategy = Literal["weighted_mean", "min"]
STRATEGIES: tuple[Strategy, ...] = ("weighted_mean", "min")


class RubricError(ValueError):
    """Input the rubric cannot score: the message says which dimension and why."""


def normalise(dimension: DetailsDimension) -> float:
    if dimension.max_score <= 0:
        raise RubricError("max_score must be greater than 0")
    return min(1.0, max(0.0, dimension.score / dimension.max_score))


def score(
    dimensions: Mapping[str, DetailsDimension],
    strategy: Strategy = "weighted_mean",
    weights: Mapping[str, float] | None = None,
) -> float:
    """Combine the dimensions into one reward in [0, 1], rounded to 4 decimals.

    A dimension's weight is `weights[name]` when given, else its own `weight` key, else 1.
    `min` ignores weights (the worst dimension wins whatever its weight), but bad weights
    are still refused so that a typo in `--weights` never passes silently.
    """
    if strategy not in STRATEGIES:
        raise RubricError(f"unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    if not dimensions:
        raise RubricError("details has no dimensions to score")
    overrides = dict(weights or {})
    unknown = sorted(set(overrides) - set(dimensions))
    if unknown:
        raise RubricError(f"weights name unknown dimensions: {', '.join(unknown)}")

    normalised: dict[str, float] = {}
    resolved: dict[str, float] = {}
    for name, dimension in dimensions.items():
        try:
            normalised[name] = normalise(dimension)
        except RubricError as exc:
            raise RubricError(f"dimension {name!r}: {exc}") from None
        weight = overrides.get(name, dimension.weight if dimension.weight is not None else 1.0)
        if isinstance(weight, bool) or not math.isfinite(weight) or weight < 0:
            raise RubricError(f"dimension {name!r}: weight must be a finite number ≥ 0")
        resolved[name] = float(weight)

    low, high = min(normalised.values()), max(normalised.values())
    if strategy == "min":
        combined = low
    else:
        largest = max(resolved.values())
        if largest <= 0:
            raise RubricError("the weights sum to 0")
        # Dividing by the largest weight first keeps Σw finite: weights of 1e308 would
        # otherwise overflow to inf and inf/inf is NaN. fsum keeps the sum exact enough
        # that equal inputs give exactly that input back.
        scaled = {name: weight / largest for name, weight in resolved.items()}
        total = math.fsum(scaled.values())
        combined = math.fsum(normalised[name] * scaled[name] for name in normalised) / total
        # A weighted mean lies between the smallest and largest value; floating-point
        # rounding can step a hair outside, which rounding to 4 decimals could then show.
        combined = min(high, max(low, combined))
    return min(1.0, max(0.0, round(combined, 4))) + 0.0
