"""Which functions' time depends on the key class, and how much of the difference each explains:
each function's t-tests with thresholds raised for the number of functions tested, and their
ranking (`rank_functions`)."""

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike

from ..results.documents.ct import FunctionLeak, Nonparametric
from .leakstats import leak_bound, nonparametric_tests
from .ttests import DEFINITE_LEAK_T, FIXED, LEAK_EVIDENCE_T, RANDOM, adjusted_threshold, strongest, t_tests


def function_thresholds(functions: int, looks: int = 1) -> tuple[float, float]:
    """The evidence and definite |t| thresholds for one of `functions` functions tested at once,
    at one of `looks` looks of a sequential test.

    Bonferroni across the functions (and looks): each function's strongest test must reach the
    per-test p-value of the total's threshold divided by their number, so that the chance that
    any function of a constant-time implementation crosses it stays that of the total alone
    (each function's own 102 tests are covered as the total's are). With 100 functions: 5.4 and
    10.4 instead of 4.5 and 10."""
    return adjusted_threshold(LEAK_EVIDENCE_T, functions * looks), adjusted_threshold(DEFINITE_LEAK_T, functions * looks)


def rank_functions(fixed: Mapping[str, ArrayLike], random: Mapping[str, ArrayLike], looks: int = 1,
                   kept: Mapping[str, tuple[ArrayLike, ArrayLike]] | None = None) -> list[FunctionLeak]:
    """Which functions' time depends on the class, and how much of the difference each explains.

    `fixed` and `random` map a function name to its cycles in each sample of that class (one
    array per function, the class's sample count long). Use *exclusive* cycles, so that the
    functions add up to the sample's total and the shares, (mean difference of the function) /
    (sum of all functions' mean differences), add up to 1; a share is negative for a function
    faster with random keys. A function absent from a class took 0 cycles in each of its samples.
    `kept` maps a function to the samples of each class it is compared over (boolean masks; all
    where absent): those an exception returned into it are left out, the interrupt having moved
    its time (ct_analysis._uninterrupted), so that its shares then add up to about 1; one with
    fewer than 2 left in a class is not ranked.

    Order: functions with |t| > LEAK_EVIDENCE_T first, then by |share| (what fixing it would
    remove), then by |t|.
    """
    n_fixed, n_random = _profile_samples(fixed, "fixed"), _profile_samples(random, "random")
    functions = list(dict.fromkeys([*fixed, *random]))
    columns = {name: (np.asarray(fixed.get(name, np.zeros(n_fixed)), dtype=np.float64),
                      np.asarray(random.get(name, np.zeros(n_random)), dtype=np.float64)) for name in functions}
    for name, (fixed_kept, random_kept) in (kept or {}).items():
        if name in columns:
            columns[name] = (columns[name][0][np.asarray(fixed_kept)], columns[name][1][np.asarray(random_kept)])
            if min(map(len, columns[name])) < 2:  # too few left to compare: not ranked
                del columns[name]
    differences = {name: cycles_random.mean() - cycles_fixed.mean() for name, (cycles_fixed, cycles_random) in columns.items()}
    total_difference = sum(differences.values())
    evidence_t, definite_t = function_thresholds(len(columns), looks)
    nonparametric = {name: _function_nonparametric(*pair) for name, pair in columns.items()}
    tested = [name for name in columns if nonparametric[name] is not None]
    for name, mann_whitney, kolmogorov_smirnov in zip(
            tested, _holm([nonparametric[name].mann_whitney.p for name in tested]),
            _holm([nonparametric[name].kolmogorov_smirnov.p for name in tested])):
        tests = nonparametric[name]
        nonparametric[name] = Nonparametric(replace(tests.mann_whitney, p_holm=mann_whitney),
                                            replace(tests.kolmogorov_smirnov, p_holm=kolmogorov_smirnov))
    ranking = []
    for name, (cycles_fixed, cycles_random) in columns.items():
        classes = np.concatenate([np.full(len(cycles_fixed), FIXED), np.full(len(cycles_random), RANDOM)])
        tests = t_tests(classes, np.concatenate([cycles_fixed, cycles_random]))
        test_name, _ = strongest(tests) or (None, None)
        # no test with a t: too few signatures, neither t nor p
        t, p = (tests[test_name].t, tests[test_name].p) if test_name else (None, None)
        ranking.append(FunctionLeak(name, t, p, float(cycles_fixed.mean()), float(cycles_random.mean()),
                                    None if total_difference == 0 else float(differences[name] / total_difference),
                                    test_name, evidence_t, definite_t, nonparametric[name],
                                    leak_bound(cycles_fixed, cycles_random) if min(len(cycles_fixed), len(cycles_random)) > 1
                                    else None))
    ranking.sort(key=lambda leak: (not leak.depends_on_class, -abs(leak.share or 0.0), -abs(leak.t or 0.0)))
    return ranking


def strongest_function(functions) -> FunctionLeak | None:
    """The function whose |t| is largest; None when no function has a t (too few samples)."""
    with_t = [leak for leak in functions if leak.t is not None]
    return max(with_t, key=lambda leak: abs(leak.t)) if with_t else None


def _function_nonparametric(fixed: np.ndarray, random: np.ndarray) -> Nonparametric | None:
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
