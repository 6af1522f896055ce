"""`pqscope taint`: the exact constant-time check on the virtual board. The emulator tracks the
secret key (the harness marks it before each timed signature, firmware/include/pqscope/taint.h)
through every executed instruction of the signature and reports each one whose timing on the
Cortex-M4 can depend on it (boards/virtual/README.md, --taint); this module runs a few
signatures under it and names each finding's function and source line from the image."""

import bisect
import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from rich.console import Console

from .boards import Board
from .catalogue import Declassification, Implementation
from .ct import INTERVAL_FUNCTION, KEYGEN_ID_BASE, derive_seed
from .errors import PqscopeError
from .protocol import Status
from .report import taint_page
from .rundir import write_atomically
from .targets import VirtualTarget

TAINT_FILE = "taint.json"
FORMAT = "pqscope-vboard-taint"
# What each kind of finding means on this board (24 MHz, 0 flash wait states, no cache).
KINDS = {
    "branch": "a branch or conditional on the secret: the path, and so the time, depends on it",
    "jump": "a jump to an address computed from the secret",
    "division": "UDIV/SDIV with a secret operand: 2-12 cycles, depending on the operands",
    "address": "a memory access at an address computed from the secret: constant time on this board (no "
               "cache, no wait states), a leak where memory timing varies (caches, flash wait states)",
    "select": "an IT block on the secret whose instructions each take one cycle, executed or skipped: a "
              "constant-time select",
}
LEAK_KINDS = ("branch", "jump", "division")


@dataclass(frozen=True)
class Finding:
    kind: str
    address: int
    count: int
    declassified: bool  # caused only by values or decisions the scheme publishes (declared public)
    region: str | None  # memory hit by an "address" finding
    function: str | None
    file: str | None
    line: int | None
    declassified_by: tuple[str, ...] = ()  # the catalogue's reasons that declassified it

    @property
    def leak(self) -> bool:
        """A timing difference on this board from a secret nobody declared public."""
        return self.kind in LEAK_KINDS and not self.declassified

    def to_json(self) -> dict:
        return {**asdict(self), "address": f"0x{self.address:08x}", "declassified_by": list(self.declassified_by),
                "leak": self.leak}


# The emulator's option for each kind of declassification it applies to values.
EMULATOR_OPTIONS = {"secret_bytes": "--taint-public-secret-bytes", "argument": "--taint-public-argument",
                    "return": "--taint-public-return"}
DECISION_KINDS = ("branch", "select")


def emulator_options(declassify: tuple[Declassification, ...]) -> tuple[str, ...]:
    """The emulator's options that declare the implementation's published values public."""
    return tuple(arg for item in declassify if item.kind in EMULATOR_OPTIONS
                 for arg in (EMULATOR_OPTIONS[item.kind], item.what))


def _unclone(function: str | None) -> str | None:
    """A function's name without the suffix of a GCC clone (sign_512.constprop.0 is sign_512)."""
    return function.split(".")[0] if function else function


def attribute(findings: list[Finding], declassify: tuple[Declassification, ...]) -> list[Finding]:
    """Each finding with the declassifications behind it: a branch that a public decision takes
    (the catalogue's decision functions, or GCC's clones of them, at their lines if it names some)
    becomes declassified;
    one the emulator found caused only by declared-public values is credited to the value
    declassifications of its own function if there are some, else to all of them (the emulator
    does not say which value it was)."""
    values = [item for item in declassify if item.kind in EMULATOR_OPTIONS]
    attributed = []
    for finding in findings:
        decisions = [item.reason for item in declassify if item.kind == "decision"
                     and finding.kind in DECISION_KINDS and _unclone(finding.function) == item.function
                     and (not item.lines or f"{Path(finding.file or '').name}:{finding.line}" in item.lines)]
        if decisions:
            finding = replace(finding, declassified=True, declassified_by=tuple(dict.fromkeys(decisions)))
        elif finding.declassified:
            own = [item.reason for item in values if item.function == finding.function]
            finding = replace(finding, declassified_by=tuple(dict.fromkeys(own or [item.reason for item in values])))
        attributed.append(finding)
    return attributed


