"""The main job's answer (`pqscope run` without --scheme): the default suite's cycles and stack,
then each member's signing tested for constant time with all the evidence its target gives (the
exact check and statistics on the virtual board; statistics, and the replay's exact check, on a
board), gathered into one document: the figures, each verdict with what decided it, where the
signing time varies and why, Falcon's floating-point modes side by side, and a summary in words.

The document is made from what the suite directory keeps (its runs, each member's constant-time
test in `<member>/ct/`), so `pqscope report` of a suite makes it again."""

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..analysis.replay import REPLAY_DIRECTORY
from ..analysis.taint import EXACT_CHECK_SIGNATURES
from ..link.protocol import Op
from ..measure.measurement import Member
from ..project.errors import PqscopeError
from ..results import store
from ..results.documents.ct import CtDocument
from ..results.documents.profile import ProfiledInterval
from ..results.documents.runs import EmulatorStats, OpResult
from ..results.documents.suite import (ConstantTimePart, ExactCheckPart, FalconMode, FalconSet, FpPrimitive,
                                       ImplementationEntry, SigningProfile, SuiteDocument, Variance, VarianceSource)
from ..results.rundir import resume_parameters
from ..results.runs import Run, runs_document

CT_DIRECTORY = "ct"  # a member's constant-time test, inside its run directory
CT_DOCUMENT = store.file_name("ct")
# Statistics beside the exact check, at most: enough for a leak the key shows plainly and for the
# variance; the virtual board's exact check decides the rest (ct_verdict.headline).
CT_SIGNATURES = 100
CT_LEAST_SIGNATURES = 20
# Each member's test gets about this many cycles of signing and key generation (an eighth of it
# for the key pool's random keys): some ten seconds of the virtual board on two cores, about a
# minute and a half of a board at 24 MHz.
CT_CYCLES = 2.5e9
# A signing this slow with its key generation (SPHINCS+, Falcon) gets one signature's exact check
# instead of two: following each instruction's data takes a minute per signature or more.
EXACT_CHECK_ONE_ABOVE = 1e8
CLOCKS_HZ = (24_000_000, 168_000_000)  # the Discovery's benchmark clock and its fastest
# Scheme names as their standards write them: the family's prefix, then its parameters' tokens.
FAMILY_NAMES = {"ml-dsa": "ML-DSA-", "falcon": "Falcon-", "fndsa_provisional": "FN-DSA-", "sphincs": "SPHINCS+-",
                "ecdsa": "ECDSA ", "rsa": "RSA-"}
NAME_TOKENS = {"sha2": "SHA2", "shake": "SHAKE", "p256": "P-256"}
# Falcon's floating-point modes (catalogue impl names) in the words the report uses.
FALCON_MODES = {"fpnative": "native double (libgcc soft-float)", "fpemu-c": "constant-time emulation in C",
                "fpemu-m4": "constant-time emulation in M4 assembly"}
FALCON_NATIVE = "fpnative"
KEYGEN, SIGN = Op.KEYGEN.label, Op.SIGN.label
# Each FP primitive's function in each mode (libgcc's aliases: the profiler names one of them).
FP_PRIMITIVES = {
    "add": ("__aeabi_dadd", "__adddf3", "falcon_inner_fpr_add"),
    "mul": ("__muldf3", "__aeabi_dmul", "falcon_inner_fpr_mul"),
    "div": ("__divdf3", "__aeabi_ddiv", "falcon_inner_fpr_div"),
    "sqrt": ("sqrt", "falcon_inner_fpr_sqrt"),
}
# The floating-point arithmetic of a signing: libgcc's soft-float and libm (native double), or
# Falcon's emulation.
FP_ROUTINE = re.compile(r"^(__aeabi_(d\w*|[ilu]+2d|ul2d)|__\w*[dt]f\w*|__ieee754_\w+|sqrt|falcon_inner_fpr_\w+)$")


