"""The sequential test: the sample counts at which it looks (`sequential_looks`), the running t of
the raw values between its looks (`OnlineT`, as dudect keeps it), and max |t| against the number
of samples (`t_against_n`, for the report's figure)."""

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .ttests import FIXED, MIN_SAMPLES_PER_TEST, RANDOM, strongest, t_tests


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
# The first look of a test whose exact check already ran on the virtual board: the least -n, the
# fewest signatures whose t-tests are computed (ttests.MIN_SAMPLES_PER_TEST per class). Where that
# check is clean, deterministic code whose classes differ by nothing shows it here (the TOST bound
# of constant classes is their difference itself), and a slow signing decides in 20 signatures
# (fewer for the slowest: ct_looks.early_look).
EARLY_LOOK = 20


def sequential_looks(maximum: int, *, early: int | None = None) -> list[int]:
    """The sample counts at which a sequential test looks at its data: doubling from FIRST_LOOK
    (100, 200, 400, ...; even, so the paired classes are balanced) up to `maximum`, which is the
    last look; `early` adds a look at that many signatures before them (for a test beside its exact
    check: at most EARLY_LOOK).

    Why this keeps the fixed-N test's false-positive rate: a leak is declared at a look only past
    the definite threshold raised for the number of looks (Bonferroni,
    `ttests.adjusted_threshold`), the early look counted among them, so the chance that any look of
    a constant-time implementation crosses it is at most that of one fixed-N test. No-leak needs
    every |t| below the unraised LEAK_EVIDENCE_T with MIN_SAMPLES_PER_CLASS per class, as at fixed
    N; stopping there claims nothing a fixed-N test of that size would not. Doubling keeps the looks
    few (log2 of the range) and so the raise small: 10 looks move 10 to 10.2. The looks depend on
    the parameters alone, never on timing: a resumed test looks where an uninterrupted one does."""
    looks = [early] if early and early < maximum else []
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
        name, max_abs_t = strongest(t_tests(classes[:n], cycles[:n])) or (None, None)
        series.append(TPoint(int(n), int(np.count_nonzero(classes[:n] == FIXED)),
                             int(np.count_nonzero(classes[:n] == RANDOM)), max_abs_t, name))
    return series
