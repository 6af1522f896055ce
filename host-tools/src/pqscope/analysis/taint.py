"""`pqscope taint`: the exact constant-time check on the virtual board. The emulator tracks the
secret key (the harness marks it before each timed signature, firmware/include/pqscope/taint.h)
through every executed instruction of the signature and reports each one whose timing on the
Cortex-M4 can depend on it (docs/pages/virtual-board.md, "Secret-taint tracking"); this module runs a few
signatures under it and names each finding's function and source line from the image."""

import csv
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ..link.protocol import Status
from ..measure.capture import Capture, Finished, shard_directories
from ..project.catalogue import Declassification, Implementation
from ..project.elf import Symbolizer, read_symbols
from ..project.errors import PqscopeError
from ..project.paths import repo_root
from ..project.toolchain import built_with
from ..results.records import INTERVAL_FUNCTION, KEYGEN_ID_BASE, derive_seed
from ..results.rundir import csv_lines, sort_by_sample, write_atomically
from ..targets.target import Tainting

LEAK_KINDS = ("branch", "jump", "division")

EXACT_CHECK_SIGNATURES = 2  # the exact check's default: each signature's path is checked whole


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
    within: str | None = None  # made inside a call of this function, declared to work on masked values
    taken: int | None = None  # a branch's executions that went the taken way (None: not a branch, or an older check)

    @property
    def one_way(self) -> bool:
        """A branch that went the same way every time it ran: its condition depends on a secret,
        but the secrets it saw never changed the path (a latent leak, no timing difference yet)."""
        return self.taken is not None and self.taken in (0, self.count)

    @property
    def leak(self) -> bool:
        """A timing difference on this board from a secret nobody declared public."""
        return self.kind in LEAK_KINDS and not self.declassified

    def to_json(self) -> dict:
        return {**asdict(self), "address": f"0x{self.address:08x}", "declassified_by": list(self.declassified_by),
                "leak": self.leak}


# The emulator's option for each kind of declassification it applies to values.
EMULATOR_OPTIONS = {"secret_bytes": "--taint-public-secret-bytes", "argument": "--taint-public-argument",
                    "return": "--taint-public-return", "within": "--taint-public-within"}
DECISION_KINDS = ("branch", "select")


def emulator_options(declassify: tuple[Declassification, ...], elf: Path | None = None) -> tuple[str, ...]:
    """The emulator's options that declare the implementation's published values public; a
    `within` limited to call sites (`lines`) gets their code ranges in `elf`."""
    names = Symbolizer(elf) if elf and any(item.kind == "within" and item.lines for item in declassify) else None
    return tuple(arg for item in declassify if item.kind in EMULATOR_OPTIONS
                 for arg in (EMULATOR_OPTIONS[item.kind],
                             _within_sites(item, names, elf) if item.kind == "within" and item.lines else item.what))


def _within_sites(item: Declassification, names: "Symbolizer", elf: Path) -> str:
    """NAME@LO-HI,...: the code of the call sites at `item.lines` (file:line, by basename)."""
    ranges = [(lo, hi) for place in item.lines for lo, hi in names.code_of(place)]
    missing = [place for place in item.lines if not names.code_of(place)]
    if missing:
        raise PqscopeError(f"the catalogue limits {item.what}'s masked calls to {', '.join(missing)}, which has no "
                           f"code in {elf}")
    return f"{item.what}@" + ",".join(f"{lo:x}-{hi:x}" for lo, hi in ranges)


def _unclone(function: str | None) -> str | None:
    """A function's name without the suffix of a GCC clone (sign_512.constprop.0 is sign_512)."""
    return function.split(".")[0] if function else function


