"""Agreement statistics against values computed by hand for small tables.

Each expected value is worked out in the comment beside it, from the counts alone.
"""

from __future__ import annotations

import math

import pytest

from rewards import agreement
from rewards.agreement import Clusters, Degenerate, Interval, NoInterval, PairedCounts
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
    assert isinstance(interval, Interval)
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
    assert isinstance(small, Interval)
    assert isinstance(large, Interval)
    # 100x the data: the interval is about √100 = 10x narrower.
    assert (large.high - large.low) < (small.high - small.low) / 5


def test_perfect_agreement_and_nothing_get_no_interval_and_say_why() -> None:
    # Every resample of [[10, 0], [0, 10]] has κ = 1: [1.00, 1.00] would claim certainty.
    assert agreement.kappa_interval([[10, 0], [0, 10]]) == NoInterval(Degenerate.ALL_AGREE)
    assert agreement.kappa_interval([[0, 0], [0, 0]]) == NoInterval(Degenerate.EMPTY)


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
    assert together[1] == NoInterval(Degenerate.EMPTY)
    assert together[3] == NoInterval(Degenerate.TOO_FEW)
    # Fewer replicates of the same table: its own interval, not the 1,000-replicate one.
    assert isinstance(together[5], Interval)
    assert together[5].replicates == 500
    assert isinstance(together[0], Interval)
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
    assert sorted((sorted(t.cells for t in call[0]), call[2]) for call in computed) == [
        ([(9, 3, 2, 7), (20, 5, 10, 15)], 500),
        ([(21, 5, 10, 15)], 1000),
    ]
    assert intervals[1] == intervals[4] != intervals[0]


def test_degenerate_tables_get_no_interval_decided_before_resampling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The statistician's cases: a constant gate (cells 0, 0, 14, 14) had κ 0.00 [0.00, 0.00];
    # three agreeing judgments 1.00 [1.00, 1.00]; at n = 2 an interval came or not with the
    # draws. Each is now refused from its counts alone: nothing is resampled.
    monkeypatch.setattr(agreement, "_kappa_intervals", _failing)
    cases = [
        ([[0, 0], [14, 14]], Degenerate.ROWS_CONSTANT),  # the gate always FAIL
        ([[9, 0], [3, 0]], Degenerate.COLUMNS_CONSTANT),  # the humans always pass
        ([[2, 0], [0, 1]], Degenerate.TOO_FEW),  # three agreeing judgments
        ([[1, 0], [0, 1]], Degenerate.TOO_FEW),
        ([[1, 0], [1, 0]], Degenerate.TOO_FEW),
        ([[6, 1], [1, 1]], Degenerate.TOO_FEW),  # 9 units: one short of MIN_UNITS
        ([[30, 0], [0, 12]], Degenerate.ALL_AGREE),
        ([[0, 0], [0, 0]], Degenerate.EMPTY),
    ]
    for table, reason in cases:
        assert agreement.kappa_refusal(Clusters.of_cells(table)) == reason
        assert agreement.kappa_interval(table) == NoInterval(reason)
    assert agreement.MIN_UNITS == 10
    # κ itself is still what it is: 0 for the constant gate, undefined for constant humans.
    assert agreement.cohen_kappa([[0, 0], [14, 14]]) == 0.0


def test_at_the_minimum_an_interval_always_shows_whatever_the_seed() -> None:
    # Ten units with a disagreement: the rule lets it through, and no draw can take it back.
    table = [[4, 1], [1, 4]]
    for seed in range(20):
        interval = agreement.kappa_interval(table, replicates=200, seed=seed)
        assert isinstance(interval, Interval)
        assert interval.low < interval.high


def test_a_table_whose_units_never_vary_in_kappa_gets_no_interval() -> None:
    # Every trial has one pass and one fail under its gate: each resample's κ is exactly 0,
    # though every cell counts something. The resamples show it; [0, 0] is not shown.
    units = Clusters.of(2, [((1, 1, 0, 0), 10), ((0, 0, 1, 1), 10)])
    assert agreement.kappa_refusal(units) is None
    assert agreement.kappa_interval(units) == NoInterval(Degenerate.NO_SPREAD)


# --- cluster bootstrap: units are trials ------------------------------------------------------
def test_clusters_add_up_to_their_table_and_are_the_same_whatever_the_order() -> None:
    units = Clusters.of(2, [((2, 1, 0, 0), 3), ((1, 0, 0, 0), 4), ((0, 0, 0, 0), 9)])
    again = Clusters.of(2, [((1, 0, 0, 0), 1), ((2, 1, 0, 0), 3), ((1, 0, 0, 0), 3)])
    assert units == again
    assert units.units == 7  # the empty profile (a trial with no judgment here) is no unit
    assert units.table == [[10, 3], [0, 0]]
    assert Clusters.of_cells([[20, 5], [10, 15]]).units == 50
    with pytest.raises(ValueError, match="every cell"):
        Clusters.of(2, [((1, 0, 0), 1)])
    with pytest.raises(ValueError, match="negative"):
        Clusters.of(2, [((1, 0, 0, 0), -1)])


