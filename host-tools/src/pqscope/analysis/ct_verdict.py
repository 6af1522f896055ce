"""The constant-time test's analysis and verdict: leak statistics of the signatures' (corrected)
time and of each function's time, the verdict that weighs both (`decide`), and what the report
shows beside it (the boards' agreement, the exact check's findings per function)."""

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..link.protocol import Status
from ..project.errors import PqscopeError
from ..results.probes import ProbeSet, probe_profile
from . import leakstats
from .words import signature_paths

FIXED, RANDOM = 0, 1  # the key classes: the fixed key, random keys
TOP_FUNCTIONS = 10
# The emulator's name for the time spent in public-input functions (--public-function).
PUBLIC_TIME = "(public-input functions)"


@dataclass(frozen=True)
class PublicTime:
    """The time of the public-input functions, subtracted from each signature's total."""

    functions: tuple[str, ...]
    mean_fixed: float
    mean_random: float

    def to_json(self) -> dict:
        return {"functions": list(self.functions), "mean_cycles": {"fixed": self.mean_fixed, "random": self.mean_random}}


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
                "signatures_factor": leakstats.json_number(self.signatures_factor),
                "replay_mean_cycles": self.replay_mean_cycles}


def control_variate(cycles: np.ndarray, predicted: np.ndarray) -> tuple[ControlVariate, np.ndarray]:
    """The fit and the board's residual cycles (about the board's mean)."""
    spread = predicted - predicted.mean()
    slope = float(spread @ (cycles - cycles.mean()) / (spread @ spread)) if spread.any() else 0.0
    residual = np.round(cycles - slope * spread, 6)  # an exact fit comes out exactly constant
    return ControlVariate(slope, float(cycles.var()), float(residual.var()), float(predicted.mean())), residual


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
    functions: tuple[leakstats.FunctionLeak, ...] | None = None  # None: no profile
    # Where the functions' cycles come from: the emulator's profiler (exclusive cycles of every
    # function) or the device's probes (inclusive cycles of the probed ones).
    localised_by: str | None = None
    evidence: Evidence | None = None  # not in ct.json: the report's plots

    def to_json(self) -> dict:
        document = self.total.to_json() | {"verdict": str(self.verdict), "reason": self.reason}
        if self.public_time:
            document["public_time"] = self.public_time.to_json()
        if self.attempts:
            document["correction"] = self.attempts.to_json()
        if self.control_variate:
            document["control_variate"] = self.control_variate.to_json()
        if self.uncorrected:
            document["uncorrected"] = self.uncorrected.to_json()
        document |= {"failed_samples": self.failed_samples, "corrupt_accepted": self.corrupt_accepted}
        if self.evidence is not None:
            document["plotted"] = self.evidence.label
        if self.functions is not None:
            document["localised_by"] = self.localised_by
            document["top_functions"] = [leak.to_json() for leak in self.functions[:TOP_FUNCTIONS]]
            worst = _strongest_function(self.functions)
            if worst:
                document["max_abs_t_function"] = {"function": worst.name, "t": leakstats.json_number(worst.t)}
        return document


def join_intervals(samples: list, intervals: list[dict]) -> list[dict]:
    """Each signature's emulator interval, joined by sample id (intervals of emulators that wrote
    no ids: by position, if their numbers agree). A signature without its interval is an error
    naming it: a localisation must never vanish or shift silently. A signature the device ran
    twice (its answer was lost) has two intervals of the same code: the last one counts."""
    if all("sample_id" in line for line in intervals):
        by_id = {line["sample_id"]: line for line in intervals}
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


def analyse_ct(samples: list, intervals: list[dict] | None, retry_function: str | None,
               public_functions: tuple[str, ...] = (), *, probes: ProbeSet | None = None, seed: int = 0) -> dict:
    """The verdict document of `analyse` (ct.json)."""
    return analyse(samples, intervals, retry_function, public_functions, probes=probes, seed=seed).to_json()


