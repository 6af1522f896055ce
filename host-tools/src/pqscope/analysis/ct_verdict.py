"""The constant-time test's verdict: the statistics of the total weighed against each function's
(`decide`), the statistics weighed against the exact check (`headline`), and what the report
shows beside it (the exact check's findings per function, the boards' agreement)."""

import math
from dataclasses import dataclass

import numpy as np

from ..results.documents.ct import CtStatistics, FunctionLeak, TaintBeside
from ..results.documents.taint import TaintDocument
from . import leakstats, localisation
from .ttests import FIXED, LEAK_EVIDENCE_T, MIN_SAMPLES_PER_TEST, RANDOM, json_number
from .words import signature_paths


def decide(total: leakstats.LeakResult, functions: tuple[localisation.FunctionLeak, ...] | None
           ) -> tuple[leakstats.Verdict, str, str | None]:
    """The verdict, why, and the function that decided it (None: the total did): the total's
    verdict, unless a function's time depends on the key class past the same thresholds: public
    randomness elsewhere (e.g. Falcon's sampler) can hide a small leak in the total, so such a
    function makes the verdict a leak, or keeps it from no-leak."""
    worst = localisation.strongest_function(functions or ())
    if worst is None or total.verdict == leakstats.Verdict.LEAK:
        return total.verdict, total.reason, None
    max_abs_t = json_number(total.max_abs_t)
    max_abs_t = f"{max_abs_t:.1f}" if isinstance(max_abs_t, float) else max_abs_t
    if abs(worst.t) > worst.definite_t:
        return leakstats.Verdict.LEAK, (f"{worst.name}'s time depends on the key: |t| = {abs(worst.t):.1f} (test "
                                        f"{worst.test}) > {worst.definite_t:.1f} for {len(functions)} functions "
                                        f"(the total's max |t| is {max_abs_t})"), worst.name
    if total.verdict == leakstats.Verdict.NO_LEAK and abs(worst.t) >= worst.evidence_t:
        return leakstats.Verdict.INCONCLUSIVE, (f"the total shows no leak, but {worst.name}'s time depends on the "
                                                f"key with |t| = {abs(worst.t):.1f} (test {worst.test}) >= "
                                                f"{worst.evidence_t:.1f} for {len(functions)} functions"), worst.name
    return total.verdict, total.reason, None


STATISTICS_SCOPE = "the long-term key only (statistics of fixed vs random keys)"
EXACT_SCOPE = ("the key, the signing randomness and everything derived from them (the exact check of every "
               "instruction on the virtual board, beside the statistics of fixed vs random keys)")


@dataclass(frozen=True)
class Headline:
    """The test's verdict from all the evidence (ct.json's "verdict", "reason", "evidence" and
    "scope"): what decided it, and which secrets it covers."""

    verdict: str
    reason: str
    evidence: tuple[dict, ...]
    scope: str