def attribute(findings: list[Finding], declassify: tuple[Declassification, ...]) -> list[Finding]:
    """Each finding with the declassifications behind it: a branch that a public decision takes
    (the catalogue's decision functions, or GCC's clones of them; or the decisions at the source
    lines it names, in whatever function a compiler inlined them) becomes declassified; one made
    inside a masked computation is credited to the `within` declassification of the function whose
    call it was in; one the emulator found caused only by declared-public values is credited to
    the value declassifications of its own function if there are some, else to all of them (the
    emulator does not say which value it was)."""
    values = [item for item in declassify if item.kind in EMULATOR_OPTIONS and item.kind != "within"]
    masked: dict[str, list[str]] = {}
    for item in declassify:
        if item.kind == "within":
            masked.setdefault(_unclone(item.function), []).append(item.reason)
    attributed = []
    for finding in findings:
        place = f"{Path(finding.file or '').name}:{finding.line}"
        decisions = [item.reason for item in declassify if item.kind == "decision" and finding.kind in DECISION_KINDS
                     and _decides(item, place, _unclone(finding.function or ""))]
        if decisions:
            finding = replace(finding, declassified=True, declassified_by=tuple(dict.fromkeys(decisions)))
        elif finding.within:
            finding = replace(finding, declassified_by=tuple(dict.fromkeys(masked[_unclone(finding.within)])))
        elif finding.declassified:
            own = [item.reason for item in values if item.function == finding.function]
            finding = replace(finding, declassified_by=tuple(dict.fromkeys(own or [item.reason for item in values])))
        attributed.append(finding)
    return attributed


def _decides(item: Declassification, place: str, function: str) -> bool:
    """Whether a decision declassification covers a finding at `place` in `function`: at one of
    its lines (any function: a compiler may inline them), or at a line 0 it names (code a compiler
    gave no source line, which says nothing of where it came from) in its own function only, or
    anywhere in its function when it names no lines."""
    if not item.lines:
        return function == item.function
    return place in item.lines and (not place.endswith(":0") or function == item.function)


def check_decisions(declassify: tuple[Declassification, ...], elf: Path) -> None:
    """A decision names a function of the image (or one GCC cloned), or source lines the image has
    code for (their function may be inlined): else it would declassify nothing, silently. (The
    emulator refuses a value declassification's unknown function.)"""
    present = {_unclone(symbol.name) for symbol in read_symbols(elf) if symbol.function}
    missing = sorted({item.function for item in declassify if item.kind == "decision" and not item.lines} - present)
    if missing:
        raise PqscopeError(f"the catalogue declassifies decisions of {', '.join(missing)}, which {elf} lacks")
    # Line 0 is code a compiler gave no line: its function is what must be there.
    places = [place for item in declassify if item.kind == "decision" for place in item.lines
              if not place.endswith(":0")]
    lineless = sorted({item.function for item in declassify if item.kind == "decision"
                       and any(place.endswith(":0") for place in item.lines)} - present)
    if lineless:
        raise PqscopeError(f"the catalogue declassifies line-0 decisions of {', '.join(lineless)}, which {elf} lacks")
    if places:
        names = Symbolizer(elf)
        nowhere = [place for place in places if not names.code_of(place)]
        if nowhere:
            raise PqscopeError(f"the catalogue declassifies decisions at {', '.join(nowhere)}, where {elf} has no code")


# The emulator's regions in its order (an address finding per region, in this order).
REGIONS = ("sram", "ccm", "flash", "peripheral")
CALLS_FILE = "taint-calls.jsonl"
TAINT_FIELDS = ("index", "seed", "status", "board", "cycles")
STATUS_BY_LABEL = {status.label: status for status in Status}


@dataclass(frozen=True)
class TaintSignature:
    """One signature the exact check followed: signed with key `index`, from `seed`."""

    index: int
    seed: bytes
    status: Status
    board: str = ""  # the serial number of the board that signed it (INFO.board_serial)
    cycles: int | None = None  # its signing time (model cycles: tracking the key costs none); None in older checks

    def values(self) -> tuple:
        return self.index, self.seed.hex(), self.status.label, self.board, "" if self.cycles is None else self.cycles


