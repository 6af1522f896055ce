import json
import math

import numpy as np
import pytest
import scipy.stats

from pqscope.analysis.leakstats import (
    MIN_SAMPLES_PER_CLASS,
    Verdict,
    analyse,
    bootstrap_differences,
    class_ecdfs,
    cohens_d,
    leak_bound,
    samples_needed,
)
from pqscope.analysis.localisation import function_thresholds, rank_functions
from pqscope.analysis.sequential import t_against_n
from pqscope.analysis.ttests import (
    CROP_QUANTILES,
    DEFINITE_LEAK_T,
    LEAK_EVIDENCE_T,
    MIN_SAMPLES_PER_TEST,
    split_classes,
    t_tests,
    welch_t,
)
from pqscope.views.plots import plot_t_vs_n

# Bootstrap resamples where a test does not look at the intervals: keeps the suite fast.
FEW_RESAMPLES = 100


def interleave(fixed, random, seed=0):
    """The (classes, cycles) sequence of a run that measured these samples in random order."""
    classes = np.concatenate([np.zeros(len(fixed), dtype=int), np.ones(len(random), dtype=int)])
    cycles = np.concatenate([np.asarray(fixed, dtype=np.float64), np.asarray(random, dtype=np.float64)])
    order = np.random.default_rng(seed).permutation(len(classes))
    return classes[order], cycles[order]


def run(fixed, random, **options):
    result = analyse(*interleave(fixed, random), bootstrap_resamples=options.pop("bootstrap_resamples", FEW_RESAMPLES),
                     **options)
    # Every result must be strict JSON: no NaN anywhere, infinities spelled out.
    json.dumps(result.to_json(), allow_nan=False)
    return result


def normal(mean, sd, n, seed):
    return np.random.default_rng(seed).normal(mean, sd, n).round()


def test_a_clear_shift_is_a_leak_and_the_json_has_the_documented_shape():
    result = run(normal(1_000_000, 100, 2000, seed=1), normal(1_000_050, 100, 2000, seed=2))
    assert result.verdict == Verdict.LEAK
    assert result.max_abs_t > DEFINITE_LEAK_T
    assert result.effect_size == pytest.approx(0.5, abs=0.1)
    document = result.to_json()
    assert set(document) >= {"verdict", "n", "max_abs_t", "tests", "effect_size", "samples_needed", "bootstrap"}
    assert document["verdict"] == "leak" and document["n"] == {"fixed": 2000, "random": 2000}
    assert len(document["tests"]) == 1 + 100 + 1
    assert set(document["tests"]["raw"]) == {"t", "p", "n_fixed", "n_random"}
    assert document["tests"]["raw"]["t"] > 0  # the random keys are the slower class
    assert document["strongest_test"] in document["tests"]
    assert document["tests"][document["strongest_test"]]["t"] == pytest.approx(document["max_abs_t"])
    assert document["nonparametric"]["mann_whitney"]["p"] < 1e-6
    assert document["nonparametric"]["kolmogorov_smirnov"]["p"] < 1e-6
    interval = document["bootstrap"]["mean_difference"]
    assert interval["low"] < 50 < interval["high"] and interval["low"] > 0


def test_identical_distributions_are_no_leak_at_large_n():
    result = run(normal(1_000_000, 100, 5000, seed=3), normal(1_000_000, 100, 5000, seed=4))
    assert result.verdict == Verdict.NO_LEAK
    assert result.max_abs_t < LEAK_EVIDENCE_T
    assert "no leak detected at 5000 fixed and 5000 random samples" in result.reason
    assert result.detectable_effect == pytest.approx(LEAK_EVIDENCE_T * math.sqrt(2 / 5000))


def test_a_variance_only_difference_is_caught_by_the_second_order_test():
    result = run(normal(1_000_000, 100, 5000, seed=5), normal(1_000_000, 130, 5000, seed=6))
    assert abs(result.tests["raw"].t) < LEAK_EVIDENCE_T
    assert result.tests["second-order"].t > DEFINITE_LEAK_T
    assert result.verdict == Verdict.LEAK


def test_cropping_finds_a_small_shift_under_heavy_tailed_outliers():
    # Interrupt-like outliers: 5 % of the samples take up to ~1e5 cycles longer, in both classes.
    # Their variance drowns a 3-cycle shift of the bulk in the raw test; cropping removes them.
    rng = np.random.default_rng(7)
    def with_outliers(samples):
        return samples + (rng.random(len(samples)) < 0.05) * rng.exponential(1e5, len(samples)).round()
    result = run(with_outliers(normal(1_000_000, 10, 5000, seed=8)), with_outliers(normal(1_000_003, 10, 5000, seed=9)))
    assert abs(result.tests["raw"].t) < LEAK_EVIDENCE_T
    assert result.strongest_test.startswith("crop-")
    assert result.verdict == Verdict.LEAK