PROFILER, PROBES = "virtual board profiler (exclusive cycles)", "on-device probes (inclusive cycles)"


def analyse(samples: list, intervals: list[dict] | None, retry_function: str | None,
            public_functions: tuple[str, ...] = (), *, probes: ProbeSet | None = None, seed: int = 0, looks: int = 1,
            bootstrap_resamples: int = leakstats.BOOTSTRAP_RESAMPLES, predicted: list[float] | None = None
            ) -> CtResult:
    """Leak statistics of the verified signatures' time and, with the emulator's intervals or the
    device's `probes`, of each function's time (the localisation).

    With a `retry_function` (called once per signing attempt, e.g. ML-DSA's challenge sampling),
    times are corrected for the number of attempts first: how often a rejection loop repeats is
    public randomness (its rate may differ slightly between keys, which says nothing about how
    the key is used), so each attempt's cost, fitted over all samples, is removed from the total
    and from every function. The analysis of the uncorrected total stays under "uncorrected".

    Likewise, the time of `public_functions` (booked apart by the emulator) depends only on public
    data — the public key changes with the key class too — so it is subtracted from the total and
    left out of the ranking.

    `predicted`: per signature, the cycles the replay on the virtual board took for it (a board's
    test): regressed out of the (corrected) time as a control variate, last.

    `looks`: the number of looks of a sequential test (leakstats.sequential_looks), which raises
    the leak thresholds so that looking often does not make leaks of chance.
    """
    usable = [i for i, s in enumerate(samples) if s.status.timed]
    classes = np.array([samples[i].key_class for i in usable])
    raw_cycles = np.array([samples[i].cycles for i in usable], dtype=np.float64)
    cycles = raw_cycles
    if probes is not None:
        profile = [probe_profile(probes.names, sample.probes, public_functions, PUBLIC_TIME) for sample in samples]
    else:
        profile = join_intervals(samples, intervals) if intervals is not None else None
    public_time = attempt_correction = attempts = None
    if public_functions and profile is not None:
        public = np.array([profile[i]["functions"].get(PUBLIC_TIME, (0, 0))[0] for i in usable], dtype=float)
        public_time = PublicTime(tuple(public_functions), float(public[classes == FIXED].mean()),
                                 float(public[classes == RANDOM].mean()))
        cycles = cycles - public
    if retry_function and profile is not None:
        attempts = np.array([profile[i]["functions"].get(retry_function, (0, 0))[1] for i in usable], dtype=float)
        attempt_correction = AttemptCorrection(retry_function, _attempt_slope(attempts, cycles),
                                               float(attempts[classes == FIXED].mean()),
                                               float(attempts[classes == RANDOM].mean()))
        cycles = _without_attempts(attempts, cycles)
    fit = None
    if predicted is not None:
        fit, cycles = control_variate(cycles, np.array([predicted[i] for i in usable], dtype=np.float64))
    corrected = public_time is not None or attempt_correction is not None or fit is not None
    total = leakstats.analyse(classes, cycles, seed=seed, looks=looks, bootstrap_resamples=bootstrap_resamples)
    series = _function_series(profile, usable, attempts) if profile is not None else None
    functions = None if series is None else tuple(leakstats.rank_functions(
        {name: values[classes == FIXED] for name, values in series.items()},
        {name: values[classes == RANDOM] for name, values in series.items()}, looks))
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
                    evidence=evidence)


def _function_series(profile: list[dict], usable: list[int], attempts: np.ndarray | None) -> dict[str, np.ndarray]:
    """Every function's cycles per usable signature, in test order (less each attempt's cost)."""
    rows = [profile[i]["functions"] for i in usable]
    series = {}
    for name in sorted(set().union(*rows) - {PUBLIC_TIME}):
        values = np.array([functions.get(name, (0, 0))[0] for functions in rows], dtype=float)
        series[name] = _without_attempts(attempts, values) if attempts is not None else values
    return series