def ct_path(member_path: Path) -> Path:
    return member_path / CT_DIRECTORY


def ct_members(members: list[Member]) -> list[Member]:
    """Each member's constant-time test: new, to go on with, or complete (kept as it is)."""
    tests = []
    for member in members:
        path = ct_path(member.path)
        meta = resume_parameters(path, kind="ct") if (path / "meta.json").is_file() else None
        tests.append(Member(member.implementation, path, meta, meta is not None and meta.status == "complete"))
    return tests


def run_medians(run: Run) -> dict[str, float]:
    """A run's median cycles per operation (of those with timed samples)."""
    return {result.op: result.cycles.median for result in run.results() if result.cycles}


@dataclass(frozen=True)
class CtSize:
    """A member's constant-time test: its signatures, the key pool's random keys it signs with,
    and the signatures of its exact check (on the virtual board)."""

    signatures: int
    random_keys: int
    exact_signatures: int


def ct_size(run: Run, most: int) -> CtSize:
    """A member's test sized by the cycles its run measured: signatures even, at least
    CT_LEAST_SIGNATURES, at most `most`, fewer for a slow signing; 1 to 10 random keys, fewer for a
    slow key generation; one exact-check signature for a slow signing, else two."""
    medians = run_medians(run)
    signing, keygen = medians.get(SIGN), medians.get(KEYGEN)
    signatures = most if not signing else int(min(most, max(CT_LEAST_SIGNATURES, CT_CYCLES / signing))) // 2 * 2
    keys = 10 if not keygen else int(min(10, max(1, CT_CYCLES / 8 / keygen)))
    exact = 1 if (signing or 0) + (keygen or 0) > EXACT_CHECK_ONE_ABOVE else EXACT_CHECK_SIGNATURES
    return CtSize(signatures, keys, exact)


# What a constant-time test's step takes besides signing: starting the boards, the statistics and
# the report (1 to 2.5 s in the recorded suites).
STEP_SECONDS = 2.0


def ct_seconds(run: Run, signatures: int, random_keys: int | None, shards: int, exact_check: int) -> float | None:
    """About how long a member's constant-time test takes (within a factor of 1.5), from the cycles
    its run measured and the speed of its slowest board (an emulator's model cycles per second, or a
    board's clock); None where that cannot be said: no signing measured, or a test with the exact
    check, whose time depends on what it finds (each finding that would convict adds up to
    CONFIRMING_VARIANTS signatures, or more while signing is cheap) and on how much of the signing's
    data the key reaches (5 to 85 times the emulator's time for its cycles in a recorded suite)."""
    medians = run_medians(run)
    # The shards sign side by side, so the slowest sets the pace; a board's pace is its clock.
    speed = min([stats.model_cycles_per_second or 0.0 for stats in EmulatorStats.of_each(run.meta)]
                or [run.meta.clock_hz or 0.0])
    if exact_check or not speed or SIGN not in medians:
        return None
    keygen = medians.get(KEYGEN, 0.0)
    per_shard = (1 + (random_keys or 10)) * keygen + signatures / max(shards, 1) * medians[SIGN]
    return STEP_SECONDS + per_shard / speed


@dataclass(frozen=True)
class MemberResult:
    """What is kept of one implementation's constant-time test (None if it had none, or it did
    not finish)."""

    scheme: str
    impl: str
    ct: CtDocument | None
    signing_cycles: list[int]  # of the test's signatures, as the board timed them
    intervals: list[ProfiledInterval]  # the signing profile of the test's signatures (the replay's on a board)


def load_members(runs: list[Run]) -> list[MemberResult]:
    results = []
    for run in runs:
        path = ct_path(run.path)
        document = CtDocument.from_json(store.read(path / CT_DOCUMENT)) if (path / CT_DOCUMENT).is_file() else None
        results.append(MemberResult(run.meta.scheme, run.meta.impl, document,
                                    _signing_cycles(path) if document else [], profile(path) if document else []))
    return results


