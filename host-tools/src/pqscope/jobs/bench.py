"""`pqscope vboard-bench`: the emulator's speed in model cycles per second, on signing workloads
measured by the runner like any run."""

import tempfile
from pathlib import Path

import click

from ..link.protocol import Op
from ..measure.capture import SampleCapture
from ..measure.runner import Runner
from ..project.boards import get_board
from ..project.catalogue import find_implementation, load_catalogue
from ..project.console import stderr
from ..project.errors import PqscopeError
from ..results.documents.runs import EmulatorStats
from ..targets.kinds import open_target

# (scheme, impl) pairs measured, when the catalogue has them; the first is the reference figure.
BENCH_IMPLEMENTATIONS = (("ml-dsa-44", "m4f"), ("falcon-512", "fpemu-m4"))
BENCH_SAMPLES = 20
BENCH_MSG_LEN = 32
BENCH_SEED = b"vboard-bench"


def emulator_speed(root: Path, board_name: str) -> dict:
    """Each benchmark workload's model cycles, emulation time and model cycles per second."""
    catalogue = load_catalogue(root)
    present = [(s, i) for s, i in BENCH_IMPLEMENTATIONS if any((r.scheme, r.impl) == (s, i) for r in catalogue)]
    if not present:
        raise PqscopeError("the catalogue has none of the benchmark implementations "
                           + ", ".join(f"{s}/{i}" for s, i in BENCH_IMPLEMENTATIONS))
    runner = Runner(open_target(root, get_board(root, board_name)), stderr())
    benchmarks = []
    for scheme, impl in present:
        what = SampleCapture((Op.SIGN,), BENCH_SAMPLES, BENCH_SEED, BENCH_MSG_LEN)
        with tempfile.TemporaryDirectory() as scratch:
            outcome = runner.measure(find_implementation(catalogue, scheme, impl), Path(scratch) / "run", what)
        if outcome.interrupted:
            raise click.Abort()
        stats = EmulatorStats.of(outcome.meta)
        if stats is None or stats.model_cycles_per_second is None:
            raise PqscopeError("the emulator wrote no statistics (model_cycles_per_second) on exit")
        benchmarks.append({"scheme": scheme, "impl": impl, "model_cycles_per_second": stats.model_cycles_per_second,
                           "model_cycles": stats.model_cycles, "run_seconds": stats.run_seconds,
                           "wall_seconds": stats.wall_seconds})
    return {**benchmarks[0], "benchmarks": benchmarks}