def decide(total: leakstats.LeakResult, functions: tuple[leakstats.FunctionLeak, ...] | None
           ) -> tuple[leakstats.Verdict, str, str | None]:
    """The verdict, why, and the function that decided it (None: the total did): the total's
    verdict, unless a function's time depends on the key class past the same thresholds: public
    randomness elsewhere (e.g. Falcon's sampler) can hide a small leak in the total, so such a
    function makes the verdict a leak, or keeps it from no-leak."""
    worst = _strongest_function(functions or ())
    if worst is None or total.verdict == leakstats.Verdict.LEAK:
        return total.verdict, total.reason, None
    max_abs_t = leakstats.json_number(total.max_abs_t)
    max_abs_t = f"{max_abs_t:.1f}" if isinstance(max_abs_t, float) else max_abs_t
    if abs(worst.t) > worst.definite_t:
        return leakstats.Verdict.LEAK, (f"{worst.name}'s time depends on the key: |t| = {abs(worst.t):.1f} (test "
                                        f"{worst.test}) > {worst.definite_t:.1f} for {len(functions)} functions "
                                        f"(the total's max |t| is {max_abs_t})"), worst.name
    if total.verdict == leakstats.Verdict.NO_LEAK and abs(worst.t) >= worst.evidence_t:
        return leakstats.Verdict.INCONCLUSIVE, (f"the total shows no leak, but {worst.name}'s time depends on the "
                                                f"key with |t| = {abs(worst.t):.1f} (test {worst.test}) >= "
                                                f"{worst.evidence_t:.1f} for {len(functions)} functions"), worst.name
    return total.verdict, total.reason, None


def _strongest_function(functions) -> leakstats.FunctionLeak | None:
    with_t = [leak for leak in functions if leak.t is not None]
    return max(with_t, key=lambda leak: abs(leak.t)) if with_t else None


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


STATISTICS_SCOPE = "the long-term key only (statistics of fixed vs random keys)"
EXACT_SCOPE = ("the key, the signing randomness and everything derived from them (the exact check of every "
               "instruction on the virtual board, beside the statistics of fixed vs random keys)")


def headline(statistics: dict, taint: dict | None, exact_on_target: bool = True) -> dict:
    """The verdict from all the evidence: `leak` when the statistics (`statistics`, the analysis'
    document) or the exact check (`taint`'s document, if it ran) find time that depends on the
    secret; `no-leak` when the statistics clear it, the exact check (if it ran) agreeing, or when
    an exact check of the measured target itself (`exact_on_target`: the virtual board's own, not
    a board's replay) finds nothing and the statistics no leak either, however few their
    signatures: on the model, every instruction of the paths followed was checked, which no number
    of signatures does. A board's no-leak is its statistics': the model it was replayed on may lack
    what the board has (its flash, its bus). The evidence that decided, and which secrets it
    covers. Its "verdict" and "reason" are the test's; the statistics' own stay under "statistics"."""
    leaks = [finding for finding in taint["findings"] if finding["leak"]] if taint else []
    exact = [{"by": "exact check", "kind": f["kind"], "function": f["function"], "file": f["file"], "line": f["line"],
              "address": f["address"], "executions": f["count"]} for f in leaks]
    worst = statistics.get("max_abs_t_function")
    measured = {"by": "statistics", "max_abs_t": statistics["max_abs_t"],
                "strongest_test": statistics.get("strongest_test"),
                **({"function": worst["function"], "function_t": worst["t"]} if worst else {})}
    verdict, reason = statistics["verdict"], statistics["reason"]
    deciding = [measured]
    if verdict != leakstats.Verdict.LEAK and leaks:
        verdict = leakstats.Verdict.LEAK
        reason = (f"the exact check found {len(leaks)} instruction{'' if len(leaks) == 1 else 's'} whose time depends "
                  f"on a secret (the statistics: {statistics['verdict']})")
        deciding = exact
    elif verdict == leakstats.Verdict.LEAK:
        deciding = [measured, *exact]
    elif verdict == leakstats.Verdict.NO_LEAK and taint is not None:
        reason += "; the exact check found no instruction whose time depends on a secret"
    elif taint is not None and exact_on_target:
        verdict = leakstats.Verdict.NO_LEAK
        reason = (f"the exact check found no instruction whose time depends on a secret on "
                  f"{signature_paths(taint['signatures'])} (the statistics: {statistics['verdict']}, "
                  f"{statistics['reason']})")
        deciding = [{"by": "exact check", "signatures": taint["signatures"]}, measured]
    return {"verdict": str(verdict), "reason": reason, "evidence": deciding,
            "scope": STATISTICS_SCOPE if taint is None else EXACT_SCOPE,
            "statistics": {"verdict": statistics["verdict"], "reason": statistics["reason"]}}