def test_a_trial_judged_three_times_is_one_unit_not_three() -> None:
    # 50 trials, each judged by three reviewers who agree with each other: the table counts
    # 150 judgments, [[60, 15], [30, 45]], κ = 0.4 as for [[20, 5], [10, 15]] (κ does not
    # change when every count triples). Resampling trials, every replicate is the 50-trial
    # table's replicate tripled, so with the same seed the interval is exactly the one of
    # 50 single judgments; resampling the 150 judgments as if independent is about √3
    # times narrower: the dishonest interval this replaces.
    tripled = Clusters.of(
        2, [((3, 0, 0, 0), 20), ((0, 3, 0, 0), 5), ((0, 0, 3, 0), 10), ((0, 0, 0, 3), 15)]
    )
    assert tripled.table == [[60, 15], [30, 45]]
    by_trial = agreement.kappa_interval(tripled)
    single = agreement.kappa_interval([[20, 5], [10, 15]])
    by_judgment = agreement.kappa_interval([[60, 15], [30, 45]])
    assert isinstance(by_trial, Interval)
    assert isinstance(single, Interval)
    assert isinstance(by_judgment, Interval)
    assert (by_trial.low, by_trial.high) == pytest.approx((single.low, single.high))
    ratio = (by_trial.high - by_trial.low) / (by_judgment.high - by_judgment.low)
    assert ratio == pytest.approx(math.sqrt(3), rel=0.15)


def _reference_interval(
    trials: list[tuple[int, list[int]]], replicates: int, seed: int
) -> tuple[float, float]:
    """A plain reimplementation: draw trials with replacement (each a gate row and its
    reviewers' judgment columns), pool the drawn trials' judgments into a table, κ of it;
    the 2.5th and 97.5th percentiles of the defined ones."""
    import numpy as np

    rng = np.random.default_rng(seed)
    kappas = []
    for _ in range(replicates):
        table = [[0, 0], [0, 0]]
        for index in rng.integers(0, len(trials), len(trials)):
            gate, judgments = trials[index]
            for judgment in judgments:
                table[gate][judgment] += 1
        kappa = agreement.cohen_kappa(table)
        if kappa is not None:
            kappas.append(kappa)
    low, high = np.percentile(kappas, [2.5, 97.5])
    return float(low), float(high)


def test_cluster_bootstrap_matches_a_plain_reimplementation_over_trials() -> None:
    # 16 trials (gate row 0 = PASS, 1 = FAIL; judgments 0 = pass, 1 = fail), some judged
    # by one reviewer, some by two or three who do not always agree.
    trials = [
        (0, [0, 0, 0]),
        (0, [0, 0]),
        (0, [0]),
        (0, [0, 1]),
        (0, [0, 0, 1]),
        (0, [0]),
        (0, [1]),
        (0, [0, 0]),
        (1, [1, 1, 1]),
        (1, [1, 1]),
        (1, [1]),
        (1, [0, 1]),
        (1, [1]),
        (1, [0]),
        (1, [1, 1]),
        (1, [0, 0, 1]),
    ]
    profiles = []
    for gate, judgments in trials:
        cells = [0, 0, 0, 0]
        for judgment in judgments:
            cells[gate * 2 + judgment] += 1
        profiles.append((cells, 1))
    units = Clusters.of(2, profiles)
    assert units.units == 16
    assert units.table == [[12, 3], [4, 11]]
    interval = agreement.kappa_interval(units, replicates=20000)
    assert isinstance(interval, Interval)
    low, high = _reference_interval(trials, 20000, seed=5)
    # Two independent runs of 20,000 replicates: their percentiles differ by Monte Carlo
    # error only (about 0.01 here).
    assert interval.low == pytest.approx(low, abs=0.03)
    assert interval.high == pytest.approx(high, abs=0.03)


def test_kappa_interval_of_a_three_by_three_table_brackets_its_kappa() -> None:
    interval = agreement.kappa_interval([[10, 2, 0], [1, 8, 1], [0, 2, 6]])
    assert isinstance(interval, Interval)
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
    assert isinstance(interval, Interval)
    assert interval.low == pytest.approx(0.0146, abs=0.02)
    assert interval.high == pytest.approx(0.1854, abs=0.02)


def test_delta_gets_no_interval_when_no_task_changed_or_too_few_were_paired(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Decided from the counts, nothing resampled: [0, 0] for no change would claim certainty.
    monkeypatch.setattr(agreement, "_delta_interval", _failing)
    cases = [
        (PairedCounts(both_pass=8, a_only=0, b_only=0, neither=4), Degenerate.NO_CHANGE),
        (PairedCounts(both_pass=0, a_only=12, b_only=0, neither=0), Degenerate.ONE_CELL),
        (PairedCounts(both_pass=5, a_only=2, b_only=1, neither=1), Degenerate.TOO_FEW),
        (PairedCounts(0, 0, 0, 0), Degenerate.EMPTY),
    ]
    for counts, reason in cases:
        assert agreement.delta_interval(counts) == NoInterval(reason)


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
