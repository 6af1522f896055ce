"""The exact check's document (taint.json, and beside a constant-time test its `taint`
subdirectory's): its verdict, the signatures it followed and what they covered, and each
instruction whose timing a secret can change (`Finding`)."""

from dataclasses import asdict, dataclass

from .parsing import optional, refused_as, without_absent
from .relational import UNCHANGED, RelationalCheck

LEAK_KINDS = ("branch", "jump", "division")


@dataclass(frozen=True)
class Finding:
    """An instruction whose timing the secret key can change, as taint.json keeps it (each in
    its `findings`)."""

    kind: str
    address: int
    count: int
    declassified: bool  # caused only by values or decisions the scheme publishes (declared public)
    region: str | None  # memory hit by an "address" finding
    function: str | None
    file: str | None
    line: int | None
    declassified_by: tuple[str, ...] = ()  # the catalogue's reasons that declassified it
    within: str | None = None  # made inside a call of this function, declared to work on masked values
    taken: int | None = None  # a branch's executions that went the taken way (None: not a branch, or an older check)
    # An address finding in flash whose load time followed the address, as the virtual board priced
    # it: behind flash wait states the ART's data cache holds some lines, and a load waits unless its
    # line is held. Absent from the file otherwise (every check at 0 wait states, and older ones).
    timed: bool = False
    # Whether other secrets changed what it did (issue #54): None for a note, a declassified finding
    # and an older check; an `unchanged` one is not a leak.
    relational: RelationalCheck | None = None

    @property
    def hex_address(self) -> str:
        return f"0x{self.address:08x}"

    @property
    def one_way(self) -> bool:
        """A branch that went the same way every time it ran: its condition depends on a secret,
        but the secrets it saw never changed the path (a latent leak, no timing difference yet)."""
        return self.taken is not None and self.taken in (0, self.count)

    @property
    def convicting(self) -> bool:
        """Its kind times by a secret at the check's clock and nobody declared that secret public: a leak
        unless other secrets never changed what it did (`unchanged`)."""
        return (self.kind in LEAK_KINDS or self.timed) and not self.declassified

    @property
    def unchanged(self) -> bool:
        """Tainted, but what it did never changed between the secrets tried: not a leak (evidence, not proof)."""
        return self.relational is not None and self.relational.state == UNCHANGED

    @property
    def leak(self) -> bool:
        """A timing difference on this board, at the check's clock, from a secret nobody declared public."""
        return self.convicting and not self.unchanged

    def to_json(self) -> dict:
        document = {**asdict(self), "address": self.hex_address, "declassified_by": list(self.declassified_by),
                    "leak": self.leak,
                    "relational": None if self.relational is None else self.relational.to_json()}
        if not self.timed:
            del document["timed"]
        return without_absent(document, ("relational",))

    @classmethod
    def from_json(cls, data: dict) -> "Finding":
        return cls(data["kind"], int(data["address"], 16), data["count"], data["declassified"], data.get("region"),
                   data.get("function"), data.get("file"), data.get("line"), tuple(data.get("declassified_by", ())),
                   data.get("within"), data.get("taken"), data.get("timed", False),
                   optional(data, "relational", RelationalCheck.from_json))


@dataclass(frozen=True)
class Coverage:
    """The distinct instructions the signatures ran, and per signature those no earlier one ran."""

    instructions: int
    new_instructions: tuple[int, ...]

    def to_json(self) -> dict:
        return {"instructions": self.instructions, "new_instructions": list(self.new_instructions)}

    @classmethod
    def from_json(cls, data: dict) -> "Coverage":
        return cls(data["instructions"], tuple(data["new_instructions"]))


@dataclass(frozen=True)
class CheckedClock:
    """The clock the exact check ran at (board.json's "clocks"): behind flash wait states a load
    from flash at a secret address is a leak (`Finding.timed`)."""

    name: str
    hz: int
    flash_wait_states: int

    def describe(self) -> str:
        """"24 MHz, 0 wait states" or "168 MHz, 5 wait states behind the ART"."""
        plural = "" if self.flash_wait_states == 1 else "s"
        behind = " behind the ART" if self.flash_wait_states else ""
        return f"{self.hz / 1e6:g} MHz, {self.flash_wait_states} wait state{plural}{behind}"

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "CheckedClock":
        return cls(data["name"], data["hz"], data["flash_wait_states"])


# Checks before the clock was recorded ran at the benchmark clock: pqm4's 24 MHz, 0 wait states.
BENCHMARK_CLOCK = CheckedClock("benchmark", 24_000_000, 0)