def taint_beside(taint: dict, top_functions: list[dict]) -> dict:
    """The exact check's findings for the constant-time test's page: its verdict and findings,
    and, per function the statistics localised, the findings inside it. The two answer different
    questions: the statistics point at the function where the time goes (a callee doing extra
    work), the exact check at the instruction that decides on the secret (often in its caller)."""
    def counts(function: str) -> dict:
        inside = [f for f in taint["findings"] if f["function"] == function]
        return {"leaks": sum(f["leak"] for f in inside), "declassified": sum(f["declassified"] for f in inside)}

    return {"verdict": taint["verdict"], "signatures": taint["signatures"], "findings": taint["findings"],
            "in_top_functions": {f["function"]: counts(f["function"]) for f in top_functions}}


def board_summaries(records: list, boards: dict[str, dict]) -> list[dict]:
    """Per board that measured some of `records`: its signatures, median cycles per class, and
    whether its cycles differ from the boards' consensus: per class, t = (the board's mean - the
    median of the boards' means) / the standard error of its mean; the larger |t| of the two
    classes is reported, and `stands_out` past the evidence threshold. Every board signs the same
    keys and messages in the same proportions, so sound boards agree; the median keeps one
    misbehaving board from moving the consensus (with two boards, both differ alike). `boards`:
    meta.json's description of each board by its serial number."""
    timed = [record for record in records if record.status.timed]
    serials = sorted({record.board for record in timed})
    cycles = {(serial, key_class): np.array([r.cycles for r in timed if r.board == serial and r.key_class == key_class],
                                            dtype=np.float64)
              for serial in serials for key_class in (FIXED, RANDOM)}
    consensus = {key_class: np.median([values.mean() for (_, each), values in cycles.items()
                                       if each == key_class and values.size])
                 for key_class in (FIXED, RANDOM)}
    summaries = []
    for serial in serials:
        largest = None
        for key_class in (FIXED, RANDOM):
            values = cycles[serial, key_class]
            if len(serials) < 2 or values.size < leakstats.MIN_SAMPLES_PER_TEST:
                continue
            error = values.std(ddof=1) / np.sqrt(values.size)
            difference = values.mean() - consensus[key_class]
            t = difference / error if error > 0 else (0.0 if difference == 0 else math.copysign(math.inf, difference))
            if largest is None or abs(t) > abs(largest):
                largest = float(t)
        summaries.append({"board": serial, **boards.get(serial, {}),
                          "signatures": sum(1 for r in records if r.board == serial),
                          "median_cycles": {name: float(np.median(cycles[serial, key_class]))
                                            if cycles[serial, key_class].size else None
                                            for key_class, name in ((FIXED, "fixed"), (RANDOM, "random"))},
                          "t_against_the_boards": leakstats.json_number(largest),
                          "stands_out": largest is not None and abs(largest) > leakstats.LEAK_EVIDENCE_T})
    return summaries


