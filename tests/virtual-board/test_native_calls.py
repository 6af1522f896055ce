"""The emulator's calls run on the host change no result (docs/pages/virtual-board.md, "Calls run
on the host"): the same measurement with the cryptographic primitives' calls run on the host once learnt
and with every call emulated (PQSCOPE_NATIVE_CALLS=off) gives byte for byte the same device
transcripts (every cycle count and stack depth), profiler intervals (per-function cycles, block
counts, trace hashes) and exact-check documents, and the host did run calls, in each of the
primitives' layouts. The quick tier runs SLH-DSA-SHAKE-128f's constant-time test (slhdsa-c's Keccak in
C: 64-bit lanes; statistics with the profiler, and the exact check), SPHINCS+-SHAKE-128f's
measurement and exact check (pqm4's assembly: bit-interleaved words), SLH-DSA-SHA2-192f's test
(slhdsa-c's SHA-256 and SHA-512 compressions, which call memcpy), SPHINCS+-SHA2-192f's measurement
and exact check (mupq's crypto_hashblocks_sha256 as GCC cloned it, two lengths; pqm4's SHA-512 in
assembly), RSA-2048's measurement (mbedtls's Montgomery multiplication, which ends in a tail call),
Falcon-512 fpnative's exact check (its variants' cycles), and the stack depths of a control whose
calls leave part of their frame unwritten; the slow tier the same test of SPHINCS+-SHAKE-128f, RSA-2048's
statistics (the profiler through the tail call), and one at 168 MHz, where flash wait states keep
every call emulated."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

TAINT_OUTPUTS = ("vboard-taint.json", "taint-calls.jsonl", "taint.json", "raw.bin")
VERDICT_EXITS = (0, 4, 5)  # no leak, a leak, inconclusive (cli/app.py)


def pqscope(args: list[str], out: Path, native_calls: str) -> dict:
    env = {**os.environ, "PQSCOPE_ROOT": str(ROOT), "PQSCOPE_NATIVE_CALLS": native_calls}
    result = subprocess.run([sys.executable, "-m", "pqscope", *args, "--seed", "c7", "--out", str(out), "--json"],
                            capture_output=True, text=True, env=env, timeout=1800)
    assert result.returncode in VERDICT_EXITS, result.stderr
    return json.loads(result.stdout)


def both_ways(args: list[str], tmp_path: Path) -> tuple[Path, Path]:
    on, off = tmp_path / "on", tmp_path / "off"
    documents = [pqscope(args, out, mode) for out, mode in ((on, "on"), (off, "off"))]
    assert documents[0].get("verdict") == documents[1].get("verdict")
    return on, off


def host_runs(stats: Path) -> dict[str, int]:
    """Calls the host ran per layout, from the emulator's stats."""
    runs: dict[str, int] = {}
    for function in json.loads(stats.read_text())["native_calls"]:
        if function["layout"]:
            runs[function["layout"]] = runs.get(function["layout"], 0) + function["run_on_host"]
    return runs


def same_prefix(on: Path, off: Path) -> int:
    """The shards of a sequential test stop where the other shard's look says: the samples both
    runs took must be the same, line for line and byte for byte."""
    lines_on, lines_off = on.read_text().splitlines(), off.read_text().splitlines()
    common = min(len(lines_on), len(lines_off))
    assert lines_on[:common] == lines_off[:common]
    return common


def test_the_constant_time_test_is_the_same_with_calls_run_on_the_host(tmp_path):
    on, off = both_ways(["ct", "--scheme", "slh-dsa-shake-128f", "--impl", "slhdsa-c"], tmp_path)
    for name in TAINT_OUTPUTS:
        assert (on / "taint" / name).read_bytes() == (off / "taint" / name).read_bytes(), name
    for shard in sorted((on / "shards").iterdir()):
        assert same_prefix(shard / "intervals.jsonl", off / "shards" / shard.name / "intervals.jsonl") >= 2
        raw_on, raw_off = (shard / "raw.bin").read_bytes(), (off / "shards" / shard.name / "raw.bin").read_bytes()
        assert raw_on.startswith(raw_off) or raw_off.startswith(raw_on)
        assert host_runs(shard / "vboard-stats.json").get("lanes", 0) > 100_000
        assert json.loads((off / "shards" / shard.name / "vboard-stats.json").read_text())["native_calls"] == []


