"""The main job's document (suite-report.json, jobs/suite.py's `suite_document`): the suite's runs,
then per implementation its figures, its signing's variance, its constant-time verdict with what
decided it and its signing profile; Falcon's floating-point modes side by side, and the findings
in words. compare.json carries the same section of Falcon's modes (`FalconSet`)."""

from dataclasses import dataclass

from .parsing import json_number, number
from .runs import RunsDocument
from .taint import VerdictAtClock


@dataclass(frozen=True)
class ExactCheckPart:
    """The exact check beside a constant-time test: its verdict, the signatures it followed, and the
    leaking instructions and their functions (the most often executed first)."""

    verdict: str
    signatures: int
    leaking_instructions: int
    leaking_functions: tuple[str, ...]

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "signatures": self.signatures,
                "leaking_instructions": self.leaking_instructions, "leaking_functions": list(self.leaking_functions)}

    @classmethod
    def from_json(cls, data: dict) -> "ExactCheckPart":
        return cls(data["verdict"], data["signatures"], data["leaking_instructions"],
                   tuple(data["leaking_functions"]))


@dataclass(frozen=True)
class ConstantTimePart:
    """A constant-time test's verdict with what decided it (the statistics' verdict, the exact
    check's) and the functions the statistics localised the leak to."""

    verdict: str
    reason: str
    scope: str | None
    signatures: int
    max_abs_t: float | None  # infinite for a certain leak (written "inf", as ct.json writes it)
    statistics: str
    exact_check: ExactCheckPart | None
    localised: tuple[str, ...]
    run_dir: str | None
    other_clocks: tuple[VerdictAtClock, ...] = ()  # the exact check at the board's other clocks

    @property
    def exact_leaking_functions(self) -> tuple[str, ...]:
        return self.exact_check.leaking_functions if self.exact_check else ()

    @property
    def leaking_functions(self) -> tuple[str, ...]:
        """The functions a leak is in: the exact check's, else the statistics' localisation."""
        return self.exact_leaking_functions or self.localised

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "reason": self.reason, "scope": self.scope, "signatures": self.signatures,
                "max_abs_t": json_number(self.max_abs_t), "statistics": self.statistics,
                "exact_check": None if self.exact_check is None else self.exact_check.to_json(),
                "localised": list(self.localised), "run_dir": self.run_dir,
                **({"other_clocks": [item.to_json() for item in self.other_clocks]} if self.other_clocks else {})}

    @classmethod
    def from_json(cls, data: dict) -> "ConstantTimePart":
        exact = None if data["exact_check"] is None else ExactCheckPart.from_json(data["exact_check"])
        return cls(data["verdict"], data["reason"], data["scope"], data["signatures"], number(data["max_abs_t"]),
                   data["statistics"], exact, tuple(data["localised"]), data["run_dir"],
                   tuple(map(VerdictAtClock.from_json, data.get("other_clocks", ()))))


@dataclass(frozen=True)
class VarianceSource:
    """A function whose time carries `share` of the signing time's variance."""

    function: str
    share: float

    def to_json(self) -> dict:
        return {"function": self.function, "share": self.share}

    @classmethod
    def from_json(cls, data: dict) -> "VarianceSource":
        return cls(data["function"], data["share"])


@dataclass(frozen=True)
class Variance:
    """The spread of signing cycles over a test's signatures (coefficient of variation, extremes)
    and the functions it comes from, the largest share first."""

    cv: float
    min: float
    max: float
    sources: tuple[VarianceSource, ...]

    def to_json(self) -> dict:
        return {"cv": self.cv, "min": self.min, "max": self.max, "sources": [s.to_json() for s in self.sources]}

    @classmethod
    def from_json(cls, data: dict) -> "Variance":
        return cls(data["cv"], data["min"], data["max"], tuple(map(VarianceSource.from_json, data["sources"])))


@dataclass(frozen=True)
class FpPrimitive:
    """A floating-point primitive in a signing: the function that does it, its mean cycles per call
    (callees included) and its calls per signature."""

    function: str
    cycles_per_call: float
    calls_per_signature: float

    def to_json(self) -> dict:
        return {"function": self.function, "cycles_per_call": self.cycles_per_call,
                "calls_per_signature": self.calls_per_signature}

    @classmethod
    def from_json(cls, data: dict) -> "FpPrimitive":
        return cls(data["function"], data["cycles_per_call"], data["calls_per_signature"])