def look_summary(result: "CtResult", count: int) -> str:
    """What the progress line says after a look: max |t|, the leading function, the samples needed."""
    max_abs_t = leakstats.json_number(result.total.max_abs_t)
    text = f"at {count}: max |t| {max_abs_t:.1f}" if isinstance(max_abs_t, float) else f"at {count}: max |t| {max_abs_t}"
    worst = _strongest_function(result.functions or ())
    if worst is not None:
        text += f", {worst.name} |t| {abs(worst.t):.1f}"
    if result.total.samples_needed:
        text += f", a leak this size needs {2 * result.total.samples_needed:,}"
    return text


@dataclass(frozen=True)
class Confirmation:
    """One function's findings of the exact check, tested on the board (`confirm`); the sizes are
    the difference between the signatures whose label is above the median and the others, in the
    board's total: the function's own time and any other's that goes with the label (a path that
    evicts flash-accelerator lines slows the code that runs next), which totals cannot tell apart;
    or, when the board's image probes the function, in its own time as the probe measures it."""

    function: str
    findings: int
    state: str  # confirmed, evidence, not-seen, unlabelled
    t: float | None  # of the board's cycles per label cycle
    board_cycles: float | None  # the label's difference as the board shows it
    model_cycles: float | None  # the label's difference in the model
    bound_cycles: float | None  # not seen: no difference larger than this on the board (95 %)
    signatures: int
    priced_apart: tuple[str, ...] = ()  # the functions whose time the board's pace was fitted for on its own
    # not seen: the signatures after which the model's difference would be definite, were the board
    # to show it as the model has it (the standard error falls as one over the root of the count)
    signatures_needed: int | None = None
    probe: str | None = None  # the probe whose cycles were tested (None: the board's totals)

    def to_json(self) -> dict:
        return {"function": self.function, "findings": self.findings, "state": self.state,
                "t": leakstats.json_number(self.t), "board_cycles": self.board_cycles,
                "model_cycles": self.model_cycles, "bound_cycles": self.bound_cycles, "signatures": self.signatures,
                "priced_apart": list(self.priced_apart), "signatures_needed": self.signatures_needed,
                "probe": self.probe}

    @property
    def reversed(self) -> bool:
        """The board's difference goes the other way from the model's (its slow path is the model's fast one)."""
        return bool(self.board_cycles and self.model_cycles and (self.board_cycles > 0) != (self.model_cycles > 0))

    def describe(self) -> str:
        if self.state == "unlabelled":
            return (f"not labelled: the model's time in it is the same for all but fewer than "
                    f"{leakstats.MIN_SAMPLES_PER_TEST} of the {self.signatures:,} signatures, too few to test")
        size = f"{self.board_cycles:+,.0f} cycles"
        if self.reversed:
            size += f", the other way round from the model's {self.model_cycles:+,.0f}"
        measured = f"t = {self.t:.1f}" + (f", in its own time: probe {self.probe}" if self.probe else "")
        if self.state == "confirmed":
            return f"confirmed on the board: {size} ({measured})"
        if self.state == "evidence":
            return f"evidence on the board, not yet definite: {size} ({measured})"
        text = f"not seen on the board (no difference larger than {self.bound_cycles:,.0f} cycles, {measured})"
        if self.signatures_needed and self.signatures_needed > self.signatures:
            text += (f"; the model's {self.model_cycles:+,.0f} would need some {_rounded(self.signatures_needed):,} "
                     "signatures to show")
        return text


def _rounded(count: int) -> int:
    """`count` to two significant figures: an estimate's precision."""
    return int(float(f"{count:.2g}"))


# The functions whose board pace the confirmation fits one by one: those whose model time varies
# most. The board's flash wait states, prefetch and bus do not slow every function alike, and a
# single pace for all of them leaves their differences in the residual, where a label correlated
# with any of them takes them for its own.
PACED_FUNCTIONS = 16
# A function whose time the label explains this well (a callee on the secret path) is priced with
# the label, not on its own: the label would otherwise have no variance of its own left to test.
LABEL_EXPLAINED = 0.9