def _lines(calls: Path) -> list[dict]:
    """The emulator's per-signature lines in `calls`; a line cut short by a kill is left out."""
    lines = []
    for text in calls.read_text().splitlines(keepends=True):
        if not text.endswith("\n"):
            continue
        try:
            line = json.loads(text)
        except ValueError:
            line = None
        if not isinstance(line, dict) or not isinstance(line.get("sample_id"), int):
            raise PqscopeError(f"{calls} is damaged: a line that is not a signature's findings ({text.strip()[:60]})")
        lines.append(line)
    return lines


def _calls(path: Path) -> dict[int, dict]:
    """Every shard's per-signature lines (CALLS_FILE) of the check at `path`, by sample id."""
    return {line["sample_id"]: line for directory in shard_directories(path)
            if (directory / CALLS_FILE).exists() for line in _lines(directory / CALLS_FILE)}


def _keep_signatures(path: Path, samples_name: str, master_seed: bytes, samples: int) -> list[TaintSignature]:
    """The signatures a resumed check keeps: those in its CSV whose emulator line was written
    (the CSV and every shard's line file are written back with just those, atomically)."""
    csv_path = path / samples_name
    lines = csv_path.read_text().splitlines(keepends=True) if csv_path.exists() else []
    rows = list(csv.reader(line for line in lines[1:] if line.endswith("\n")))
    calls = _calls(path)
    kept = {}
    for number, row in enumerate(rows, start=2):
        try:
            index, seed, status, board, *cycles = row  # no cycles in checks before they were kept
            signature = TaintSignature(int(index), bytes.fromhex(seed), STATUS_BY_LABEL[status], board,
                                       int(cycles[0]) if cycles and cycles[0] else None)
        except (ValueError, KeyError) as error:
            raise PqscopeError(f"{csv_path} is damaged at line {number}: {error}") from None
        if not 0 <= signature.index < samples or signature.seed != derive_seed(master_seed, "sign", signature.index):
            raise PqscopeError(f"{csv_path} does not belong to this check: line {number} is not a signature of "
                               "meta.json's master seed and -n")
        if signature.index in calls:
            kept[signature.index] = signature
    for directory in shard_directories(path):
        if (directory / CALLS_FILE).exists():
            own = [line for line in _lines(directory / CALLS_FILE) if line["sample_id"] in kept]
            write_atomically(directory / CALLS_FILE, "".join(json.dumps(line) + "\n" for line in own))
    ordered = [kept[index] for index in sorted(kept)]
    write_atomically(csv_path, csv_lines([TAINT_FIELDS, *(s.values() for s in ordered)]) if ordered else "")
    return ordered


