"""Agreement statistics against values computed by hand for small tables.

Each expected value is worked out in the comment beside it, from the counts alone.
"""

from __future__ import annotations

import math

import pytest

from rewards import agreement
from rewards.agreement import PairedCounts
from tests.conftest import RecordCalls, clear_own_cache

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


# --- bootstrap interval for κ ---------------------------------------------------------------


def test_bootstrap_draws_keep_the_total_and_leave_empty_cells_empty() -> None:
    draws = agreement._draws((20, 0, 10, 20), 200, seed=1)
    assert draws.shape == (200, 4)
    assert (draws.sum(axis=1) == 50).all()
    assert (draws[:, 1] == 0).all()
    assert (draws >= 0).all()


def test_bootstrap_draws_have_the_expected_cell_means() -> None:
    # E[x_i] = n · w_i / Σw = 1000 · (0.1, 0.3, 0.6) = (100, 300, 600); over 2000 draws the
    # standard error of each mean is below 0.5, so ±3 is far outside chance.
    means = agreement._draws((100, 300, 600), 2000, seed=7).mean(axis=0)
    assert list(means) == pytest.approx([100, 300, 600], abs=3)


def test_each_replicates_kappa_is_the_kappa_of_its_drawn_table() -> None:
    # The replicates' κ are computed as arrays: each must equal cohen_kappa of its own table,
    # undefined (NaN) exactly where cohen_kappa says None.
    for cells, size in [((20, 5, 10, 15), 2), ((10, 2, 0, 1, 8, 1, 0, 2, 6), 3), ((3, 1, 0, 0), 2)]:
        draws = agreement._draws(cells, 300, seed=3)
        kappas = agreement._kappas(draws, size)
        for draw, kappa in zip(draws.tolist(), kappas.tolist(), strict=True):
            expected = agreement.cohen_kappa([draw[i * size : (i + 1) * size] for i in range(size)])
            if expected is None:
                assert math.isnan(kappa)
            else:
                assert kappa == pytest.approx(expected)


def test_kappa_interval_brackets_kappa_and_agrees_with_the_normal_approximation() -> None:
    # For [[20, 5], [10, 15]]: κ = 0.4, p_o = 0.7, p_e = 0.5, n = 50.
    # Large-sample SE ≈ √(p_o(1 - p_o) / (n (1 - p_e)²)) = √(0.21 / 12.5) = 0.1296,
    # so the 95% interval is about 0.4 ± 1.96 · 0.1296 = [0.146, 0.654].
    interval = agreement.kappa_interval([[20, 5], [10, 15]])
    assert interval is not None
    assert interval.low < 0.4 < interval.high
    assert interval.low == pytest.approx(0.146, abs=0.06)
    assert interval.high == pytest.approx(0.654, abs=0.06)
    assert interval.level == 0.95


def test_kappa_interval_is_reproducible_and_narrows_with_more_data() -> None:
    small = agreement.kappa_interval([[20, 5], [10, 15]])
    # Computed afresh, not read from the cache: the fixed seed alone makes it the same.
    clear_own_cache()
    again = agreement.kappa_interval([[20, 5], [10, 15]])
    large = agreement.kappa_interval([[2000, 500], [1000, 1500]])
    assert small == again
    assert small is not None
    assert large is not None
    # 100x the data: the interval is about √100 = 10x narrower.
    assert (large.high - large.low) < (small.high - small.low) / 5


def test_kappa_interval_of_perfect_agreement_is_a_point_and_of_nothing_is_none() -> None:
    interval = agreement.kappa_interval([[10, 0], [0, 10]])
    assert interval is not None
    assert interval.low == pytest.approx(1.0)
    assert interval.high == pytest.approx(1.0)
    assert agreement.kappa_interval([[0, 0], [0, 0]]) is None


def test_intervals_computed_together_are_each_the_one_computed_alone() -> None:
    tables = [
        ([[20, 5], [10, 15]], 1000),
        ([[0, 0], [0, 0]], 500),
        ([[2000, 500], [1000, 1500]], 500),
        ([[9, 0], [0, 0]], 500),
        ([[10, 2, 0], [1, 8, 1], [0, 2, 6]], 1000),
        ([[20, 5], [10, 15]], 500),
    ]
    together = agreement.kappa_intervals(tables)
    clear_own_cache()
    alone = []
    for counts, replicates in tables:
        alone.append(agreement.kappa_interval(counts, replicates=replicates))
        clear_own_cache()
    assert together == alone
    assert together[1] is None
    assert together[3] is None
    # Fewer replicates of the same table: its own interval, not the 1,000-replicate one.
    assert together[5] is not None
    assert together[5].replicates == 500
    assert together[0] is not None
    assert together[0].replicates == 1000


