import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import HERE
from fakedevice import make_info
from pqscope.link.device import DeviceSession, DeviceTimeout
from pqscope.link.frames import FrameDecoder
from pqscope.link.protocol import Op
from pqscope.link.messages import decode_message
from pqscope.link.transport import open_port
from pqscope.targets.vboard import VBoardError, VirtualBoard, virtual_board_serial


@pytest.fixture
def emulator(tmp_path):
    script = tmp_path / "pqscope-vboard"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} {HERE / "fake_vboard.py"} "$@"\n')
    script.chmod(0o755)
    return script


@pytest.fixture
def elf(tmp_path):
    path = tmp_path / "images/ml-dsa-44/m4f.elf"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x7fELF")
    return path


def test_session_over_the_emulators_pty_and_stats_on_exit(emulator, elf, tmp_path):
    board = VirtualBoard(emulator, elf, tmp_path / "stats.json")
    with board:
        with open_port(board.port, 115200) as port:
            session = DeviceSession(port)
            assert session.hello() == make_info(serial=virtual_board_serial(0))
            session.run_sample(bytes(32), 32, (Op.SIGN,), 0)
    assert board.stats["model_cycles"] > 0
    assert board.stats["model_cycles_per_second"] > 0
    assert board._process.returncode == 0  # stopped by SIGTERM, which it handles


def test_the_uart_knows_when_an_answer_is_lost(emulator, elf, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_DEVICE", '{"answer_commands": 1}')
    with VirtualBoard(emulator, elf, tmp_path / "stats.json") as board, board.open_uart() as port:
        # Timeouts of an hour: the silence is known from the device, not from the clock.
        session = DeviceSession(port, answer_timeout=3600, sample_timeout=3600)
        assert session.hello() == make_info(serial=virtual_board_serial(0))
        with pytest.raises(DeviceTimeout, match="no record of sample 0, and it waits for input"):
            session.run_sample(bytes(32), 32, (Op.SIGN,), 0)


def test_the_uart_reads_what_the_device_sent_before_it_opened(emulator, elf, tmp_path):
    with VirtualBoard(emulator, elf, tmp_path / "stats.json") as board:
        deadline = time.monotonic() + 60  # only bounds a failure
        while board._traffic.idle is None:  # the boot announcement is out
            assert time.monotonic() < deadline
            time.sleep(0.01)
        with board.open_uart() as port:
            assert not port.device_waiting()  # its boot INFO is still to be read
            received = bytearray()
            while not port.device_waiting():
                assert time.monotonic() < deadline
                received += port.read(64)
            (frame,) = FrameDecoder().feed(bytes(received))
            assert decode_message(frame) == make_info(serial=virtual_board_serial(0))
            assert len(received) == board._traffic.idle[1]


def test_the_emulator_ends_when_pqscope_is_killed(emulator, elf, tmp_path):
    script = (f"import sys, time\nsys.path[:0] = {sys.path!r}\nfrom pqscope.targets.vboard import VirtualBoard\n"
              f"board = VirtualBoard(__import__('pathlib').Path({str(emulator)!r}), "
              f"__import__('pathlib').Path({str(elf)!r}), __import__('pathlib').Path({str(tmp_path / 's.json')!r}))\n"
              "board.__enter__()\nprint(board._process.pid, flush=True)\ntime.sleep(3600)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    emulator_pid = int(parent.stdout.readline())
    parent.kill()  # no chance to stop its emulator itself
    parent.wait()
    deadline = time.monotonic() + 60  # only bounds a failure
    while Path(f"/proc/{emulator_pid}").exists() and _state(emulator_pid) != "Z":
        assert time.monotonic() < deadline, "the emulator outlived pqscope"
        time.sleep(0.05)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return "gone"


def test_emulator_error_line_becomes_the_error(emulator, elf, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_VBOARD_ERROR", "cannot load ELF: bad magic")
    with pytest.raises(VBoardError, match="^virtual board: cannot load ELF: bad magic$"):
        with VirtualBoard(emulator, elf, tmp_path / "stats.json"):
            pass


def test_emulator_dying_mid_session_replaces_the_symptom(emulator, elf, tmp_path):
    with pytest.raises(VBoardError, match=r"^the emulator was killed by SIGKILL \(not by pqscope\).*resume the run "
                                          r"with --resume DIR$"):
        with VirtualBoard(emulator, elf, tmp_path / "stats.json") as board:
            board._process.kill()
            board._process.wait()
            raise ConnectionError("the pty went away")


def test_missing_emulator(elf, tmp_path):
    with pytest.raises(VBoardError, match="cannot start the emulator .*nope: No such file"):
        with VirtualBoard(tmp_path / "nope", elf, tmp_path / "stats.json"):
            pass


def test_emulator_that_never_reports_its_uart_is_stopped(elf, tmp_path):
    script = tmp_path / "mute"
    script.write_text("#!/bin/sh\nexec sleep 30\n")
    script.chmod(0o755)
    board = VirtualBoard(script, elf, tmp_path / "stats.json", startup_timeout=0.3)
    with pytest.raises(VBoardError, match="did not report its uart within 0.3 s"):
        board.__enter__()
    assert board._process.poll() is not None