def _signing_cycles(path: Path) -> list[int]:
    """The timed signatures' cycles in the test's ct.csv (a line cut short left out)."""
    from ..results.rundir import STATUS_BY_LABEL

    try:
        lines = (path / "ct.csv").read_text().splitlines(keepends=True)
        rows = list(csv.reader(line for line in lines if line.endswith("\n")))
        if len(rows) < 2:
            return []
        header, *records = rows
        cycles, status = header.index("cycles"), header.index("status")
        return [int(record[cycles]) for record in records if STATUS_BY_LABEL[record[status]].timed]
    except (OSError, KeyError, ValueError, IndexError) as error:
        raise PqscopeError(f"{path / 'ct.csv'} is damaged: {error}") from None


def profile(path: Path) -> list[ProfiledInterval]:
    """The test's intervals: the virtual board's own, or on a board the replay's."""
    from ..analysis.ct_schedule import load_intervals

    for directory in (path, path / REPLAY_DIRECTORY):
        try:
            return load_intervals(directory)
        except PqscopeError:
            continue
    return []


def suite_document(path: Path, runs: list[Run]) -> SuiteDocument:
    """The main job's document, from the suite's runs and their constant-time tests."""
    measured = runs_document(path, runs)
    implementations = tuple(implementation_entry(member, measured.results) for member in load_members(runs))
    falcon = tuple(falcon_modes(implementations, measured.clock_hz))
    return SuiteDocument(measured, CLOCKS_HZ, implementations, falcon, tuple(summary(implementations, falcon)))


def implementation_entry(member: MemberResult, results: tuple[OpResult, ...]) -> ImplementationEntry:
    """One implementation in the document: its figures (from the runs' `results`), its signing's
    variance, its verdict and its signing profile."""
    own = {result.op: result for result in results if (result.scheme, result.impl) == (member.scheme, member.impl)}
    cycles = {op: result.cycles.median for op, result in own.items() if result.cycles}
    stacks = [result.stack_bytes for result in own.values() if result.stack_bytes is not None]
    return ImplementationEntry(
        member.scheme, member.impl, display_name(member.scheme, member.impl), cycles,
        ms={op: {str(hz): value / hz * 1e3 for hz in CLOCKS_HZ} for op, value in cycles.items()},
        stack_bytes=max(stacks, default=None), code_bytes=next(iter(own.values())).code_bytes if own else None,
        variance=variance(member), constant_time=constant_time(member.ct) if member.ct else None,
        profile=signing_profile(member.intervals))


def display_name(scheme: str, impl: str) -> str:
    """"ML-DSA-44 m4f", "Falcon-512 fpnative", "SPHINCS+-SHA2-128f-simple clean", "ECDSA P-256 mbedtls"."""
    for prefix, family in FAMILY_NAMES.items():
        if scheme.startswith(prefix + "-"):
            parameters = "-".join(NAME_TOKENS.get(token, token) for token in scheme[len(prefix) + 1:].split("-"))
            return f"{family}{parameters} {impl}".strip()
    return f"{scheme} {impl}".strip()


STEADY = 0.001  # signing times varying less than this (coefficient of variation): no source worth naming


def variance(member: MemberResult) -> Variance | None:
    """The spread of signing cycles over the test's signatures and where it comes from: the share
    of the variance each function's time carries (its covariance with the total), the largest
    first; and whether the key moves it (the verdict) or only public values do."""
    cycles = np.array(member.signing_cycles, dtype=float)
    if len(cycles) < 2:
        return None
    cv = float(cycles.std(ddof=1) / cycles.mean())
    totals = np.array([interval.cycles for interval in member.intervals], dtype=float)
    sources = []
    if not (len(totals) < 2 or totals.std() == 0 or cv < STEADY):
        for name in {name for interval in member.intervals for name in interval.functions}:
            own = np.array([interval.function(name).cycles for interval in member.intervals], dtype=float)
            share = float(np.cov(own, totals)[0, 1] / totals.var(ddof=1))
            if share > 0.05:
                sources.append(VarianceSource(name, share))
    return Variance(cv, float(cycles.min()), float(cycles.max()),
                    tuple(sorted(sources, key=lambda source: -source.share)[:3]))


