"""The parts of a constant-time test's document (ct.json) that only its view reads, typed for it:
the clock, the evidence that decided the verdict, the corrections, a requested bound, the boards of
a farm, how to confirm on a board and the replay's confirmations. The test writes them as it
measures them (analysis); `CtDocument` keeps them as written and gives them typed here."""

from dataclasses import dataclass

from .parsing import number


@dataclass(frozen=True)
class TestClock:
    """The clock the test ran at (None: not recorded)."""

    hz: int | None
    flash_wait_states: int | None

    @classmethod
    def from_json(cls, data: dict) -> "TestClock":
        return cls(data["hz"], data["flash_wait_states"])


@dataclass(frozen=True)
class ExactFinding:
    """An instruction of the exact check that decided a leak: its kind, where it is and its executions."""

    kind: str
    function: str | None
    file: str | None
    line: int | None
    address: str
    executions: int


@dataclass(frozen=True)
class ExactClear:
    """The exact check found nothing on the paths of its `signatures`."""

    signatures: int


@dataclass(frozen=True)
class StatisticsEvidence:
    """The statistics' strongest |t| and test, and the function whose |t| is largest."""

    max_abs_t: float | None
    strongest_test: str | None
    function: str | None
    function_t: float | None


Evidence = ExactFinding | ExactClear | StatisticsEvidence


def evidence_from_json(data: dict) -> Evidence:
    """An item of ct.json's `evidence`, by what it is evidence of."""
    if data["by"] == "exact check":
        if "kind" not in data:
            return ExactClear(data["signatures"])
        return ExactFinding(data["kind"], data["function"], data["file"], data["line"], data["address"],
                            data["executions"])
    return StatisticsEvidence(number(data["max_abs_t"]), data["strongest_test"], data.get("function"),
                              number(data.get("function_t")))


@dataclass(frozen=True)
class RetryCorrection:
    """The signing's rejection attempts, priced and removed before testing."""

    retry_function: str
    cycles_per_attempt: float
    mean_attempts_fixed: float
    mean_attempts_random: float

    @classmethod
    def from_json(cls, data: dict) -> "RetryCorrection":
        return cls(data["retry_function"], data["cycles_per_attempt"], data["mean_attempts"]["fixed"],
                   data["mean_attempts"]["random"])


@dataclass(frozen=True)
class PublicTimePart:
    """The public-input functions' time, set apart before testing: which functions (those the
    exact check found among them), their mean cycles per class, and whether that time alone
    differs between the classes (the exact check's functions only)."""

    functions: tuple[str, ...]
    mean_fixed: float
    mean_random: float
    from_exact_check: tuple[str, ...] = ()
    verdict: str | None = None
    max_abs_t: float | None = None

    @property
    def depends_on_public_key(self) -> bool:
        """Time the exact check shows to be public differs between the classes."""
        return bool(self.from_exact_check) and self.verdict == "leak"

    @classmethod
    def from_json(cls, data: dict) -> "PublicTimePart":
        return cls(tuple(data["functions"]), data["mean_cycles"]["fixed"], data["mean_cycles"]["random"],
                   tuple(data.get("from_exact_check", ())), data.get("verdict"), number(data.get("max_abs_t")))


@dataclass(frozen=True)
class ReplayFit:
    """The replay's model cycles regressed out of a board's: the slope, the share of the board's
    variance they explain, and how many times the signatures the raw total would need."""

    slope: float
    variance_removed: float
    signatures_factor: float

    @classmethod
    def from_json(cls, data: dict) -> "ReplayFit":
        return cls(data["slope"], data["variance_removed"], number(data["signatures_factor"]))


@dataclass(frozen=True)
class RequestedBound:
    """A bound asked for on a no-leak (a share of the mean time), and whether the test showed it."""

    share_of_mean: float
    shown: bool

    @classmethod
    def from_json(cls, data: dict) -> "RequestedBound":
        return cls(data["share_of_mean"], data["shown"])


@dataclass(frozen=True)
class BoardAgreement:
    """One board of a farm: where it is, its signatures, its median cycles per key class, its |t|
    against the boards' consensus and whether it stands out."""

    serial: str
    place: str | None  # where it is: its labgrid place, its port, or its labgrid target
    port: str | None
    target: str | None
    signatures: int
    median_fixed: float | None
    median_random: float | None
    t_against_the_boards: float | None
    stands_out: bool

    @classmethod
    def from_json(cls, data: dict) -> "BoardAgreement":
        return cls(data["board"], data.get("place"), data.get("port"), data.get("target"), data["signatures"],
                   data["median_cycles"]["fixed"], data["median_cycles"]["random"],
                   number(data["t_against_the_boards"]), data["stands_out"])


@dataclass(frozen=True)
class Unprobeable:
    """A function a probe cannot reach, and why."""

    function: str
    why: str


@dataclass(frozen=True)
class ProbeSuggestion:
    """How to confirm the virtual board's localisation on a board: the functions to probe, the
    command that does it, and the functions no probe can reach."""

    probes: tuple[str, ...]
    command: str
    not_probeable: tuple[Unprobeable, ...]

    @classmethod
    def from_json(cls, data: dict) -> "ProbeSuggestion":
        return cls(tuple(data["probes"]), data["command"],
                   tuple(Unprobeable(item["function"], item["why"]) for item in data["not_probeable"]))


@dataclass(frozen=True)
class BoardConfirmation:
    """An exact-check finding's function tested on the board by the replay's labels."""

    function: str
    findings: int
    text: str
    model_cycles: float | None  # the model's difference between the labels' halves


@dataclass(frozen=True)
class ReplayPart:
    """A board's test replayed on the virtual board: how it priced flash, and the findings it
    tested on the board."""

    flash_timing: str
    confirmations: tuple[BoardConfirmation, ...]

    @classmethod
    def from_json(cls, data: dict) -> "ReplayPart":
        return cls(data.get("flash_timing", "modelled"),
                   tuple(BoardConfirmation(item["function"], item["findings"], item["text"], item["model_cycles"])
                         for item in data.get("confirmations", ())))


@dataclass(frozen=True)
class FindingCounts:
    """The exact check's findings inside a function the statistics localised."""

    leaks: int
    declassified: int