@dataclass(frozen=True)
class SigningProfile:
    """Where a signing's time goes: the floating-point arithmetic's share, and each FP primitive
    found (add, mul, div, sqrt)."""

    fp_share: float
    fp_primitives: dict[str, FpPrimitive]

    def to_json(self) -> dict:
        return {"fp_share": self.fp_share,
                "fp_primitives": {name: primitive.to_json() for name, primitive in self.fp_primitives.items()}}

    @classmethod
    def from_json(cls, data: dict) -> "SigningProfile":
        return cls(data["fp_share"], {name: FpPrimitive.from_json(primitive)
                                      for name, primitive in data["fp_primitives"].items()})


def _optional(data, read):
    return None if data is None else read(data)


@dataclass(frozen=True)
class ImplementationEntry:
    """One implementation of the suite: its median cycles per operation and their milliseconds per
    clock (Hz as text), its deepest stack, code size, signing variance, constant-time test and
    signing profile (None where it has none)."""

    scheme: str
    impl: str
    name: str  # as its standard writes it ("ML-DSA-44 m4f")
    cycles: dict[str, float]
    ms: dict[str, dict[str, float]]
    stack_bytes: int | None
    code_bytes: int | None
    variance: Variance | None
    constant_time: ConstantTimePart | None
    profile: SigningProfile | None

    @property
    def verdict(self) -> str | None:
        return self.constant_time.verdict if self.constant_time else None

    def to_json(self) -> dict:
        return {"scheme": self.scheme, "impl": self.impl, "name": self.name, "cycles": self.cycles, "ms": self.ms,
                "stack_bytes": self.stack_bytes, "code_bytes": self.code_bytes,
                "variance": _optional(self.variance, Variance.to_json),
                "constant_time": _optional(self.constant_time, ConstantTimePart.to_json),
                "profile": _optional(self.profile, SigningProfile.to_json)}

    @classmethod
    def from_json(cls, data: dict) -> "ImplementationEntry":
        return cls(data["scheme"], data["impl"], data["name"], data["cycles"], data["ms"], data["stack_bytes"],
                   data["code_bytes"], _optional(data["variance"], Variance.from_json),
                   _optional(data["constant_time"], ConstantTimePart.from_json),
                   _optional(data["profile"], SigningProfile.from_json))


@dataclass(frozen=True)
class FalconMode:
    """One floating-point mode of a Falcon parameter set: its cycles, its price over native double
    per operation (a ratio less one) and in milliseconds at the suite's clock, its verdict, the
    functions it leaks in and its signing profile."""

    impl: str
    words: str  # the mode in the report's words
    cycles: dict[str, float]
    price: dict[str, float | None]
    extra_ms: dict[str, float | None]
    verdict: str | None
    leaking_functions: tuple[str, ...]
    profile: SigningProfile | None

    def to_json(self) -> dict:
        return {"impl": self.impl, "words": self.words, "cycles": self.cycles, "price": self.price,
                "extra_ms": self.extra_ms, "verdict": self.verdict, "leaking_functions": list(self.leaking_functions),
                "profile": _optional(self.profile, SigningProfile.to_json)}

    @classmethod
    def from_json(cls, data: dict) -> "FalconMode":
        return cls(data["impl"], data["words"], data["cycles"], data["price"], data["extra_ms"], data["verdict"],
                   tuple(data["leaking_functions"]), _optional(data["profile"], SigningProfile.from_json))


@dataclass(frozen=True)
class FalconSet:
    """A Falcon parameter set's floating-point modes side by side, native double first."""

    scheme: str
    name: str
    modes: tuple[FalconMode, ...]

    def to_json(self) -> dict:
        return {"scheme": self.scheme, "name": self.name, "modes": [mode.to_json() for mode in self.modes]}

    @classmethod
    def from_json(cls, data: dict) -> "FalconSet":
        return cls(data["scheme"], data["name"], tuple(map(FalconMode.from_json, data["modes"])))


@dataclass(frozen=True)
class SuiteDocument:
    """The main job's document: the suite's runs, the clocks its milliseconds are given at, each
    implementation, Falcon's modes and the summary in words."""

    runs: RunsDocument
    clocks_hz: tuple[int, ...]
    implementations: tuple[ImplementationEntry, ...]
    falcon: tuple[FalconSet, ...]
    summary: tuple[str, ...]

    def to_json(self) -> dict:
        return self.runs.to_json() | {
            "kind": "suite", "clocks_hz": list(self.clocks_hz),
            "implementations": [item.to_json() for item in self.implementations],
            "falcon": [falcon_set.to_json() for falcon_set in self.falcon], "summary": list(self.summary)}

    @classmethod
    def from_json(cls, data: dict) -> "SuiteDocument":
        return cls(RunsDocument.from_json(data), tuple(data["clocks_hz"]),
                   tuple(map(ImplementationEntry.from_json, data["implementations"])),
                   tuple(map(FalconSet.from_json, data["falcon"])), tuple(data["summary"]))
