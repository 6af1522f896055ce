"""The emulator's records, a JSON line per signature: the virtual board's profiler's signing
intervals (intervals.jsonl: `ProfiledInterval`) and the exact check's findings per signature
(taint-calls.jsonl: `CheckedSignature`), each read once where its file is read (`json_lines`)."""

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ...project.errors import PqscopeError
from .parsing import DAMAGE, optional

Record = TypeVar("Record")


@dataclass(frozen=True)
class FunctionTime:
    """A function's time in one signature: its cycles (the profiler's: its own, without its
    callees'; a probe's: its calls' whole), its calls, (the profiler's) its cycles with its
    callees' (None: a probe's reading) and how often an exception returned into it (where an
    interrupt lands moves a few cycles of the block it resumes: its own time then says nothing
    of the secrets)."""

    cycles: int
    calls: int
    inclusive_cycles: int | None = None
    interrupts: int = 0


@dataclass(frozen=True)
class ProfiledInterval:
    """One signature's interval, a line of the virtual board's intervals.jsonl (the profiler's
    signing interval), or its probes' readings in the same shape (`results.probes.probe_profile`)."""

    sample_id: int | None  # None: an emulator that wrote no ids (joined by position)
    cycles: int | None  # the whole signature's (None: a probe's profile)
    functions: dict[str, FunctionTime]  # by name

    @classmethod
    def from_json(cls, data: dict) -> "ProfiledInterval":
        sample_id = data.get("sample_id")
        if sample_id is not None and not isinstance(sample_id, int):
            raise ValueError(f"its sample id is {sample_id!r}")
        return cls(sample_id, data.get("cycles"),
                   {name: FunctionTime(*times) for name, times in data.get("functions", {}).items()})

    def function(self, name: str) -> FunctionTime:
        """`name`'s time; a function the signature did not run took none."""
        return self.functions.get(name, NOT_RUN)


NOT_RUN = FunctionTime(0, 0, 0)


def identified(data: dict) -> ProfiledInterval:
    """An interval that names its signature (a resumed test's, the replay's: joined by id)."""
    interval = ProfiledInterval.from_json(data)
    if interval.sample_id is None:
        raise ValueError("it has no sample id")
    return interval


@dataclass(frozen=True)
class RawFinding:
    """An instruction whose timing a secret can change, as the emulator reports it for one
    signature (or merged over several): by address, not yet named from the image."""

    kind: str
    address: int
    count: int  # its executions
    declassified: bool  # caused only by values declared public
    region: str | None = None  # memory hit by an "address" finding
    within: int | None = None  # the address of the masked function whose call it was made in
    taken: int | None = None  # a branch's executions that went the taken way (None: not counted)
    timed: bool = False  # an "address" finding in flash whose load time followed the address (the ART at 168 MHz)
    # What its executions did in one signature, in order (the emulator's outcomes, taint.h): a digest
    # of them all and their first runs, (outcome, repeat) each. None: merged, or an older emulator.
    outcome_digest: str | None = None
    outcomes: tuple[tuple[int, int], ...] | None = None

    @property
    def place(self) -> tuple:
        """What makes it one finding: its instruction, kind, masked call, memory region and timing."""
        return self.address, self.kind, self.within or 0, self.region, self.timed

    @classmethod
    def from_json(cls, data: dict) -> "RawFinding":
        return cls(data["kind"], int(data["address"], 16), data["count"], data["declassified"], data.get("region"),
                   int(data["within"], 16) if data.get("within") else None, data.get("taken"),
                   data.get("timed", False), data.get("outcome_digest"),
                   optional(data, "outcomes", lambda runs: tuple((value, repeat) for value, repeat in runs)))


@dataclass(frozen=True)
class CheckedSignature:
    """One signature the exact check followed, a line of taint-calls.jsonl: the emulator's
    findings, the instructions it executed and the addresses of those it covered."""

    sample_id: int
    findings: tuple[RawFinding, ...]
    instructions: int
    covered: tuple[int, ...]

    @classmethod
    def from_json(cls, data: dict) -> "CheckedSignature":
        if not isinstance(data.get("sample_id"), int):
            raise ValueError("it has no sample id")
        return cls(data["sample_id"], tuple(map(RawFinding.from_json, data["findings"])), data["instructions"],
                   tuple(data["covered"]))


def json_lines(file: Path, parse: Callable[[dict], Record], what: str) -> Iterator[tuple[str, Record]]:
    """Each line of the JSON-lines `file` and its record (`parse` of it); a line cut short (the last,
    by a kill, or still being written) is left out. A damaged line is an error naming the file and
    its line: it is not `what`."""
    for number, text in enumerate(file.read_text().splitlines(keepends=True), start=1):
        if not text.endswith("\n"):
            break
        try:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise ValueError("no JSON object")
            yield text, parse(data)
        except DAMAGE as error:
            raise PqscopeError(f"{file} is damaged at line {number}: it is not {what} ({error}: "
                               f"{text.strip()[:60]})") from None
