"""Wiring advice only where the wiring can be at fault (issue #55): a board on a serial port that
stops answering is told to check the baud rate and the wiring of its port; the same silence from
the session alone (a virtual board's, or any port's) says nothing of wires."""

import re

import pytest

from fakedevice import Behaviour
from pqscope.link.device import DeviceTimeout
from pqscope.link.protocol import Op
from pqscope.project.boards import get_board
from pqscope.project.console import stderr
from pqscope.targets.serial import SerialTarget
from pqscope.targets.target import Link

SEED = bytes(range(32))


def test_a_serial_board_that_does_not_answer_is_told_to_check_its_wiring(fake_repo, pty_device, tmp_path):
    _, path = pty_device(behaviour=Behaviour(answer_commands=1))  # answers HELLO, then nothing
    target = SerialTarget(fake_repo, get_board(fake_repo, "stm32f4discovery"), Link(port=path, timeout=0.5,
                                                                                      flash=False))
    expected = (f"device not answering on {path}: no record of sample 0 within 0.5 s; check the baud rate (115200) "
                f"and the wiring of {path} to the board's UART")
    with pytest.raises(DeviceTimeout, match=f"^{re.escape(expected)}$"):
        with target.connect(tmp_path / "image.elf", stderr(), stats_dir=tmp_path) as connection:
            connection.session.hello()
            connection.session.run_sample(SEED, 32, (Op.SIGN,), 0)


def test_the_session_alone_gives_no_wiring_advice(session_on):
    session, _ = session_on(behaviour=Behaviour(answer_commands=1), sample_timeout=0.5)
    session.hello()
    with pytest.raises(DeviceTimeout) as raised:
        session.run_sample(SEED, 32, (Op.SIGN,), 0)
    assert "wiring" not in str(raised.value) and "baud" not in str(raised.value)
