"""The exact check's findings: the instructions whose timing the secret key can change (taint.json's
`Finding`s), the signatures' findings merged and named from the image (function and source line), and the
catalogue's declassifications applied to them: the emulator's options that declare published
values public, the check that each decision names code of the image, and the findings each one
declassifies."""

from dataclasses import replace
from pathlib import Path

from ..project.catalogue import Declassification
from ..project.elf import Symbolizer, read_symbols
from ..project.errors import PqscopeError
from ..results.documents.profile import CheckedSignature, RawFinding
from ..results.documents.taint import LEAK_KINDS, Finding

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


# The functions a signature enters by (the harness calls the scheme's API): never set apart whole,
# which would take the whole signature out of the test.
SIGNING_ENTRIES = ("crypto_sign_signature", "crypto_sign_signature_ctx", "crypto_sign")


def public_code(findings: tuple[Finding, ...], declassify: tuple[Declassification, ...],
                kept: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The functions whose time the exact check shows to follow declared-public values only (issue
    #54): each decides on a value the scheme publishes (a public part of the key, a published
    argument or result: a declassified timing finding no decision declassification made), and
    holds no other finding: none on a secret, none inside a masked call, none a public decision
    (a rejection loop's, whose rate the attempts correction takes). A statistics test may set
    their time apart as public. Never a signing entry or a function in `kept` (the retry function,
    whose calls count the attempts)."""
    by_function: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.function:
            by_function.setdefault(finding.function, []).append(finding)

    def decided(finding: Finding) -> bool:
        place = f"{Path(finding.file or '').name}:{finding.line}"
        return finding.kind in DECISION_KINDS and any(
            item.kind == "decision" and _decides(item, place, _unclone(finding.function)) for item in declassify)

    def public(finding: Finding) -> bool:
        return finding.declassified and not finding.within and not decided(finding)

    def entry(name: str) -> bool:
        return any(_unclone(name) == each or _unclone(name).endswith(f"_{each}") for each in SIGNING_ENTRIES)

    return tuple(name for name, inside in by_function.items()
                 if name not in kept and not entry(name) and all(map(public, inside))
                 and any(finding.kind in LEAK_KINDS or finding.timed for finding in inside))


def derives_public_code(declassify: tuple[Declassification, ...]) -> bool:
    """Whether `public_code` can find any function of a row with these declassifications: only a
    declassified value (a public part of the key, argument or result) makes a finding public; a
    decision's findings are decided, a masked call's within."""
    return any(item.kind not in ("decision", "within") for item in declassify)


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


def merged_findings(lines: list[CheckedSignature]) -> list[RawFinding]:
    """The signatures' findings together: per instruction, kind, masked call or not, region and
    whether its load time followed the address (flash behind wait states), the executions summed,
    declassified only if it was in every signature, a branch's taken executions summed unless a
    signature's emulator did not count them (older); in the emulator's order."""
    merged: dict[tuple, list[RawFinding]] = {}
    for line in lines:
        for raw in line.findings:
            key = (raw.address, raw.kind, raw.within or 0, REGIONS.index(raw.region) if raw.region else -1, raw.timed)
            merged.setdefault(key, []).append(raw)
    return [replace(same[0], count=sum(raw.count for raw in same), declassified=all(raw.declassified for raw in same),
                    taken=None if any(raw.taken is None for raw in same) else sum(raw.taken for raw in same),
                    outcome_digest=None, outcomes=None)  # each signature's own: compared by taint_relational
            for same in (merged[key] for key in sorted(merged))]


def named_findings(raw_findings: list[RawFinding], elf: Path, root: Path) -> list[Finding]:
    """The emulator's findings, each named from `elf` (source files inside the repository `root`
    relative to it)."""
    names = Symbolizer(elf, [raw.address for raw in raw_findings])
    findings = []
    for raw in raw_findings:
        file, line = names.line(raw.address)
        if file is not None and file.startswith(f"{root}/"):
            file = file[len(f"{root}/"):]
        findings.append(Finding(raw.kind, raw.address, raw.count, raw.declassified, raw.region,
                                names.function(raw.address), file, line,
                                within=None if raw.within is None else names.function(raw.within), taken=raw.taken,
                                timed=raw.timed))
    return findings
