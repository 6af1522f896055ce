"""The model check's document (model-check.json, `pqscope model-check`): each micro-benchmark's
cycles on a board beside what the timing model prices it at and, where one is published, what it
took on silicon."""

from dataclasses import asdict, dataclass

from .parsing import refused_as


@dataclass(frozen=True)
class Sequence:
    name: str
    cycles: int
    model_low: int
    model_high: int
    silicon: int | None  # a published measurement of the same sequence on silicon

    @property
    def as_modelled(self) -> bool:
        return self.model_low <= self.cycles <= self.model_high

    @property
    def model_text(self) -> str:
        return str(self.model_low) if self.model_low == self.model_high else f"{self.model_low}..{self.model_high}"

    def to_json(self) -> dict:
        return {**asdict(self), "as_modelled": self.as_modelled}

    @classmethod
    def from_json(cls, data: dict) -> "Sequence":
        return cls(data["name"], data["cycles"], data["model_low"], data["model_high"], data["silicon"])


@dataclass(frozen=True)
class ModelCheck:
    board: str
    target: dict
    empty_cycles: int  # the two counter reads with nothing between them, taken off every sequence
    sequences: tuple[Sequence, ...]

    @property
    def departures(self) -> list[Sequence]:
        """Sequences that did not take what the model prices them at."""
        return [sequence for sequence in self.sequences if not sequence.as_modelled]

    @property
    def model_against_published(self) -> list[Sequence]:
        """Sequences whose published measurement on silicon the model does not reproduce."""
        return [s for s in self.sequences if s.silicon is not None and not s.model_low <= s.silicon <= s.model_high]

    def to_json(self) -> dict:
        return {"board": self.board, "target": self.target, "empty_cycles": self.empty_cycles,
                "sequences": [sequence.to_json() for sequence in self.sequences],
                "departures": [s.name for s in self.departures],
                "model_against_published": [s.name for s in self.model_against_published]}

    @classmethod
    def from_json(cls, data: dict) -> "ModelCheck":
        with refused_as("the model check's document (model-check.json)"):
            return cls(data["board"], data["target"], data["empty_cycles"],
                       tuple(map(Sequence.from_json, data["sequences"])))
