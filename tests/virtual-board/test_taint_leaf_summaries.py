"""The exact check's leaf summaries change no result (docs/pages/exact-check.md, "Leaf calls"): the
same signatures checked with the emulator replaying leaf calls and with every call tracked
(PQSCOPE_TAINT_LEAF_SUMMARIES=off) give byte-for-byte the same findings, per-call lines, document
and device transcript (its cycles), and the replays did happen. The quick tier checks
SLH-DSA-SHA2-128f at 24 MHz (its SHA-256 compression calls memcpy: calls with one callee) and a
control at 168 MHz (flash wait states, the ART, the loads' code hook beside the tracker's); the slow
tier SLH-DSA-SHA2-128f at 168 MHz, SPHINCS+-SHA2-128f and the SHAKE sets (SPHINCS+'s Keccak pqm4's
assembly, SLH-DSA's C)."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from gate_status import gate_document

QUICK = [("slh-dsa-sha2-128f", "slhdsa-c", "benchmark"), ("control-cancelling-bounds", "ct", "fast")]
SLOW = [("slh-dsa-sha2-128f", "slhdsa-c", "fast"), ("sphincs-sha2-128f-simple", "clean", "benchmark"),
        ("sphincs-shake-128f-simple", "clean", "benchmark"), ("slh-dsa-shake-128f", "slhdsa-c", "benchmark")]
OUTPUTS = ("vboard-taint.json", "taint-calls.jsonl", "taint.json", "raw.bin")


def check(scheme: str, impl: str, clock: str, out, summaries: str) -> dict:
    env = {**os.environ, "PQSCOPE_ROOT": str(ROOT), "PQSCOPE_TAINT_LEAF_SUMMARIES": summaries}
    result = subprocess.run([sys.executable, "-m", "pqscope", "taint", "--scheme", scheme, "--impl", impl,
                             "--clock", clock, "-n", "1", "--seed", "c7", "--out", str(out), "--json"],
                            capture_output=True, text=True, env=env, timeout=1800)
    return gate_document(result)


def same_with_and_without_summaries(scheme: str, impl: str, clock: str, tmp_path) -> None:
    with_summaries, without = tmp_path / "on", tmp_path / "off"
    verdicts = [check(scheme, impl, clock, out, summaries)["verdict"]
                for out, summaries in ((with_summaries, "on"), (without, "off"))]
    assert verdicts[0] == verdicts[1] == "no-leak"
    for name in OUTPUTS:
        assert (with_summaries / name).read_bytes() == (without / name).read_bytes(), name
    calls = {out.name: json.loads((out / "vboard-stats.json").read_text())["taint_leaf_calls"]
             for out in (with_summaries, without)}
    assert calls["on"]["replayed"] > 10 * calls["on"]["recorded"] > 0, calls
    assert calls["off"] == {"recorded": 0, "replayed": 0, "rehooks": 0}


@pytest.mark.parametrize("scheme, impl, clock", QUICK)
def test_the_exact_check_is_the_same_with_leaf_summaries(scheme, impl, clock, tmp_path):
    same_with_and_without_summaries(scheme, impl, clock, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("scheme, impl, clock", SLOW)
def test_the_exact_check_of_the_slow_rows_is_the_same_with_leaf_summaries(scheme, impl, clock, tmp_path):
    same_with_and_without_summaries(scheme, impl, clock, tmp_path)