def test_crop_tests_keep_the_samples_below_dudect_percentiles():
    assert CROP_QUANTILES[0] == pytest.approx(1 - 0.5 ** 0.1)
    assert CROP_QUANTILES[-1] == pytest.approx(1 - 0.5 ** 10)
    # Pooled cycles 0..1999: the threshold of quantile q is the smallest value whose empirical
    # CDF reaches q, and the test keeps the values strictly below it.
    classes, cycles = np.arange(2000) % 2, np.arange(2000)
    tests = t_tests(classes, cycles)
    for index in (0, 50, 99):
        kept = math.ceil(2000 * CROP_QUANTILES[index]) - 1
        assert tests[f"crop-{index:02d}"].below == kept
        assert tests[f"crop-{index:02d}"].n_fixed + tests[f"crop-{index:02d}"].n_random == kept


def test_equal_constants_are_no_leak():
    result = run(np.full(MIN_SAMPLES_PER_CLASS, 123_456), np.full(MIN_SAMPLES_PER_CLASS, 123_456))
    assert result.verdict == Verdict.NO_LEAK
    assert result.max_abs_t == 0 and result.effect_size == 0 and result.samples_needed is None
    assert result.nonparametric.kolmogorov_smirnov.p == 1.0
    assert result.bootstrap["median_difference"].low == result.bootstrap["median_difference"].high == 0


def test_different_constants_are_a_certain_leak_even_with_few_samples():
    result = run(np.full(50, 123_456), np.full(50, 123_460))
    assert result.verdict == Verdict.LEAK
    assert result.max_abs_t == math.inf and result.effect_size == math.inf
    assert result.samples_needed == MIN_SAMPLES_PER_TEST
    assert "fixed 123456, random 123460 cycles" in result.reason
    assert result.to_json()["max_abs_t"] == "inf"


def test_one_constant_class_against_a_slower_path_sometimes_taken():
    # The fixed key never takes a 40-cycle slow path that 20 % of the random keys take.
    rng = np.random.default_rng(10)
    result = run(np.full(2000, 5000), 5000 + 40 * (rng.random(2000) < 0.2))
    assert result.tests["raw"].t > DEFINITE_LEAK_T and math.isfinite(result.tests["raw"].t)
    assert math.isfinite(result.effect_size) and result.effect_size > 0
    assert result.verdict == Verdict.LEAK


def test_one_constant_class_against_a_class_with_jitter_of_the_same_mean():
    rng = np.random.default_rng(11)
    result = run(np.full(2000, 5000), 5000 + rng.choice([-2, 2], 2000))
    assert all(test.t is None or not math.isnan(test.t) for test in result.tests.values())
    assert abs(result.tests["raw"].t) < LEAK_EVIDENCE_T
    assert DEFINITE_LEAK_T < result.tests["second-order"].t < math.inf  # squares 0 against squares near 4
    assert result.verdict == Verdict.LEAK


@pytest.mark.parametrize("message_noise", [0, 30], ids=["deterministic", "message-dependent-noise"])
def test_public_rejection_sampling_randomness_is_not_a_leak(message_noise):
    # ML-DSA-like: a geometric number of 300 000-cycle iterations, the same distribution for both
    # classes because it depends on the signing randomness, not on the key.
    def signing_times(rejection_probability, seed):
        rng = np.random.default_rng(seed)
        iterations = rng.geometric(1 - rejection_probability, 5000)
        return 1_000_000 + 300_000 * iterations + rng.integers(0, message_noise + 1, 5000)
    public = run(signing_times(0.75, seed=12), signing_times(0.75, seed=13))
    assert public.verdict == Verdict.NO_LEAK
    # A fixed key that is rejected less often than the pool's keys is a leak.
    key_dependent = run(signing_times(0.6, seed=12), signing_times(0.75, seed=13))
    assert key_dependent.verdict == Verdict.LEAK


def test_too_few_samples_are_inconclusive():
    few = run(normal(1000, 10, 200, seed=14), normal(1000, 10, 200, seed=15))
    assert few.verdict == Verdict.INCONCLUSIVE and few.max_abs_t < LEAK_EVIDENCE_T
    assert f"needs {MIN_SAMPLES_PER_CLASS} per class" in few.reason
    tiny = run(normal(1000, 10, 5, seed=16), normal(1000, 10, 5, seed=17))
    assert tiny.verdict == Verdict.INCONCLUSIVE and tiny.max_abs_t is None and tiny.strongest_test is None
    assert tiny.samples_needed is None and tiny.to_json()["tests"]["raw"]["t"] is None


