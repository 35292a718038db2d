"""Agreement statistics against values computed by hand for small tables.

Each expected value is worked out in the comment beside it, from the counts alone.
"""

from __future__ import annotations

import pytest

from rewards import agreement
from rewards.agreement import PairedCounts

# --- Cohen's κ ------------------------------------------------------------------------------


def test_kappa_of_a_two_by_two_table_matches_the_hand_computation() -> None:
    # n = 50; p_o = (20 + 15) / 50 = 0.7
    # rows 25, 25; columns 30, 20; p_e = (25·30 + 25·20) / 50² = 1250 / 2500 = 0.5
    # κ = (0.7 - 0.5) / (1 - 0.5) = 0.4
    assert agreement.cohen_kappa([[20, 5], [10, 15]]) == pytest.approx(0.4)


def test_kappa_of_a_three_by_three_table_matches_the_hand_computation() -> None:
    # n = 30; p_o = (10 + 8 + 6) / 30 = 0.8
    # rows 12, 10, 8; columns 11, 12, 7
    # p_e = (12·11 + 10·12 + 8·7) / 900 = 308 / 900 = 0.342222…
    # κ = (0.8 - 0.342222) / (1 - 0.342222) = 0.457778 / 0.657778 = 0.695946
    kappa = agreement.cohen_kappa([[10, 2, 0], [1, 8, 1], [0, 2, 6]])
    assert kappa == pytest.approx(0.695946, abs=1e-6)


def test_kappa_is_one_for_perfect_agreement_and_negative_for_systematic_disagreement() -> None:
    # Perfect: p_o = 1, p_e = 0.5 → κ = 1.
    assert agreement.cohen_kappa([[7, 0], [0, 7]]) == pytest.approx(1.0)
    # Always opposite: p_o = 0, p_e = (5·5 + 5·5) / 100 = 0.5 → κ = -0.5 / 0.5 = -1.
    assert agreement.cohen_kappa([[0, 5], [5, 0]]) == pytest.approx(-1.0)


def test_kappa_is_undefined_without_data_or_when_chance_agreement_is_certain() -> None:
    assert agreement.cohen_kappa([[0, 0], [0, 0]]) is None
    # Both raters always say the first label: p_e = 1, κ = 0/0.
    assert agreement.cohen_kappa([[9, 0], [0, 0]]) is None


def test_kappa_refuses_a_matrix_that_is_not_square() -> None:
    with pytest.raises(ValueError, match="square"):
        agreement.cohen_kappa([[1, 2, 3], [4, 5, 6]])


# --- large-sample interval for κ -----------------------------------------------------------


def test_kappa_variance_of_a_two_by_two_table_matches_the_hand_computation() -> None:
    # [[20, 5], [10, 15]], n = 50: p = [[.4, .1], [.2, .3]]; rows r = (.5, .5); columns
    # c = (.6, .4); p_e = .5; κ = .4, so 1 - κ = .6.
    # A = .4 (1 - (.5 + .6) .6)² + .3 (1 - (.5 + .4) .6)² = .4 · .1156 + .3 · .2116 = .10972
    # B = .6² (.1 (c1 + r2)² + .2 (c2 + r1)²) = .36 (.1 · 1.21 + .2 · .81) = .36 · .283 = .10188
    # C = (.4 - .5 · .6)² = .01
    # Var = (A + B - C) / (n (1 - p_e)²) = .2016 / 12.5 = .016128
    assert agreement.kappa_variance([[20, 5], [10, 15]]) == pytest.approx(0.016128)


def test_kappa_interval_is_kappa_plus_or_minus_z_standard_errors() -> None:
    # SE = √.016128 = .126996; z(95%) = 1.959964; half width = .248908.
    interval = agreement.kappa_interval([[20, 5], [10, 15]])
    assert interval is not None
    assert interval.low == pytest.approx(0.4 - 0.248908, abs=2e-6)
    assert interval.high == pytest.approx(0.4 + 0.248908, abs=2e-6)
    assert interval.level == 0.95
    # 99%: z = 2.575829, half width = .327120.
    wider = agreement.kappa_interval([[20, 5], [10, 15]], level=0.99)
    assert wider is not None
    assert wider.high == pytest.approx(0.4 + 0.327120, abs=2e-6)


