"""The virtual board's profiler on a real image: intervals (one per signing call) with each
function's exclusive and inclusive cycles, the sample ids they carry, per-call cycle histograms
and block-trace hashes. Run by ctest with PQSCOPE_VBOARD_EXE and PQSCOPE_IMAGE set."""

import json
import os
import subprocess
from pathlib import Path

from pqscope.link.frames import FrameDecoder
from pqscope.link.messages import KeygenSlot, Run, Sample, SignSlot, decode_message, encode_message
from pqscope.link.protocol import Op

EMULATOR = os.environ["PQSCOPE_VBOARD_EXE"]
IMAGE = os.environ["PQSCOPE_IMAGE"]
HASHED_FUNCTION = "KeccakF1600_StatePermute"
PUBLIC_ROOT = "pqcrystals_dilithium_polyvec_matrix_expand"  # ExpandA: depends on the public seed rho
SAMPLE_ID_SYMBOL = "pqs_current_sample_id"  # the harness's sample id of the command it runs
PUBLIC_TIME = "(public-input functions)"
# ExpandA's per-polynomial sampler and everything it calls, none of which signing calls otherwise.
SAMPLER = "pqcrystals_dilithium_poly_uniform"
SAMPLER_CALLEES = ("pqcrystals_dilithium_dilithium_shake128_stream_init", "shake128_inc_squeeze",
                   "pqcrystals_dilithium_asm_rej_uniform")


def run_commands(commands: list, tmp_path: Path, *extra: str):
    stream = b"".join(b"\0" + encode_message(command, seq=i + 1) for i, command in enumerate(commands))
    tmp_path.mkdir(exist_ok=True)
    profile, intervals = tmp_path / "profile.json", tmp_path / "intervals.jsonl"
    result = subprocess.run(
        [EMULATOR, "--elf", IMAGE, "--uart", "stdio", "--profile", str(profile),
         "--profile-calls", HASHED_FUNCTION, "--intervals", str(intervals), "--interval-function", "run_sign",
         *extra],
        input=stream, capture_output=True, timeout=300)
    assert result.returncode == 0, result.stderr.decode()
    samples = [m for m in map(decode_message, FrameDecoder().feed(result.stdout)) if isinstance(m, Sample)]
    return (samples, json.loads(profile.read_text()),
            [json.loads(line) for line in intervals.read_text().splitlines()])


def run_samples(seeds: list[bytes], tmp_path: Path, *extra: str):
    return run_commands([Run(ops=(Op.SIGN,), msg_len=32, sample_id=i, seed=seed) for i, seed in enumerate(seeds)],
                        tmp_path, *extra)


def test_intervals_account_for_every_cycle_and_replay_identically(tmp_path):
    seed_a, seed_b = bytes([1]) * 32, bytes([2]) * 32
    samples, profile, intervals = run_samples([seed_a, seed_b, seed_a], tmp_path)

    assert len(intervals) == len(samples) == 3
    for interval, sample in zip(intervals, samples):
        assert "sample_id" not in interval  # only with --interval-id-symbol
        # Every cycle of the interval is attributed to exactly one function.
        assert sum(exclusive for exclusive, *_ in interval["functions"].values()) == interval["cycles"]
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
    public, public_calls, public_inclusive = split["functions"][PUBLIC_TIME]
    assert public > 0 and split["cycles"] == plain["cycles"]  # booking apart changes no timing
    assert public_calls == 0 and public_inclusive == public
    assert sum(exclusive for exclusive, *_ in split["functions"].values()) == split["cycles"]
    # The matrix expansion's Keccak calls moved out of the permutation's own total.
    moved = plain["functions"][HASHED_FUNCTION][0] - split["functions"][HASHED_FUNCTION][0]
    assert 0 < moved < public
    # Only exclusive time moves: calls and inclusive cycles stay under each function's name,
    # where a probe around the function on the device would find them.
    assert {name: counts[1:] for name, counts in split["functions"].items() if name != PUBLIC_TIME} == \
        {name: counts[1:] for name, counts in plain["functions"].items()}
    assert split["functions"][PUBLIC_ROOT][2] == public  # the one public root, called once


def test_inclusive_cycles_are_what_a_probe_around_each_call_would_sum(tmp_path):
    _, _, intervals = run_samples([bytes([6]) * 32], tmp_path)
    interval = intervals[0]
    functions = interval["functions"]

    # The interval is run_sign's call: its inclusive time, which brackets every other's, is the
    # interval's less the interrupts' (their time is their handler's).
    handled = functions.get("sys_tick_handler", (0, 0, 0))[2]
    assert functions["run_sign"][2] == interval["cycles"] - handled
    for name, (exclusive, _calls, inclusive) in functions.items():
        assert exclusive <= inclusive <= interval["cycles"], name
    # A function that calls nothing (the assembly permutation) spends all its inclusive time in
    # itself, whether an interrupt landed in it or not.
    exclusive, _calls, inclusive = functions[HASHED_FUNCTION]
    assert inclusive == exclusive
    # A caller's inclusive time is its own plus that of its callees, when it is their only caller.
    exclusive, calls, inclusive = functions[SAMPLER]
    assert [functions[callee][1] for callee in SAMPLER_CALLEES] == [calls] * len(SAMPLER_CALLEES)
    assert inclusive == exclusive + sum(functions[callee][2] for callee in SAMPLER_CALLEES)


def test_intervals_carry_the_sample_id_the_host_sent(tmp_path):
    # Ids unlike the positions, through both commands that sign; the key generation between them
    # is no interval (it does not call run_sign).
    seed = bytes([4]) * 32
    commands = [Run(ops=(Op.SIGN,), msg_len=32, sample_id=0xDEADBEEF, seed=seed),
                KeygenSlot(slot=0, sample_id=17, seed=seed),
                SignSlot(slot=0, sample_id=4_000_000_000, seed=seed, msg_len=32),
                SignSlot(slot=0, sample_id=5, seed=bytes([5]) * 32, msg_len=32)]
    samples, _, intervals = run_commands(commands, tmp_path, "--interval-id-symbol", SAMPLE_ID_SYMBOL)

    signed = [sample.sample_id for sample in samples if sample.op == Op.SIGN]
    assert signed == [0xDEADBEEF, 4_000_000_000, 5]
    assert [interval["sample_id"] for interval in intervals] == signed


def test_a_missing_sample_id_symbol_fails_at_start(tmp_path):
    result = subprocess.run(
        [EMULATOR, "--elf", IMAGE, "--uart", "stdio", "--intervals", str(tmp_path / "intervals.jsonl"),
         "--interval-function", "run_sign", "--interval-id-symbol", "no_such_symbol"],
        input=b"", capture_output=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.decode() == (
        "vboard: error: no data symbol 'no_such_symbol' in the ELF (--interval-id-symbol)\n")
