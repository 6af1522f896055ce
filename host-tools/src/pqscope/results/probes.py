"""On-device probes: the cycles and calls of named functions within each timed operation, measured
by the board itself (firmware/PROTOCOL.md, "Probes"), as CSV columns and as the per-function
profile the constant-time analysis reads.

A probe's cycles are inclusive (the function and everything it calls), with the probes' own cost
taken out by the device; `calls` counts every call. The image's set of probes (meta.json's
"probes") is documents.runs.ProbeSet."""

import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..link.messages import ProbeReading
from ..project.elf import read_symbols
from ..project.errors import PqscopeError
from .documents.runs import ProbeSet

COLUMN_PREFIX = "probe:"


def probe_columns(names: Sequence[str]) -> tuple[str, ...]:
    return tuple(f"{COLUMN_PREFIX}{name}:{what}" for name in names for what in ("cycles", "calls"))


def probe_values(readings: Sequence[ProbeReading]) -> tuple[int, ...]:
    return tuple(value for reading in readings for value in (reading.cycles, reading.calls))


def readings_from_values(values: Sequence[str]) -> tuple[ProbeReading, ...]:
    return tuple(ProbeReading(int(values[i]), int(values[i + 1])) for i in range(0, len(values), 2))


def names_from_columns(columns: Sequence[str]) -> tuple[str, ...]:
    """The probe names of the columns after a CSV's fixed ones; ValueError if they are not
    probe columns in pairs."""
    names = tuple(column[len(COLUMN_PREFIX):-len(":cycles")] for column in columns[::2])
    if tuple(columns) != probe_columns(names):
        raise ValueError(f"columns {','.join(columns)} are not probe:<name>:cycles,probe:<name>:calls pairs")
    return names


def probe_inflation(probes: ProbeSet, readings: Sequence[Sequence[ProbeReading]], totals: Sequence[int]) -> dict:
    """What the probes added to the operations' totals, on average (meta.json and the reports)."""
    mean_total = sum(totals) / len(totals) if totals else 0
    mean = sum(probes.inflation(r) for r in readings) / len(readings) if readings else 0.0
    return {"mean_cycles": mean, "share_of_total": mean / mean_total if mean_total else None}


def check_probes(names: Sequence[str], wanted: Sequence[str], image: str) -> None:
    """The image must probe every function the analysis needs (`wanted`)."""
    missing = [name for name in wanted if name not in names]
    if missing:
        raise PqscopeError(f"{image} does not probe {', '.join(missing)}: build it with `--probe` for each, "
                           f"or let the catalogue row name them")


def probe_profile(names: Sequence[str], readings: Sequence[ProbeReading], public_functions: Sequence[str],
                  public_time: str) -> dict:
    """One operation's probes in the shape of the emulator's interval profile: {"functions":
    {name: (cycles, calls)}}, the public-input functions' cycles summed under `public_time`."""
    functions = {name: (reading.cycles, reading.calls) for name, reading in zip(names, readings, strict=True)
                 if name not in public_functions}
    public = sum(reading.cycles for name, reading in zip(names, readings) if name in public_functions)
    if public_functions:
        functions[public_time] = (public, 0)
    return {"functions": functions}


def _function_symbols(elf: Path) -> dict[str, tuple[str, int]]:
    """Function name -> its symbol binding (STB_GLOBAL, STB_WEAK, STB_LOCAL) and address (without
    the Thumb bit) in the image."""
    return {symbol.name: (symbol.binding, symbol.address) for symbol in read_symbols(elf) if symbol.function}


def probes_timing(functions: Iterable[str], names: Sequence[str], elf: Path) -> dict[str, tuple[str, int]]:
    """The probe among the image's `names` that times each of `functions` on the device, and its
    position among them: the function's own, or one of another name at its address (the profiler
    names libgcc's code `__muldf3`, its callers call it `__aeabi_dmul`, which a probe can wrap)."""
    symbols = _function_symbols(elf)
    by_address = {symbols[name][1]: (name, position) for position, name in enumerate(names) if name in symbols}
    return {function: by_address[symbols[function][1]] for function in functions
            if function in symbols and symbols[function][1] in by_address}


def confirmation(leaking: Sequence[str], probed: Sequence[str], elf: Path, board: str, selection: Sequence[str]) -> dict:
    """How to confirm the profiler's localisation on a real board: the leaking functions a probe can
    time (global functions: linker wrapping reaches only calls across object files), those it
    cannot (static ones: probe a caller instead), and the command line that runs the test there."""
    symbols = _function_symbols(elf)
    probeable = [name for name in leaking if symbols.get(name, ("",))[0] in ("STB_GLOBAL", "STB_WEAK")]
    unreachable = [{"function": name, "why": "static in its file: a probe cannot reach it, probe a caller"
                    if name in symbols else "not a function of the image"}
                   for name in leaking if name not in probeable]
    extra = [name for name in probeable if name not in probed]
    command = ["host-tools/pqscope", "ct", "--board", board, "--port", "/dev/ttyUSB0", *selection, "--probes",
               *(arg for name in extra for arg in ("--probe", name))]
    return {"probes": probeable, "not_probeable": unreachable, "command": shlex.join(command)}