def constant_time(document: CtDocument) -> ConstantTimePart:
    """A constant-time test's verdict with what decided it and the functions it points at."""
    taint, tested = document.taint, document.statistics
    leaks = [finding for finding in taint.findings if finding.leak] if taint else []
    leaking = sorted({finding.function or "?" for finding in leaks}, key=lambda name: -sum(
        finding.count for finding in leaks if finding.function == name))
    return ConstantTimePart(
        document.verdict, document.reason, document.scope, tested.total.n.fixed + tested.total.n.random,
        tested.total.max_abs_t, tested.verdict,
        None if not taint else ExactCheckPart(taint.verdict, taint.signatures, len(leaks), tuple(leaking)),
        tuple(function.name for function in tested.top_functions or () if function.depends_on_class)[:5],
        document.run_dir, document.other_clocks)


def signing_profile(intervals: list[ProfiledInterval]) -> SigningProfile | None:
    """Where a signing's time goes: the FP arithmetic's share (soft-float or emulation), and each FP
    primitive's mean cycles per call (callees included), over the test's signatures."""
    if not intervals:
        return None
    total = sum(interval.cycles for interval in intervals)
    fp = sum(time.cycles for interval in intervals for name, time in interval.functions.items()
             if FP_ROUTINE.match(name))
    primitives = {}
    for primitive, names in FP_PRIMITIVES.items():
        for name in names:
            calls = sum(interval.function(name).calls for interval in intervals)
            if calls:
                inclusive = sum(interval.function(name).inclusive_cycles for interval in intervals)
                primitives[primitive] = FpPrimitive(name, inclusive / calls, calls / len(intervals))
                break
    return SigningProfile(fp / total if total else 0.0, primitives)


def falcon_modes(implementations: Sequence[ImplementationEntry], clock_hz: int) -> list[FalconSet]:
    """Falcon's floating-point modes side by side, per parameter set whose native mode the suite
    has: each mode's cycles, its price over native double, its verdict and its FP arithmetic."""
    sets = []
    by_name = {(item.scheme, item.impl): item for item in implementations}
    for (scheme, impl), native in by_name.items():
        if impl != FALCON_NATIVE:
            continue
        modes = []
        for mode, words in FALCON_MODES.items():
            item = by_name.get((scheme, mode))
            if item is None:
                continue
            price = {op.label: (item.cycles[op.label] / native.cycles[op.label] - 1.0 if op.label in item.cycles and
                                native.cycles.get(op.label) else None) for op in Op}
            extra_ms = {op: ((item.cycles[op] - native.cycles[op]) / clock_hz * 1e3 if price[op] is not None
                             and clock_hz else None) for op in price}
            leaking = item.constant_time.exact_leaking_functions if item.constant_time else ()
            modes.append(FalconMode(mode, words, item.cycles, price, extra_ms, item.verdict, leaking, item.profile))
        if len(modes) > 1:
            sets.append(FalconSet(scheme, display_name(scheme, ""), tuple(modes)))
    return sets


def _at_other_clocks(implementations: Sequence[ImplementationEntry]) -> list[str]:
    """Per other clock of the board, what its exact check finds beside the tests' clock: the
    implementations whose verdict changes there, or that none does."""
    tested = [item for item in implementations if item.constant_time and item.constant_time.other_clocks]
    sentences = []
    for clock in dict.fromkeys(other.clock for item in tested for other in item.constant_time.other_clocks):
        there = {item.name: next(other for other in item.constant_time.other_clocks if other.clock == clock)
                 for item in tested if clock in (other.clock for other in item.constant_time.other_clocks)}
        changed = [f"{name} {at.verdict}" for name, at in there.items()
                   if at.verdict != next(item.verdict for item in tested if item.name == name)]
        derived = sum(at.derived for at in there.values())
        sentences.append(f"At {clock.describe()}, the exact check " + (
            f"changes the verdict: {_listed(changed)}." if changed else
            f"gives the same verdict{'s' if len(there) > 1 else ''} ({len(there)} tested"
            + (f", {derived} derived from the tests' clock: no load from flash at a secret address" if derived else "")
            + ")."))
    return sentences


