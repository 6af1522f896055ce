"""Bad input named as what it is, before anything starts (issue #55): --port with the emulated
board, a message longer than an image signs, names in another case or misspelt, and a run
directory that cannot be written."""

import contextlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import REPO
from pqscope.cli import cli
from pqscope.project.build import MAX_MSG_BYTES
from pqscope.results.runmeta import RunMeta

RUN = ("run", "--scheme", "ml-dsa-44", "--impl", "m4f", "-n", "1", "--seed", "01")


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def one_line(result) -> str:
    assert result.exit_code != 0
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    return line


@pytest.mark.parametrize("command", [
    (*RUN,),
    ("ct", "--scheme", "ml-dsa-44", "--impl", "m4f", "-n", "20"),
    ("model-check",),
])
def test_a_port_with_the_emulated_board_is_refused(fake_repo, fake_toolchain, tmp_path, command):
    out = tmp_path / "out"
    result = invoke(*command, "--port", "/dev/ttyACM0", "--out", str(out))
    assert one_line(result) == ("Error: --port /dev/ttyACM0 names a real board's serial port, but board virtual "
                                "emulates stm32f4discovery here: give --board stm32f4discovery to measure the board on "
                                "that port, or leave --port out")
    assert not out.exists()


def test_a_port_on_resuming_a_run_of_the_emulated_board_is_refused(fake_repo, fake_toolchain, tmp_path):
    out = tmp_path / "run"
    (out / "shards").mkdir(parents=True)
    meta = RunMeta(kind="run", board="virtual", scheme="ml-dsa-44", impl="m4f", ops=["sign"], samples=2, msg_len=32,
                   master_seed="01", status="interrupted")
    (out / "meta.json").write_text(json.dumps(meta.to_json()))
    result = invoke("run", "--resume", str(out), "--port", "/dev/ttyACM0")
    assert "--port /dev/ttyACM0 names a real board's serial port" in one_line(result)


def test_the_message_limit_is_the_firmware_s():
    header = (REPO / "firmware/include/pqscope/scheme.h").read_text()
    assert re.search(r"#define PQS_MAX_MSG_BYTES (\d+)", header).group(1) == str(MAX_MSG_BYTES)


def test_a_message_longer_than_an_image_signs_is_refused_before_a_run_directory(fake_repo, fake_toolchain, tmp_path):
    log = fake_toolchain()
    out = tmp_path / "run"
    result = invoke(*RUN, "--msg-len", str(MAX_MSG_BYTES + 1), "--out", str(out))
    assert result.exit_code == 2  # a usage error
    assert f"--msg-len': {MAX_MSG_BYTES + 1} bytes: an image signs messages of at most 1,024 bytes" in one_line(result)
    assert not out.exists() and log.read_text() == ""  # nothing built, nothing started
    assert invoke(*RUN, "--msg-len", str(MAX_MSG_BYTES), "--out", str(out)).exit_code == 0


@pytest.mark.parametrize(("args", "expected"), [
    (("--scheme", "ml-dsa44", "--impl", "m4f"), "unknown scheme 'ml-dsa44'; did you mean ml-dsa-44?"),
    (("--scheme", "ml-dsa-44", "--impl", "m4"), "unknown impl 'm4' of scheme ml-dsa-44; did you mean m4f?"),
    (("--board", "virtal", "--scheme", "ml-dsa-44", "--impl", "m4f"), "unknown board 'virtal'; did you mean virtual?"),
    (("--scheme", "ml-dsa-44", "--impl", "m4f", "--clock", "fastest"),
     "unknown clock of board virtual 'fastest'; did you mean fast?"),
    (("--scheme", "ml-dsa-44", "--impl", "m4f", "--opt", "-Oz"),
     "unknown optimisation level '-Oz'; did you mean -O0 or -O2 or -O3 or -Os?"),
    (("--scheme", "rsa-4096", "--impl", "m4f"), "unknown scheme 'rsa-4096'; valid: ml-dsa-44"),  # nothing close
])
def test_a_misspelt_name_is_answered_with_the_close_ones(fake_repo, args, expected):
    assert one_line(invoke("build", "--board", "virtual", *args)) == f"Error: {expected}"


def test_names_are_matched_whatever_their_case(fake_repo, fake_toolchain, tmp_path):
    result = invoke("run", "--board", "VIRTUAL", "--scheme", "ML-DSA-44", "--impl", "M4F", "--clock", "Benchmark", "-n",
                    "1", "--seed", "01", "--out", str(tmp_path / "run"))
    assert result.exit_code == 0, result.stderr
    meta = json.loads((tmp_path / "run/meta.json").read_text())
    assert [meta[key] for key in ("board", "scheme", "impl", "clock")] == ["virtual", "ml-dsa-44", "m4f", "benchmark"]


@contextlib.contextmanager
def read_only(directory: Path):
    """`directory` read-only for this process: its mode for a user, immutable (chattr +i) for root,
    whom no mode stops; skips the test where neither can be done."""
    if os.geteuid() != 0:
        directory.chmod(0o555)
        yield
        directory.chmod(0o755)
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(directory)],
                                                        capture_output=True).returncode != 0:
        pytest.skip("root writes anywhere, and this file system cannot make a directory immutable (chattr +i)")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)


def test_a_run_directory_that_cannot_be_written_is_one_line(fake_repo, fake_toolchain, tmp_path):
    out = tmp_path / "read-only"
    out.mkdir()
    with read_only(out):
        line = one_line(invoke(*RUN, "--out", str(out)))
    assert line.startswith(f"Error: cannot write into the run directory {out}: ")
    assert os.listdir(out) == []
