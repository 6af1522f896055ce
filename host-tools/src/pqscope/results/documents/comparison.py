"""Falcon's floating-point modes compared (compare.json, `pqscope compare-falcon`): per mode its
operations' cycles and stack and its constant-time test; the main job's section of the modes
(`FalconSet`); every FP primitive in every mode; and the price of constant time."""

from dataclasses import dataclass

from ...link.protocol import Op
from .ct import ClassCounts, StrongestFunction
from .parsing import json_number, number, optional
from .suite import FalconSet


@dataclass(frozen=True)
class OpSummary:
    """One operation of a mode: its samples, how many verified, its median and extreme cycles and
    its deepest stack."""

    n: int
    verified: int
    median: float
    min: int
    max: int
    stack_bytes: int | None

    def to_json(self) -> dict:
        return {"n": self.n, "verified": self.verified, "median": self.median, "min": self.min, "max": self.max,
                "stack_bytes": self.stack_bytes}

    @classmethod
    def from_json(cls, data: dict) -> "OpSummary":
        return cls(data["n"], data["verified"], data["median"], data["min"], data["max"], data["stack_bytes"])


@dataclass(frozen=True)
class FunctionSummary:
    """A function the test ranked: its t (None: too few samples), its share of the difference, the
    difference in cycles and whether it depends on the key class."""

    function: str
    t: float | None
    share: float | None
    difference: float
    depends_on_class: bool

    def to_json(self) -> dict:
        return {"function": self.function, "t": json_number(self.t), "share": self.share,
                "difference": self.difference, "depends_on_class": self.depends_on_class}

    @classmethod
    def from_json(cls, data: dict) -> "FunctionSummary":
        return cls(data["function"], number(data["t"]), data["share"], data["difference"], data["depends_on_class"])


@dataclass(frozen=True)
class ModeTest:
    """A mode's constant-time test: its verdict, |t| of the total and of the strongest function
    (which decides on the virtual board even when the total's is small), and the top functions."""

    verdict: str
    reason: str
    max_abs_t: float | None
    n: ClassCounts  # signatures per key class
    max_abs_t_function: StrongestFunction | None
    run_dir: str | None
    top_functions: tuple[FunctionSummary, ...]

    def to_json(self) -> dict:
        strongest = None if self.max_abs_t_function is None else self.max_abs_t_function.to_json()
        return {"verdict": self.verdict, "reason": self.reason, "max_abs_t": json_number(self.max_abs_t),
                "n": {"fixed": self.n.fixed, "random": self.n.random}, "max_abs_t_function": strongest,
                "run_dir": self.run_dir, "top_functions": [function.to_json() for function in self.top_functions]}

    @classmethod
    def from_json(cls, data: dict) -> "ModeTest":
        strongest = optional(data, "max_abs_t_function",
                             lambda worst: StrongestFunction(worst["function"], number(worst["t"])))
        return cls(data["verdict"], data["reason"], number(data["max_abs_t"]),
                   ClassCounts(data["n"]["fixed"], data["n"]["random"]), strongest, data["run_dir"],
                   tuple(map(FunctionSummary.from_json, data["top_functions"])))


@dataclass(frozen=True)
class ModeFigures:
    """One floating-point mode: each operation (None if it has no timed sample), the deepest stack
    over them, the code size and the constant-time test."""

    ops: dict[str, OpSummary | None]  # keygen, sign, verify
    stack_bytes: int | None
    code_bytes: int | None
    ct: ModeTest

    def to_json(self) -> dict:
        return {**{op: None if summary is None else summary.to_json() for op, summary in self.ops.items()},
                "stack_bytes": self.stack_bytes, "code_bytes": self.code_bytes, "ct": self.ct.to_json()}

    @classmethod
    def from_json(cls, data: dict) -> "ModeFigures":
        ops = {op.label: None if data[op.label] is None else OpSummary.from_json(data[op.label]) for op in Op}
        return cls(ops, data["stack_bytes"], data["code_bytes"], ModeTest.from_json(data["ct"]))


@dataclass(frozen=True)
class FpOperation:
    """One FP primitive in one mode: its cycles per operation (None: no timed signature) and its
    fixed-vs-random-operand verdict, with the function the test pointed at."""

    op: str
    mode: str
    cycles_per_op: float | None
    verdict: str
    max_abs_t: float | None
    top_function: str | None

    def to_json(self) -> dict:
        return {"op": self.op, "mode": self.mode, "cycles_per_op": self.cycles_per_op, "verdict": self.verdict,
                "max_abs_t": json_number(self.max_abs_t), "top_function": self.top_function}

    @classmethod
    def from_json(cls, data: dict) -> "FpOperation":
        return cls(data["op"], data["mode"], data["cycles_per_op"], data["verdict"], number(data["max_abs_t"]),
                   data["top_function"])


@dataclass(frozen=True)
class ComparisonDocument:
    """compare.json: the parameter set, its modes, the main job's section of them, the primitives,
    the price of constant time (per "<emulated>/<native>" and operation: the ratio of medians) and
    how long it all took (absent: not timed)."""

    scheme: str
    board: str
    clock_hz: int | None
    modes: dict[str, ModeFigures]
    falcon: tuple[FalconSet, ...]
    fp_operations: tuple[FpOperation, ...]
    price_of_constant_time: dict[str, dict[str, float | None]]
    fp_op_reps: int
    run_dir: str
    wall_seconds: float | None = None

    def to_json(self) -> dict:
        return {"scheme": self.scheme, "board": self.board, "clock_hz": self.clock_hz,
                "modes": {mode: figures.to_json() for mode, figures in self.modes.items()},
                "falcon": [falcon_set.to_json() for falcon_set in self.falcon],
                "fp_operations": [operation.to_json() for operation in self.fp_operations],
                "price_of_constant_time": self.price_of_constant_time, "fp_op_reps": self.fp_op_reps,
                "run_dir": self.run_dir, **({} if self.wall_seconds is None else {"wall_seconds": self.wall_seconds})}

    @classmethod
    def from_json(cls, data: dict) -> "ComparisonDocument":
        return cls(data["scheme"], data["board"], data["clock_hz"],
                   {mode: ModeFigures.from_json(figures) for mode, figures in data["modes"].items()},
                   tuple(map(FalconSet.from_json, data["falcon"])),
                   tuple(map(FpOperation.from_json, data["fp_operations"])), data["price_of_constant_time"],
                   data["fp_op_reps"], data["run_dir"], data.get("wall_seconds"))
