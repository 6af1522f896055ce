"""The constant-time test's analysis: the signatures' time, corrected for the public-input
functions, the signing attempts and (a board's test) the replay's prediction, its leak statistics
and those of each function's time (the localisation), in a `CtResult`."""

import math
from dataclasses import dataclass, replace

import numpy as np

from ..link.protocol import Status
from ..project.errors import PqscopeError
from ..results.documents.ct import CtStatistics, StrongestFunction
from ..results.documents.profile import ProfiledInterval
from ..results.documents.runs import ProbeSet
from ..results.probes import probe_profile
from . import leakstats, localisation
from .ct_verdict import decide
from .ttests import FIXED, RANDOM, json_number

TOP_FUNCTIONS = 10
# The emulator's name for the time spent in public-input functions (--public-function).
PUBLIC_TIME = "(public-input functions)"


@dataclass(frozen=True)
class PublicTime:
    """The time of the public-input functions, subtracted from each signature's total: the
    catalogue's, and those the exact check showed to run on declared-public values only
    (`from_exact_check`), with the statistics of that time alone (`tested`: does it differ
    between the classes?)."""

    functions: tuple[str, ...]
    mean_fixed: float
    mean_random: float
    from_exact_check: tuple[str, ...] = ()
    tested: leakstats.LeakResult | None = None

    def to_json(self) -> dict:
        return {"functions": list(self.functions), "mean_cycles": {"fixed": self.mean_fixed, "random": self.mean_random},
                **({"from_exact_check": list(self.from_exact_check)} if self.from_exact_check else {}),
                **({"verdict": str(self.tested.verdict), "max_abs_t": json_number(self.tested.max_abs_t)}
                   if self.tested else {})}


@dataclass(frozen=True)
class AttemptCorrection:
    """The cost of each signing attempt, removed from the totals and from every function."""

    retry_function: str
    cycles_per_attempt: float
    mean_attempts_fixed: float
    mean_attempts_random: float

    def to_json(self) -> dict:
        return {"retry_function": self.retry_function, "cycles_per_attempt": self.cycles_per_attempt,
                "mean_attempts": {"fixed": self.mean_attempts_fixed, "random": self.mean_attempts_random}}


@dataclass(frozen=True)
class ControlVariate:
    """The replay's model cycles regressed out of a board's cycles (least squares over both
    classes): what the model predicts of each signature, its public path above all, leaves the
    test, and a difference between the classes stays in the residuals unless the model has it
    too — the model's own dependence on a secret is the exact check's to find. The residuals keep
    the board's mean, so that a bound's share of the mean time stays the board's."""

    slope: float
    raw_variance: float  # of the board's cycles
    residual_variance: float  # of what the prediction leaves
    replay_mean_cycles: float

    @property
    def variance_removed(self) -> float:
        """The share of the board's variance the model explains."""
        return 0.0 if self.raw_variance == 0 else 1 - self.residual_variance / self.raw_variance

    @property
    def signatures_factor(self) -> float:
        """How many times the signatures the same power takes without the replay: the ratio of
        the variances (a mean difference's standard error goes with variance / signatures)."""
        if self.residual_variance == 0:
            return 1.0 if self.raw_variance == 0 else math.inf
        return self.raw_variance / self.residual_variance

    def to_json(self) -> dict:
        return {"slope": self.slope, "variance_removed": self.variance_removed,
                "signatures_factor": json_number(self.signatures_factor),
                "replay_mean_cycles": self.replay_mean_cycles}


def control_variate(cycles: np.ndarray, predicted: np.ndarray) -> tuple[ControlVariate, np.ndarray]:
    """The fit and the board's residual cycles (about the board's mean)."""
    spread = predicted - predicted.mean()
    slope = float(spread @ (cycles - cycles.mean()) / (spread @ spread)) if spread.any() else 0.0
    residual = np.round(cycles - slope * spread, 6)  # an exact fit comes out exactly constant
    return ControlVariate(slope, float(cycles.var()), float(residual.var()), float(predicted.mean())), residual