def test_kappa_variance_of_a_three_by_three_table_matches_the_hand_computation() -> None:
    # [[10, 2, 0], [1, 8, 1], [0, 2, 6]], n = 30: κ = .695946 (above), 1 - κ = .304054;
    # rows (12, 10, 8)/30, columns (11, 12, 7)/30, p_e = .342222.
    # A = Σ p_ii (1 - (r_i + c_i)(1 - κ))²
    #   = 10/30 (1 - 23/30 · .304054)² + 8/30 (1 - 22/30 · .304054)² + 6/30 (1 - 15/30 · .304054)²
    #   = .333333 · .588235 + .266667 · .604306 + .2 · .718467 = .196078 + .161148 + .143693
    #   = .500920
    # B = .304054² Σ_{i≠j} p_ij (c_i + r_j)²: (1,2) 2/30 (11+10)²/900, (2,1) 1/30 (12+12)²/900,
    #   (2,3) 1/30 (12+8)²/900, (3,2) 2/30 (7+10)²/900
    #   = .092449 (.032667 + .021333 + .014815 + .021407) = .092449 · .090222 = .008341
    # C = (.695946 - .342222 · .304054)² = (.695946 - .104054)² = .350336
    # Var = (.500920 + .008341 - .350336) / (30 · .657778²) = .158925 / 12.980 = .012244
    variance = agreement.kappa_variance([[10, 2, 0], [1, 8, 1], [0, 2, 6]])
    assert variance == pytest.approx(0.012244, rel=1e-3)


def test_kappa_interval_narrows_with_more_data_and_stays_within_minus_one_and_one() -> None:
    small = agreement.kappa_interval([[20, 5], [10, 15]])
    large = agreement.kappa_interval([[2000, 500], [1000, 1500]])
    assert small is not None
    assert large is not None
    # 100x the data, the same proportions: the standard error is √100 = 10x smaller.
    assert (large.high - large.low) == pytest.approx((small.high - small.low) / 10)
    # κ = .8 on 10 items: the unclipped upper bound would pass 1.
    near_one = agreement.kappa_interval([[5, 1], [0, 4]])
    assert near_one is not None
    assert near_one.high == 1.0
    assert -1.0 <= near_one.low < 0.8


def test_kappa_interval_of_perfect_agreement_is_a_point_and_of_nothing_is_none() -> None:
    # Off-diagonal cells empty: A = p_11 (1 - 2 r_1 · 0)² + ... = 1, B = 0, C = (1 - 0)² = 1.
    interval = agreement.kappa_interval([[10, 0], [0, 10]])
    assert interval is not None
    assert interval.low == pytest.approx(1.0)
    assert interval.high == pytest.approx(1.0)
    assert agreement.kappa_interval([[0, 0], [0, 0]]) is None
    assert agreement.kappa_interval([[9, 0], [0, 0]]) is None  # κ undefined


# --- Krippendorff's alpha -----------------------------------------------------------------------


def test_coincidences_of_two_raters_count_each_pair_both_ways() -> None:
    # Units (a, a), (a, b), (b, b), two raters each, so every pair weighs 1 / (2 - 1) = 1:
    # o_aa = 2 (the one pair, both orders), o_ab = o_ba = 1, o_bb = 2.
    rows = [("a", "a", 2, 1), ("a", "b", 2, 1), ("b", "b", 2, 1)]
    assert agreement.coincidences(rows, ["a", "b"]) == [[2.0, 1.0], [1.0, 2.0]]


def test_alpha_of_two_raters_matches_the_hand_computation() -> None:
    # o = [[2, 1], [1, 2]]: n_a = 3, n_b = 3, n = 6.
    # alpha = 1 - (n - 1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k = 1 - 5 · 2 / (3·3 + 3·3) = 1 - 10/18
    #   = 0.444444
    alpha = agreement.krippendorff_alpha_nominal([[2, 1], [1, 2]])
    assert alpha == pytest.approx(4 / 9)


def test_alpha_weights_pairs_by_the_number_of_raters_on_the_unit() -> None:
    # u1 rated (a, a, b) by three raters: unordered pairs (a, a) once, (a, b) twice, each
    #   weighing 1 / (3 - 1) = ½ per order → o_aa += 1, o_ab += 1, o_ba += 1.
    # u2 (b, b) and u3 (a, a) by two raters: o_bb += 2, o_aa += 2.
    # o = [[3, 1], [1, 2]]: n_a = 4, n_b = 3, n = 7.
    # alpha = 1 - 6 · 2 / (4·3 + 3·4) = 1 - 12 / 24 = 0.5
    rows = [("a", "a", 3, 1), ("a", "b", 3, 2), ("b", "b", 2, 1), ("a", "a", 2, 1)]
    matrix = agreement.coincidences(rows, ["a", "b"])
    assert matrix == [[3.0, 1.0], [1.0, 2.0]]
    assert agreement.krippendorff_alpha_nominal(matrix) == pytest.approx(0.5)


def test_alpha_ignores_unknown_values_and_lone_raters_and_is_none_without_variation() -> None:
    rows = [("a", "defer", 2, 4), ("a", "a", 1, 9), ("a", "a", 2, 3)]
    matrix = agreement.coincidences(rows, ["a", "b"])
    assert matrix == [[6.0, 0.0], [0.0, 0.0]]
    # Every value is "a": no expected disagreement, alpha undefined.
    assert agreement.krippendorff_alpha_nominal(matrix) is None
    assert agreement.krippendorff_alpha_nominal([[0, 0], [0, 0]]) is None


