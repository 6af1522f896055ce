"""The emulator's speed (`pqscope vboard-bench`, jobs/bench.py's `emulator_speed`): per workload
its model cycles, the time the emulation took and the model cycles per second."""

from dataclasses import dataclass


@dataclass(frozen=True)
class WorkloadSpeed:
    scheme: str
    impl: str
    model_cycles_per_second: float
    model_cycles: int | None
    run_seconds: float | None
    wall_seconds: float | None

    def to_json(self) -> dict:
        return {"scheme": self.scheme, "impl": self.impl, "model_cycles_per_second": self.model_cycles_per_second,
                "model_cycles": self.model_cycles, "run_seconds": self.run_seconds, "wall_seconds": self.wall_seconds}

    @classmethod
    def from_json(cls, data: dict) -> "WorkloadSpeed":
        return cls(data["scheme"], data["impl"], data["model_cycles_per_second"], data["model_cycles"],
                   data["run_seconds"], data["wall_seconds"])


@dataclass(frozen=True)
class EmulatorSpeed:
    """Every workload's speed; its JSON leads with the first workload's fields (the one scripts read)."""

    workloads: tuple[WorkloadSpeed, ...]

    def to_json(self) -> dict:
        return {**self.workloads[0].to_json(), "benchmarks": [workload.to_json() for workload in self.workloads]}

    @classmethod
    def from_json(cls, data: dict) -> "EmulatorSpeed":
        return cls(tuple(map(WorkloadSpeed.from_json, data["benchmarks"])))