def test_the_sha2_compressions_and_the_callee_they_call_are_the_same_run_on_the_host(tmp_path):
    """slhdsa-c's compressions copy their round constants to the stack with memcpy: a call run on
    the host shows the profiler memcpy's call and blocks as the emulated call did."""
    on, off = both_ways(["ct", "--scheme", "slh-dsa-sha2-192f", "--impl", "slhdsa-c"], tmp_path)
    for name in TAINT_OUTPUTS:
        assert (on / "taint" / name).read_bytes() == (off / "taint" / name).read_bytes(), name
    for shard in sorted((on / "shards").iterdir()):
        assert same_prefix(shard / "intervals.jsonl", off / "shards" / shard.name / "intervals.jsonl") >= 2
        runs = host_runs(shard / "vboard-stats.json")
        assert runs.get("sha-256", 0) > 100_000 and runs.get("sha-512", 0) > 10_000, runs


def test_the_sha2_blocks_of_each_length_are_the_same_run_on_the_host(tmp_path):
    """mupq's crypto_hashblocks_sha256 (a static function, GCC's clone .isra.0) and pqm4's SHA-512
    in assembly take whole blocks of their input: a length's calls are learnt by its own recordings."""
    row = ["--scheme", "sphincs-sha2-192f-simple", "--impl", "clean", "-n", "1"]
    on, off = both_ways(["run", *row], tmp_path / "run")
    assert (on / "raw.bin").read_bytes() == (off / "raw.bin").read_bytes()
    on, off = both_ways(["taint", *row], tmp_path / "taint")
    for name in (*TAINT_OUTPUTS, "taint.csv"):
        assert (on / name).read_bytes() == (off / name).read_bytes(), name
    functions = json.loads((on / "vboard-stats.json").read_text())["native_calls"]
    lengths = {f["layout"]: f["lengths_on_host"] for f in functions if f["layout"]}
    assert lengths.get("sha-256", 0) >= 2 and lengths.get("sha-512", 0) >= 1, functions
    runs = host_runs(on / "vboard-stats.json")
    assert runs.get("sha-256", 0) > 100_000 and runs.get("sha-512", 0) > 1_000, runs


def test_mbedtls_montgomery_multiplications_are_the_same_run_on_the_host(tmp_path):
    """RSA-2048's key generation, signing and verification: mbedtls_mpi_core_montmul calls
    mbedtls_mpi_core_mla, ends in a tail call of mbedtls_ct_memcpy_if, is often given X as A, and is
    called with three pairs of lengths (B_limbs, AN_limbs), each learnt by its own recordings."""
    on, off = both_ways(["run", "--scheme", "rsa-2048", "--impl", "mbedtls", "-n", "1"], tmp_path)
    assert (on / "raw.bin").read_bytes() == (off / "raw.bin").read_bytes()
    functions = json.loads((on / "vboard-stats.json").read_text())["native_calls"]
    assert any(f["layout"] == "montmul" and f["lengths_on_host"] >= 2 for f in functions), functions
    assert host_runs(on / "vboard-stats.json").get("montmul", 0) > 100_000


@pytest.mark.slow  # 20 signatures and the key pool's keys, emulated: 3 minutes
def test_the_profiler_sees_a_tail_call_run_on_the_host_as_emulated(tmp_path):
    """The profiler tells montmul's tail call of mbedtls_ct_memcpy_if by LR at its entry, which is
    the caller's: each call site's own, given back as the call's LR."""
    args = ["ct", "--scheme", "rsa-2048", "--impl", "mbedtls", "-n", "20", "--fixed-n", "-j", "1",
            "--no-taint", "--no-report"]
    on, off = both_ways(args, tmp_path)
    for name in ("ct.csv", "intervals.jsonl", "raw.bin"):
        assert (on / name).read_bytes() == (off / name).read_bytes(), name
    assert host_runs(on / "vboard-stats.json").get("montmul", 0) > 1_000_000