# --- McNemar's test -------------------------------------------------------------------------


def test_mcnemar_exact_for_few_discordant_pairs() -> None:
    # b = 1, c = 6, n = 7: P(X ≤ 1) = (C(7,0) + C(7,1)) / 2⁷ = 8 / 128 = 0.0625,
    # two-sided p = 2 · 0.0625 = 0.125.
    result = agreement.mcnemar(1, 6)
    assert result.method == "exact"
    assert result.p_value == pytest.approx(0.125)
    # b = c = 3: the tail P(X ≤ 3) of Bin(6, ½) is 42/64, doubled above 1, so p = 1.
    assert agreement.mcnemar(3, 3).p_value == pytest.approx(1.0)
    # b = 0, c = 5: 2 · 1/32 = 0.0625.
    assert agreement.mcnemar(0, 5).p_value == pytest.approx(0.0625)


def test_mcnemar_without_discordant_pairs_finds_no_difference() -> None:
    assert agreement.mcnemar(0, 0).p_value == 1.0


def test_mcnemar_chi_square_for_many_discordant_pairs() -> None:
    # b = 10, c = 30, n = 40 ≥ 25: χ² = (|10 - 30| - 1)² / 40 = 361 / 40 = 9.025;
    # p = P(χ²₁ > 9.025) = 2 · (1 - Φ(√9.025 = 3.00416)) = 2 · 0.0013314 = 0.0026628.
    result = agreement.mcnemar(10, 30)
    assert result.method == "chi2"
    assert result.statistic == pytest.approx(9.025)
    assert result.p_value == pytest.approx(0.0026628, rel=1e-3)


def test_mcnemar_refuses_negative_counts() -> None:
    with pytest.raises(ValueError, match="negative"):
        agreement.mcnemar(-1, 3)


# --- paired pass-rate delta -----------------------------------------------------------------


def test_paired_counts_give_rates_and_delta() -> None:
    # 100 tasks: 30 pass in both, 5 only in A, 15 only in B, 50 in neither.
    # A: (30 + 5) / 100 = 0.35; B: (30 + 15) / 100 = 0.45; delta = (15 - 5) / 100 = 0.10.
    counts = PairedCounts(both_pass=30, a_only=5, b_only=15, neither=50)
    assert counts.n == 100
    assert counts.a_rate == pytest.approx(0.35)
    assert counts.b_rate == pytest.approx(0.45)
    assert counts.delta == pytest.approx(0.10)


def test_delta_interval_matches_the_agresti_min_hand_computation() -> None:
    # b = 5 (only A), c = 15 (only B), n = 100. Half a task added to each cell: n' = 102,
    # d' = (15 - 5) / 102 = .098039; Var = ((5 + 15 + 1) / 102 - .098039²) / 102
    #   = (.205882 - .009612) / 102 = .0019242; SE = .043866; ± 1.959964 · SE = ± .085976.
    counts = PairedCounts(both_pass=30, a_only=5, b_only=15, neither=50)
    interval = agreement.delta_interval(counts)
    assert interval is not None
    assert interval.low == pytest.approx(0.098039 - 0.085976, abs=1e-5)
    assert interval.high == pytest.approx(0.098039 + 0.085976, abs=1e-5)
    assert interval.method == "Agresti-Min"


def test_delta_interval_without_discordant_tasks_still_has_a_width() -> None:
    # 12 tasks, none changed: n' = 14, d' = 0, Var = (1/14) / 14 = .005102, SE = .071429;
    # ± 1.959964 · .071429 = ± .139997. No change seen on 12 tasks does not prove none.
    interval = agreement.delta_interval(PairedCounts(both_pass=8, a_only=0, b_only=0, neither=4))
    assert interval is not None
    assert interval.low == pytest.approx(-0.139997, abs=1e-5)
    assert interval.high == pytest.approx(0.139997, abs=1e-5)
    assert agreement.delta_interval(PairedCounts(0, 0, 0, 0)) is None


def test_delta_interval_stays_within_minus_one_and_one() -> None:
    # Every one of 3 tasks flipped to passing: d' = 3/5 = .6, Var = (4/5 - .36) / 5 = .088,
    # SE = .296648, upper bound .6 + .581419 = 1.18, kept at 1.
    interval = agreement.delta_interval(PairedCounts(both_pass=0, a_only=0, b_only=3, neither=0))
    assert interval is not None
    assert interval.high == 1.0
    assert interval.low == pytest.approx(0.6 - 0.581419, abs=1e-5)