def _failing(*args: object) -> None:
    raise AssertionError("computed, not read from the cache")


def test_intervals_are_read_from_the_cache_until_forgotten(
    monkeypatch: pytest.MonkeyPatch, record_calls: RecordCalls
) -> None:
    computed = record_calls(agreement, "_kappa_intervals")
    first = agreement.kappa_intervals([([[20, 5], [10, 15]], 1000)])[0]
    assert len(computed) == 1
    with monkeypatch.context() as patched:
        patched.setattr(agreement, "_kappa_intervals", _failing)
        assert agreement.kappa_interval([[20, 5], [10, 15]]) == first
    clear_own_cache()
    assert agreement.kappa_interval([[20, 5], [10, 15]]) == first
    assert len(computed) == 2


def test_only_the_tables_the_cache_lacks_are_computed_together(
    record_calls: RecordCalls,
) -> None:
    seen, changed, other_replicates = [[20, 5], [10, 15]], [[21, 5], [10, 15]], [[9, 3], [2, 7]]
    agreement.kappa_intervals([(seen, 1000)])
    computed = record_calls(agreement, "_kappa_intervals")
    intervals = agreement.kappa_intervals(
        [(seen, 1000), (changed, 1000), (seen, 500), (other_replicates, 500), (changed, 1000)]
    )
    # (tables, size, replicates, level, seed): one computation per number of replicates; the
    # table seen before is read, a count changed by one is a new interval.
    assert sorted((sorted(call[0]), call[2]) for call in computed) == [
        ([(9, 3, 2, 7), (20, 5, 10, 15)], 500),
        ([(21, 5, 10, 15)], 1000),
    ]
    assert intervals[1] == intervals[4] != intervals[0]


def test_kappa_interval_is_none_when_most_replicates_have_no_kappa() -> None:
    # Every draw of [[9, 0], [0, 0]] is the same table, whose chance agreement is 1.
    assert agreement.kappa_interval([[9, 0], [0, 0]]) is None


def test_kappa_interval_of_a_three_by_three_table_brackets_its_kappa() -> None:
    interval = agreement.kappa_interval([[10, 2, 0], [1, 8, 1], [0, 2, 6]])
    assert interval is not None
    assert interval.low < 0.695946 < interval.high
    assert interval.replicates == agreement.REPLICATES


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


def test_delta_interval_agrees_with_the_paired_normal_approximation() -> None:
    # Paired SE of the delta: √((b + c)/n² - (c - b)²/n³) = √(20/10⁴ - 100/10⁶)
    #   = √0.0019 = 0.04359; 95%: 0.10 ± 1.96 · 0.04359 = [0.0146, 0.1854].
    counts = PairedCounts(both_pass=30, a_only=5, b_only=15, neither=50)
    interval = agreement.delta_interval(counts)
    assert interval is not None
    assert interval.low == pytest.approx(0.0146, abs=0.02)
    assert interval.high == pytest.approx(0.1854, abs=0.02)


def test_delta_interval_without_discordant_tasks_is_zero_and_none_without_tasks() -> None:
    interval = agreement.delta_interval(PairedCounts(both_pass=8, a_only=0, b_only=0, neither=4))
    assert interval is not None
    assert (interval.low, interval.high) == (0.0, 0.0)
    assert agreement.delta_interval(PairedCounts(0, 0, 0, 0)) is None


def test_delta_interval_is_read_from_the_cache_and_the_same_when_computed_afresh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counts = PairedCounts(both_pass=30, a_only=5, b_only=15, neither=50)
    first = agreement.delta_interval(counts)
    with monkeypatch.context() as patched:
        patched.setattr(agreement, "_delta_interval", _failing)
        assert agreement.delta_interval(counts) == first
        with pytest.raises(AssertionError, match="computed"):
            agreement.delta_interval(PairedCounts(both_pass=30, a_only=6, b_only=15, neither=50))
    clear_own_cache()
    assert agreement.delta_interval(counts) == first