def test_evidence_below_the_definite_threshold_is_inconclusive():
    # d = 0.25 at 1000 per class: expected t = 0.25 * sqrt(500) = 5.6.
    result = run(normal(0, 100, 1000, seed=18), normal(25, 100, 1000, seed=19))
    assert LEAK_EVIDENCE_T < result.max_abs_t < DEFINITE_LEAK_T
    assert result.verdict == Verdict.INCONCLUSIVE and "evidence of a leak" in result.reason
    # Predicted: |t| grows as sqrt(n), so about (10 / t)**2 times more samples reach the threshold.
    assert result.samples_needed == pytest.approx(1000 * (DEFINITE_LEAK_T / result.max_abs_t) ** 2, abs=1)


def test_analyse_needs_two_samples_per_class_and_valid_classes():
    with pytest.raises(ValueError, match="at least two samples per class"):
        analyse([0, 0, 1], [5, 5, 5])
    with pytest.raises(ValueError, match="0 \\(fixed key\\) or 1"):
        split_classes([0, 2], [5, 5])
    with pytest.raises(ValueError, match="equal-length"):
        split_classes([0, 1], [5])


def test_bootstrap_is_deterministic_given_a_seed():
    fixed, random = normal(1000, 10, 500, seed=20), normal(1002, 10, 500, seed=21)
    first = bootstrap_differences(fixed, random, seed=42, resamples=300)
    assert bootstrap_differences(fixed, random, seed=42, resamples=300) == first
    assert bootstrap_differences(fixed, random, seed=43, resamples=300) != first
    assert first["mean_difference"].estimate == pytest.approx(random.mean() - fixed.mean())
    assert first["median_difference"].estimate == np.median(random) - np.median(fixed)
    assert first["mean_difference"].low < first["mean_difference"].estimate < first["mean_difference"].high


def test_samples_needed_follows_the_welch_approximation():
    assert samples_needed(1.0) == 2 * DEFINITE_LEAK_T ** 2
    assert samples_needed(-0.5) == samples_needed(0.5) == 800
    assert samples_needed(0.5) < samples_needed(0.1)
    assert samples_needed(0.0) is None
    assert samples_needed(math.inf) == MIN_SAMPLES_PER_TEST
    small = run(normal(0, 100, 1000, seed=22), normal(20, 100, 1000, seed=23))
    large = run(normal(0, 100, 1000, seed=22), normal(60, 100, 1000, seed=23))
    assert large.samples_needed < small.samples_needed


def test_cohens_d_uses_the_pooled_standard_deviation():
    assert cohens_d([0, 2, 0, 2], [1, 3, 1, 3]) == pytest.approx(1 / np.std([0, 2, 0, 2], ddof=1))
    assert cohens_d([7, 7], [7, 7]) == 0 and cohens_d([7, 7], [5, 5]) == -math.inf


def test_t_against_n_grows_under_a_leak_and_plots():
    classes, cycles = interleave(normal(0, 100, 4000, seed=24), normal(30, 100, 4000, seed=25))
    series = t_against_n(classes, cycles, points=12)
    assert series[0].n == 100 and series[-1].n == 8000
    assert all(a.n < b.n for a, b in zip(series, series[1:]))
    assert series[-1].n_fixed == series[-1].n_random == 4000
    # |t| grows as sqrt(N): 80 times the samples, about 9 times the |t| (a noisy start, so a margin).
    assert series[-1].max_abs_t > 4 * series[0].max_abs_t
    assert series[-1].max_abs_t > DEFINITE_LEAK_T
    png = plot_t_vs_n(series + t_against_n(*interleave(np.full(40, 5), np.full(40, 6)), points=3))
    assert png.startswith(b"\x89PNG")
    # A test decided at 4 signatures (a slow signing's early look beside a clean exact check): no |t| at all.
    (few,) = t_against_n(*interleave(np.full(2, 5), np.full(2, 5)), points=3)
    assert few.n == 4 and few.max_abs_t is None and plot_t_vs_n([few]).startswith(b"\x89PNG")


def test_class_ecdfs_are_step_functions_per_class():
    ecdfs = class_ecdfs([0, 1, 0, 1, 0], [3, 9, 1, 9, 3])
    values, probabilities = ecdfs["fixed"]
    assert list(values) == [1, 3] and list(probabilities) == pytest.approx([1 / 3, 1])
    assert list(ecdfs["random"][0]) == [9] and list(ecdfs["random"][1]) == [1]