@dataclass(frozen=True)
class PathFit:
    """The signing paths regressed out of the (corrected) time, for a test beside a clean exact
    check: least squares over both classes on every function's calls per signature (the virtual
    board's profile). That check shows every branch on public values or declared public (a
    rejection's), so the calls, and the time they explain, are public; a time that depends on a
    secret by other means (a latency the check does not model) stays in the residuals, whose
    classes' difference `bound` limits (their variance scaled up for the fit's freedom)."""

    rank: int  # of the calls and the constant
    variance_removed: float
    bound: leakstats.LeakBound

    def describe(self) -> str:
        return f"the signing paths regressed out ({self.variance_removed:.4%} of the variance, rank {self.rank})"


def path_fit(classes: np.ndarray, cycles: np.ndarray, calls: np.ndarray) -> PathFit | None:
    """`cycles` regressed on `calls` (a row per signature, a column per function); None where the
    calls do not vary or leave the residuals fewer signatures than the fit used."""
    varying = calls[:, np.ptp(calls, axis=0) > 0] if calls.size else calls
    if not varying.size or cycles.var() == 0:
        return None
    design = np.column_stack([np.ones(len(cycles)), varying])
    coefficients, _, rank, _ = np.linalg.lstsq(design, cycles, rcond=None)
    if len(cycles) - rank < max(rank, 4):
        return None
    residual = cycles - design @ coefficients
    scaled = cycles.mean() + residual * math.sqrt((len(cycles) - 1) / (len(cycles) - rank))
    return PathFit(int(rank), float(1 - residual.var() / cycles.var()),
                   leakstats.leak_bound(scaled[classes == FIXED], scaled[classes == RANDOM]))


@dataclass(frozen=True)
class Evidence:
    """The values that decided the verdict, per usable signature in test order: the (corrected)
    total, or the function whose time decided it. The report plots them."""

    classes: np.ndarray
    values: np.ndarray
    label: str
    raw: np.ndarray | None = None  # a board's cycles before the replay's prediction was regressed out


@dataclass(frozen=True)
class CtResult:
    """A constant-time test's outcome: the statistics of the (corrected) total, the corrections,
    the functions ranked by how their time depends on the key class (virtual board), and the
    verdict that weighs both (`decide`)."""

    total: leakstats.LeakResult
    verdict: leakstats.Verdict
    reason: str
    failed_samples: int
    corrupt_accepted: int
    public_time: PublicTime | None = None
    attempts: AttemptCorrection | None = None
    control_variate: ControlVariate | None = None
    uncorrected: leakstats.LeakResult | None = None  # the total before the corrections
    functions: tuple[localisation.FunctionLeak, ...] | None = None  # None: no profile
    # Where the functions' cycles come from: the emulator's profiler (exclusive cycles of every
    # function) or the device's probes (inclusive cycles of the probed ones).
    localised_by: str | None = None
    evidence: Evidence | None = None  # not in ct.json: the report's plots
    paths: PathFit | None = None  # the emulator's profile only; for the stop beside a clean check

    def statistics(self) -> CtStatistics:
        """The statistics part of ct.json."""
        worst = localisation.strongest_function(self.functions or ())
        return CtStatistics(
            replace(self.total.statistics(), verdict=str(self.verdict), reason=self.reason), self.failed_samples,
            self.corrupt_accepted, public_time=self.public_time and self.public_time.to_json(),
            correction=self.attempts and self.attempts.to_json(),
            control_variate=self.control_variate and self.control_variate.to_json(),
            uncorrected=self.uncorrected and self.uncorrected.statistics(),
            plotted=self.evidence and self.evidence.label, localised_by=self.localised_by,
            top_functions=None if self.functions is None else self.functions[:TOP_FUNCTIONS],
            max_abs_t_function=StrongestFunction(worst.name, worst.t) if worst else None)

    def to_json(self) -> dict:
        return self.statistics().to_json()


def join_intervals(samples: list, intervals: list[ProfiledInterval]) -> list[ProfiledInterval]:
    """Each signature's emulator interval, joined by sample id (intervals of emulators that wrote
    no ids: by position, if their numbers agree). A signature without its interval is an error
    naming it: a localisation must never vanish or shift silently. A signature the device ran
    twice (its answer was lost) has two intervals of the same code: the last one counts."""
    if all(line.sample_id is not None for line in intervals):
        by_id = {line.sample_id: line for line in intervals}
    elif len(intervals) == len(samples):
        by_id = {sample.index: line for sample, line in zip(samples, intervals)}
    else:
        raise PqscopeError(f"the emulator wrote {len(intervals)} intervals for {len(samples)} signatures, "
                           "without sample ids to join them by")
    missing = [sample.index for sample in samples if sample.index not in by_id]
    if missing:
        raise PqscopeError(f"the emulator's intervals lack signature {missing[0]}"
                           + (f" and {len(missing) - 1} more" if len(missing) > 1 else "")
                           + ": its localisation would be lost")
    return [by_id[sample.index] for sample in samples]


