"""The constant-time test's document (ct.json): the test's verdict and the evidence behind it,
the statistics of the signatures' time (`CtStatistics`: the total's leak statistics and each
function's, `FunctionLeak`), and the exact check beside them (`TaintBeside`). The parts the
test writes as it measures them are kept so and typed for the view by ct_parts."""

from dataclasses import dataclass

from .ct_parts import (BoardAgreement, Evidence, FindingCounts, ProbeSuggestion, PublicTimePart, ReplayFit, ReplayPart,
                       RequestedBound, RetryCorrection, TestClock, evidence_from_json)
from .parsing import json_number, number, optional, refused_as, without_absent
from .runs import ProbeInflation
from .taint import Finding, VerdictAtClock


@dataclass(frozen=True)
class LeakBound:
    """How large a difference between the classes' mean times could still be: the smallest
    equivalence margin that two one-sided tests (TOST, each at 5 %) reject, i.e. the farther end
    of the 90 % confidence interval of mean random - mean fixed. "No leak larger than `cycles`
    (`share` of the mean time) at 95 % confidence". Kept in ct.json (`bound`, and each function's)."""

    cycles: float
    share: float | None  # of the mean time of both classes; None when that is 0

    def to_json(self) -> dict:
        return {"cycles": self.cycles, "share_of_mean": self.share, "confidence": 0.95}

    @classmethod
    def from_json(cls, data: dict) -> "LeakBound":
        return cls(data["cycles"], data["share_of_mean"])

    def describe(self) -> str:
        share = "" if self.share is None else f" ({self.share:.3%} of the mean)"
        return f"no leak larger than {self.cycles:,.1f} cycles{share} at 95% confidence"


@dataclass(frozen=True)
class RankTest:
    """A nonparametric test of the classes: its statistic (named as ct.json names it: "u", "d"),
    its p-value and, for a function's, the p-value Holm-adjusted over the functions."""

    statistic_name: str
    statistic: float
    p: float
    p_holm: float | None = None

    def to_json(self) -> dict:
        return {self.statistic_name: self.statistic, "p": self.p,
                **({} if self.p_holm is None else {"p_holm": self.p_holm})}

    @classmethod
    def from_json(cls, data: dict) -> "RankTest":
        (name, statistic), *_ = data.items()
        return cls(name, statistic, data["p"], data.get("p_holm"))


@dataclass(frozen=True)
class Nonparametric:
    """Mann-Whitney U and two-sample Kolmogorov-Smirnov of the classes (ct.json's `nonparametric`,
    the total's and each function's)."""

    mann_whitney: RankTest
    kolmogorov_smirnov: RankTest

    def to_json(self) -> dict:
        return {"mann_whitney": self.mann_whitney.to_json(), "kolmogorov_smirnov": self.kolmogorov_smirnov.to_json()}

    @classmethod
    def from_json(cls, data: dict) -> "Nonparametric":
        return cls(RankTest.from_json(data["mann_whitney"]), RankTest.from_json(data["kolmogorov_smirnov"]))


@dataclass(frozen=True)
class ClassCounts:
    """Signatures per key class (ct.json's `n`)."""

    fixed: int
    random: int


@dataclass(frozen=True)
class LeakStatistics:
    """The leak statistics of one series of times (ct.json's leading fields, and its
    `uncorrected`): the t-tests' verdict and strongest test, and how large the difference is or
    could still be. `tests` and `bootstrap` stay as ct.json has them: only the views read them."""

    verdict: str
    reason: str
    n: ClassCounts
    max_abs_t: float | None
    strongest_test: str | None  # None: no test had enough signatures per class
    tests: dict
    nonparametric: Nonparametric
    effect_size: float
    samples_needed: int | None
    detectable_effect: float
    bootstrap: dict
    bound: LeakBound | None = None

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "reason": self.reason, "n": {"fixed": self.n.fixed, "random": self.n.random},
                "max_abs_t": json_number(self.max_abs_t), "strongest_test": self.strongest_test, "tests": self.tests,
                "nonparametric": self.nonparametric.to_json(), "effect_size": json_number(self.effect_size),
                "samples_needed": self.samples_needed, "detectable_effect": self.detectable_effect,
                "bootstrap": self.bootstrap, **({"bound": self.bound.to_json()} if self.bound else {})}

    @classmethod
    def from_json(cls, data: dict) -> "LeakStatistics":
        return cls(data["verdict"], data["reason"], ClassCounts(data["n"]["fixed"], data["n"]["random"]),
                   number(data["max_abs_t"]), data["strongest_test"], data["tests"],
                   Nonparametric.from_json(data["nonparametric"]), number(data["effect_size"]), data["samples_needed"],
                   data["detectable_effect"], data["bootstrap"], optional(data, "bound", LeakBound.from_json))


