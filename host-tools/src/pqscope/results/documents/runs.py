"""The runs' document (`pqscope run --json`, and what a run or suite directory reports): each
operation's figures summarised from the samples (`Run.results()`); and the entries of a run's
meta.json that the summaries and the jobs read: the image's code size, its probes, the device's
sizes and the emulator's statistics."""

from collections.abc import Sequence
from dataclasses import dataclass

from ...link.messages import Info, ProbeReading
from ...project.errors import PqscopeError
from ..runmeta import RunMeta

RESULTS_SCHEMA = 1


@dataclass(frozen=True)
class CycleStats:
    """An operation's cycles over its timed samples; min and max exact (integers beyond a float's
    precision stay whole)."""

    min: int
    p05: float
    median: float
    mean: float
    p95: float
    max: int
    stdev: float  # the sample standard deviation; 0 for a single sample

    def to_json(self) -> dict:
        return {"min": self.min, "p05": self.p05, "median": self.median, "mean": self.mean, "p95": self.p95,
                "max": self.max, "stdev": self.stdev}

    @classmethod
    def from_json(cls, data: dict) -> "CycleStats":
        return cls(data["min"], data["p05"], data["median"], data["mean"], data["p95"], data["max"], data["stdev"])


@dataclass(frozen=True)
class ProbedFunction:
    """A probed function in one operation (an OpResult's `probes`): its mean cycles, callees
    included, its mean calls, and its share of the operation's mean cycles (None: they are 0)."""

    function: str
    mean_cycles: float
    mean_calls: float
    share_of_total: float | None

    @classmethod
    def from_json(cls, data: dict) -> "ProbedFunction":
        return cls(data["function"], data["mean_cycles"], data["mean_calls"], data["share_of_total"])


@dataclass(frozen=True)
class ProbeInflation:
    """What the probes added to an operation's mean cycles (an OpResult's `probe_inflation`)."""

    mean_cycles: float
    share_of_total: float | None

    @classmethod
    def from_json(cls, data: dict) -> "ProbeInflation":
        return cls(data["mean_cycles"], data["share_of_total"])


@dataclass(frozen=True)
class OpResult:
    """One operation of one implementation: its samples, how many verified, its cycles (None if
    none was timed), deepest stack and the image's code size; with probes, each probed function's
    mean cycles and calls and what the probes added (kept as measured, typed for the view by
    `probed_functions` and `probes_added`)."""

    scheme: str
    impl: str
    op: str
    n: int
    verified: int
    corrupt_accepted: int
    cycles: CycleStats | None
    stack_bytes: int | None
    code_bytes: int
    probes: list[dict] | None = None
    probe_inflation: dict | None = None

    @property
    def probed_functions(self) -> tuple[ProbedFunction, ...]:
        return () if self.probes is None else tuple(map(ProbedFunction.from_json, self.probes))

    @property
    def probes_added(self) -> ProbeInflation | None:
        return None if self.probe_inflation is None else ProbeInflation.from_json(self.probe_inflation)

    def to_json(self) -> dict:
        probed = {} if self.probes is None else {"probes": self.probes, "probe_inflation": self.probe_inflation}
        return {"scheme": self.scheme, "impl": self.impl, "op": self.op, "n": self.n, "verified": self.verified,
                "corrupt_accepted": self.corrupt_accepted,
                "cycles": None if self.cycles is None else self.cycles.to_json(),
                "stack_bytes": self.stack_bytes, "code_bytes": self.code_bytes, **probed}

    @classmethod
    def from_json(cls, data: dict) -> "OpResult":
        cycles = None if data["cycles"] is None else CycleStats.from_json(data["cycles"])
        return cls(data["scheme"], data["impl"], data["op"], data["n"], data["verified"], data["corrupt_accepted"],
                   cycles, data["stack_bytes"], data["code_bytes"], data.get("probes"), data.get("probe_inflation"))


