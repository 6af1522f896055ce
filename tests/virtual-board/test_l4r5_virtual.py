"""The virtual Nucleo-L4R5ZI (issue #56): the emulator's STM32L4R5 (`pqscope-vboard --chip stm32l4r5`,
named by boards/nucleo-l4r5zi-virtual/board.json) runs the Nucleo-L4R5ZI's images through the host
tool as the virtual Discovery runs the Discovery's. A measurement verifies every signature on it
(without the chip option the image's first RCC access would stop the emulator), and the exact
check gives every control of the catalogue the verdict it gives it on the virtual Discovery: a
leaky control and its constant-time twin in the quick tier, all of them in the slow tier."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, catalogue_rows
from gate_status import gate_document

BOARD = "nucleo-l4r5zi-virtual"
QUICK = {("control-branch", "leaky"), ("control-branch", "ct")}


def pqscope(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pqscope", *args], capture_output=True, text=True,
                          env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=1800)


def test_a_run_on_the_virtual_l4r5_verifies_every_signature(tmp_path):
    result = pqscope("run", "--board", BOARD, "--scheme", "control-branch", "--impl", "ct", "-n", "2", "--seed", "5eed",
                     "--out", str(tmp_path / "run"), "--json", "--no-report")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["board"] == BOARD
    assert {r["op"] for r in document["results"]} == {"keygen", "sign", "verify"}
    assert all(r["n"] == r["verified"] == 2 for r in document["results"]), document["results"]


def verdict(board: str, scheme: str, impl: str, out) -> str:
    return gate_document(pqscope("taint", "--board", board, "--scheme", scheme, "--impl", impl, "--seed", "7",
                                 "--out", str(out), "--json"))["verdict"]


def _controls():
    rows = [(row["scheme"], row["impl"]) for row in catalogue_rows()
            if row["scheme"].startswith("control-") and row["status"] == "ok"]
    return [pytest.param(*row, marks=() if row in QUICK else pytest.mark.slow) for row in rows]


@pytest.mark.parametrize(("scheme", "impl"), _controls())
def test_the_exact_check_gives_a_control_the_virtual_discoverys_verdict(scheme, impl, tmp_path):
    assert verdict(BOARD, scheme, impl, tmp_path / "l4r5") == verdict("virtual", scheme, impl, tmp_path / "discovery")
