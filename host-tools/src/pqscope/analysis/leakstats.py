"""Statistics of timing-leak detection: does signing time depend on the secret key?

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
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import scipy.stats
from numpy.typing import ArrayLike

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

MIN_SAMPLES_PER_CLASS = 1000
"""Samples per class below which "no leak" is never claimed. With n per class a test reaches an
expected |t| of LEAK_EVIDENCE_T for an effect of 4.5 * sqrt(2 / n) pooled standard deviations:
0.2 at 1000 per class, Cohen's "small" effect. Constant data does not lower the bar: a
key-dependent slow path may simply not have been hit yet."""

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

BOOTSTRAP_RESAMPLES = 1000
CONFIDENCE_LEVEL = 0.95


class Verdict(StrEnum):
    LEAK = "leak"
    NO_LEAK = "no-leak"
    INCONCLUSIVE = "inconclusive"


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
    nonparametric: dict[str, dict[str, float]]
    bootstrap: dict[str, Interval]
    bootstrap_seed: int
    bound: "LeakBound | None" = None

    def to_json(self) -> dict:
        """A document json.dumps accepts with allow_nan=False: infinities are "inf"/"-inf"."""
        return {
            "verdict": str(self.verdict),
            "reason": self.reason,
            "n": {"fixed": self.n_fixed, "random": self.n_random},
            "max_abs_t": json_number(self.max_abs_t),
            "strongest_test": self.strongest_test,
            "tests": {name: test.to_json() for name, test in self.tests.items()},
            "nonparametric": self.nonparametric,
            "effect_size": json_number(self.effect_size),
            "samples_needed": self.samples_needed,
            "detectable_effect": self.detectable_effect,
            "bootstrap": {
                "confidence": CONFIDENCE_LEVEL,
                "seed": self.bootstrap_seed,
                **{name: interval.to_json() for name, interval in self.bootstrap.items()},
            },
            **({"bound": self.bound.to_json()} if self.bound else {}),
        }


@dataclass(frozen=True)
class LeakBound:
    """How large a difference between the classes' mean times could still be: the smallest
    equivalence margin that two one-sided tests (TOST, each at 5 %) reject, i.e. the farther end
    of the 90 % confidence interval of mean random - mean fixed. "No leak larger than `cycles`
    (`share` of the mean time) at 95 % confidence"."""

    cycles: float
    share: float | None  # of the mean time of both classes; None when that is 0

    def to_json(self) -> dict:
        return {"cycles": self.cycles, "share_of_mean": self.share, "confidence": 0.95}

    def describe(self) -> str:
        share = "" if self.share is None else f" ({self.share:.3%} of the mean)"
        return f"no leak larger than {self.cycles:,.1f} cycles{share} at 95% confidence"


def leak_bound(fixed: ArrayLike, random: ArrayLike) -> LeakBound:
    """The TOST bound of the mean difference (Welch's standard error and degrees of freedom);
    exact for constant classes: their difference itself."""
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


def nonparametric_tests(fixed: ArrayLike, random: ArrayLike) -> dict[str, dict[str, float]]:
    """Mann-Whitney U (a shift of the typical value) and two-sample Kolmogorov-Smirnov (any
    difference of the distributions): no normality assumption, robust to outliers. Reported for
    the reader; the verdict follows the t-tests, whose thresholds are the field's convention."""
    mann_whitney = scipy.stats.mannwhitneyu(random, fixed, alternative="two-sided")
    with warnings.catch_warnings():
        # With ties (cycle counts repeat) the exact KS p-value gives way to the asymptotic one, as
        # scipy says by a warning that would only clutter the output.
        warnings.simplefilter("ignore", RuntimeWarning)
        kolmogorov_smirnov = scipy.stats.ks_2samp(random, fixed)
    return {
        "mann_whitney": {"u": float(mann_whitney.statistic), "p": float(mann_whitney.pvalue)},
        "kolmogorov_smirnov": {"d": float(kolmogorov_smirnov.statistic), "p": float(kolmogorov_smirnov.pvalue)},
    }


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
      looks (see `sequential_looks`) (infinite when constant classes differ);
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


class OnlineT:
    """Welch's t of the raw values, updated one sample at a time (Welford's running mean and sum of
    squares per class, as dudect keeps them): the live |t| between the full analyses."""

    def __init__(self):
        self._count, self._mean, self._squares = [0, 0], [0.0, 0.0], [0.0, 0.0]

    def add(self, key_class: int, value: float) -> None:
        self._count[key_class] += 1
        delta = value - self._mean[key_class]
        self._mean[key_class] += delta / self._count[key_class]
        self._squares[key_class] += delta * (value - self._mean[key_class])

    @property
    def t(self) -> float | None:
        """As welch_t's (None below MIN_SAMPLES_PER_TEST per class; 0 or +-inf for constants)."""
        if min(self._count) < MIN_SAMPLES_PER_TEST:
            return None
        variance = [self._squares[c] / (self._count[c] - 1) / self._count[c] for c in (FIXED, RANDOM)]
        difference = self._mean[RANDOM] - self._mean[FIXED]
        if sum(variance) == 0:
            return 0.0 if difference == 0 else math.copysign(math.inf, difference)
        return difference / math.sqrt(sum(variance))


