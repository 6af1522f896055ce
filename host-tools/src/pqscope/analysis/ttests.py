"""dudect's t-tests between the key classes (does signing time depend on the secret key?) and
the |t| thresholds they are read against.

The measurement is dudect's fixed-vs-random design (Reparaz, Balasch, Verbauwhede, "Dude, is my
code constant time?", DATE 2017). Class 0 signs with one *fixed* secret key, class 1 with
*random* secret keys from a pool; both classes sign random messages with fresh signing
randomness, in random interleaved order. The input here is that sequence as two parallel
arrays, `classes` (0 or 1 per sample) and `cycles`.

Rejection sampling (ML-DSA's retries, Falcon's sampler) makes signing time random by design.
That randomness is public and identical in both classes: it widens both distributions alike and
moves neither relative to the other, so every test below compares the *classes*, never the
spread of the times against some constant-time ideal.

The virtual board is deterministic: an operation without randomness takes the same number of
cycles every time. A class whose samples are all equal has zero variance; the tests then reason
exactly instead of dividing by zero: equal constants are no evidence of a leak (t = 0), different
constants are a certain leak (|t| = inf).

Welch's t throughout is (mean random - mean fixed) / standard error: positive when the random
keys are slower.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..results.documents.parsing import json_number

FIXED, RANDOM = 0, 1

LEAK_EVIDENCE_T = 4.5
"""|t| above which a test is evidence of a leak: the TVLA threshold (Goodwill et al., NIST NIAT
2011; ISO/IEC 17825). Under no leak, a Welch t with enough samples is close to standard normal,
and |t| > 4.5 has probability about 7e-6 per test (below 1e-3 for the 102 correlated tests here).
Below it, a run with enough samples is reported as "no leak detected"."""

DEFINITE_LEAK_T = 10.0
"""|t| above which the leak is definite: dudect's `t_threshold_moderate` ("test failed").
Between LEAK_EVIDENCE_T and this the verdict stays inconclusive: more samples will tell, and
|t| grows as the square root of the sample count when the leak is real."""

MIN_SAMPLES_PER_TEST = 10
"""Samples per class below which a test's t is not computed (t = None) and does not count
towards the maximum. Cropped tests keep as little as 6.7 % of the samples; with fewer than ten per
class Welch's t has so few degrees of freedom that its tails make the 4.5/10 thresholds
meaningless (with 102 tests, chance alone would cross them)."""

N_PERCENTILES = 100
CROP_QUANTILES = 1 - 0.5 ** (10 * np.arange(1, N_PERCENTILES + 1) / N_PERCENTILES)
"""dudect's cropping thresholds: crop test i keeps the samples strictly below the pooled
CROP_QUANTILES[i] quantile (from 6.7 % to 99.9 %, denser towards the top). Cropping removes the
long upper tail of interrupts, retries and outliers, whose variance would drown a small shift of
the bulk of the distribution."""


@dataclass(frozen=True)
class TTest:
    """One Welch t-test between the classes; t and p are None below MIN_SAMPLES_PER_TEST."""

    t: float | None
    p: float | None
    n_fixed: int
    n_random: int
    below: float | None = None  # crop tests: the cycle threshold the kept samples are below

    def to_json(self) -> dict:
        document = {"t": json_number(self.t), "p": self.p, "n_fixed": self.n_fixed, "n_random": self.n_random}
        if self.below is not None:
            document["below"] = self.below
        return document


def split_classes(classes: ArrayLike, cycles: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The cycles of the fixed and of the random class, in acquisition order."""
    classes, cycles = np.asarray(classes), np.asarray(cycles, dtype=np.float64)
    if classes.shape != cycles.shape or classes.ndim != 1:
        raise ValueError(f"classes and cycles must be equal-length sequences, got {classes.shape} and {cycles.shape}")
    if not np.isin(classes, (FIXED, RANDOM)).all():
        raise ValueError("classes must be 0 (fixed key) or 1 (random keys)")
    return cycles[classes == FIXED], cycles[classes == RANDOM]


def welch_t(fixed: ArrayLike, random: ArrayLike) -> TTest:
    """Welch's t-test, exact for zero-variance classes (t = 0 or +-inf, never NaN)."""
    import scipy.stats  # a second to import: not at every command's start
    fixed, random = np.asarray(fixed, dtype=np.float64), np.asarray(random, dtype=np.float64)
    if min(len(fixed), len(random)) < MIN_SAMPLES_PER_TEST:
        return TTest(None, None, len(fixed), len(random))
    # np.var is two-pass, so a constant class has a variance of exactly zero.
    var_fixed, var_random = fixed.var(ddof=1), random.var(ddof=1)
    mean_fixed, mean_random = fixed.mean(), random.mean()
    if var_fixed == 0 and var_random == 0:
        if mean_fixed == mean_random:
            return TTest(0.0, 1.0, len(fixed), len(random))
        return TTest(math.copysign(math.inf, mean_random - mean_fixed), 0.0, len(fixed), len(random))
    result = scipy.stats.ttest_ind_from_stats(
        mean_random, math.sqrt(var_random), len(random), mean_fixed, math.sqrt(var_fixed), len(fixed), equal_var=False)
    return TTest(float(result.statistic), float(result.pvalue), len(fixed), len(random))


def t_tests(classes: ArrayLike, cycles: ArrayLike) -> dict[str, TTest]:
    """dudect's tests: "raw" (all samples), "crop-00".."crop-99" (samples below each pooled
    CROP_QUANTILES quantile) and "second-order" (the centred squares (x - class mean)**2 of all
    samples, which turns a difference in spread into a difference in means)."""
    fixed, random = split_classes(classes, cycles)
    tests = {"raw": welch_t(fixed, random)}
    if not len(fixed) or not len(random):
        return tests  # the start of a sequence may hold one class only: nothing to compare yet
    # Thresholds from both classes pooled, so that under no leak both are cropped alike.
    thresholds = np.quantile(np.concatenate([fixed, random]), CROP_QUANTILES, method="inverted_cdf")
    fixed_sorted, random_sorted = np.sort(fixed), np.sort(random)
    for index, threshold in enumerate(thresholds):
        cropped = welch_t(fixed_sorted[:np.searchsorted(fixed_sorted, threshold)],
                          random_sorted[:np.searchsorted(random_sorted, threshold)])
        tests[f"crop-{index:02d}"] = TTest(cropped.t, cropped.p, cropped.n_fixed, cropped.n_random, float(threshold))
    tests["second-order"] = welch_t((fixed - fixed.mean()) ** 2, (random - random.mean()) ** 2)
    return tests


def strongest(tests: Mapping[str, TTest]) -> tuple[str, float] | None:
    """The test with the largest |t| and that |t|; None when no test has enough samples."""
    counted = [(name, abs(test.t)) for name, test in tests.items() if test.t is not None]
    return max(counted, key=lambda item: item[1]) if counted else None


def adjusted_threshold(threshold: float, tests: int) -> float:
    """The |t| whose normal tail is that of `threshold` divided by `tests` (Bonferroni)."""
    import scipy.stats  # a second to import: not at every command's start
    tail = scipy.stats.norm.logsf(threshold) - math.log(max(1, tests))
    return max(threshold, float(-scipy.stats.norm.ppf(math.exp(tail)))) if tail > -700 else threshold
