"""A build of your own implementation (--impl-dir) killed while it compiles, by SIGKILL or by the
SIGTERM that `timeout` and a cancelled CI job send, leaves the board's build tree as it was: once
the directory is deleted, a catalogue image still builds and runs, and another directory's image
builds. The kill is placed by the test: the directory has a source that includes a FIFO, so its
compiler waits in open() until the test opens the other end, and the test kills the build then."""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import ROOT

TOY = ROOT / "tests/toy_signature"
ENV = {**os.environ, "PQSCOPE_ROOT": str(ROOT)}


def _own_implementation(path: Path) -> Path:
    path.mkdir(parents=True)
    for name in ("api.h", "toy.c"):
        shutil.copy(TOY / name, path)
    return path


def _open_when_compiling(gate: Path, build: subprocess.Popen, log: Path) -> int:
    """The gate's writing end, opened once the build's compiler opened its reading end (a FIFO's
    open returns when both ends are open); a build that ends before fails the test."""
    opened: list[int] = []
    opener = threading.Thread(target=lambda: opened.append(os.open(gate, os.O_WRONLY)), daemon=True)
    opener.start()
    while opener.is_alive():
        opener.join(0.1)
        if build.poll() is not None and opener.is_alive():
            pytest.fail(f"the build ended (status {build.returncode}) before it compiled the gate:\n"
                        f"{log.read_text()}")
    return opened[0]


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_build_of_your_own_killed_while_compiling_leaves_the_catalogue_buildable(tmp_path, signum):
    gated = _own_implementation(tmp_path / "crypto_sign/toy-signature/gated")
    os.mkfifo(gated / "gate.h")
    (gated / "gate.c").write_text('#include "gate.h"\n')
    log = tmp_path / "build.log"
    with log.open("w") as output:
        build = subprocess.Popen([sys.executable, "-m", "pqscope", "build", "--board", "stm32f4discovery", "--impl-dir",
                                  str(gated), "--stack-bytes", "2048"], env=ENV, stdout=output,
                                 stderr=subprocess.STDOUT, start_new_session=True)
    gate = _open_when_compiling(gated / "gate.h", build, log)
    os.kill(build.pid, signum)
    assert build.wait() != 0
    with contextlib.suppress(ProcessLookupError):  # what the build left running (CMake, ninja), as CI's cancel does
        os.killpg(build.pid, signal.SIGKILL)
    os.close(gate)
    shutil.rmtree(gated)

    cache = (ROOT / "build/stm32f4discovery/CMakeCache.txt").read_text()
    assert str(gated) not in cache
    run = subprocess.run([sys.executable, "-m", "pqscope", "run", "--scheme", "ml-dsa-44", "--impl", "m4f", "-n", "1",
                          "--seed", "01", "--out", str(tmp_path / "run")], env=ENV, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    other = _own_implementation(tmp_path / "crypto_sign/toy-signature/other")
    again = subprocess.run([sys.executable, "-m", "pqscope", "build", "--board", "stm32f4discovery", "--impl-dir",
                            str(other), "--stack-bytes", "2048", "--json"], env=ENV, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
