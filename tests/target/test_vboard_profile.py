"""The virtual board's profiler on a real image: intervals (one per signing call), per-call cycle
histograms and block-trace hashes. Run by ctest with PQSCOPE_VBOARD_EXE and PQSCOPE_IMAGE set."""

import json
import os
import subprocess
from pathlib import Path

from pqscope.frames import FrameDecoder
from pqscope.protocol import Op, Run, Sample, decode_message, encode_message

EMULATOR = os.environ["PQSCOPE_VBOARD_EXE"]
IMAGE = os.environ["PQSCOPE_IMAGE"]
HASHED_FUNCTION = "KeccakF1600_StatePermute"
PUBLIC_ROOT = "pqcrystals_dilithium_polyvec_matrix_expand"  # ExpandA: depends on the public seed rho


def run_samples(seeds: list[bytes], tmp_path: Path, *extra: str):
    commands = b"".join(b"\0" + encode_message(Run(ops=(Op.SIGN,), msg_len=32, sample_id=i, seed=seed), seq=i + 1)
                        for i, seed in enumerate(seeds))
    tmp_path.mkdir(exist_ok=True)
    profile, intervals = tmp_path / "profile.json", tmp_path / "intervals.jsonl"
    result = subprocess.run(
        [EMULATOR, "--elf", IMAGE, "--uart", "stdio", "--profile", str(profile),
         "--profile-calls", HASHED_FUNCTION, "--intervals", str(intervals), "--interval-function", "run_sign",
         *extra],
        input=commands, capture_output=True, timeout=300)
    assert result.returncode == 0, result.stderr.decode()
    samples = [m for m in map(decode_message, FrameDecoder().feed(result.stdout)) if isinstance(m, Sample)]
    return (samples, json.loads(profile.read_text()),
            [json.loads(line) for line in intervals.read_text().splitlines()])


def test_intervals_account_for_every_cycle_and_replay_identically(tmp_path):
    seed_a, seed_b = bytes([1]) * 32, bytes([2]) * 32
    samples, profile, intervals = run_samples([seed_a, seed_b, seed_a], tmp_path)

    assert len(intervals) == len(samples) == 3
    for interval, sample in zip(intervals, samples):
        # Every cycle of the interval is attributed to exactly one function.
        assert sum(cycles for cycles, _calls in interval["functions"].values()) == interval["cycles"]
        # The interval is the signing call the device timed itself, up to the call's own cost.
        assert abs(interval["cycles"] - sample.cycles) < 100
    # Same seed, same control flow and time; a different seed signs differently.
    assert intervals[0]["trace_hash"] == intervals[2]["trace_hash"]
    assert intervals[0]["cycles"] == intervals[2]["cycles"]
    assert intervals[0]["trace_hash"] != intervals[1]["trace_hash"]

    # The per-call histogram of the permutation counts exactly the calls the intervals saw
    # (sign runs after keygen, which calls it too: the histogram holds at least as many).
    histogram = dict((cycles, count) for cycles, count in profile["call_distributions"][HASHED_FUNCTION])
    calls_in_intervals = sum(i["functions"][HASHED_FUNCTION][1] for i in intervals)
    summary = next(f for f in profile["functions"] if f["name"] == HASHED_FUNCTION)
    assert sum(histogram.values()) == summary["calls"] >= calls_in_intervals > 0


def test_public_input_functions_are_booked_apart(tmp_path):
    seed = bytes([3]) * 32
    (_, _, plain), (_, _, split) = (run_samples([seed], tmp_path / "plain"),
                                    run_samples([seed], tmp_path / "split", "--public-function", PUBLIC_ROOT))
    plain, split = plain[0], split[0]
    public = split["functions"]["(public-input functions)"][0]
    assert public > 0 and split["cycles"] == plain["cycles"]  # booking apart changes no timing
    assert sum(cycles for cycles, _calls in split["functions"].values()) == split["cycles"]
    # The matrix expansion's Keccak calls moved out of the permutation's own total.
    moved = plain["functions"][HASHED_FUNCTION][0] - split["functions"][HASHED_FUNCTION][0]
    assert 0 < moved < public