class Symbolizer:
    """Function and source line of code addresses in an ELF (its symbol table and DWARF lines)."""

    def __init__(self, elf: Path):
        try:
            with elf.open("rb") as stream:
                image = ELFFile(stream)
                symbols = image.get_section_by_name(".symtab")
                functions = sorted((symbol["st_value"] & ~1, symbol["st_size"], symbol.name)
                                   for symbol in (symbols.iter_symbols() if symbols else ())
                                   if symbol["st_info"]["type"] == "STT_FUNC" and symbol["st_size"])
                self._lines = self._line_table(image) if image.has_dwarf_info() else []
        except (OSError, ELFError) as error:
            raise PqscopeError(f"cannot read {elf}: {error}") from None
        self._starts = [start for start, _, _ in functions]
        self._functions = functions
        self._line_starts = [address for address, _, _ in self._lines]

    @staticmethod
    def _line_table(image: ELFFile) -> list[tuple[int, str, int]]:
        rows = []
        dwarf = image.get_dwarf_info()
        for unit in dwarf.iter_CUs():
            program = dwarf.line_program_for_CU(unit)
            if program is None:
                continue
            files = program["file_entry"]
            directories = program["include_directory"]
            version = program["version"]
            for entry in program.get_entries():
                state = entry.state
                if state is None or state.end_sequence:
                    continue
                index = state.file if version >= 5 else state.file - 1
                if not 0 <= index < len(files):
                    continue
                name = files[index].name.decode(errors="replace")
                directory = files[index].dir_index if version >= 5 else files[index].dir_index - 1
                if 0 <= directory < len(directories) and not name.startswith("/"):
                    name = f"{directories[directory].decode(errors='replace')}/{name}"
                rows.append((state.address, name, state.line))
        return sorted(rows)

    def function(self, address: int) -> str | None:
        at = bisect.bisect_right(self._starts, address) - 1
        if at >= 0:
            start, size, name = self._functions[at]
            if address < start + size:
                return name
        return None

    def line(self, address: int) -> tuple[str | None, int | None]:
        at = bisect.bisect_right(self._line_starts, address) - 1
        if at < 0:
            return None, None
        _, name, line = self._lines[at]
        return name, line


def check_decisions(declassify: tuple[Declassification, ...], elf: Path) -> None:
    """A decision names a function of the image (or one GCC cloned): else it would declassify
    nothing, silently. (The emulator refuses a value declassification's unknown function.)"""
    try:
        with elf.open("rb") as stream:
            symbols = ELFFile(stream).get_section_by_name(".symtab")
            present = {_unclone(symbol.name) for symbol in (symbols.iter_symbols() if symbols else ())
                       if symbol["st_info"]["type"] == "STT_FUNC"}
    except (OSError, ELFError) as error:
        raise PqscopeError(f"cannot read {elf}: {error}") from None
    missing = sorted({item.function for item in declassify if item.kind == "decision"} - present)
    if missing:
        raise PqscopeError(f"the catalogue declassifies decisions of {', '.join(missing)}, which {elf} lacks")


def read_findings(path: Path, elf: Path, root: Path) -> tuple[dict, list[Finding]]:
    """The emulator's taint document and its findings, each named from `elf` (source files
    inside the repository `root` relative to it)."""
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise PqscopeError(f"cannot read the emulator's taint findings {path}: {error}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise PqscopeError(f"{path} is not the emulator's taint findings (format {FORMAT})")
    names = Symbolizer(elf)
    findings = []
    for raw in document.get("findings", []):
        address = int(raw["address"], 16)
        file, line = names.line(address)
        if file is not None and file.startswith(f"{root}/"):
            file = file[len(f"{root}/"):]
        findings.append(Finding(raw["kind"], address, raw["count"], raw["declassified"], raw.get("region"),
                                names.function(address), file, line))
    return document, findings


def check_signatures(root: Path, board: Board, implementation: Implementation, signatures: int, master_seed: bytes,
                     msg_len: int, out: Path, console: Console) -> dict:
    """Signs `signatures` messages, each with a fresh key, on the virtual `board` with the key
    tainted; writes taint.json (the findings) into `out` and returns its document."""
    out.mkdir(parents=True, exist_ok=True)
    raw_path = out / "vboard-taint.json"
    target = VirtualTarget(root, board, emulator_args=("--taint", str(raw_path), "--taint-function", INTERVAL_FUNCTION,
                                                       *emulator_options(implementation.declassify)))
    image = target.image(implementation, console)
    check_decisions(implementation.declassify, image.elf)
    with target.connect(image.elf, console, stats_dir=out) as connection:
        session = connection.session
        session.hello()
        for index in range(signatures):
            made = session.keygen_slot(0, derive_seed(master_seed, "key", index), KEYGEN_ID_BASE + index)
            if made.status != Status.OK:
                raise PqscopeError(f"key generation {index} failed on the device ({made.status.label})")
            signed = session.sign_slot(0, derive_seed(master_seed, "sign", index), msg_len, index)
            if signed.status != Status.OK:
                raise PqscopeError(f"signature {index} failed on the device ({signed.status.label})")
    document, findings = read_findings(raw_path, image.elf, root)
    findings = attribute(findings, implementation.declassify)
    result = {"scheme": implementation.scheme, "impl": implementation.impl, "board": "virtual",
              "signatures": document["calls"], "instructions": document["instructions"],
              "verdict": "leak" if any(f.leak for f in findings) else "no-leak",
              "declassifications": [item.to_json() for item in implementation.declassify],
              # one path per signature: how much code each one reached that no earlier one had
              "coverage": {"instructions": sum(document["coverage"]), "new_instructions": document["coverage"]},
              "findings": [finding.to_json() for finding in findings]}
    write_atomically(out / TAINT_FILE, json.dumps(result, indent=2) + "\n")
    write_atomically(out / "report.html", taint_page(result))
    return result