@dataclass(frozen=True)
class RunsDocument:
    """The runs of a run or suite directory: where and at what clock they ran, what built them,
    and every operation's result."""

    board: str
    clock_hz: int
    run_dir: str
    results: tuple[OpResult, ...]
    flash_wait_states: int | None = None
    built_with: dict | None = None  # the compiler and its level, if not the default (toolchain.built_with)

    def to_json(self) -> dict:
        return {"schema": RESULTS_SCHEMA, "board": self.board, "clock_hz": self.clock_hz,
                "flash_wait_states": self.flash_wait_states,
                **({"built_with": self.built_with} if self.built_with else {}), "run_dir": self.run_dir,
                "results": [result.to_json() for result in self.results]}

    @classmethod
    def from_json(cls, data: dict) -> "RunsDocument":
        return cls(data["board"], data["clock_hz"], data["run_dir"], tuple(map(OpResult.from_json, data["results"])),
                   data.get("flash_wait_states"), data.get("built_with"))


@dataclass(frozen=True)
class ProbeSet:
    """The image's probes, as its INFO and PROBE answers describe them (meta.json's "probes")."""

    names: tuple[str, ...]
    self_cycles: int  # taken out of every probed call by the device
    call_cycles: int  # what one probed call adds to the time of the code around it

    @classmethod
    def of(cls, info: Info, names: Sequence[str]) -> "ProbeSet":
        return cls(tuple(names), info.probe_self_cycles, info.probe_call_cycles)

    def to_json(self) -> dict:
        return {"names": list(self.names), "self_cycles": self.self_cycles, "call_cycles": self.call_cycles}

    @classmethod
    def from_json(cls, data: dict) -> "ProbeSet":
        try:
            return cls(tuple(data["names"]), int(data["self_cycles"]), int(data["call_cycles"]))
        except (KeyError, TypeError, ValueError):
            raise PqscopeError("meta.json is damaged: its 'probes' entry lacks names, self_cycles or call_cycles") from None

    def inflation(self, readings: Sequence[ProbeReading]) -> int:
        """Cycles the probes added to an operation's total (every probed call's cost)."""
        return self.call_cycles * sum(reading.calls for reading in readings)


def probe_set(meta: RunMeta) -> ProbeSet | None:
    """The probes of the image a run measured, if it has any."""
    return ProbeSet.from_json(meta.probes) if meta.probes else None


def code_bytes(meta: RunMeta) -> int | None:
    """The code size (text) of the image a run measured (meta.json's build.ImageSize), if recorded."""
    text = (meta.image or {}).get("text")
    return text if isinstance(text, int) else None


@dataclass(frozen=True)
class SignatureSizes:
    """The public key's and the signature's bytes, as the device's INFO gave them (meta.json)."""

    pk_bytes: int
    sig_bytes: int

    @classmethod
    def of(cls, meta: RunMeta) -> "SignatureSizes":
        return cls(meta.info["pk_bytes"], meta.info["sig_bytes"])


@dataclass(frozen=True)
class EmulatorStats:
    """What the virtual board said of a run as it stopped: the model cycles it ran, in how long,
    and so its speed in model cycles per second."""

    model_cycles_per_second: float | None
    model_cycles: int | None
    run_seconds: float | None
    wall_seconds: float | None

    @classmethod
    def of(cls, meta: RunMeta) -> "EmulatorStats | None":
        """A run's statistics; None for a board, or an emulator that wrote none."""
        return cls._read(meta.emulator_stats) if meta.emulator_stats else None

    @classmethod
    def of_each(cls, meta: RunMeta) -> list["EmulatorStats"]:
        """The statistics of each emulator that ran a run: the run's one, or each shard's."""
        found = [meta.emulator_stats] if meta.emulator_stats else [shard.get("emulator_stats")
                                                                   for shard in meta.shards or ()]
        return [cls._read(stats) for stats in found if stats]

    @classmethod
    def _read(cls, stats: dict) -> "EmulatorStats":
        return cls(stats.get("model_cycles_per_second"), stats.get("model_cycles"), stats.get("run_seconds"),
                   stats.get("wall_seconds"))
