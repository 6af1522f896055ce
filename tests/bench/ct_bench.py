#!/usr/bin/env python3
"""Wall times of constant-time verdicts on the virtual board (issue #15's targets), printed, never
asserted: speed depends on the machine, so it is measured here and not in the tests.

    .venv/bin/python tests/bench/ct_bench.py                 # every case
    .venv/bin/python tests/bench/ct_bench.py fpnative controls analysis
    .venv/bin/python tests/bench/ct_bench.py shards -j 1    # every ct with one shard

Cases: fpnative (Falcon-512 fpnative -> leak), fpemu-m4 (the default command, --seeds of them ->
no-leak each), fpemu-c-bound (Falcon-512 fpemu-c until no leak above 0.1 % of the mean is shown),
controls (each leaky control -> leak, the nonce controls' within 60 s: issue #30), twins (each
constant-time twin at 100,000 signatures -> no-leak), shards (ML-DSA-44 with -j 1 and -j 2: the wall times and whether the verdicts agree),
farm (a control's signatures per second on one and on two places of a labgrid farm on localhost,
serving virtual boards), analysis (the analysis of 24,000 synthetic signatures with 100 profiled
functions), taint (the exact check of one Falcon-512 signature per FP mode, issue #17's target: 60 s).
-j passes
its shard count to every ct but the shards case's (default: pqscope's, a shard per core)."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "host-tools/src"), str(ROOT / "tests/support")]
from gate_status import VERDICT_STATUSES  # noqa: E402


JOBS: list[str] = []  # -j for every ct, from the command line


def timed_ct(scheme: str, impl: str, seed: str, *options: str) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as scratch:
        started = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-m", "pqscope", "ct", "--scheme", scheme, "--impl", impl, "--seed", seed,
             "--out", str(Path(scratch) / "ct"), "--json", *JOBS, *options],
            capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})
        elapsed = time.monotonic() - started
    if result.returncode not in VERDICT_STATUSES:
        raise SystemExit(f"{scheme}/{impl}: {result.stderr.strip()}")
    return elapsed, json.loads(result.stdout)


def report(label: str, elapsed: float, document: dict) -> None:
    n = document["n"]
    bound = document.get("bound") or {}
    shown = (f"; no leak above {bound['share_of_mean']:.3%} of the mean"
             if document["verdict"] == "no-leak" and bound.get("share_of_mean") is not None else "")
    decided = sorted({item["by"] for item in document.get("evidence", [])})
    print(f"{label}: {document['verdict']} in {elapsed:.1f} s ({n['fixed'] + n['random']} signatures; "
          f"{document.get('sequential', {}).get('stopped') or 'all -n'}{shown}; decided by {', '.join(decided)})",
          flush=True)


def bench_fpnative(args) -> None:
    report("falcon-512 fpnative", *timed_ct("falcon-512", "fpnative", "c7"))


def bench_fpemu_m4(args) -> None:
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        report(f"falcon-512 fpemu-m4 seed {seed:02x}", *timed_ct("falcon-512", "fpemu-m4", f"{seed:02x}"))


def bench_fpemu_c_bound(args) -> None:
    report("falcon-512 fpemu-c --bound 0.1", *timed_ct("falcon-512", "fpemu-c", "c7", "--bound", "0.1",
                                                       "-n", "200000"))


# The leaky controls and their twins; the nonces' leaks are the exact check's alone (issue #30).
CONTROLS = ("early-exit", "branch", "udiv", "derived-nonce", "random-nonce", "nonce-division")


def bench_twins(args) -> None:
    for pattern in CONTROLS:
        report(f"control-{pattern} ct at 100,000", *timed_ct(f"control-{pattern}", "ct", "c7", "-n", "100000",
                                                             "--fixed-n"))


def bench_shards(args) -> None:
    verdicts = {}
    for jobs in (1, 2):
        elapsed, document = timed_ct("ml-dsa-44", "m4f", "c7", "-n", "2000", "--fixed-n", "-j", str(jobs))
        report(f"ml-dsa-44 m4f -j {jobs}", elapsed, document)
        # where it ran and on which boards differ by design; everything measured must not
        verdicts[jobs] = {key: value for key, value in document.items() if key not in ("run_dir", "boards")}
    differing = sorted(key for key in verdicts[1].keys() | verdicts[2].keys()
                       if verdicts[1].get(key) != verdicts[2].get(key))
    print(f"-j 1 and -j 2 agree: {'yes' if not differing else 'NO: ' + ', '.join(differing)}", flush=True)


def bench_farm(args) -> None:
    sys.path.insert(0, str(ROOT / "tests/virtual-board"))
    from labgrid_farm import LabgridFarm

    # Each place count runs a short and a long test: the difference of their wall times is the time
    # of the extra signatures alone, without what every test pays once (acquiring the places,
    # starting the boards, the analysis).
    scheme, impl, short, long = "control-branch", "ct", 2_000, 12_000
    subprocess.run([sys.executable, "-m", "pqscope", "build", "--board", "virtual", "--scheme", scheme, "--impl", impl],
                   check=True, capture_output=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})
    places = ("bench-a", "bench-b")
    with tempfile.TemporaryDirectory() as scratch, LabgridFarm(
            Path(scratch), ROOT / "build/host/boards/virtual/emulator/pqscope-vboard",
            ROOT / f"build/stm32f4discovery/images/{scheme}/{impl}.elf", places) as farm:
        rates = {}
        for count in (1, 2):
            times = {}
            for signatures in (short, long):
                times[signatures], document = timed_ct(
                    scheme, impl, "c7", "-n", str(signatures), "--fixed-n", "--board", "stm32f4discovery",
                    "--labgrid-coordinator", farm.coordinator,
                    *(arg for place in places[:count] for arg in ("--labgrid-place", place)))
                report(f"{scheme} {impl} on {count} labgrid place{'s' if count > 1 else ''}", times[signatures],
                       document)
            rates[count] = (long - short) / (times[long] - times[short])
            print(f"  {rates[count]:.0f} signatures per second ({long - short:,} more signatures took "
                  f"{times[long] - times[short]:.1f} s more); {long / times[long]:.0f} per second over the whole "
                  f"{long:,}-signature test", flush=True)
        print(f"two places / one place: {rates[2] / rates[1]:.2f}x", flush=True)


def bench_taint(args) -> None:
    for impl in ("fpnative", "fpemu-c", "fpemu-m4"):
        with tempfile.TemporaryDirectory() as scratch:
            started = time.monotonic()
            result = subprocess.run(
                [sys.executable, "-m", "pqscope", "taint", "--scheme", "falcon-512", "--impl", impl, "-n", "1",
                 "--seed", "c7", "--out", str(Path(scratch) / "taint"), "--json"],
                capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})
            elapsed = time.monotonic() - started
        if result.returncode not in VERDICT_STATUSES:
            raise SystemExit(f"falcon-512/{impl}: {result.stderr.strip()}")
        document = json.loads(result.stdout)
        print(f"taint of one falcon-512 {impl} signature (key generation included): {document['verdict']} in "
              f"{elapsed:.1f} s ({document['instructions']:,} instructions checked)", flush=True)


def bench_controls(args) -> None:
    for pattern in CONTROLS:
        report(f"control-{pattern} leaky", *timed_ct(f"control-{pattern}", "leaky", "c7"))


def bench_analysis(args) -> None:
    import numpy as np

    from pqscope.analysis.ct_analysis import analyse
    from pqscope.analysis.ct_schedule import CtSample
    from pqscope.link.protocol import Status
    from pqscope.results.documents.profile import ProfiledInterval

    rng = np.random.default_rng(1)
    signatures, functions = 24_000, 100
    samples, intervals = [], []
    for index in range(signatures):
        cycles = rng.integers(0, 50, functions) + 1000
        samples.append(CtSample(index, index % 2, 0, bytes(32), int(cycles.sum()), 0, Status.OK))
        intervals.append(ProfiledInterval.from_json(
            {"sample_id": index, "functions": {f"f{i}": [int(c), 1] for i, c in enumerate(cycles)}}))
    started = time.monotonic()
    result = analyse(samples, intervals, None)
    print(f"analysis of {signatures:,} signatures x {functions} functions: {result.verdict} in "
          f"{time.monotonic() - started:.1f} s", flush=True)


CASES = {"fpnative": bench_fpnative, "fpemu-m4": bench_fpemu_m4, "fpemu-c-bound": bench_fpemu_c_bound,
         "controls": bench_controls, "twins": bench_twins, "shards": bench_shards, "farm": bench_farm,
         "analysis": bench_analysis, "taint": bench_taint}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*", choices=list(CASES), default=[], metavar="case",
                        help=f"one of {', '.join(CASES)} (default: all)")
    parser.add_argument("--seeds", type=int, default=10, help="fpemu-m4 runs (default 10)")
    parser.add_argument("--first-seed", type=int, default=1, help="fpemu-m4's first seed (default 1), to continue "
                        "a series another session began")
    parser.add_argument("-j", "--jobs", type=int, help="shards of every ct (default: pqscope's)")
    args = parser.parse_args()
    if args.jobs:
        JOBS.extend(["-j", str(args.jobs)])
    for name in args.cases or CASES:
        CASES[name](args)


if __name__ == "__main__":
    main()