def analyse_ct(samples: list, intervals: list[ProfiledInterval] | None, retry_function: str | None,
               public_functions: tuple[str, ...] = (), *, probes: ProbeSet | None = None, seed: int = 0) -> dict:
    """The verdict document of `analyse` (ct.json)."""
    return analyse(samples, intervals, retry_function, public_functions, probes=probes, seed=seed).to_json()


PROFILER, PROBES = "virtual board profiler (exclusive cycles)", "on-device probes (inclusive cycles)"


def analyse(samples: list, intervals: list[ProfiledInterval] | None, retry_function: str | None,
            public_functions: tuple[str, ...] = (), *, probes: ProbeSet | None = None, seed: int = 0, looks: int = 1,
            bootstrap_resamples: int = leakstats.BOOTSTRAP_RESAMPLES, predicted: list[float] | None = None,
            public_by_exact_check: tuple[str, ...] = ()) -> CtResult:
    """Leak statistics of the verified signatures' time and, with the emulator's intervals or the
    device's `probes`, of each function's time (the localisation).

    With a `retry_function` (called once per signing attempt, e.g. ML-DSA's challenge sampling),
    times are corrected for the number of attempts first: how often a rejection loop repeats is
    public randomness (its rate may differ slightly between keys, which says nothing about how
    the key is used), so each attempt's cost, fitted over all samples, is removed from the total
    and from every function. The analysis of the uncorrected total stays under "uncorrected".

    Likewise, the time of `public_functions` (booked apart by the emulator) depends only on public
    data — the public key changes with the key class too — so it is subtracted from the total and
    left out of the ranking. `public_by_exact_check`: those of them the exact check found, not the
    catalogue; their time is tested on its own too, so that the verdict can say that time depends
    on the public key.

    `predicted`: per signature, the cycles the replay on the virtual board took for it (a board's
    test): regressed out of the (corrected) time as a control variate, last.

    `looks`: the number of looks of a sequential test (sequential.sequential_looks), which raises
    the leak thresholds so that looking often does not make leaks of chance.
    """
    usable = [i for i, s in enumerate(samples) if s.status.timed]
    classes = np.array([samples[i].key_class for i in usable])
    raw_cycles = np.array([samples[i].cycles for i in usable], dtype=np.float64)
    cycles = raw_cycles
    if probes is not None:
        # the probes' readings in the shape of the profiler's intervals
        profile = [ProfiledInterval.from_json(probe_profile(probes.names, sample.probes, public_functions, PUBLIC_TIME))
                   for sample in samples]
    else:
        profile = join_intervals(samples, intervals) if intervals is not None else None
    public_time = attempt_correction = attempts = None
    if public_functions and profile is not None:
        public = np.array([profile[i].function(PUBLIC_TIME).cycles for i in usable], dtype=float)
        public_time = PublicTime(tuple(public_functions), float(public[classes == FIXED].mean()),
                                 float(public[classes == RANDOM].mean()), public_by_exact_check,
                                 leakstats.analyse(classes, public, seed=seed, looks=looks, bootstrap_resamples=10)
                                 if public_by_exact_check else None)
        cycles = cycles - public
    if retry_function and profile is not None:
        attempts = np.array([profile[i].function(retry_function).calls for i in usable], dtype=float)
        attempt_correction = AttemptCorrection(retry_function, _attempt_slope(attempts, cycles),
                                               float(attempts[classes == FIXED].mean()),
                                               float(attempts[classes == RANDOM].mean()))
        cycles = _without_attempts(attempts, cycles)
    fit = None
    if predicted is not None:
        fit, cycles = control_variate(cycles, np.array([predicted[i] for i in usable], dtype=np.float64))
    corrected = public_time is not None or attempt_correction is not None or fit is not None
    paths = None if profile is None or probes is not None else path_fit(classes, cycles, _calls(profile, usable))
    total = leakstats.analyse(classes, cycles, seed=seed, looks=looks, bootstrap_resamples=bootstrap_resamples)
    series = _function_series(profile, usable, attempts) if profile is not None else None
    functions = None if series is None else tuple(localisation.rank_functions(
        {name: values[classes == FIXED] for name, values in series.items()},
        {name: values[classes == RANDOM] for name, values in series.items()}, looks,
        {name: (kept[classes == FIXED], kept[classes == RANDOM])
         for name, kept in _uninterrupted(profile, usable, series).items()}))
    verdict, reason, deciding = decide(total, functions)
    evidence = Evidence(classes, series[deciding], f"{deciding} cycles") if deciding else Evidence(
        classes, cycles, "signing cycles" + (" less the replay's prediction" if fit else
                                             " (corrected)" if public_time or attempt_correction else ""),
        raw_cycles if fit else None)
    return CtResult(total, verdict, reason, failed_samples=len(samples) - len(usable),
                    corrupt_accepted=sum(s.status == Status.CORRUPT_ACCEPTED for s in samples),
                    public_time=public_time, attempts=attempt_correction, control_variate=fit,
                    uncorrected=leakstats.analyse(classes, raw_cycles, seed=seed, looks=looks,
                                                  bootstrap_resamples=bootstrap_resamples) if corrected else None,
                    functions=functions,
                    localised_by=None if profile is None else PROBES if probes is not None else PROFILER,
                    evidence=evidence, paths=paths)


