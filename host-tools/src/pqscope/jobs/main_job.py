"""The main job's course (`pqscope run`): each member's cycles and stack, then, for a suite that
asks for it, each member's signing tested for constant time, announced a line per step; and its
answer, the suite's document (jobs/suite.py) or the runs'."""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..measure.measurement import Measurement, Member
from ..measure.runner import Runner
from ..project.boards import Board
from ..project.catalogue import Implementation
from ..project.console import stderr
from ..results.documents.runs import RunsDocument
from ..results.documents.suite import SuiteDocument
from ..results.runs import Run, find_runs, load_run, runs_document
from .suite import ct_members, ct_seconds, ct_size, display_name, suite_document

# What `pqscope run` measures without --scheme: one representative of each family (those the
# catalogue has), Falcon in its three floating-point modes.
DEFAULT_SUITE = (
    ("ml-dsa-44", "m4f"),
    ("falcon-512", "fpnative"), ("falcon-512", "fpemu-c"), ("falcon-512", "fpemu-m4"),
    ("fndsa_provisional-512", "m4f"),
    ("sphincs-sha2-128f-simple", "clean"),
    ("ecdsa-p256", "mbedtls"),
)


def default_suite(catalogue: list[Implementation]) -> list[Implementation]:
    """The default suite's members that the catalogue has and builds, in the catalogue's order."""
    return [row for row in catalogue if (row.scheme, row.impl) in DEFAULT_SUITE and row.status == "ok"]


@dataclass(frozen=True)
class SuitePlan:
    """What a suite's manifest (suite.json) asks of the main job beyond its members' samples: each
    member's constant-time test of signing, on at most `ct_signatures` (0: none), replayed on the
    virtual board beside a board or not."""

    ct_signatures: int
    ct_replay: bool


class Steps:
    """The main job's progress, a line per step: its number, its name and what it will take."""

    def __init__(self, total: int):
        self.total, self.done = total, 0

    def announce(self, text: str) -> None:
        self.done += 1
        stderr().print(f"[{self.done}/{self.total}] {text}", markup=False, highlight=False)


def measure(measurement: Measurement, suite: SuitePlan | None, samples_runner: Runner,
            open_ct_runner: Callable[[], Runner]) -> bool:
    """Measures what is not complete yet: every member's samples, then each member's constant-time
    test if the `suite` (None for one implementation) asks for one, on the runner `open_ct_runner`
    opens once the samples are in. Returns whether it was interrupted (everything captured is
    kept)."""
    tested = suite.ct_signatures if suite else 0
    steps = Steps(sum(not member.complete for member in measurement.members)
                  + (sum(not member.complete for member in ct_members(measurement.members)) if tested else 0))
    samples_text = f"{measurement.what.samples} samples of {', '.join(op.label for op in measurement.what.ops)}"
    interrupted = samples_runner.measure_members(measurement.members, measurement.what, lambda member: steps.announce(
        f"cycles and stack: {display_name(member.implementation.scheme, member.implementation.impl)}, "
        f"{samples_text}") if suite else None)
    return interrupted or (tested > 0 and _constant_time_interrupted(
        measurement, tested, suite.ct_replay, open_ct_runner(), steps))


def _constant_time_interrupted(measurement: Measurement, signatures: int, replay: bool, ct_runner: Runner,
                               steps: Steps) -> bool:
    """Each suite member's constant-time test of signing (resumed where it stopped), in turn."""
    for run_member, member in zip(measurement.members, ct_members(measurement.members)):
        if member.complete:
            continue
        run = load_run(run_member.path)
        what = ct_capture(measurement.board, run, member, signatures, measurement.what.master_seed,
                          measurement.what.msg_len, replay=replay)
        seconds = ct_seconds(run, what.samples, what.random_keys, len(ct_runner.targets), what.exact_check)
        steps.announce(f"constant-time test: {display_name(member.implementation.scheme, member.implementation.impl)}"
                       f", {what.samples} signatures" + (f" and the exact check of {what.exact_check}"
                                                         if what.exact_check else "")
                       + ("" if seconds is None else f" (about {seconds:,.0f} s)"))
        if ct_runner.measure(member.implementation, member.path, what, member.resume_from).interrupted:
            return True
    return False


def ct_capture(board: Board, run: Run, member: Member, signatures: int, master_seed: bytes, msg_len: int, *,
               replay: bool, exact_signatures: int | None = None, at_other_clocks: bool = True) -> "CtCapture":
    """A member's constant-time test of signing: the one its meta.json began (resumed), or a new one
    sized by the cycles its `run` measured (ct_size: at most `signatures`), with the exact check of
    `exact_signatures` beside it (None: as ct_size says) on the virtual board, also at the board's
    other clocks if `at_other_clocks`; on a board replayed or not (`replay`)."""
    # numpy/scipy statistics: loaded only for the test.
    from ..analysis.ct import CtCapture
    from ..analysis.ct_plan import constant_time_test

    if member.resume_from:
        return CtCapture.from_meta(member.resume_from)
    size = ct_size(run, signatures)
    return constant_time_test(board, size.signatures, master_seed, msg_len, replay=replay,
                              random_keys=size.random_keys, at_other_clocks=at_other_clocks,
                              exact_signatures=size.exact_signatures if exact_signatures is None else exact_signatures)


def answer(path: Path, suite: SuitePlan | None) -> tuple[str, SuiteDocument | RunsDocument]:
    """The kind and document of what the run directory `path` keeps: a suite's, with its members'
    constant-time tests, if the `suite` asked for them; else its runs'."""
    loaded = [load_run(run_path) for run_path in find_runs(path)]
    if suite and suite.ct_signatures:
        return "suite", suite_document(path, loaded)
    return "run", runs_document(path, loaded)