def confirm(board: list, model: dict, intervals: dict[int, dict], findings: list[dict], looks: int = 1,
            timed_by: Mapping[str, tuple[str, int]] | None = None) -> list[Confirmation]:
    """Each leaking function of the exact check's `findings`, tested on the `board`'s signatures
    (CtSamples, verified ones only) with the replay's `model` samples and `intervals` by index.

    The label: per signature, the function's model time (inclusive) beyond its calls at its typical
    cost per call, the time the secret-dependent outcomes its findings name add or take away (how
    often it runs is the caller's doing, public or a finding of its own). The board's cycles are
    regressed on the label, the function's calls, the model time of each function that varies most
    (each its own pace on the board) and the rest of the model's time: the label's coefficient is
    the board's cycles per model cycle of the label (each board its own intercept: boards of a farm
    may differ by a constant), and its t decides, with thresholds raised for the functions tested
    and the looks: "confirmed" past the definite one in either direction (a board whose time moves
    against the model's still has time that depends on the outcome), "not seen" below the evidence
    one, with the largest difference the board could still show.

    A function the board's image probes (`timed_by`: its probe's name and position among each
    sample's readings, `probes.probes_timing`) is tested on that probe's cycles instead, regressed
    on the label and its calls alone (each board its own cost per call: a board's probes are off by
    its calibration's error, which every probed call adds): the function's own time on the board,
    without the rest of the signing's, whose board-only variance hides outcomes of a few cycles in
    the totals."""
    functions: dict[str, int] = {}
    for finding in findings:
        if finding["leak"]:
            functions[finding["function"]] = functions.get(finding["function"], 0) + 1
    timed = [sample for sample in board if sample.status.timed and sample.index in intervals]
    if not functions or len(timed) < 2 * leakstats.MIN_SAMPLES_PER_TEST:
        return []
    evidence_t, definite_t = leakstats.function_thresholds(len(functions), looks)
    cycles = np.array([sample.cycles for sample in timed], dtype=np.float64)
    total = np.array([model[sample.index].cycles for sample in timed], dtype=np.float64)
    on_board = [np.array([sample.board == board for sample in timed], dtype=np.float64)
                for board in sorted({sample.board for sample in timed})]
    profile = _profile_columns(timed, intervals)
    varying = [name for name in sorted(profile, key=lambda name: -profile[name][0].std()) if profile[name][0].std() > 0]
    results = []
    for function, count in sorted(functions.items()):
        _, calls, inclusive = profile.get(function, (None, np.zeros_like(total), np.zeros_like(total)))
        label = outcome_label(calls, inclusive)
        slow = slow_half(label)
        if min(slow.sum(), (~slow).sum()) < leakstats.MIN_SAMPLES_PER_TEST:
            results.append(Confirmation(function, count, "unlabelled", None, None, None, None, len(timed)))
            continue
        probe, position = (timed_by or {}).get(function, (None, 0))
        if probe is None:
            paced = _priced_apart(label, calls, [name for name in varying if name != function][:PACED_FUNCTIONS],
                                  profile)
            own = [profile[name][0] for name in paced]
            rest = total - label - sum(own, np.zeros_like(total))
            per_label, error = _coefficient(np.column_stack([*on_board, rest, *own, calls, label]), cycles)
        else:
            paced = []
            probed = np.array([sample.probes[position].cycles for sample in timed], dtype=np.float64)
            per_label, error = _coefficient(np.column_stack([*on_board, *(calls * board for board in on_board), label]),
                                            probed)
        t = per_label / error if error else math.copysign(math.inf, per_label) if per_label else 0.0
        model_size = float(label[slow].mean() - label[~slow].mean())
        state = "confirmed" if abs(t) > definite_t else "evidence" if abs(t) >= evidence_t else "not-seen"
        bound = (abs(per_label) + CONFIDENCE_Z * error) * abs(model_size) if state == "not-seen" else None
        # A board that shows the label as the model prices it has a coefficient of 1: its t is 1 / error.
        needed = math.ceil(len(timed) * (definite_t * error) ** 2) if state == "not-seen" else None
        results.append(Confirmation(function, count, state, float(t), per_label * model_size, model_size, bound,
                                    len(timed), tuple(paced), needed, probe))
    return results