def summary(implementations: Sequence[ImplementationEntry], falcon: Sequence[FalconSet]) -> list[str]:
    """The findings in words, from the document's data."""
    sentences = []
    verdicts = {item.name: item.verdict for item in implementations}
    leaking = [item for item in implementations if item.verdict == "leak"]
    for item in leaking:
        functions = item.constant_time.leaking_functions
        through = (" through the soft-float and libm routines" if functions and all(
            FP_ROUTINE.match(name) for name in functions) else "")
        sentences.append(f"{item.name} leaks: its signing time depends on a secret{through}"
                         + (f" ({', '.join(f'`{name}`' for name in functions[:4])}"
                            + (", ..." if len(functions) > 4 else "") + ")" if functions else "") + ".")
    clean = [name for name, verdict in verdicts.items() if verdict == "no-leak"]
    if clean:
        sentences.append(f"No leak found in {_listed(clean)}.")
    sentences.extend(_at_other_clocks(implementations))
    undecided = [name for name, verdict in verdicts.items() if verdict not in ("leak", "no-leak")]
    if undecided:
        sentences.append(f"Not decided: {_listed(undecided)} (" + ("no test" if None in verdicts.values() else
                                                                  "more signatures needed") + ").")
    for falcon_set in falcon:
        native = next(mode for mode in falcon_set.modes if mode.impl == FALCON_NATIVE)
        emulated = [mode for mode in falcon_set.modes
                    if mode.impl != FALCON_NATIVE and mode.price.get(SIGN) is not None]
        if not emulated:
            continue
        costs = " and ".join(f"{mode.price[SIGN]:+.0%} ({'M4 assembly' if mode.impl.endswith('m4') else 'C'}"
                             + ("" if mode.extra_ms[SIGN] is None else f", {mode.extra_ms[SIGN]:+,.0f} ms")
                             + ")" for mode in sorted(emulated, key=lambda mode: mode.price[SIGN]))
        emulated_verdicts = {mode.verdict for mode in emulated}
        sentences.append(f"{falcon_set.name}'s constant-time emulations cost {costs} signing cycles over native "
                         f"double, which {'leaks' if native.verdict == 'leak' else 'is ' + str(native.verdict)}; "
                         + ("the emulations leak nothing found." if emulated_verdicts == {"no-leak"} else
                            "the emulations: " + ", ".join(f"{mode.impl} {mode.verdict}" for mode in emulated)
                            + "."))
    signing = [item for item in implementations if SIGN in item.cycles]
    if len(signing) > 1:
        fastest = min(signing, key=lambda item: item.cycles[SIGN])
        slowest = max(signing, key=lambda item: item.cycles[SIGN])
        sentences.append(f"Fastest signing: {fastest.name}, {_ms(fastest, SIGN)}; slowest: {slowest.name}, "
                         f"{_ms(slowest, SIGN)}.")
    stacks = [item for item in implementations if item.stack_bytes]
    if stacks:
        deepest = max(stacks, key=lambda item: item.stack_bytes)
        sentences.append(f"Largest stack: {deepest.name}, {deepest.stack_bytes / 1024:,.1f} KiB.")
    return sentences


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _ms(item: ImplementationEntry, op: str) -> str:
    at = item.ms[op]
    return f"{at[str(CLOCKS_HZ[0])]:,.1f} ms at 24 MHz ({at[str(CLOCKS_HZ[1])]:,.1f} ms at 168 MHz)"
