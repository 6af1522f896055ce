"""How long the virtual board's records are awaited (issue #57): by the model and the emulator's
life, never by seconds. A record whose emulator is held up far longer than the link's timeout
(stopped with SIGSTOP, then let go: the wall time is the test's, whatever the machine's load) still
comes; a firmware that never answers stops at the emulator's budget of model cycles, named as such;
an emulator that dies while a record is awaited is reported by what killed it."""

import os
import signal
import threading
from pathlib import Path

import pytest

from conftest import EMULATOR, IMAGES, ROOT
from pqscope.link.protocol import Op, Status
from pqscope.project.boards import get_board
from pqscope.project.console import stderr
from pqscope.targets.target import Link
from pqscope.targets.vboard import CycleBudgetExhausted, VBoardError
from pqscope.targets.virtual import SAMPLE_CYCLES, VirtualTarget

IMAGE = IMAGES / "ml-dsa-44" / "m4f.elf"  # a few million cycles per sample: past the budget below
OPS = (Op.KEYGEN, Op.SIGN, Op.VERIFY)
HELD_SECONDS = 1.0  # the emulator's stop: twenty times the timeout given


def target(link: Link) -> VirtualTarget:
    return VirtualTarget(ROOT, get_board(ROOT, "virtual"), link, emulator=EMULATOR)


def emulator_pid() -> int:
    """The one emulator this test's process started (its child running EMULATOR)."""
    children = [int(pid) for pid in os.listdir("/proc") if pid.isdigit() and _parent(pid) == os.getpid()
                and Path(f"/proc/{pid}/exe").resolve() == EMULATOR.resolve()]
    assert len(children) == 1, children
    return children[0]


def _parent(pid: str) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def after_stopping(pid: int, then) -> threading.Timer:
    """Stops the emulator `pid` now and calls `then(pid)` HELD_SECONDS later."""
    os.kill(pid, signal.SIGSTOP)
    timer = threading.Timer(HELD_SECONDS, then, (pid,))
    timer.start()
    return timer


@pytest.fixture(autouse=True)
def built():
    if not (EMULATOR.is_file() and IMAGE.is_file()):
        pytest.skip(f"build the host and stm32f4discovery presets first ({EMULATOR}, {IMAGE})")


def test_a_record_held_up_longer_than_the_timeout_still_comes(tmp_path):
    with target(Link(timeout=0.05)).for_samples(1).connect(IMAGE, stderr(), stats_dir=tmp_path) as connection:
        connection.session.hello()
        timer = after_stopping(emulator_pid(), lambda pid: os.kill(pid, signal.SIGCONT))
        result = connection.session.run_sample(bytes(32), 32, OPS, 0)
        timer.join()
    assert result.done.status == Status.OK and [sample.op for sample in result.samples] == list(Op)


def test_a_firmware_that_never_answers_stops_at_the_budget_of_model_cycles(tmp_path):
    assert target(Link()).for_samples(3).link.max_cycles == 4 * SAMPLE_CYCLES
    assert target(Link(max_cycles=7)).for_samples(3).link.max_cycles == 7  # the link's own budget kept
    # A budget the boot fits in but no sample: the wait ends where the model says, with its words.
    with pytest.raises(CycleBudgetExhausted, match=r"^virtual board: cycle limit 1000000 exceeded at address 0x"):
        with target(Link(max_cycles=1_000_000)).connect(IMAGE, stderr(), stats_dir=tmp_path) as connection:
            connection.session.hello()
            connection.session.run_sample(bytes(32), 32, OPS, 0)


def test_an_emulator_that_dies_while_a_record_is_awaited_is_reported_by_what_killed_it(tmp_path):
    with pytest.raises(VBoardError, match=r"^the emulator was killed by SIGKILL \(not by pqscope\)"):
        with target(Link()).for_samples(1).connect(IMAGE, stderr(), stats_dir=tmp_path) as connection:
            connection.session.hello()
            after_stopping(emulator_pid(), lambda pid: os.kill(pid, signal.SIGKILL))
            connection.session.run_sample(bytes(32), 32, OPS, 0)
