"""The judge-error formulas against values computed by hand or published.

Wilson intervals: Newcombe (1998), "Two-sided confidence intervals for the single proportion",
Statistics in Medicine 17, table I, method 3 (81/263, 15/148, 0/20, 1/29), and the closed form
at x = n. Rogan-Gladen: the formula worked by hand; its interval against the delta method
computed by hand for a large sample (where the two agree), and degenerate tables.
"""

from __future__ import annotations

import math

import pytest

from review.science.judge_error import (
    corrected_pass_rate,
    rogan_gladen,
    wilson_interval,
    z_of,
)


def test_the_95_percent_quantile_is_the_familiar_one() -> None:
    assert z_of() == pytest.approx(1.959964, abs=1e-6)


@pytest.mark.parametrize(
    ("x", "n", "low", "high"),
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_matches_newcombes_table(x: int, n: int, low: float, high: float) -> None:
    interval = wilson_interval(x, n)
    assert interval is not None
    assert interval.low == pytest.approx(low, abs=5e-5)
    assert interval.high == pytest.approx(high, abs=5e-5)


def test_wilson_at_all_successes_has_a_real_width_ending_exactly_at_one() -> None:
    # By hand: the lower bound at x = n is n / (n + z²): 29 / (29 + 3.8415) = 0.8830.
    interval = wilson_interval(29, 29)
    assert interval is not None
    assert interval.high == 1.0
    assert interval.low == pytest.approx(29 / (29 + z_of() ** 2), abs=1e-12)
    assert interval.low == pytest.approx(0.8830, abs=5e-5)
    none = wilson_interval(0, 29)
    assert none is not None
    assert none.low == 0.0
    assert none.high == pytest.approx(1 - interval.low, abs=1e-12)


def test_wilson_has_no_interval_without_trials_and_refuses_impossible_counts() -> None:
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match="between 0 and n"):
        wilson_interval(3, 2)


def test_rogan_gladen_worked_by_hand() -> None:
    # q = 0.6, Se = 0.9, Sp = 0.8: (0.6 + 0.8 - 1) / (0.9 + 0.8 - 1) = 0.4 / 0.7.
    assert rogan_gladen(0.6, 0.9, 0.8) == pytest.approx(4 / 7)
    # A perfect judge changes nothing.
    assert rogan_gladen(0.37, 1.0, 1.0) == pytest.approx(0.37)
    # A judge no better than a coin (Se + Sp = 1) or worse implies nothing.
    assert rogan_gladen(0.5, 0.5, 0.5) is None
    assert rogan_gladen(0.5, 0.3, 0.4) is None


def test_the_corrected_interval_matches_the_delta_method_on_a_large_sample() -> None:
    # 600 of 1,000 judged trials passed; TPR 900/1000, TNR 800/1000. By hand:
    # p = 4/7, J = 0.7; Var p ≈ [q(1-q)/n + p²·Se(1-Se)/n₊ + (1-p)²·Sp(1-Sp)/n₋] / J²
    #   = [0.00024 + (16/49)·0.00009 + (9/49)·0.00016] / 0.49 = 0.00060975...
    p = 4 / 7
    variance = (0.6 * 0.4 / 1000 + p**2 * 0.9 * 0.1 / 1000 + (1 - p) ** 2 * 0.8 * 0.2 / 1000) / 0.49
    half = z_of() * math.sqrt(variance)
    assert half == pytest.approx(0.0484, abs=1e-4)
    result = corrected_pass_rate(600, 1000, 900, 1000, 800, 1000)
    assert result is not None
    assert result.estimate == pytest.approx(p)
    assert not result.clamped
    assert result.interval is not None
    assert result.interval.low == pytest.approx(p - half, abs=0.005)
    assert result.interval.high == pytest.approx(p + half, abs=0.005)


def test_the_interval_widens_with_fewer_labels_so_calibration_uncertainty_counts() -> None:
    # The same rates from a tenth of the labelled trials: only the calibration part shrank.
    # By hand (delta method): [0.00024 + (16/49)·0.0009 + (9/49)·0.0016] / 0.49 = 0.0016910,
    # a half-width of 1.96·0.04112 = 0.0806 against 0.0484 with all the labels.
    p = 4 / 7
    variance = (0.6 * 0.4 / 1000 + p**2 * 0.9 * 0.1 / 100 + (1 - p) ** 2 * 0.8 * 0.2 / 100) / 0.49
    half = z_of() * math.sqrt(variance)
    assert half == pytest.approx(0.0806, abs=1e-4)
    few = corrected_pass_rate(600, 1000, 90, 100, 80, 100)
    assert few is not None
    assert few.interval is not None
    assert few.interval.high - few.interval.low == pytest.approx(2 * half, abs=0.01)
    assert few.interval.low < p < few.interval.high


def test_a_judge_right_on_every_label_still_has_an_uncertain_correction() -> None:
    # 10 of 10 each way: a resample of the observed rates would never move; Jeffreys draws do.
    result = corrected_pass_rate(60, 100, 10, 10, 10, 10)
    assert result is not None
    assert result.estimate == pytest.approx(0.6)
    assert result.interval is not None
    assert result.interval.low < 0.5
    assert result.interval.high > 0.7


def test_an_estimate_outside_the_unit_range_is_clamped_and_says_so() -> None:
    # q = 0.95, Se = 0.9, Sp = 0.8: (0.95 + 0.8 - 1) / 0.7 = 1.0714..., shown as 1.
    result = corrected_pass_rate(95, 100, 90, 100, 80, 100)
    assert result is not None
    assert result.unclamped == pytest.approx(0.75 / 0.7)
    assert result.estimate == 1.0
    assert result.clamped
    assert result.interval is not None
    assert 0.0 <= result.interval.low <= result.interval.high <= 1.0


@pytest.mark.parametrize(
    ("counts", "reason"),
    [
        ((6, 10, 0, 0, 5, 5), "no labelled trials of one kind"),
        ((6, 10, 5, 5, 0, 0), "no labelled trials of one kind"),
        ((6, 10, 1, 2, 1, 2), "the judge does no better than chance"),
        ((6, 10, 3, 4, 2, 4), "the judge is too close to chance for an interval"),
    ],
)
def test_degenerate_tables_give_a_reason_and_no_made_up_interval(
    counts: tuple[int, int, int, int, int, int], reason: str
) -> None:
    result = corrected_pass_rate(*counts)
    assert result is not None
    assert result.interval is None
    assert result.reason == reason
    assert result.raw == pytest.approx(0.6)


def test_nothing_judged_has_no_rate() -> None:
    assert corrected_pass_rate(0, 0, 9, 10, 9, 10) is None


def test_the_interval_is_the_same_every_time() -> None:
    assert corrected_pass_rate(60, 100, 45, 50, 40, 50) == corrected_pass_rate(
        60, 100, 45, 50, 40, 50
    )
