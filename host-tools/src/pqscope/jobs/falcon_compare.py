"""Falcon's three floating-point modes side by side (`pqscope compare-falcon`).

For one Falcon parameter set in `fpnative` (C doubles: libgcc soft-float on the Cortex-M4F's
single-precision FPU), `fpemu-c` (Falcon's integer emulation in C) and `fpemu-m4` (the same in
Cortex-M4 assembly): key generation, signing and verification cycles and stack, the
constant-time test with its localisation, and every FP primitive on its own (the `falcon-fp-*`
catalogue rows: cycles per operation and a fixed-vs-random-operand verdict). The price of
constant time is the ratio of an emulated mode's median cycles to native doubles'.

The steps that touch a board (a measurement, a constant-time test) come in as callables, so the
assembly of the document is independent of how they ran.
"""

import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from ..link.protocol import Op
from ..measure.capture import SampleCapture
from ..measure.runner import Runner
from ..project.catalogue import Implementation, find_implementation
from ..project.errors import PqscopeError
from ..results.documents.comparison import (ComparisonDocument, FpOperation, FunctionSummary, ModeFigures, ModeTest,
                                            OpSummary)
from ..results.documents.ct import CtDocument
from ..results.documents.runs import OpResult, RunsDocument
from ..results.runs import load_run, runs_document
from .suite import MemberResult, falcon_modes, implementation_entry, profile

SCHEMES = ("falcon-512", "falcon-1024")
MODES = ("fpnative", "fpemu-c", "fpemu-m4")
NATIVE = "fpnative"
EMULATED = ("fpemu-c", "fpemu-m4")
OPS = ("keygen", "sign", "verify")
FP_OPERATIONS = ("add", "mul", "div", "sqrt", "rint", "floor")
FP_OP_REPS = 64  # FPOPS_REPS in firmware/schemes/falcon-fpops/fpops.c: operations per signature
RANDOM_CLASS = 1  # ct.RANDOM: signatures with random keys, i.e. random operands
TOP_FUNCTIONS = 5
MSG_LEN = 32


def fp_scheme(operation: str) -> str:
    return f"falcon-fp-{operation}"


class Steps(Protocol):
    """How the comparison runs its parts: `measure(implementation, path)` returns the runs'
    document (`pqscope run --json`'s); `constant_time(implementation, samples, path)` returns the
    constant-time test's document and the timed signatures (ct.CtSample)."""

    def measure(self, implementation: Implementation, path: Path) -> RunsDocument: ...

    def constant_time(self, implementation: Implementation, samples: int,
                      path: Path) -> tuple[CtDocument, Sequence]: ...


class RunnerSteps:
    """The parts measured on a target by the runner, all from one master seed."""

    def __init__(self, runner: Runner, master_seed: bytes, samples: int):
        self.runner, self.master_seed, self.samples = runner, master_seed, samples

    def measure(self, implementation: Implementation, path: Path) -> RunsDocument:
        what = SampleCapture(tuple(Op), self.samples, self.master_seed, MSG_LEN)
        if self.runner.measure(implementation, path, what).interrupted:
            raise KeyboardInterrupt
        return runs_document(path, [load_run(path)])

    def constant_time(self, implementation: Implementation, samples: int, path: Path) -> tuple[CtDocument, Sequence]:
        from ..analysis.ct_plan import constant_time_test  # numpy/scipy statistics: loaded only for this test

        # With the exact check on the virtual board, which decides every mode in a few signatures.
        what = constant_time_test(self.runner.target.board, samples, self.master_seed, MSG_LEN)
        outcome = self.runner.measure(implementation, path, what)
        if outcome.interrupted:
            raise KeyboardInterrupt
        return CtDocument.from_json(outcome.result), outcome.records