@dataclass(frozen=True)
class FunctionLeak:
    """A function's cycles against the key class: its strongest test (of the total's: raw, cropped,
    second order) with the thresholds for the number of functions tested, and the nonparametric
    tests (Holm-adjusted over the functions). Kept in ct.json's `top_functions`."""

    name: str
    t: float | None
    p: float | None
    mean_fixed: float
    mean_random: float
    share: float | None  # of the total mean difference; None when the totals do not differ
    test: str | None  # which test gave t
    evidence_t: float
    definite_t: float
    nonparametric: Nonparametric | None = None  # None: both classes one constant
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
                "share": self.share, "depends_on_class": self.depends_on_class,
                "nonparametric": None if self.nonparametric is None else self.nonparametric.to_json(),
                "bound": self.bound.to_json() if self.bound else None}

    @classmethod
    def from_json(cls, data: dict) -> "FunctionLeak":
        return cls(data["function"], number(data["t"]), data["p"], data["mean_fixed"], data["mean_random"],
                   data["share"], data["test"], data["thresholds"]["evidence"], data["thresholds"]["definite"],
                   optional(data, "nonparametric", Nonparametric.from_json),
                   optional(data, "bound", LeakBound.from_json))


@dataclass(frozen=True)
class StrongestFunction:
    """The function whose |t| is largest (ct.json's `max_abs_t_function`)."""

    function: str
    t: float

    def to_json(self) -> dict:
        return {"function": self.function, "t": json_number(self.t)}


@dataclass(frozen=True)
class CtStatistics:
    """The statistics part of ct.json: the leak statistics of the (corrected) total, its verdict
    and reason weighed with the functions' (the test's own may differ: the exact check's), the
    corrections, and the functions ranked (virtual board or probes). Corrections stay as ct.json
    has them, typed for the view (`retry_correction`, `replay_fit`)."""

    total: LeakStatistics
    failed_samples: int
    corrupt_accepted: int
    public_time: dict | None = None
    correction: dict | None = None  # per signing attempt
    control_variate: dict | None = None  # the replay's prediction regressed out
    uncorrected: LeakStatistics | None = None  # the total before the corrections
    plotted: str | None = None  # what the evidence plots
    localised_by: str | None = None
    top_functions: tuple[FunctionLeak, ...] | None = None  # None: no profile
    max_abs_t_function: StrongestFunction | None = None

    @property
    def verdict(self) -> str:
        return self.total.verdict

    @property
    def reason(self) -> str:
        return self.total.reason

    @property
    def public_part(self) -> PublicTimePart | None:
        return None if self.public_time is None else PublicTimePart.from_json(self.public_time)

    @property
    def retry_correction(self) -> RetryCorrection | None:
        return None if self.correction is None else RetryCorrection.from_json(self.correction)

    @property
    def replay_fit(self) -> ReplayFit | None:
        return None if self.control_variate is None else ReplayFit.from_json(self.control_variate)

    def to_json(self) -> dict:
        document = self.total.to_json()
        for key, value in (("public_time", self.public_time), ("correction", self.correction),
                           ("control_variate", self.control_variate),
                           ("uncorrected", None if self.uncorrected is None else self.uncorrected.to_json())):
            if value is not None:
                document[key] = value
        document |= {"failed_samples": self.failed_samples, "corrupt_accepted": self.corrupt_accepted}
        if self.plotted is not None:
            document["plotted"] = self.plotted
        if self.top_functions is not None:
            document["localised_by"] = self.localised_by
            document["top_functions"] = [function.to_json() for function in self.top_functions]
        if self.max_abs_t_function is not None:
            document["max_abs_t_function"] = self.max_abs_t_function.to_json()
        return document

    @classmethod
    def from_json(cls, data: dict) -> "CtStatistics":
        worst = data.get("max_abs_t_function")
        return cls(LeakStatistics.from_json(data), data["failed_samples"], data["corrupt_accepted"],
                   data.get("public_time"), data.get("correction"), data.get("control_variate"),
                   optional(data, "uncorrected", LeakStatistics.from_json), data.get("plotted"),
                   data.get("localised_by"),
                   optional(data, "top_functions", lambda entries: tuple(map(FunctionLeak.from_json, entries))),
                   None if worst is None else StrongestFunction(worst["function"], number(worst["t"])))


@dataclass(frozen=True)
class TaintBeside:
    """The exact check beside a constant-time test (ct.json's `taint`): its verdict and findings,
    and per function the statistics localised, its findings' counts (`in_top_functions`: function
    -> {"leaks", "declassified"}, for the views)."""

    verdict: str
    signatures: int
    findings: tuple[Finding, ...]
    in_top_functions: dict[str, dict]

    def finding_counts(self, function: str) -> FindingCounts | None:
        """The findings inside `function`, if the statistics localised the leak to it."""
        counts = self.in_top_functions.get(function)
        return None if counts is None else FindingCounts(counts["leaks"], counts["declassified"])

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "signatures": self.signatures,
                "findings": [finding.to_json() for finding in self.findings], "in_top_functions": self.in_top_functions}

    @classmethod
    def from_json(cls, data: dict) -> "TaintBeside":
        return cls(data["verdict"], data["signatures"], tuple(map(Finding.from_json, data["findings"])),
                   data["in_top_functions"])