def test_the_stack_depth_is_the_same_when_the_call_leaves_part_of_its_frame_unwritten(tmp_path):
    """The harness's own transcript digest (its keccak_f1600, lanes) leaves words of its frame
    unwritten: a call run on the host must leave them too, or the stack meter, which looks for the
    deepest word that is not its paint, reads a deeper stack (648 bytes, not 644, on the control)."""
    args = ["ct", "--scheme", "control-branch", "--impl", "ct", "-n", "20", "--fixed-n", "-j", "1",
            "--no-taint", "--no-report"]
    on, off = both_ways(args, tmp_path)
    for name in ("ct.csv", "intervals.jsonl"):  # the profiler's too
        assert (on / name).read_text() == (off / name).read_text(), name
    assert host_runs(on / "vboard-stats.json").get("lanes", 0) > 50


def test_the_exact_checks_signatures_cost_the_same_when_its_replays_meet_a_call_run_on_the_host(tmp_path):
    """Falcon-512 fpnative's exact check replays its permutation's summary while it still follows
    the permutation's instructions, whose code hook ends its entry block 72 bytes early: run on the
    host from that block with the time recorded after the whole one, the confirming variants' calls
    came out 18 cycles short each. The check's device transcript must be the emulated one."""
    on, off = both_ways(["taint", "--scheme", "falcon-512", "--impl", "fpnative", "-n", "1"], tmp_path)
    for name in (*TAINT_OUTPUTS, "taint.csv"):
        assert (on / name).read_bytes() == (off / name).read_bytes(), name
    assert host_runs(on / "vboard-stats.json").get("interleaved", 0) > 1_000


def test_a_measurement_and_its_exact_check_are_the_same_with_calls_run_on_the_host(tmp_path):
    row = ["--scheme", "sphincs-shake-128f-simple", "--impl", "clean", "-n", "1"]
    on, off = both_ways(["run", *row], tmp_path / "run")
    assert (on / "raw.bin").read_bytes() == (off / "raw.bin").read_bytes()
    assert host_runs(on / "vboard-stats.json").get("interleaved", 0) > 100_000
    on, off = both_ways(["taint", *row], tmp_path / "taint")
    for name in TAINT_OUTPUTS:
        assert (on / name).read_bytes() == (off / name).read_bytes(), name
    assert host_runs(on / "vboard-stats.json").get("interleaved", 0) > 100_000


@pytest.mark.slow
def test_the_constant_time_test_of_pqm4s_keccak_is_the_same_with_calls_run_on_the_host(tmp_path):
    on, off = both_ways(["ct", "--scheme", "sphincs-shake-128f-simple", "--impl", "clean"], tmp_path)
    for name in TAINT_OUTPUTS:
        assert (on / "taint" / name).read_bytes() == (off / "taint" / name).read_bytes(), name
    for shard in sorted((on / "shards").iterdir()):
        assert same_prefix(shard / "intervals.jsonl", off / "shards" / shard.name / "intervals.jsonl") >= 2
        assert host_runs(shard / "vboard-stats.json").get("interleaved", 0) > 100_000


@pytest.mark.slow
def test_flash_wait_states_keep_every_call_emulated(tmp_path):
    on, off = both_ways(["run", "--scheme", "sphincs-shake-128f-simple", "--impl", "clean", "-n", "1",
                         "--clock", "fast"], tmp_path)
    assert (on / "raw.bin").read_bytes() == (off / "raw.bin").read_bytes()
    assert host_runs(on / "vboard-stats.json") == {}