FIRST_LOOK = 100


def sequential_looks(maximum: int) -> list[int]:
    """The sample counts at which a sequential test looks at its data: doubling from FIRST_LOOK
    (100, 200, 400, ...; even, so the paired classes are balanced) up to `maximum`, which is the
    last look.

    Why this keeps the fixed-N test's false-positive rate: a leak is declared at a look only past
    the definite threshold raised for the number of looks (Bonferroni, `adjusted_threshold`), so
    the chance that any look of a constant-time implementation crosses it is at most that of one
    fixed-N test. No-leak needs every |t| below the unraised LEAK_EVIDENCE_T with
    MIN_SAMPLES_PER_CLASS per class, as at fixed N; stopping there claims nothing a fixed-N test
    of that size would not. Doubling keeps the looks few (log2 of the range) and so the raise
    small: 10 looks move 10 to 10.2."""
    looks = []
    count = FIRST_LOOK
    while count < maximum:
        looks.append(count)
        count *= 2
    return [*looks, maximum]


@dataclass(frozen=True)
class TPoint:
    """max |t| over the tests on the first n samples of the sequence (None: too few per class)."""

    n: int
    n_fixed: int
    n_random: int
    max_abs_t: float | None
    test: str | None


def t_against_n(classes: ArrayLike, cycles: ArrayLike, *, points: int = 20, first: int = 100) -> list[TPoint]:
    """max |t| on growing prefixes of the interleaved sequence, at about `points` geometric steps
    from `first` samples to all of them: under a real leak |t| grows as sqrt(N), under none it
    wanders below LEAK_EVIDENCE_T."""
    classes, cycles = np.asarray(classes), np.asarray(cycles, dtype=np.float64)
    total = len(classes)
    series = []
    for n in np.unique(np.geomspace(min(first, total), total, points).round().astype(int)):
        tests = t_tests(classes[:n], cycles[:n])
        name, max_abs_t = strongest(tests) or (None, None)
        series.append(TPoint(int(n), tests["raw"].n_fixed, tests["raw"].n_random, max_abs_t, name))
    return series


