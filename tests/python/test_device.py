import time

import pytest

from fakedevice import Behaviour, fake_cycles, fake_probe, fake_stack, make_info
from pqscope.link.device import DeviceError, DeviceTimeout
from pqscope.link.frames import FrameDecoder
from pqscope.link.messages import Hello, Info, Probe, Run, decode_message
from pqscope.link.protocol import Op, Status, VersionMismatch
from pqscope.link.transport import TransportError, open_port

SEED = bytes(range(32))
ALL_OPS = (Op.KEYGEN, Op.SIGN, Op.VERIFY)


def test_hello_returns_info_after_the_boot_announcement(session_on):
    session, device = session_on()
    assert session.hello() == make_info(serial=device.info.board_serial) == device.info
    assert device.commands == [Hello()]


def test_run_sample_reports_each_op_in_order_then_done(session_on):
    session, device = session_on()
    session.hello()
    result = session.run_sample(SEED, 32, (Op.VERIFY, Op.KEYGEN, Op.SIGN), sample_id=5)
    assert [(s.sample_id, s.op, s.status) for s in result.samples] == [(5, op, Status.OK) for op in ALL_OPS]
    assert [s.cycles for s in result.samples] == [fake_cycles(SEED, op) for op in ALL_OPS]
    assert [s.stack_bytes for s in result.samples] == [fake_stack(op) for op in ALL_OPS]
    assert (result.done.sample_id, result.done.status) == (5, Status.OK)
    assert device.commands[1] == Run(ALL_OPS, 32, 5, SEED)


def test_only_the_requested_ops_are_reported(session_on):
    session, _ = session_on()
    result = session.run_sample(SEED, 0, (Op.SIGN,), sample_id=0)
    assert [s.op for s in result.samples] == [Op.SIGN]


def test_garbage_on_the_line_is_skipped_without_resending(session_on):
    session, device = session_on(behaviour=Behaviour(noise=b"\x13\x37garbage\xff"))
    session.hello()
    result = session.run_sample(SEED, 32, ALL_OPS, sample_id=1)
    assert len(result.samples) == 3
    assert session.bad_frames >= 4  # one burst of garbage before every record
    assert len(device.commands) == 2


def test_a_corrupted_record_makes_the_host_replay_the_sample(session_on):
    # Records sent: 0 boot INFO, 1 INFO answering HELLO, 2 the first SAMPLE (damaged).
    session, device = session_on(behaviour=Behaviour(corrupt_records=[2]))
    session.hello()
    result = session.run_sample(SEED, 32, ALL_OPS, sample_id=3)
    assert [s.cycles for s in result.samples] == [fake_cycles(SEED, op) for op in ALL_OPS]
    assert device.commands[1:] == [Run(ALL_OPS, 32, 3, SEED)] * 2
    assert session.bad_frames == 1


def test_bad_frame_from_the_device_makes_the_host_resend(session_on):
    session, device = session_on(behaviour=Behaviour(reject_commands=1))
    assert session.hello() == device.info
    assert device.commands == [Hello(), Hello()]


def test_silent_device_is_reported_as_not_answering(session_on):
    session, device = session_on(behaviour=Behaviour(boot_announce=False, answer_commands=0),
                                 answer_timeout=0.2)
    started = time.monotonic()
    silence = r"device not answering on /dev/\S+: no INFO in answer to HELLO within 0.2 s \(3 tries; is the"
    with pytest.raises(DeviceTimeout, match=silence):
        session.hello()
    assert time.monotonic() - started >= 0.6  # each try waited its timeout
    assert device.commands == [Hello()] * 3


def test_device_that_stops_answering_mid_run_times_out_without_retrying(session_on):
    session, device = session_on(behaviour=Behaviour(answer_commands=1), sample_timeout=0.3)
    session.hello()
    with pytest.raises(DeviceTimeout, match="no record of sample 4 within 0.3 s"):
        session.run_sample(SEED, 32, ALL_OPS, sample_id=4)
    assert len(device.commands) == 2


def test_device_with_another_protocol_version_is_refused(session_on):
    session, _ = session_on(behaviour=Behaviour(version=1))
    with pytest.raises(VersionMismatch, match="version 1"):
        session.hello()


def test_error_record_becomes_a_device_error(session_on):
    session, _ = session_on()
    with pytest.raises(DeviceError, match="BAD_ARGUMENT: msg_len too large"):
        session.run_sample(SEED, 5000, ALL_OPS, sample_id=0)


def test_a_fault_on_the_board_is_reported_with_its_pc(session_on):
    session, _ = session_on(behaviour=Behaviour(fault_on_run=True))
    session.hello()
    with pytest.raises(DeviceError, match="FAULT.*HardFault at pc=0x080012af"):
        session.run_sample(SEED, 32, ALL_OPS, sample_id=0)


def test_board_reset_during_a_sample_is_an_error(session_on):
    session, _ = session_on(behaviour=Behaviour(reset_on_run=True))
    session.hello()
    with pytest.raises(DeviceError, match="reset during a sample"):
        session.run_sample(SEED, 32, ALL_OPS, sample_id=0)


def test_every_received_byte_reaches_on_receive(session_on):
    received = bytearray()
    session, _ = session_on(on_receive=received.extend)
    session.hello()
    session.run_sample(SEED, 32, ALL_OPS, sample_id=0)
    records = [decode_message(frame) for frame in FrameDecoder().feed(bytes(received))]
    # The boot INFO may arrive before the port is opened (and be flushed); HELLO's INFO may not.
    infos = 2 if isinstance(records[1], Info) else 1
    assert [type(r).__name__ for r in records] == ["Info"] * infos + ["Sample", "Sample", "Sample", "Done"]


def test_missing_port_is_one_clear_error():
    with pytest.raises(TransportError, match="port /dev/ttyNOPE0 does not exist"):
        open_port("/dev/ttyNOPE0", 115200)


def test_port_in_use_is_reported_busy(pty_device):
    _, path = pty_device()
    with open_port(path, 115200):
        with pytest.raises(TransportError, match="is busy"):
            open_port(path, 115200)


def test_urls_are_accepted(pty_device):
    with open_port("loop://", 115200) as port:
        port.write(b"ping")
        assert port.read(4) == b"ping"
    with pytest.raises(TransportError, match="cannot open port nope://x"):
        open_port("nope://x", 115200)


def test_hello_learns_the_names_of_the_probes_and_samples_carry_their_readings(session_on):
    session, device = session_on(behaviour=Behaviour(probes=("sqrt", "__aeabi_d2lz")))
    info = session.hello()
    assert (info.probes, session.probe_names) == (2, ("sqrt", "__aeabi_d2lz"))
    assert device.commands == [Hello(), Probe(0), Probe(1)]
    result = session.run_sample(SEED, 32, (Op.SIGN,), sample_id=0)
    assert result.samples[0].probes == (fake_probe(SEED, 0), fake_probe(SEED, 1))


def test_a_sample_with_another_number_of_probes_breaks_the_protocol(session_on):
    session, _ = session_on(behaviour=Behaviour(probes=("sqrt",)), attempts=1)
    session.hello()
    session.probe_names = ()  # as if HELLO had named none
    with pytest.raises(DeviceError, match=r"device reported \[1\] probes for sample 0, expected 0"):
        session.run_sample(SEED, 32, (Op.SIGN,), sample_id=0)