def _function_series(profile: list[ProfiledInterval], usable: list[int], attempts: np.ndarray | None
                     ) -> dict[str, np.ndarray]:
    """Every function's cycles per usable signature, in test order (less each attempt's cost)."""
    rows = [profile[i] for i in usable]
    series = {}
    for name in sorted(set().union(*(row.functions for row in rows)) - {PUBLIC_TIME}):
        values = np.array([row.function(name).cycles for row in rows], dtype=float)
        series[name] = _without_attempts(attempts, values) if attempts is not None else values
    return series


def _uninterrupted(profile: list[ProfiledInterval], usable: list[int], series: dict) -> dict[str, np.ndarray]:
    """Per function an exception returned into in some usable signature, the signatures it did not
    in: its own time is compared over those (SysTick's wrap lands where the time before it puts
    it, which a random key's generation moves; Falcon-1024 fpemu-m4's poly_LDL_fft lost 3 cycles
    where it landed there)."""
    kept = {name: np.array([profile[i].function(name).interrupts == 0 for i in usable]) for name in series}
    return {name: mask for name, mask in kept.items() if not mask.all()}


def _calls(profile: list[ProfiledInterval], usable: list[int]) -> np.ndarray:
    """Every function's calls per usable signature: a row per signature, a column per function."""
    names = sorted(set().union(*(profile[i].functions for i in usable)))
    return np.array([[profile[i].function(name).calls for name in names] for i in usable], dtype=float)


def _attempt_slope(attempts: np.ndarray, values: np.ndarray) -> float:
    """Cycles per attempt, by least squares; 0 when it moves the values by less than half a
    cycle over the attempts seen (cycle counts are integers: anything smaller is rounding)."""
    if np.ptp(attempts) == 0:
        return 0.0
    slope = float(np.polyfit(attempts, values, 1)[0])
    return slope if abs(slope) * np.ptp(attempts) >= 0.5 else 0.0


def _without_attempts(attempts: np.ndarray, values: np.ndarray, slope: float | None = None) -> np.ndarray:
    """The values less their attempts' cost, rounded to 1e-6 cycles: an exactly linear function
    must come out exactly constant, not with floating-point residue a t-test would read."""
    slope = _attempt_slope(attempts, values) if slope is None else slope
    return np.round(values - slope * attempts, 6)


def look_summary(result: CtResult, count: int) -> str:
    """What the progress line says after a look: max |t|, the leading function, the samples needed."""
    max_abs_t = json_number(result.total.max_abs_t)
    text = f"at {count}: max |t| {max_abs_t:.1f}" if isinstance(max_abs_t, float) else f"at {count}: max |t| {max_abs_t}"
    worst = localisation.strongest_function(result.functions or ())
    if worst is not None:
        text += f", {worst.name} |t| {abs(worst.t):.1f}"
    if result.total.samples_needed:
        text += f", a leak this size needs {2 * result.total.samples_needed:,}"
    return text