def run_comparison(catalogue: list[Implementation], scheme: str, board: str, path: Path, steps: Steps, *,
                   ct_samples: int, fp_ct_samples: int) -> ComparisonDocument:
    """Runs every part into subdirectories of `path` (measure/<mode>, ct/<mode>,
    fp-ops/<op>-<mode>) and returns the comparison document, with the time it took."""
    started = time.monotonic()
    if scheme not in SCHEMES:
        raise PqscopeError(f"compare-falcon compares Falcon: --scheme must be one of {', '.join(SCHEMES)}, not '{scheme}'")
    # Every row first, so that a catalogue without the FP-operation rows fails before hours of work.
    implementations = {mode: find_implementation(catalogue, scheme, mode) for mode in MODES}
    fp_rows = {(op, mode): find_implementation(catalogue, fp_scheme(op), mode) for op in FP_OPERATIONS for mode in MODES}
    measurements, ct_documents, tests = {}, {}, []
    for mode, implementation in implementations.items():
        measurements[mode] = steps.measure(implementation, path / "measure" / mode)
        ct_documents[mode], signatures = steps.constant_time(implementation, ct_samples, path / "ct" / mode)
        tests.append(MemberResult(scheme, mode, ct_documents[mode], [s.cycles for s in signatures if s.status.timed],
                                  profile(path / "ct" / mode)))
    fp_operations = []
    for (op, mode), implementation in fp_rows.items():
        document, samples = steps.constant_time(implementation, fp_ct_samples, path / "fp-ops" / f"{op}-{mode}")
        fp_operations.append(fp_operation_entry(op, mode, document, samples))
    return comparison_document(scheme, board, path, measurements, ct_documents, fp_operations, tests,
                               wall_seconds=round(time.monotonic() - started, 1))


def fp_operation_entry(op: str, mode: str, ct_document: CtDocument, samples: Sequence) -> FpOperation:
    """One primitive in one mode: cycles per operation (median signing cycles with random
    operands / FP_OP_REPS, including the benchmark loop's few cycles per call) and its verdict."""
    cycles = [s.cycles for s in samples if s.status.timed and s.key_class == RANDOM_CLASS]
    leaking = [function.name for function in ct_document.statistics.top_functions or ()
               if function.depends_on_class]
    return FpOperation(op, mode, statistics.median(cycles) / FP_OP_REPS if cycles else None, ct_document.verdict,
                       ct_document.statistics.total.max_abs_t, leaking[0] if leaking else None)


def comparison_document(scheme: str, board: str, path: Path, measurements: dict[str, RunsDocument],
                        ct_documents: dict[str, CtDocument], fp_operations: list[FpOperation], tests: list[MemberResult],
                        wall_seconds: float | None = None) -> ComparisonDocument:
    """The comparison from each mode's runs' document, ct document and test (its signing cycles and
    profile), and the FP-operation entries; its "falcon" is the main job's section of the modes."""
    modes = {mode: mode_figures(measurements[mode].results, ct_documents[mode]) for mode in MODES}
    clock_hz = next((measurements[mode].clock_hz for mode in MODES if measurements[mode].clock_hz), None)
    results = tuple(result for mode in MODES for result in measurements[mode].results)
    falcon = falcon_modes([implementation_entry(test, results) for test in tests], clock_hz or 0)
    return ComparisonDocument(scheme, board, clock_hz, modes, tuple(falcon), tuple(fp_operations),
                              price_of_constant_time(modes), FP_OP_REPS, str(path), wall_seconds)


def mode_figures(results: tuple[OpResult, ...], ct_document: CtDocument) -> ModeFigures:
    """One mode from its runs' results and its constant-time test."""
    by_op = {result.op: result for result in results}
    stacks = [by_op[op].stack_bytes for op in OPS if op in by_op and by_op[op].stack_bytes is not None]
    tested = ct_document.statistics
    test = ModeTest(ct_document.verdict, ct_document.reason, tested.total.max_abs_t, tested.total.n,
                    # On the virtual board a function past the thresholds decides the verdict even when the
                    # total's |t| is small (public randomness elsewhere hides it): show both.
                    tested.max_abs_t_function, ct_document.run_dir,
                    tuple(FunctionSummary(function.name, function.t, function.share, function.difference,
                                          function.depends_on_class)
                          for function in (tested.top_functions or ())[:TOP_FUNCTIONS]))
    return ModeFigures({op: _op_summary(by_op.get(op)) for op in OPS}, max(stacks, default=None),
                       next(iter(by_op.values())).code_bytes if by_op else None, test)


def _op_summary(result: OpResult | None) -> OpSummary | None:
    if result is None or result.cycles is None:
        return None
    return OpSummary(result.n, result.verified, result.cycles.median, result.cycles.min, result.cycles.max,
                     result.stack_bytes)


def price_of_constant_time(modes: dict[str, ModeFigures]) -> dict[str, dict[str, float | None]]:
    """Per emulated mode and operation: its median cycles / fpnative's (None if either is missing)."""
    price = {}
    for mode in EMULATED:
        ratios = {}
        for op in OPS:
            native, emulated = modes[NATIVE].ops[op], modes[mode].ops[op]
            ratios[op] = emulated.median / native.median if native and emulated and native.median else None
        price[f"{mode}/{NATIVE}"] = ratios
    return price