@dataclass(frozen=True)
class VerdictAtClock:
    """The exact check's verdict at another of the board's clocks than a test's (ct.json's and the
    suite's `other_clocks`): the clock, the verdict, the leaking instructions and their functions
    (the most often executed first), and where the check is kept."""

    clock: CheckedClock
    verdict: str
    leaking_instructions: int
    leaking_functions: tuple[str, ...]
    directory: str
    # Known without running: the check at the test's clock (in `directory`) is the same at every clock.
    derived: bool = False

    @classmethod
    def of(cls, document: "TaintDocument", directory: str, clock: CheckedClock | None = None) -> "VerdictAtClock":
        """The verdict of `document`, kept in `directory`; at `clock`, derived from it, when that is
        another clock than the check's (TaintDocument.same_at_every_clock)."""
        leaks = sorted(document.leaks, key=lambda finding: -finding.count)
        return cls(clock or document.checked_at, document.verdict, len(leaks),
                   tuple(dict.fromkeys(finding.function or finding.hex_address for finding in leaks)), directory,
                   derived=clock is not None)

    def to_json(self) -> dict:
        return {"clock": self.clock.to_json(), "verdict": self.verdict, "leaking_instructions": self.leaking_instructions,
                "leaking_functions": list(self.leaking_functions), "directory": self.directory,
                **({"derived": True} if self.derived else {})}

    @classmethod
    def from_json(cls, data: dict) -> "VerdictAtClock":
        return cls(CheckedClock.from_json(data["clock"]), data["verdict"], data["leaking_instructions"],
                   tuple(data["leaking_functions"]), data["directory"], data.get("derived", False))


@dataclass(frozen=True)
class TaintDocument:
    """The exact check's document, kept in taint.json (`pqscope taint`; `pqscope ct --taint` keeps
    it in the test's "taint" subdirectory). Fields None were absent from an older check's file and
    stay absent."""

    scheme: str
    impl: str
    board: str
    signatures: int
    instructions: int
    verdict: str  # "leak" or "no-leak"
    findings: tuple[Finding, ...]
    built_with: dict | None = None
    sign_cycles: tuple[int | None, ...] | None = None  # per signature, in their order
    declassifications: tuple[dict, ...] | None = None  # the catalogue's, as project.catalogue writes them
    coverage: Coverage | None = None
    clock: CheckedClock | None = None  # None: an older check, which ran at the benchmark clock

    @property
    def leaks(self) -> tuple[Finding, ...]:
        return tuple(finding for finding in self.findings if finding.leak)

    @property
    def checked_at(self) -> CheckedClock:
        return self.clock or BENCHMARK_CLOCK

    @property
    def same_at_every_clock(self) -> bool:
        """Whether the check finds the same at each of the board's clocks: the images differ only in
        the clock's bring-up, so signing runs the same instructions on the same values at each, and a
        clock changes only what a load from flash at a secret address costs (`Finding.timed`, behind
        wait states). Without such a load, undeclared, every finding and the verdict are the same."""
        return not any(finding.kind == "address" and finding.region == "flash" and not finding.declassified
                       for finding in self.findings)

    def to_json(self) -> dict:
        document = {"scheme": self.scheme, "impl": self.impl, "board": self.board,
                    "clock": None if self.clock is None else self.clock.to_json(), "built_with": self.built_with,
                    "signatures": self.signatures, "instructions": self.instructions,
                    "sign_cycles": None if self.sign_cycles is None else list(self.sign_cycles),
                    "verdict": self.verdict,
                    "declassifications": None if self.declassifications is None else list(self.declassifications),
                    "coverage": None if self.coverage is None else self.coverage.to_json(),
                    "findings": [finding.to_json() for finding in self.findings]}
        return without_absent(document, ("clock", "built_with", "sign_cycles", "declassifications", "coverage"))

    @classmethod
    def from_json(cls, data: dict) -> "TaintDocument":
        with refused_as("the exact check's document (taint.json)"):
            return cls(data["scheme"], data["impl"], data["board"], data["signatures"], data["instructions"],
                       data["verdict"], tuple(Finding.from_json(item) for item in data["findings"]),
                       built_with=data.get("built_with"), sign_cycles=optional(data, "sign_cycles", tuple),
                       declassifications=optional(data, "declassifications", tuple),
                       coverage=optional(data, "coverage", Coverage.from_json),
                       clock=optional(data, "clock", CheckedClock.from_json))
