"""A board's constant-time test with its replay on the virtual board (issue #31), on a stand-in
board (standin.py: the 168 MHz model with cycle-counter noise, reached over its serial port) whose
replay is the 24 MHz model: the stand-in's flash stalls are an effect the predictor lacks.

- A nonce's leak, which no key-class test can see, is convicted on the board: the exact check (in
  the replay) names it, and the board's cycles split by the replay's label confirm it.
- A leak only the board has (control-flash-table's key-indexed flash reads behind the ART) is
  found by the statistics on the board's cycles less the replay's prediction, and not without it.
- A finding in a function the board's image probes is tested on the probe's cycles: the
  function's own time on the board.
- A constant-time twin does not leak (the slow tier); an interrupted test resumes with
  its replay; two boards (shards) get the same verdict as one."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from standin import BOARD, CLOCK, ROOT, ct_on_stand_in, stand_ins


def test_a_nonce_leak_is_confirmed_on_the_board(tmp_path):
    document, _ = ct_on_stand_in("control-random-nonce", "leaky", 2000, tmp_path / "ct")
    assert document["verdict"] == "leak" and document["statistics"]["verdict"] != "leak"
    assert document["sequential"]["stopped"].startswith("leak: the exact check's findings in 1 function confirmed")
    (confirmation,) = document["replay"]["confirmations"]
    assert confirmation["state"] == "confirmed" and confirmation["function"].startswith("key_dependent_value")
    # The stand-in runs the nonce's loop as the model does: the sizes agree within the noise.
    assert 0.5 < confirmation["board_cycles"] / confirmation["model_cycles"] < 2, confirmation
    assert document["replay"]["disagreements"]["count"] == 0
    assert document["replay"]["flash_timing"] == "free"
    assert (tmp_path / "ct" / "replay" / "ct.json").is_file()


def test_a_leak_only_the_board_has_is_found_through_the_replay(tmp_path):
    document, result = ct_on_stand_in("control-flash-table", "leaky", 2000, tmp_path / "ct")
    assert document["verdict"] == "leak" and document["statistics"]["verdict"] == "leak", document["reason"]
    assert document["taint"]["verdict"] == "no-leak"  # the model prices flash as free: nothing there
    # The public attempts' time (hashes of the message) moves the total by far more than the key:
    # the board's raw cycles show nothing at the same count.
    assert document["uncorrected"]["verdict"] != "leak"
    assert document["control_variate"]["variance_removed"] > 0.99
    assert "regressed out" in result.stdout or "regressed out" in (tmp_path / "ct" / "report.md").read_text()
    report = (tmp_path / "ct" / "report.md").read_text()
    assert "the board's raw signing cycles per key class" in report and "- **replay**: the virtual board" in report


def test_a_probed_finding_is_tested_on_its_own_time_on_the_board(tmp_path):
    # Falcon's soft-float multiply: the exact check names `__muldf3`, its callers call it
    # `__aeabi_dmul`, which the probed image times on the board: the outcome's cycles in the 64
    # calls' own time, as the model has them. (Here the totals show them better, t = 46 at 400:
    # each probed call reads the noisy counter twice, the total twice in all; a probe wins where
    # the rest of the signing has board-only variance, tests/python/test_replay.py.)
    document, _ = ct_on_stand_in("falcon-fp-mul", "fpnative", 400, tmp_path / "ct", "--fixed-n",
                                 probes=("__aeabi_dmul",))
    (confirmation,) = document["replay"]["confirmations"]
    assert confirmation["function"] == "__muldf3" and confirmation["probe"] == "__aeabi_dmul", confirmation
    assert abs(confirmation["t"]) > 4 and "in its own time: probe __aeabi_dmul" in confirmation["text"]
    assert 0.5 < confirmation["board_cycles"] / confirmation["model_cycles"] < 2, confirmation


@pytest.mark.slow
def test_a_constant_time_twin_does_not_leak_on_the_board(tmp_path):
    """2,000 signatures on the 168 MHz stand-in; tests/bench/replay_bench.py runs the twins at 10^5."""
    document, _ = ct_on_stand_in("control-random-nonce", "ct", 2000, tmp_path / "ct")
    assert document["verdict"] == "no-leak", document["reason"]
    assert document["taint"]["verdict"] == "no-leak" and document["replay"]["confirmations"] == []


def test_an_interrupted_test_resumes_with_its_replay(tmp_path):
    out = tmp_path / "ct"
    with stand_ins("control-random-nonce", "leaky", tmp_path) as (port,):
        command = [sys.executable, "-m", "pqscope", "ct", "--board", BOARD, "--clock", CLOCK, "--scheme",
                   "control-random-nonce", "--impl", "leaky", "-n", "2000", "--seed", "c7", "--out", str(out),
                   "--no-flash", "--replay-flash-timing", "free", "--port", port]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})
        deadline = time.monotonic() + 300
        # Well before the sequential test first looks, at 100 signatures: it cannot end before the signal.
        while _rows(out / "ct.csv") < 20 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "interrupted", stderr
    assert json.loads((out / "replay" / "meta.json").read_text())["status"] == "interrupted"
    document, _ = ct_on_stand_in("control-random-nonce", "leaky", 2000, out, resume=True)
    assert document["verdict"] == "leak" and document["replay"]["confirmations"][0]["state"] == "confirmed"
    assert json.loads((out / "replay" / "meta.json").read_text())["resumed_at"]
    indices = [int(line.split(",")[0]) for line in (out / "ct.csv").read_text().splitlines()[1:]]
    assert len(indices) == len(set(indices))


def _rows(path: Path) -> int:
    return len(path.read_text().splitlines()) - 1 if path.exists() else 0


def test_two_boards_give_the_verdict_of_one(tmp_path):
    document, _ = ct_on_stand_in("control-random-nonce", "leaky", 2000, tmp_path / "ct", boards=2)
    assert document["verdict"] == "leak" and document["replay"]["confirmations"][0]["state"] == "confirmed"
    assert len(document["boards"]) == 2
    assert document["replay"]["disagreements"]["count"] == 0
