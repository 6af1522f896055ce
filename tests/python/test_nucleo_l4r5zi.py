"""The NUCLEO-L4R5ZI as a real board on a serial port (issue #56): the host tool measures it as it
does the Discovery, here against a fake device that answers as its firmware does."""

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from fakedevice import Behaviour, make_info
from pqscope.cli import cli
from pqscope.project.boards import load_boards

REPO = Path(__file__).resolve().parents[2]
BOARD = "nucleo-l4r5zi"
ROW = ("--scheme", "ml-dsa-44", "--impl", "m4f")


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def nucleo_repo(fake_repo):
    """fake_repo with the real NUCLEO-L4R5ZI board folder's metadata and flasher configuration,
    and no virtual twin of it."""
    for name in ("board.json", "openocd.cfg"):
        (fake_repo / "boards" / BOARD).mkdir(exist_ok=True)
        shutil.copy(REPO / "boards" / BOARD / name, fake_repo / "boards" / BOARD / name)
    return fake_repo


@pytest.fixture
def nucleo_port(pty_device):
    """A fake NUCLEO-L4R5ZI at pqm4's benchmark clock; returns (device, its serial port)."""

    def start(behaviour=None):
        return pty_device(replace(make_info(board=BOARD), clock_hz=20_000_000), behaviour)

    return start


def test_the_board_is_described_as_pqm4_measures_on_it():
    board = load_boards(REPO)[BOARD]
    assert (board.mcu, board.runner, board.emulates) == ("STM32L4R5ZI", "serial", None)
    assert (board.clock.hz, board.clock.flash_wait_states) == (20_000_000, 0)
    assert (board.clocks["fast"].hz, board.clocks["fast"].flash_wait_states) == (120_000_000, 5)
    assert (board.ram_bytes, board.flash_bytes) == (640 * 1024, 2 * 1024 * 1024)
    assert (board.directory / "openocd.cfg").is_file()


def test_every_clock_of_every_board_has_its_cmake_preset():
    presets = json.loads((REPO / "CMakePresets.json").read_text())
    configure = {preset["name"] for preset in presets["configurePresets"]}
    build = {preset["name"] for preset in presets["buildPresets"]}
    wanted = {clock.cmake_preset for board in load_boards(REPO).values() for clock in board.clocks.values()}
    assert wanted - configure == set() and wanted - build == set()


def test_run_measures_the_board_on_its_port(nucleo_repo, fake_toolchain, nucleo_port, tmp_path):
    device, port = nucleo_port()
    out = tmp_path / "run"
    result = invoke("run", "--board", BOARD, "--port", port, "--no-flash", *ROW, "-n", "3", "--out", str(out),
                    "--no-report")
    assert result.exit_code == 0, result.stderr
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["board"] == BOARD and meta["clock_hz"] == 20_000_000
    assert device.commands  # the fake board, not an emulator, answered


def test_ct_without_the_replay_runs_on_the_board(nucleo_repo, fake_toolchain, nucleo_port, tmp_path):
    _device, port = nucleo_port(Behaviour(key_leak=400))
    out = tmp_path / "ct"
    result = invoke("ct", "--board", BOARD, "--port", port, "--no-flash", "--no-replay", *ROW, "-n", "100",
                    "--seed", "07", "--out", str(out), "--json", "--no-report")
    assert result.exit_code == 4, result.stderr  # a leak's exit status
    assert json.loads(result.stdout)["verdict"] == "leak"
    assert json.loads((out / "meta.json").read_text())["board"] == BOARD


def test_ct_with_the_replay_says_the_board_has_no_virtual_twin(nucleo_repo, fake_toolchain, nucleo_port, tmp_path):
    _device, port = nucleo_port()
    result = invoke("ct", "--board", BOARD, "--port", port, "--no-flash", *ROW, "-n", "100", "--out",
                    str(tmp_path / "ct"))
    assert result.exit_code != 0 and "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert f"no virtual board emulates {BOARD}: measure without the replay (--no-replay)" in line
    assert not (tmp_path / "ct").exists()  # refused before a run directory, an image or the board