@dataclass(frozen=True)
class Sequential:
    """The looks of a sequential test (signature counts) and why it stopped early (None: it did not)."""

    looks: tuple[int, ...]
    stopped: str | None

    def to_json(self) -> dict:
        return {"looks": list(self.looks), "stopped": self.stopped}


# The parts of ct.json a test may lack (a bound requested, a farm, a probed image, ...) or an older
# test's file lacks.
OPTIONAL_PARTS = ("clock", "built_with", "run_dir", "sequential", "bound_requested", "boards", "probe_inflation",
                  "confirm_on_board", "taint", "replay", "evidence", "scope", "other_clocks")


@dataclass(frozen=True)
class CtDocument:
    """The constant-time test's document, kept in ct.json (`pqscope ct`): the verdict from all the
    evidence (`verdict`, `reason`, `evidence`, `scope`), set once; the statistics' own verdict is
    `statistics.verdict`. Parts only the view reads stay as ct.json has them (dicts), typed for it
    by the properties below; fields None are absent from the file."""

    board: str
    scheme: str
    impl: str
    clock: dict | None
    built_with: dict | None
    run_dir: str | None
    verdict: str
    reason: str
    statistics: CtStatistics
    sequential: Sequential | None = None
    bound_requested: dict | None = None  # a requested bound on a no-leak, and whether it was shown
    boards: tuple[dict, ...] | None = None  # per board of a farm: its signatures and agreement
    probe_inflation: dict | None = None
    confirm_on_board: dict | None = None  # how to confirm the virtual board's localisation on a board
    taint: TaintBeside | None = None
    replay: dict | None = None  # a board's test replayed on the virtual board
    evidence: tuple[dict, ...] | None = None  # what decided the verdict
    scope: str | None = None  # the secrets the verdict covers
    # The exact check at the board's other clocks (its fastest, where the test ran at another): a
    # product's clock, whose flash wait states can time what the benchmark clock does not.
    other_clocks: tuple[VerdictAtClock, ...] = ()

    # The parts kept as ct.json has them, typed for the view.
    @property
    def test_clock(self) -> TestClock | None:
        return None if self.clock is None else TestClock.from_json(self.clock)

    @property
    def deciding_evidence(self) -> tuple[Evidence, ...]:
        return tuple(map(evidence_from_json, self.evidence or ()))

    @property
    def requested_bound(self) -> RequestedBound | None:
        return None if self.bound_requested is None else RequestedBound.from_json(self.bound_requested)

    @property
    def farm_boards(self) -> tuple[BoardAgreement, ...]:
        return tuple(map(BoardAgreement.from_json, self.boards or ()))

    @property
    def probes_added(self) -> ProbeInflation | None:
        return None if self.probe_inflation is None else ProbeInflation.from_json(self.probe_inflation)

    @property
    def probe_suggestion(self) -> ProbeSuggestion | None:
        return None if self.confirm_on_board is None else ProbeSuggestion.from_json(self.confirm_on_board)

    @property
    def replayed(self) -> ReplayPart:
        """The replay's part (a test not replayed: none confirmed, flash as modelled)."""
        return ReplayPart.from_json(self.replay or {})

    def to_json(self) -> dict:
        statistics = self.statistics.to_json()
        document = {"board": self.board, "scheme": self.scheme, "impl": self.impl, "clock": self.clock,
                    "built_with": self.built_with, "run_dir": self.run_dir, "verdict": self.verdict,
                    "reason": self.reason,
                    **{key: value for key, value in statistics.items() if key not in ("verdict", "reason")},
                    "sequential": None if self.sequential is None else self.sequential.to_json(),
                    "bound_requested": self.bound_requested,
                    "boards": None if self.boards is None else list(self.boards),
                    "probe_inflation": self.probe_inflation, "confirm_on_board": self.confirm_on_board,
                    "taint": None if self.taint is None else self.taint.to_json(), "replay": self.replay,
                    "evidence": None if self.evidence is None else list(self.evidence), "scope": self.scope,
                    "other_clocks": [item.to_json() for item in self.other_clocks] or None}
        if self.scope is not None:
            document["statistics"] = {"verdict": self.statistics.verdict, "reason": self.statistics.reason}
        return without_absent(document, OPTIONAL_PARTS)

    @classmethod
    def from_json(cls, data: dict) -> "CtDocument":
        with refused_as("the constant-time test's document (ct.json)"):
            sequential = data.get("sequential")
            return cls(data["board"], data["scheme"], data["impl"], data.get("clock"), data.get("built_with"),
                       data.get("run_dir"), data["verdict"], data["reason"],
                       CtStatistics.from_json(data | data.get("statistics", {})),
                       None if sequential is None else Sequential(tuple(sequential["looks"]), sequential["stopped"]),
                       data.get("bound_requested"), optional(data, "boards", tuple), data.get("probe_inflation"),
                       data.get("confirm_on_board"), optional(data, "taint", TaintBeside.from_json), data.get("replay"),
                       optional(data, "evidence", tuple), data.get("scope"),
                       tuple(map(VerdictAtClock.from_json, data.get("other_clocks", ()))))
