"""End to end on the virtual board: the whole pipeline (pqscope CLI -> emulator -> image -> samples,
report) runs keygen/sign/verify and verifies on the device for one image of each family, which
runs again from the same seed and replays bit-identically, cycles included, and for every image
without a host reference (the controls). Every other image's outputs are checked on the device
against its host reference by the transcript test, through the same device session.

Rows marked "slow" in the catalogue (billions of cycles per sample) are marked slow: the slow
tier runs them, e.g. `ctest --preset stm32f4discovery-slow -R e2e`.
PQSCOPE_E2E_SHARD=i/n runs every n-th row from row i, so that ctest runs the shards side by side."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import discovery_rows
from pqscope.link.frames import FrameDecoder

ROOT = Path(__file__).resolve().parents[2]
PQSCOPE = [sys.executable, "-m", "pqscope"]
SAMPLES = 1  # one sample per row and run: the replay check needs no more
# One image per family runs the pipeline twice: the cycle counts' determinism is the platform's, not
# the scheme's.
REPLAYED = {("ml-dsa-44", "m4f"), ("falcon-512", "fpemu-m4"), ("fndsa_provisional-512", "m4f"),
            ("sphincs-sha2-128f-simple", "clean"), ("ecdsa-p256", "mbedtls"), ("control-branch", "ct"),
            ("falcon-fp-mul", "fpnative")}


SHARD, SHARDS = map(int, os.environ.get("PQSCOPE_E2E_SHARD", "0/1").split("/"))


def _catalogue_rows():
    rows = [row for row in discovery_rows()
            if (row["scheme"], row["impl"]) in REPLAYED or "host_reference" not in row]
    return [
        pytest.param(row["scheme"], row["impl"], marks=pytest.mark.slow if row.get("slow", False) else ())
        for row in rows[SHARD::SHARDS]
    ]


def _run(scheme: str, impl: str, seed: str, out: Path, report: bool) -> dict:
    # A slow row's sample is up to 48 G cycles (SPHINCS+-SHAKE-192s): minutes each on a loaded machine.
    result = subprocess.run(
        [*PQSCOPE, "run", "--board", "virtual", "--scheme", scheme, "--impl", impl, "-n", str(SAMPLES),
         "--seed", seed, "--out", str(out), "--json", "--timeout", "3600", "--report" if report else "--no-report"],
        capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=4 * 3600)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize(("scheme", "impl"), _catalogue_rows())
def test_runs_verifies_and_replays_identically(scheme, impl, tmp_path):
    replayed = (scheme, impl) in REPLAYED
    # A report per family (the views have tests of their own): rendering it costs more than a toy's run.
    first = _run(scheme, impl, "5eed", tmp_path / "first", report=replayed)
    assert (tmp_path / "first/report.html").exists() == replayed

    assert first["board"] == "virtual"
    assert {r["op"] for r in first["results"]} == {"keygen", "sign", "verify"}
    for result in first["results"]:
        assert result["n"] == SAMPLES
        assert result["verified"] == SAMPLES
        assert result["cycles"]["min"] > 0
        assert result["stack_bytes"] > 0

    rows = list(csv.DictReader((tmp_path / "first/samples.csv").open()))
    assert len(rows) == 3 * SAMPLES
    assert all(row["verified"] == "true" and row["status"] == "ok" for row in rows)
    if not replayed:
        return
    _run(scheme, impl, "5eed", tmp_path / "second", report=False)
    assert not (tmp_path / "second/report.html").exists()
    assert (tmp_path / "first/samples.csv").read_bytes() == (tmp_path / "second/samples.csv").read_bytes()
    # Every record answering a command replays bit for bit (the boot announcement, seq 0, may
    # arrive before the port is opened, so it is not compared).
    assert _answers(tmp_path / "first/raw.bin") == _answers(tmp_path / "second/raw.bin")


def _answers(raw: Path) -> list[tuple[int, bytes]]:
    return [(frame.type, frame.payload) for frame in FrameDecoder().feed(raw.read_bytes()) if frame.seq != 0]
