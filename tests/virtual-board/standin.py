"""A stand-in for a real board, for the replay's tests and benchmark (issue #31): the virtual board
serving the Discovery's image built for 168 MHz (5 flash wait states behind the ART accelerator),
with noise on its cycle counter, reached as a real board is, over a serial port (its pty), so that
pqscope sees only its totals. The replay beside it prices flash as free (the 24 MHz model): the
stand-in's flash stalls are what the predictor lacks, as a real board's effects would be."""

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from pqscope.project.boards import get_board
from pqscope.project.build import PLAIN, Variant, build_image
from pqscope.targets.vboard import VirtualBoard, virtual_board_serial

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/support"))  # as conftest.py does, for the benchmarks that import this module
from gate_status import gate_document  # noqa: E402
EMULATOR = Path(os.environ.get("PQSCOPE_VBOARD_EXE", ROOT / "build/host/boards/virtual/emulator/pqscope-vboard"))
BOARD, CLOCK = "stm32f4discovery", "fast"
JITTER = 16  # most cycles a read of the stand-in's cycle counter is late: about 6.5 cycles of spread
FIRST_SERIAL = 100  # the stand-ins' serial numbers, apart from the replay's emulators' (0, 1, ...)


@contextlib.contextmanager
def stand_ins(scheme: str, impl: str, directory: Path, count: int = 1, variant: Variant = PLAIN
              ) -> Iterator[list[str]]:
    """`count` stand-in boards running the `variant` image of scheme/impl; yields their ports."""
    elf = build_image(ROOT, get_board(ROOT, BOARD).at_clock(CLOCK), scheme, impl, variant)
    with contextlib.ExitStack() as stack:
        boards = [stack.enter_context(VirtualBoard(EMULATOR, elf, directory / f"stand-in-{number}.json",
                                                   extra_args=("--cycle-jitter", str(JITTER)),
                                                   serial=virtual_board_serial(FIRST_SERIAL + number)))
                  for number in range(count)]
        yield [board.port for board in boards]


def ct_on_stand_in(scheme: str, impl: str, n: int, out: Path, *options: str, boards: int = 1, seed: str = "c7",
                   resume: bool = False, probes: tuple[str, ...] | None = None
                   ) -> tuple[dict, subprocess.CompletedProcess]:
    """`pqscope ct` of scheme/impl on `boards` stand-ins, replayed beside them with flash free (the
    command's own defaults otherwise), or the test at `out` resumed on new stand-ins; its document
    and the finished process. `probes`: the probed image, with these probes besides its row's."""
    out.parent.mkdir(parents=True, exist_ok=True)
    variant = PLAIN if probes is None else Variant(True, probes)
    probe_options = [] if probes is None else ["--probes", *(arg for name in probes for arg in ("--probe", name))]
    test = ["--resume", str(out)] if resume else [
        "--board", BOARD, "--clock", CLOCK, "--scheme", scheme, "--impl", impl, "-n", str(n), "--seed", seed,
        "--out", str(out), "--replay-flash-timing", "free", *probe_options, *options]
    with stand_ins(scheme, impl, out.parent, boards, variant) as ports:
        result = subprocess.run(
            [sys.executable, "-m", "pqscope", "ct", *test, "--json", "--no-flash",
             *(arg for port in ports for arg in ("--port", port))],
            capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=7200)
    return gate_document(result), result
