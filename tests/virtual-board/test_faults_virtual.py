"""Fault injection against the real firmware on the virtual board (tests/python/test_faults.py
does 10,000 frames per class against the fake device): the image's own receiver meets the damaged
commands, and since the virtual board is deterministic, every sample captured through the faulty
line must equal, cycle for cycle, the one captured through a clean line.

A device reset needs a reset line the emulator does not have; the fake device covers it."""

import contextlib

import pytest

from conftest import EMULATOR, IMAGES
from pqscope.measure.capture import capture
from pqscope.link.device import DeviceSession
from faults import Fault, FaultyPort
from pqscope.link.protocol import Op, Status
from pqscope.link.transport import TransportError
from pqscope.targets.vboard import VirtualBoard

SAMPLES = 200
RATE = 0.02
OPS = (Op.KEYGEN, Op.SIGN, Op.VERIFY)
MASTER_SEED = b"faults on the virtual board"
# A lost answer is known when the emulator reports the firmware waiting for input with every byte
# exchanged (VirtualUart.device_waiting), however loaded the machine: this only bounds a hang.
HANG_SECONDS = 120
# A SysTick interrupt (one per 2^24 cycles, extending the cycle counter) adds its cost and its
# exception frame (FP context included) to the operation it lands in. Which operation that is
# depends on all the board did before, bad frames included, so a replayed sample may carry it or
# miss it; nothing else may differ.
TICK_CYCLES = 100
TICK_STACK_BYTES = 128


@contextlib.contextmanager
def running_toy_board(directory):
    """The toy signature image on a virtual board: yields a function opening its UART (which knows
    when the device waits for input)."""
    with contextlib.ExitStack() as stack:
        board = stack.enter_context(VirtualBoard(EMULATOR, IMAGES / "toy-signature/mac.elf", directory / "stats.json"))

        def open_uart():
            return stack.enter_context(board.open_uart())

        yield open_uart


@pytest.fixture
def toy_board(tmp_path):
    with running_toy_board(tmp_path) as open_uart:
        yield open_uart


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> dict:
    """The samples through a clean line, from a board of their own: every faulty line's must equal them."""
    with running_toy_board(tmp_path_factory.mktemp("clean")) as open_uart:
        samples: dict = {}
        collect(DeviceSession(open_uart()), samples)
        return samples


def collect(session: DeviceSession, done: dict) -> None:
    session.hello()
    for rows in capture(session, ops=OPS, samples=SAMPLES, msg_len=64, master_seed=MASTER_SEED, skip=done):
        done[rows[0].sample_id] = rows


def assert_same_samples(damaged: dict, clean: dict) -> None:
    assert damaged.keys() == clean.keys()
    ticked = []
    for sample_id, rows in clean.items():
        for got, expected in zip(damaged[sample_id], rows, strict=True):
            assert (got.op, got.seed, got.status, got.verified) == (expected.op, expected.seed, Status.OK, True)
            if (got.cycles, got.stack_bytes) != (expected.cycles, expected.stack_bytes):
                ticked.append((got, expected))
    for got, expected in ticked:
        assert abs(got.cycles - expected.cycles) <= TICK_CYCLES, (got, expected)
        assert abs(got.stack_bytes - expected.stack_bytes) <= TICK_STACK_BYTES, (got, expected)


def faulty_session(port, fault: Fault, seed: int) -> tuple[DeviceSession, FaultyPort]:
    faulty = FaultyPort(port, fault, RATE, seed=seed)
    return DeviceSession(faulty, answer_timeout=HANG_SECONDS, sample_timeout=HANG_SECONDS, attempts=8), faulty


@pytest.mark.parametrize("fault", [f for f in Fault if f not in (Fault.RESET, Fault.DISCONNECT)])
def test_samples_through_a_faulty_line_equal_the_clean_ones(toy_board, clean, fault):
    session, faulty = faulty_session(toy_board(), fault, seed=list(Fault).index(fault))
    damaged: dict = {}
    collect(session, damaged)

    assert_same_samples(damaged, clean)
    # Certain, not likely: faults hit frames by index. Up to the first damaged record, the faulty
    # line carries INFO then SAMPLE x3, DONE per sample; for reorder-frames (seed 6) that is frame
    # 123, sample 30's verify SAMPLE, which its DONE overtakes.
    assert faulty.injected["read"] > 0
    if fault is not Fault.REORDER_FRAMES:
        assert faulty.injected["write"] > 0
    recovered = session.retries + session.bad_frames + session.duplicates + session.stale
    assert recovered >= sum(faulty.injected.values()) // 2


def test_a_pulled_cable_loses_nothing_once_the_line_is_back(toy_board, clean):
    port = toy_board()
    damaged: dict = {}
    disconnects = 0
    while len(damaged) < SAMPLES:
        # The board keeps running while the adapter is out: the host reopens the line and goes on.
        session, _ = faulty_session(port, Fault.DISCONNECT, seed=disconnects)
        try:
            collect(session, damaged)
        except TransportError as error:
            assert "device disconnected" in str(error)
            disconnects += 1
        port.reset_input_buffer()
    assert_same_samples(damaged, clean)
    assert disconnects >= 3
