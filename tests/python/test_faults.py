"""Fault injection between host and device: every fault class at 1% of at least 10,000 frames in
each direction, and not one wrong or lost sample (after resuming where the link died)."""

import pytest

from fakedevice import LoopbackPort, fake_cycles, fake_stack
from pqscope.measure.capture import capture
from pqscope.results.records import Row, sample_seed
from pqscope.link.device import DeviceSession
from faults import DEVICE_SIDE_ONLY, Fault, FaultyPort
from pqscope.link.protocol import Op, Status
from pqscope.link.transport import TransportError

RATE = 0.01
FRAMES = 10_000
MASTER_SEED = b"faults"
OPS = (Op.SIGN,)  # one SAMPLE and DONE per RUN: as many commands as samples
BYTE_FAULTS = (Fault.BIT_FLIP, Fault.DROP_BYTE, Fault.DUPLICATE_BYTE, Fault.SWAP_BYTES, Fault.TRUNCATE)


def expected_row(index: int, op: Op) -> Row:
    seed = sample_seed(MASTER_SEED, index)
    return Row(index, op, seed, fake_cycles(seed, op), fake_stack(op), Status.OK, True)


def faulty_session(fault: Fault, seed: int) -> tuple[DeviceSession, FaultyPort, LoopbackPort]:
    loopback = LoopbackPort()
    port = FaultyPort(loopback, fault, RATE, seed=seed, reset_device=loopback.device.reset)
    # A lost answer is known at once (the loopback's device_waiting): the timeouts only bound a hang.
    session = DeviceSession(port, answer_timeout=60, sample_timeout=60, attempts=8)
    return session, port, loopback


def run_samples(session: DeviceSession, samples: int, done: dict[int, list[Row]]) -> None:
    session.hello()
    for rows in capture(session, ops=OPS, samples=samples, msg_len=32, master_seed=MASTER_SEED, skip=done):
        done[rows[0].sample_id] = rows


@pytest.mark.parametrize("fault", [f for f in Fault if f is not Fault.DISCONNECT])
def test_every_fault_is_detected_and_no_sample_is_wrong_or_lost(fault):
    session, port, loopback = faulty_session(fault, seed=list(Fault).index(fault))
    samples = FRAMES  # one command each way, and two records back, per sample
    done: dict[int, list[Row]] = {}
    run_samples(session, samples, done)

    assert sorted(done) == list(range(samples))
    assert all(rows == [expected_row(index, Op.SIGN)] for index, rows in done.items())
    assert port.frames["read"] >= 2 * FRAMES
    directions = ("read",) if fault in DEVICE_SIDE_ONLY else ("read", "write")
    # Only a SAMPLE can be overtaken (by its DONE): half the records.
    share = 0.5 if fault is Fault.REORDER_FRAMES else 1.0
    for direction in directions:
        assert port.frames[direction] >= FRAMES
        # 1% of the frames, give or take the binomial spread.
        expected = share * RATE * port.frames[direction]
        assert 0.7 * expected <= port.injected[direction] <= 1.3 * expected
    if fault in BYTE_FAULTS:
        # Each damaged record is at least one bad frame on the host; each damaged command one on the
        # device (answered with BAD_FRAME and sent again), except a command that only lost its
        # delimiter: the extra one the host sends after it keeps it whole.
        assert session.bad_frames >= port.injected["read"]
        assert 0.9 * port.injected["write"] <= loopback.device.bad_frames <= session.retries
    elif fault is Fault.DUPLICATE_FRAME:
        # A repeated record within an answer is dropped; a repeated DONE, or the second answer to a
        # repeated command, belongs to a finished command.
        assert session.duplicates + session.stale >= port.injected["read"] + port.injected["write"] - 1
        assert session.duplicates > 0 and session.stale > 0
    elif fault is Fault.REORDER_FRAMES:
        # A SAMPLE overtaken by its DONE leaves an incomplete answer: the sample is replayed.
        assert session.retries == port.injected["read"]
    elif fault is Fault.RESET:
        assert 0 < session.resets <= loopback.device.resets == port.injected["read"]
        assert session.resets >= port.injected["read"] - 1  # one reset may hit HELLO (harmless)


def test_a_disconnected_link_loses_nothing_once_resumed():
    # Each link runs until its cable is pulled; the next one resumes with the missing samples.
    samples = FRAMES
    done: dict[int, list[Row]] = {}
    frames = injected = disconnects = 0
    while len(done) < samples:
        session, port, _ = faulty_session(Fault.DISCONNECT, seed=disconnects)
        try:
            run_samples(session, samples, done)
        except TransportError as error:
            assert "lost the connection to loopback: device disconnected" in str(error)
            disconnects += 1
        frames += port.frames["read"] + port.frames["write"]
        injected += port.injected["read"] + port.injected["write"]
    assert sorted(done) == list(range(samples))
    assert all(rows == [expected_row(index, Op.SIGN)] for index, rows in done.items())
    assert frames >= 2 * FRAMES
    assert disconnects == injected >= 0.5 * RATE * frames