def class_ecdfs(classes: ArrayLike, cycles: ArrayLike) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per class, the distinct cycle counts and the empirical CDF at each (for a step plot)."""
    fixed, random = split_classes(classes, cycles)
    ecdfs = {}
    for name, samples in (("fixed", fixed), ("random", random)):
        cdf = scipy.stats.ecdf(samples).cdf
        ecdfs[name] = (cdf.quantiles, cdf.probabilities)
    return ecdfs


def adjusted_threshold(threshold: float, tests: int) -> float:
    """The |t| whose normal tail is that of `threshold` divided by `tests` (Bonferroni)."""
    tail = scipy.stats.norm.logsf(threshold) - math.log(max(1, tests))
    return max(threshold, float(-scipy.stats.norm.ppf(math.exp(tail)))) if tail > -700 else threshold


def function_thresholds(functions: int, looks: int = 1) -> tuple[float, float]:
    """The evidence and definite |t| thresholds for one of `functions` functions tested at once,
    at one of `looks` looks of a sequential test.

    Bonferroni across the functions (and looks): each function's strongest test must reach the
    per-test p-value of the total's threshold divided by their number, so that the chance that
    any function of a constant-time implementation crosses it stays that of the total alone
    (each function's own 102 tests are covered as the total's are). With 100 functions: 5.4 and
    10.4 instead of 4.5 and 10."""
    return adjusted_threshold(LEAK_EVIDENCE_T, functions * looks), adjusted_threshold(DEFINITE_LEAK_T, functions * looks)


@dataclass(frozen=True)
class FunctionLeak:
    """A function's cycles against the key class: its strongest test (of the total's: raw, cropped,
    second order) with the thresholds for the number of functions tested, and the nonparametric
    tests (Mann-Whitney, Kolmogorov-Smirnov, Holm-adjusted over the functions)."""

    name: str
    t: float | None
    p: float | None
    mean_fixed: float
    mean_random: float
    share: float | None  # of the total mean difference; None when the totals do not differ
    test: str | None = None  # which test gave t
    evidence_t: float = LEAK_EVIDENCE_T
    definite_t: float = DEFINITE_LEAK_T
    nonparametric: dict | None = None
    bound: LeakBound | None = None

    @property
    def difference(self) -> float:
        return self.mean_random - self.mean_fixed

    @property
    def depends_on_class(self) -> bool:
        return self.t is not None and abs(self.t) > self.evidence_t

    def describe(self) -> str:
        """E.g. "__aeabi_dmul: 63% of the difference, +412.0 cycles per sample (t = 38.2)"."""
        share = "" if self.share is None else f"{100 * self.share:.0f}% of the difference, "
        t = "too few samples" if self.t is None else f"t = {self.t:.1f}"
        return f"{self.name}: {share}{self.difference:+.1f} cycles per sample ({t})"

    def to_json(self) -> dict:
        return {"function": self.name, "t": json_number(self.t), "p": self.p, "test": self.test,
                "thresholds": {"evidence": self.evidence_t, "definite": self.definite_t},
                "mean_fixed": self.mean_fixed, "mean_random": self.mean_random, "difference": self.difference,
                "share": self.share, "depends_on_class": self.depends_on_class, "nonparametric": self.nonparametric,
                "bound": self.bound.to_json() if self.bound else None}


def rank_functions(fixed: Mapping[str, ArrayLike], random: Mapping[str, ArrayLike], looks: int = 1) -> list[FunctionLeak]:
    """Which functions' time depends on the class, and how much of the difference each explains.

    `fixed` and `random` map a function name to its cycles in each sample of that class (one
    array per function, the class's sample count long). Use *exclusive* cycles, so that the
    functions add up to the sample's total and the shares, (mean difference of the function) /
    (sum of all functions' mean differences), add up to 1; a share is negative for a function
    faster with random keys. A function absent from a class took 0 cycles in each of its samples.

    Order: functions with |t| > LEAK_EVIDENCE_T first, then by |share| (what fixing it would
    remove), then by |t|.
    """
    n_fixed, n_random = _profile_samples(fixed, "fixed"), _profile_samples(random, "random")
    functions = list(dict.fromkeys([*fixed, *random]))
    columns = {name: (np.asarray(fixed.get(name, np.zeros(n_fixed)), dtype=np.float64),
                      np.asarray(random.get(name, np.zeros(n_random)), dtype=np.float64)) for name in functions}
    differences = {name: cycles_random.mean() - cycles_fixed.mean() for name, (cycles_fixed, cycles_random) in columns.items()}
    total_difference = sum(differences.values())
    evidence_t, definite_t = function_thresholds(len(columns), looks)
    nonparametric = {name: _function_nonparametric(*pair) for name, pair in columns.items()}
    for key in ("mann_whitney", "kolmogorov_smirnov"):
        tested = [name for name in columns if nonparametric[name] is not None]
        adjusted = _holm([nonparametric[name][key]["p"] for name in tested])
        for name, p in zip(tested, adjusted):
            nonparametric[name][key]["p_holm"] = p
    ranking = []
    for name, (cycles_fixed, cycles_random) in columns.items():
        classes = np.concatenate([np.full(len(cycles_fixed), FIXED), np.full(len(cycles_random), RANDOM)])
        tests = t_tests(classes, np.concatenate([cycles_fixed, cycles_random]))
        test_name, _ = strongest(tests) or (None, None)
        test = tests[test_name] if test_name else tests["raw"]
        ranking.append(FunctionLeak(name, test.t, test.p, float(cycles_fixed.mean()), float(cycles_random.mean()),
                                    None if total_difference == 0 else float(differences[name] / total_difference),
                                    test_name, evidence_t, definite_t, nonparametric[name],
                                    leak_bound(cycles_fixed, cycles_random) if min(len(cycles_fixed), len(cycles_random)) > 1
                                    else None))
    ranking.sort(key=lambda leak: (not leak.depends_on_class, -abs(leak.share or 0.0), -abs(leak.t or 0.0)))
    return ranking


def _function_nonparametric(fixed: np.ndarray, random: np.ndarray) -> dict | None:
    """Mann-Whitney and Kolmogorov-Smirnov of a function; None where both classes are one constant
    (nothing to rank)."""
    if np.ptp(np.concatenate([fixed, random])) == 0:
        return None
    return nonparametric_tests(fixed, random)


def _holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of p-values tested together (controls the family-wise error)."""
    order = np.argsort(p_values)
    adjusted = np.empty(len(p_values))
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted.tolist()


def _profile_samples(profile: Mapping[str, ArrayLike], label: str) -> int:
    lengths = {len(np.asarray(cycles)) for cycles in profile.values()}
    if len(lengths) != 1 or 0 in lengths:
        raise ValueError(f"the {label} profile needs arrays of one common, non-zero sample count, got lengths {sorted(lengths)}")
    return lengths.pop()


def json_number(value: float | None) -> float | str | None:
    """Strict JSON has no infinity; a certain leak's |t| is written "inf" (or "-inf")."""
    if value is not None and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value
