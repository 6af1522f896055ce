"""The baseline gate (`pqscope run ... --baseline OLD`, issue #58): each operation's median cycles,
deepest stack and code size against a previous run's or suite's, and whether a change passes the
limits (`Limit`: "+2%" of the old figure, or "+0" units more); the same figures in the format
github-action-benchmark reads ("customSmallerIsBetter")."""

import re
from dataclasses import dataclass
from pathlib import Path

from ..project.errors import PqscopeError
from ..results import store
from ..results.documents.runs import OpResult, RunsDocument
from ..results.documents.suite import SuiteDocument


@dataclass(frozen=True)
class Limit:
    """How much a figure may grow: `amount` units, or `amount` percent of the old figure."""

    amount: float
    percent: bool

    @classmethod
    def parse(cls, text: str, option: str) -> "Limit":
        match = re.fullmatch(r"\+?(\d+(?:\.\d+)?)(%?)", text.strip())
        if not match:
            raise PqscopeError(f"{option} {text!r}: give the growth allowed, as +N (units) or +N% (of the baseline)")
        return cls(float(match[1]), bool(match[2]))

    def allows(self, old: float, new: float) -> bool:
        return new - old <= (old * self.amount / 100 if self.percent else self.amount)

    def describe(self) -> str:
        return f"+{self.amount:g}{'%' if self.percent else ''}"


@dataclass(frozen=True)
class Limits:
    cycles: Limit | None
    stack: Limit | None
    code: Limit | None


@dataclass(frozen=True)
class Figure:
    """One figure of an operation, old and new, and the limit it broke (None: within it, or none set)."""

    name: str  # "median cycles", "stack bytes", "code bytes"
    old: float | None
    new: float | None
    broken: Limit | None

    def describe(self) -> str:
        if self.old is None or self.new is None:
            return f"{self.name}: {_number(self.old)} -> {_number(self.new)}"
        change = self.new - self.old
        share = f", {change / self.old:+.2%}" if self.old else ""
        over = f", over the limit {self.broken.describe()}" if self.broken else ""
        return f"{self.name}: {_number(self.old)} -> {_number(self.new)} ({change:+,.0f}{share}{over})"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


@dataclass(frozen=True)
class OperationChange:
    operation: str  # "control-udiv/leaky sign"
    figures: tuple[Figure, ...]

    @property
    def regressed(self) -> bool:
        return any(figure.broken for figure in self.figures)


@dataclass(frozen=True)
class BaselineComparison:
    baseline: str
    changes: tuple[OperationChange, ...]
    missing: tuple[str, ...]  # the baseline's operations this run did not measure

    @property
    def regressed(self) -> bool:
        return any(change.regressed for change in self.changes)


def _operation(result: OpResult) -> str:
    return f"{result.scheme}/{result.impl} {result.op}"


def _figures(result: OpResult) -> dict[str, float | None]:
    return {"median cycles": None if result.cycles is None else result.cycles.median,
            "stack bytes": result.stack_bytes, "code bytes": result.code_bytes}


def load_baseline(path: Path) -> RunsDocument:
    """The runs of a previous run or suite: its directory, or a document kept in one."""
    directory = path.parent if path.is_file() else path
    if not directory.is_dir():
        raise PqscopeError(f"--baseline {path}: no such run or suite directory")
    kind, document, _ = store.load(directory)
    if kind not in ("run", "suite"):
        raise PqscopeError(f"--baseline {path} holds a {kind} result: give a run's or a suite's directory")
    runs = document.runs if isinstance(document, SuiteDocument) else document
    if not runs.results:
        raise PqscopeError(f"--baseline {path} holds no measured operation")
    return runs


def compare(old: RunsDocument, new: RunsDocument, limits: Limits, baseline: str) -> BaselineComparison:
    """Each operation of `new` that `old` measured too, its figures against `old`'s and `limits`."""
    if (old.board, old.clock_hz) != (new.board, new.clock_hz):
        raise PqscopeError(f"--baseline {baseline} ran on {old.board} at {old.clock_hz / 1e6:g} MHz, this run on "
                           f"{new.board} at {new.clock_hz / 1e6:g} MHz: their cycles do not compare")
    before = {_operation(result): result for result in old.results}
    changes = []
    for result in new.results:
        earlier = before.get(_operation(result))
        if earlier is None:
            continue
        old_figures, new_figures = _figures(earlier), _figures(result)
        figures = []
        for (name, limit) in zip(old_figures, (limits.cycles, limits.stack, limits.code)):
            old_value, new_value = old_figures[name], new_figures[name]
            broken = limit if (limit and old_value is not None and new_value is not None
                               and not limit.allows(old_value, new_value)) else None
            figures.append(Figure(name, old_value, new_value, broken))
        changes.append(OperationChange(_operation(result), tuple(figures)))
    if not changes:
        raise PqscopeError(f"--baseline {baseline} measured none of this run's operations "
                           f"({', '.join(map(_operation, new.results))}): name the same scheme and impl")
    measured = {change.operation for change in changes}
    return BaselineComparison(baseline, tuple(changes), tuple(name for name in before if name not in measured))


UNITS = {"median cycles": "cycles", "stack bytes": "bytes", "code bytes": "bytes"}


def benchmark_entries(runs: RunsDocument) -> list[dict]:
    """Every operation's figures as github-action-benchmark's "customSmallerIsBetter" tool reads
    them: a list of {name, unit, value}."""
    return [{"name": f"{_operation(result)} {name}", "unit": UNITS[name], "value": value}
            for result in runs.results for name, value in _figures(result).items() if value is not None]