def outcome_label(calls: np.ndarray, inclusive: np.ndarray) -> np.ndarray:
    """Per signature, a function's time (inclusive) beyond its `calls` at its typical cost per call
    (the median signature's): the cycles its secret-dependent outcomes add or take away. Not the
    mean cost: calls that cost the same in all but a few signatures would leave every signature a
    sliver of those few's difference, in proportion to its calls, a label that is the call count."""
    called = calls > 0
    typical = float(np.median(inclusive[called] / calls[called])) if called.any() else 0.0
    return inclusive - calls * typical


def _profile_columns(timed: list, intervals: dict[int, dict]) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each profiled function's exclusive cycles, calls and inclusive cycles per signature."""
    names = sorted({name for sample in timed for name in intervals[sample.index]["functions"]})
    rows = [intervals[sample.index]["functions"] for sample in timed]
    return {name: tuple(np.array([float(row[name][column]) if name in row else 0.0 for row in rows])
                        for column in range(3)) for name in names}


def _priced_apart(label: np.ndarray, calls: np.ndarray, candidates: list[str], profile: dict) -> list[str]:
    """The `candidates` that keep their own pace beside the `label`: those left once the ones that
    together explain the label are given back to it, the most explaining first."""
    kept = list(candidates)
    while kept and _explained(label, [profile[name][0] for name in kept] + [calls]) > LABEL_EXPLAINED:
        kept.remove(min(kept, key=lambda name: _explained(
            label, [profile[other][0] for other in kept if other != name] + [calls])))
    return kept


def _explained(values: np.ndarray, columns: list[np.ndarray]) -> float:
    """The share of `values`' variance a least-squares fit on `columns` (and a constant) explains."""
    predictors = np.column_stack([np.ones_like(values), *columns])
    fitted, *_ = np.linalg.lstsq(predictors, values, rcond=None)
    return 1.0 - float(np.var(values - predictors @ fitted) / np.var(values))


CONFIDENCE_Z = 1.645  # one-sided 95 %: the bound of a two one-sided tests' margin, as leakstats.leak_bound's


def _coefficient(predictors: np.ndarray, values: np.ndarray) -> tuple[float, float]:
    """The last predictor's least-squares coefficient and its standard error."""
    fitted, _, rank, _ = np.linalg.lstsq(predictors, values, rcond=None)
    freedom = len(values) - rank
    residual = values - predictors @ fitted
    variance = residual @ residual / freedom if freedom > 0 else 0.0
    covariance = np.linalg.pinv(predictors.T @ predictors) * variance
    return float(fitted[-1]), float(math.sqrt(max(covariance[-1, -1], 0.0)))


def slow_half(values: np.ndarray) -> np.ndarray:
    """The values above the median, or from it on, whichever splits the more evenly (few distinct
    values put many at the median)."""
    median = np.median(values)
    return min(values > median, values >= median, key=lambda slow: abs(2 * int(slow.sum()) - len(values)))


def disagreements(board: list, model: dict) -> list[int]:
    """The board's signatures whose replay ended otherwise (status) or used another amount of stack:
    the board did not run the replayed path (another image, or a fault)."""
    return [sample.index for sample in board if sample.index in model and (
        model[sample.index].status != sample.status or model[sample.index].stack_bytes != sample.stack_bytes)]