def headline(statistics: CtStatistics, taint: TaintDocument | None, exact_on_target: bool = True) -> Headline:
    """The verdict from all the evidence: `leak` when the `statistics` or the exact check (`taint`,
    if it ran) find time that depends on the secret; `no-leak` when the statistics clear it, the
    exact check (if it ran) agreeing, or when an exact check of the measured target itself
    (`exact_on_target`: the virtual board's own, not a board's replay) finds nothing and the
    statistics no leak either, however few their signatures: on the model, every instruction of
    the paths followed was checked, which no number of signatures does. Time the exact check
    shows to follow declared-public values only was set apart before the statistics: where it
    differs between the classes, the reason says that time depends on the public key. A board's no-leak is its
    statistics': the model it was replayed on may lack what the board has (its flash, its bus).
    The statistics' own verdict stays theirs (`statistics.verdict`)."""
    leaks = taint.leaks if taint else ()
    exact = [{"by": "exact check", "kind": f.kind, "function": f.function, "file": f.file, "line": f.line,
              "address": f.hex_address, "executions": f.count} for f in leaks]
    worst = statistics.max_abs_t_function
    measured = {"by": "statistics", "max_abs_t": json_number(statistics.total.max_abs_t),
                "strongest_test": statistics.total.strongest_test,
                **({"function": worst.function, "function_t": json_number(worst.t)} if worst else {})}
    verdict, reason = statistics.verdict, statistics.reason
    deciding = [measured]
    if verdict != leakstats.Verdict.LEAK and leaks:
        verdict = leakstats.Verdict.LEAK
        reason = (f"the exact check found {len(leaks)} instruction{'' if len(leaks) == 1 else 's'} whose time depends "
                  f"on a secret (the statistics: {statistics.verdict})")
        deciding = exact
    elif verdict == leakstats.Verdict.LEAK:
        deciding = [measured, *exact]
    elif verdict == leakstats.Verdict.NO_LEAK and taint is not None:
        reason += "; the exact check found no instruction whose time depends on a secret"
    elif taint is not None and exact_on_target:
        verdict = leakstats.Verdict.NO_LEAK
        reason = (f"the exact check found no instruction whose time depends on a secret on "
                  f"{signature_paths(taint.signatures)} (the statistics: {statistics.verdict}, "
                  f"{statistics.reason})")
        deciding = [{"by": "exact check", "signatures": taint.signatures}, measured]
    public = statistics.public_part
    if public is not None and public.depends_on_public_key and verdict != leakstats.Verdict.LEAK:
        max_abs_t = public.max_abs_t
        reason = (f"time depends on the public key ({', '.join(public.from_exact_check)}), not on a secret: the exact "
                  f"check shows that code runs on declared-public values only, and its time, set apart, differs "
                  f"between the classes (|t| = {'inf' if max_abs_t == float('inf') else f'{max_abs_t:.1f}'}); "
                  f"the rest: {reason}")
    return Headline(str(verdict), reason, tuple(deciding), STATISTICS_SCOPE if taint is None else EXACT_SCOPE)


def taint_beside(taint: TaintDocument, top_functions: tuple[FunctionLeak, ...]) -> TaintBeside:
    """The exact check's findings for the constant-time test's page: its verdict and findings,
    and, per function the statistics localised, the findings inside it. The two answer different
    questions: the statistics point at the function where the time goes (a callee doing extra
    work), the exact check at the instruction that decides on the secret (often in its caller)."""
    def counts(function: str) -> dict:
        inside = [f for f in taint.findings if f.function == function]
        return {"leaks": sum(f.leak for f in inside), "declassified": sum(f.declassified for f in inside)}

    return TaintBeside(taint.verdict, taint.signatures, taint.findings,
                       {f.name: counts(f.name) for f in top_functions})


def board_summaries(records: list, boards: dict[str, dict]) -> list[dict]:
    """Per board that measured some of `records`: its signatures, median cycles per class, and
    whether its cycles differ from the boards' consensus: per class, t = (the board's mean - the
    median of the boards' means) / the standard error of its mean; the larger |t| of the two
    classes is reported, and `stands_out` past the evidence threshold. Every board signs the same
    keys and messages in the same proportions, so sound boards agree; the median keeps one
    misbehaving board from moving the consensus (with two boards, both differ alike). `boards`:
    meta.json's description of each board by its serial number."""
    timed = [record for record in records if record.status.timed]
    serials = sorted({record.board for record in timed})
    cycles = {(serial, key_class): np.array([r.cycles for r in timed if r.board == serial and r.key_class == key_class],
                                            dtype=np.float64)
              for serial in serials for key_class in (FIXED, RANDOM)}
    consensus = {key_class: np.median([values.mean() for (_, each), values in cycles.items()
                                       if each == key_class and values.size])
                 for key_class in (FIXED, RANDOM)}
    summaries = []
    for serial in serials:
        largest = None
        for key_class in (FIXED, RANDOM):
            values = cycles[serial, key_class]
            if len(serials) < 2 or values.size < MIN_SAMPLES_PER_TEST:
                continue
            error = values.std(ddof=1) / np.sqrt(values.size)
            difference = values.mean() - consensus[key_class]
            t = difference / error if error > 0 else (0.0 if difference == 0 else math.copysign(math.inf, difference))
            if largest is None or abs(t) > abs(largest):
                largest = float(t)
        summaries.append({"board": serial, **boards.get(serial, {}),
                          "signatures": sum(1 for r in records if r.board == serial),
                          "median_cycles": {name: float(np.median(cycles[serial, key_class]))
                                            if cycles[serial, key_class].size else None
                                            for key_class, name in ((FIXED, "fixed"), (RANDOM, "random"))},
                          "t_against_the_boards": json_number(largest),
                          "stands_out": largest is not None and abs(largest) > LEAK_EVIDENCE_T})
    return summaries
