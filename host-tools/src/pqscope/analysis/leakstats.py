"""The one-shot analysis of a fixed-vs-random run (`analyse`): the t-tests' verdict and, beside it,
how large the difference between the key classes is or could still be (Cohen's d, the samples a
leak this size needs, the smallest effect the run could detect, the TOST bound, nonparametric
tests, bootstrap intervals) and the classes' distributions. The design and the tests: `ttests`."""

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike

from ..results.documents.ct import ClassCounts, LeakBound, LeakStatistics, Nonparametric, RankTest
from .ttests import (DEFINITE_LEAK_T, LEAK_EVIDENCE_T, MIN_SAMPLES_PER_TEST, TTest, adjusted_threshold, split_classes,
                     strongest, t_tests)

MIN_SAMPLES_PER_CLASS = 1000
"""Samples per class below which "no leak" is never claimed. With n per class a test reaches an
expected |t| of LEAK_EVIDENCE_T for an effect of 4.5 * sqrt(2 / n) pooled standard deviations:
0.2 at 1000 per class, Cohen's "small" effect. Constant data does not lower the bar: a
key-dependent slow path may simply not have been hit yet."""

BOOTSTRAP_RESAMPLES = 1000
CONFIDENCE_LEVEL = 0.95


class Verdict(StrEnum):
    LEAK = "leak"
    NO_LEAK = "no-leak"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float

    def to_json(self) -> dict:
        return {"estimate": self.estimate, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class LeakResult:
    verdict: Verdict
    reason: str
    n_fixed: int
    n_random: int
    tests: dict[str, TTest]
    strongest_test: str | None  # None: no test had MIN_SAMPLES_PER_TEST per class
    max_abs_t: float | None
    effect_size: float
    samples_needed: int | None
    detectable_effect: float
    nonparametric: Nonparametric
    bootstrap: dict[str, Interval]
    bootstrap_seed: int
    bound: LeakBound | None = None

    def statistics(self) -> LeakStatistics:
        """The statistics as ct.json keeps them."""
        return LeakStatistics(
            str(self.verdict), self.reason, ClassCounts(self.n_fixed, self.n_random), self.max_abs_t,
            self.strongest_test, {name: test.to_json() for name, test in self.tests.items()}, self.nonparametric,
            self.effect_size, self.samples_needed, self.detectable_effect,
            {"confidence": CONFIDENCE_LEVEL, "seed": self.bootstrap_seed,
             **{name: interval.to_json() for name, interval in self.bootstrap.items()}},
            self.bound)

    def to_json(self) -> dict:
        """A document json.dumps accepts with allow_nan=False: infinities are "inf"/"-inf"."""
        return self.statistics().to_json()


def leak_bound(fixed: ArrayLike, random: ArrayLike) -> LeakBound:
    """The TOST bound of the mean difference (Welch's standard error and degrees of freedom);
    exact for constant classes: their difference itself."""
    import scipy.stats  # a second to import: not at every command's start
    fixed, random = np.asarray(fixed, dtype=np.float64), np.asarray(random, dtype=np.float64)
    difference = random.mean() - fixed.mean()
    var_fixed, var_random = fixed.var(ddof=1) / len(fixed), random.var(ddof=1) / len(random)
    standard_error = math.sqrt(var_fixed + var_random)
    if standard_error == 0:
        margin = 0.0
    else:
        freedom = (var_fixed + var_random) ** 2 / (var_fixed ** 2 / (len(fixed) - 1) + var_random ** 2 / (len(random) - 1))
        margin = float(scipy.stats.t.ppf(0.95, freedom)) * standard_error
    mean = np.concatenate([fixed, random]).mean()
    cycles = abs(difference) + margin
    return LeakBound(float(cycles), float(cycles / mean) if mean else None)


def cohens_d(fixed: ArrayLike, random: ArrayLike) -> float:
    """(mean random - mean fixed) / pooled standard deviation; 0 or +-inf for constant classes."""
    fixed, random = np.asarray(fixed, dtype=np.float64), np.asarray(random, dtype=np.float64)
    if min(len(fixed), len(random)) < 2:
        raise ValueError("Cohen's d needs at least two samples per class")
    difference = random.mean() - fixed.mean()
    pooled_var = (((len(fixed) - 1) * fixed.var(ddof=1) + (len(random) - 1) * random.var(ddof=1))
                  / (len(fixed) + len(random) - 2))
    if pooled_var == 0:
        return 0.0 if difference == 0 else math.copysign(math.inf, difference)
    return float(difference / math.sqrt(pooled_var))


def samples_needed(effect_size: float, threshold: float = DEFINITE_LEAK_T) -> int | None:
    """Samples per class at which a true effect of `effect_size` pooled standard deviations
    reaches an expected |t| of `threshold`.

    With n per class and equal variances, Welch's t is about d * sqrt(n / 2), so n = 2 (T / d)**2.
    None for no effect (it never gets there); an infinite effect (constant classes that differ)
    needs only the MIN_SAMPLES_PER_TEST any test requires.
    """
    if effect_size == 0:
        return None
    if math.isinf(effect_size):
        return MIN_SAMPLES_PER_TEST
    return max(MIN_SAMPLES_PER_TEST, math.ceil(2 * (threshold / abs(effect_size)) ** 2))


def detectable_effect(n_fixed: int, n_random: int, threshold: float = LEAK_EVIDENCE_T) -> float:
    """The effect (pooled standard deviations) whose expected |t| is `threshold` at these counts:
    a "no leak detected" says nothing about smaller effects."""
    return threshold * math.sqrt(1 / n_fixed + 1 / n_random)


def nonparametric_tests(fixed: ArrayLike, random: ArrayLike) -> Nonparametric:
    """Mann-Whitney U (a shift of the typical value) and two-sample Kolmogorov-Smirnov (any
    difference of the distributions): no normality assumption, robust to outliers. Reported for
    the reader; the verdict follows the t-tests, whose thresholds are the field's convention."""
    import scipy.stats  # a second to import: not at every command's start
    mann_whitney = scipy.stats.mannwhitneyu(random, fixed, alternative="two-sided")
    with warnings.catch_warnings():
        # With ties (cycle counts repeat) the exact KS p-value gives way to the asymptotic one, as
        # scipy says by a warning that would only clutter the output.
        warnings.simplefilter("ignore", RuntimeWarning)
        kolmogorov_smirnov = scipy.stats.ks_2samp(random, fixed)
    return Nonparametric(RankTest("u", float(mann_whitney.statistic), float(mann_whitney.pvalue)),
                         RankTest("d", float(kolmogorov_smirnov.statistic), float(kolmogorov_smirnov.pvalue)))


def _mean_difference(fixed, random, axis=-1):
    return np.mean(random, axis=axis) - np.mean(fixed, axis=axis)


def _median_difference(fixed, random, axis=-1):
    return np.median(random, axis=axis) - np.median(fixed, axis=axis)


def bootstrap_differences(fixed: ArrayLike, random: ArrayLike, *, seed: int,
                          resamples: int = BOOTSTRAP_RESAMPLES) -> dict[str, Interval]:
    """Bootstrap confidence intervals (CONFIDENCE_LEVEL) of mean and median random - fixed,
    resampling each class on its own; the same seed gives the same intervals.

    The percentile method, not BCa: BCa's jackknife costs O(n**2) for 1e5 samples, and a
    constant class makes its acceleration 0/0."""
    import scipy.stats  # a second to import: not at every command's start
    fixed, random = np.asarray(fixed, dtype=np.float64), np.asarray(random, dtype=np.float64)
    # Resamples per vectorised batch, so that memory stays near 2**22 values whatever the run size.
    batch = max(1, 2**22 // (len(fixed) + len(random)))
    intervals = {}
    for name, statistic in (("mean_difference", _mean_difference), ("median_difference", _median_difference)):
        result = scipy.stats.bootstrap((fixed, random), statistic, n_resamples=resamples, batch=batch,
                                       confidence_level=CONFIDENCE_LEVEL, method="percentile",
                                       rng=np.random.default_rng(seed))
        intervals[name] = Interval(float(statistic(fixed, random)), float(result.confidence_interval.low),
                                   float(result.confidence_interval.high))
    return intervals


def analyse(classes: ArrayLike, cycles: ArrayLike, *, seed: int = 0,
            bootstrap_resamples: int = BOOTSTRAP_RESAMPLES, looks: int = 1) -> LeakResult:
    """Everything about one fixed-vs-random run, with a verdict:

    - leak: the strongest test's |t| > DEFINITE_LEAK_T, raised for a sequential test of `looks`
      looks (see `sequential.sequential_looks`) (infinite when constant classes differ);
    - no-leak: every |t| < LEAK_EVIDENCE_T with at least MIN_SAMPLES_PER_CLASS per class
      ("no leak detected at N samples": an effect below `detectable_effect` may remain);
    - inconclusive: a |t| between the two, or too few samples.
    """
    fixed, random = split_classes(classes, cycles)
    if min(len(fixed), len(random)) < 2:
        raise ValueError(f"need at least two samples per class, got {len(fixed)} fixed and {len(random)} random")
    tests = t_tests(classes, cycles)
    strongest_test, max_abs_t = strongest(tests) or (None, None)
    # The strongest test's |t| as an effect per sample of the run: d = |t| * sqrt(1/n_f + 1/n_r)
    # (Cohen's d for the raw test with equal variances). Unlike Cohen's d of the means, this also
    # covers leaks that only the cropped or second-order tests see.
    observed_effect = 0.0 if max_abs_t is None else max_abs_t * math.sqrt(1 / len(fixed) + 1 / len(random))
    definite_t = adjusted_threshold(DEFINITE_LEAK_T, looks)
    verdict = _verdict(max_abs_t, min(len(fixed), len(random)), definite_t)
    return LeakResult(
        verdict=verdict,
        reason=_reason(verdict, tests, strongest_test, max_abs_t, fixed, random, definite_t),
        n_fixed=len(fixed),
        n_random=len(random),
        tests=tests,
        strongest_test=strongest_test,
        max_abs_t=max_abs_t,
        effect_size=cohens_d(fixed, random),
        samples_needed=samples_needed(observed_effect),
        detectable_effect=detectable_effect(len(fixed), len(random)),
        nonparametric=nonparametric_tests(fixed, random),
        bound=leak_bound(fixed, random),
        bootstrap=bootstrap_differences(fixed, random, seed=seed, resamples=bootstrap_resamples),
        bootstrap_seed=seed,
    )


def _verdict(max_abs_t: float | None, n_per_class: int, definite_t: float) -> Verdict:
    if max_abs_t is not None and max_abs_t > definite_t:
        return Verdict.LEAK
    if max_abs_t is not None and max_abs_t < LEAK_EVIDENCE_T and n_per_class >= MIN_SAMPLES_PER_CLASS:
        return Verdict.NO_LEAK
    return Verdict.INCONCLUSIVE


def _reason(verdict: Verdict, tests: Mapping[str, TTest], strongest_test: str | None, max_abs_t: float | None,
            fixed: np.ndarray, random: np.ndarray, definite_t: float) -> str:
    n_per_class = min(len(fixed), len(random))
    if max_abs_t is None:
        return f"too few samples: a test needs {MIN_SAMPLES_PER_TEST} per class, got {len(fixed)} fixed and {len(random)} random"
    if math.isinf(max_abs_t):
        return f"test {strongest_test}: both classes constant with different values{_constants(strongest_test, tests[strongest_test], fixed, random)}"
    if verdict == Verdict.LEAK:
        return f"max |t| = {max_abs_t:.1f} (test {strongest_test}) > {definite_t:.3g}"
    if verdict == Verdict.NO_LEAK:
        return (f"no leak detected at {len(fixed)} fixed and {len(random)} random samples: "
                f"max |t| = {max_abs_t:.2f} (test {strongest_test}) < {LEAK_EVIDENCE_T:g}")
    if max_abs_t >= LEAK_EVIDENCE_T:
        return (f"max |t| = {max_abs_t:.1f} (test {strongest_test}) is between {LEAK_EVIDENCE_T:g} and "
                f"{definite_t:.3g}: evidence of a leak, not yet definite")
    return (f"max |t| = {max_abs_t:.2f} < {LEAK_EVIDENCE_T:g} but only {n_per_class} samples in a class; "
            f"no-leak needs {MIN_SAMPLES_PER_CLASS} per class")


def _constants(name: str, test: TTest, fixed: np.ndarray, random: np.ndarray) -> str:
    """The two constants a raw or crop test saw; the second-order test's constants are squared
    deviations, not cycles, so it gets none."""
    if name == "second-order":
        return ""
    if test.below is not None:
        fixed, random = fixed[fixed < test.below], random[random < test.below]
    return f" (fixed {fixed[0]:.0f}, random {random[0]:.0f} cycles)"


def class_ecdfs(classes: ArrayLike, cycles: ArrayLike) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per class, the distinct cycle counts and the empirical CDF at each (for a step plot)."""
    import scipy.stats  # a second to import: not at every command's start
    fixed, random = split_classes(classes, cycles)
    ecdfs = {}
    for name, samples in (("fixed", fixed), ("random", random)):
        cdf = scipy.stats.ecdf(samples).cdf
        ecdfs[name] = (cdf.quantiles, cdf.probabilities)
    return ecdfs