class TaintCapture(Capture):
    """The exact check's signatures (`pqscope taint`, and `pqscope ct --taint` beside the test):
    each signed with a fresh key of its own, the key tainted, every instruction followed by the
    emulator; taint.csv holds one row per signature, CALLS_FILE each one's findings."""

    kind, unit, samples_name, fields, view = "taint", "signatures", "taint.csv", TAINT_FIELDS, "taint"

    @classmethod
    def from_meta(cls, meta) -> "TaintCapture":
        return cls(meta.samples, meta.seed, meta.msg_len)

    def label(self, implementation: Implementation) -> str:
        return f"taint {super().label(implementation)}"

    def instrumented(self, target) -> bool:
        if not target.taints:
            raise PqscopeError(f"board {target.board.name} cannot track the key through its instructions: taint runs "
                               "on the virtual board (--board virtual)")
        return True

    def check_image(self, implementation: Implementation, elf: Path) -> None:
        check_decisions(implementation.declassify, elf)
        self._emulator_options = emulator_options(implementation.declassify, elf)

    def profiling(self, implementation: Implementation, directory: Path) -> Tainting:
        return Tainting(directory / CALLS_FILE, INTERVAL_FUNCTION, self._emulator_options)

    def keep(self, path: Path, profiled: bool) -> list[TaintSignature]:
        return _keep_signatures(path, self.samples_name, self.master_seed, self.samples)

    def records(self, session, info, kept, shard) -> Iterator[TaintSignature]:
        done = {signature.index for signature in kept}
        for index in range(self.samples):
            if index in done or not shard.owns(index):
                continue
            made = session.keygen_slot(0, derive_seed(self.master_seed, "key", index), KEYGEN_ID_BASE + index)
            if made.status != Status.OK:
                raise PqscopeError(f"key generation {index} failed on the device ({made.status.label})")
            seed = derive_seed(self.master_seed, "sign", index)
            signed = session.sign_slot(0, seed, self.msg_len, index)
            if signed.status != Status.OK:
                raise PqscopeError(f"signature {index} failed on the device ({signed.status.label})")
            yield TaintSignature(index, seed, signed.status, info.board_serial, signed.cycles)

    def write(self, run_dir, record: TaintSignature) -> None:
        run_dir.write_record(record.values())

    def finish(self, implementation, path, records, meta, profiled) -> Finished:
        calls = _calls(path)
        missing = [record.index for record in records if record.index not in calls]
        if missing:
            raise PqscopeError(f"the emulator wrote no findings for signature {missing[0]}: its check would be lost")
        ordered = sorted(records, key=lambda record: record.index)
        lines = [calls[record.index] for record in ordered]
        findings = attribute(_named(_merged(lines), Path(meta.elf), repo_root()), implementation.declassify)
        sort_by_sample(path / self.samples_name)
        return Finished({
            "scheme": implementation.scheme, "impl": implementation.impl, "board": meta.board,
            "built_with": built_with(meta.toolchain, meta.build), "signatures": len(lines),
            "instructions": sum(line["instructions"] for line in lines),
            "sign_cycles": [record.cycles for record in ordered],
            "verdict": "leak" if any(f.leak for f in findings) else "no-leak",
            "declassifications": [item.to_json() for item in implementation.declassify],
            # one path per signature: how much code each one reached that no earlier one had
            "coverage": _coverage(lines), "findings": [finding.to_json() for finding in findings]})


def _merged(lines: list[dict]) -> list[dict]:
    """The signatures' findings together: per instruction, kind, masked call or not and region, the
    executions summed, declassified only if it was in every signature; in the emulator's order."""
    merged: dict[tuple, dict] = {}
    for line in lines:
        for raw in line["findings"]:
            key = (int(raw["address"], 16), raw["kind"], int(raw.get("within", "0"), 16),
                   REGIONS.index(raw["region"]) if raw.get("region") else -1)
            entry = merged.setdefault(key, {**raw, "count": 0, "declassified": True, "taken": 0})
            entry["count"] += raw["count"]
            entry["declassified"] &= raw["declassified"]
            # a branch's taken executions, unless a signature's emulator did not count them (older)
            entry["taken"] = None if entry["taken"] is None or "taken" not in raw else entry["taken"] + raw["taken"]
    return [merged[key] for key in sorted(merged)]


def _coverage(lines: list[dict]) -> dict:
    """Distinct instructions the signatures ran, and per signature those no earlier one ran (each
    emulator lists what it ran first: a resumed check's new emulator starts from nothing)."""
    seen: set[int] = set()
    new = []
    for line in lines:
        first = set(line["covered"]) - seen
        new.append(len(first))
        seen |= first
    return {"instructions": len(seen), "new_instructions": new}


def _named(raw_findings: list[dict], elf: Path, root: Path) -> list[Finding]:
    """The emulator's findings, each named from `elf` (source files inside the repository `root`
    relative to it)."""
    names = Symbolizer(elf, [int(raw["address"], 16) for raw in raw_findings])
    findings = []
    for raw in raw_findings:
        address = int(raw["address"], 16)
        file, line = names.line(address)
        if file is not None and file.startswith(f"{root}/"):
            file = file[len(f"{root}/"):]
        findings.append(Finding(raw["kind"], address, raw["count"], raw["declassified"], raw.get("region"),
                                names.function(address), file, line,
                                within=names.function(int(raw["within"], 16)) if raw.get("within") else None,
                                taken=raw.get("taken")))
    return findings