def test_ranking_puts_the_leaking_function_first_with_its_share():
    n = 2000
    rng = np.random.default_rng(26)
    fixed = {
        "__aeabi_dmul": rng.normal(1000, 20, n).round(),
        "__aeabi_dadd": rng.normal(500, 20, n).round(),
        "keccak_f1600": np.full(n, 2000.0),
    }
    # The same noise reordered plus a shift, so that the mean differences are exactly 63, 27 and 10.
    random = {
        "__aeabi_dmul": rng.permutation(fixed["__aeabi_dmul"]) + 63,
        "__aeabi_dadd": rng.permutation(fixed["__aeabi_dadd"]) + 27,
        "keccak_f1600": np.full(n, 2000.0),
        "slow_path": np.full(n, 10.0),  # only ever called with random keys, 10 cycles each time
    }
    ranking = rank_functions(fixed, random)
    assert [leak.name for leak in ranking] == ["__aeabi_dmul", "__aeabi_dadd", "slow_path", "keccak_f1600"]
    assert [leak.share for leak in ranking] == pytest.approx([0.63, 0.27, 0.10, 0])
    assert ranking[0].describe().startswith("__aeabi_dmul: 63% of the difference")
    assert sum(leak.share for leak in ranking) == pytest.approx(1)
    slow_path, keccak = ranking[2], ranking[3]
    assert slow_path.t == math.inf and slow_path.mean_fixed == 0 and slow_path.depends_on_class
    assert keccak.t == 0 and keccak.share == 0 and not keccak.depends_on_class
    json.dumps([leak.to_json() for leak in ranking], allow_nan=False)


def test_ranking_without_a_total_difference_has_no_shares():
    ranking = rank_functions({"f": [5.0] * 20}, {"f": [5.0] * 30})
    assert ranking[0].share is None and ranking[0].t == 0
    with pytest.raises(ValueError, match="one common, non-zero sample count"):
        rank_functions({"f": [1.0] * 20, "g": [1.0] * 19}, {"f": [1.0] * 20})


def test_function_thresholds_grow_with_the_functions_tested_to_keep_the_totals_error_rate():
    assert function_thresholds(1) == pytest.approx((LEAK_EVIDENCE_T, DEFINITE_LEAK_T))
    evidence, definite = function_thresholds(100)
    # Bonferroni: one of 100 functions crosses by chance as often as the total alone would.
    assert 100 * 2 * scipy.stats.norm.sf(evidence) == pytest.approx(2 * scipy.stats.norm.sf(LEAK_EVIDENCE_T))
    assert evidence > function_thresholds(10)[0] > LEAK_EVIDENCE_T and definite > DEFINITE_LEAK_T


def test_a_function_leaking_only_in_its_spread_is_found_by_its_second_order_test():
    rng = np.random.default_rng(3)
    # Same mean in both classes; the fixed key's time is twice as spread.
    fixed = {"spread": 1000 + rng.normal(0, 40, 3000), "flat": 500 + rng.normal(0, 10, 3000)}
    random_keys = {"spread": 1000 + rng.normal(0, 20, 3000), "flat": 500 + rng.normal(0, 10, 3000)}
    ranking = {leak.name: leak for leak in rank_functions(fixed, random_keys)}
    assert ranking["spread"].test == "second-order" and ranking["spread"].depends_on_class
    assert abs(welch_t(fixed["spread"], random_keys["spread"]).t) < LEAK_EVIDENCE_T  # raw t misses it
    assert not ranking["flat"].depends_on_class
    assert ranking["spread"].nonparametric.kolmogorov_smirnov.p_holm < 1e-6
    assert ranking["flat"].nonparametric.kolmogorov_smirnov.p_holm > 1e-3


def test_the_leak_bound_is_the_far_end_of_the_90_percent_interval_of_the_difference():
    rng = np.random.default_rng(5)
    fixed, random_keys = 1000 + rng.normal(0, 10, 4000), 1000.5 + rng.normal(0, 10, 4000)
    bound = leak_bound(fixed, random_keys)
    low, high = scipy.stats.ttest_ind(random_keys, fixed, equal_var=False).confidence_interval(0.90)
    assert bound.cycles == pytest.approx(max(abs(low), abs(high)))
    assert bound.share == pytest.approx(bound.cycles / np.concatenate([fixed, random_keys]).mean())
    # Constant classes: the bound is their difference, exactly.
    assert leak_bound(np.full(10, 7.0), np.full(10, 7.0)).cycles == 0
    assert leak_bound(np.full(10, 7.0), np.full(10, 9.0)).cycles == 2


def test_the_online_t_equals_welchs_on_the_same_samples():
    from pqscope.analysis.sequential import OnlineT
    rng = np.random.default_rng(9)
    classes, values = rng.integers(0, 2, 500), rng.normal(1000, 30, 500) + 5 * np.arange(500) % 3
    online = OnlineT()
    for key_class, value in zip(classes, values):
        online.add(int(key_class), float(value))
    assert online.t == pytest.approx(welch_t(values[classes == 0], values[classes == 1]).t, rel=1e-9)
    constant = OnlineT()
    for key_class in [0, 1] * 10:
        constant.add(key_class, 7.0)
    assert constant.t == 0.0
