#!/usr/bin/env python3
"""Wall times of constant-time verdicts on the virtual board (issue #15's targets), printed, never
asserted: speed depends on the machine, so it is measured here and not in the tests.

    .venv/bin/python tests/bench/ct_bench.py                 # every case
    .venv/bin/python tests/bench/ct_bench.py fpnative controls analysis

Cases: fpnative (Falcon-512 fpnative -> leak), fpemu-m4 (the default command, --seeds of them ->
no-leak each), controls (each leaky control -> leak), analysis (the analysis of 24,000 synthetic
signatures with 100 profiled functions)."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "host-tools/src"))


def timed_ct(scheme: str, impl: str, seed: str, *options: str) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as scratch:
        started = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-m", "pqscope", "ct", "--scheme", scheme, "--impl", impl, "--seed", seed,
             "--out", str(Path(scratch) / "ct"), "--json", *options],
            capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})
        elapsed = time.monotonic() - started
    if result.returncode != 0:
        raise SystemExit(f"{scheme}/{impl}: {result.stderr.strip()}")
    return elapsed, json.loads(result.stdout)


def report(label: str, elapsed: float, document: dict) -> None:
    n = document["n"]
    print(f"{label}: {document['verdict']} in {elapsed:.1f} s ({n['fixed'] + n['random']} signatures; "
          f"{document.get('sequential', {}).get('stopped') or 'all -n'})", flush=True)


def bench_fpnative(args) -> None:
    report("falcon-512 fpnative", *timed_ct("falcon-512", "fpnative", "c7"))


def bench_fpemu_m4(args) -> None:
    for seed in range(1, args.seeds + 1):
        report(f"falcon-512 fpemu-m4 seed {seed:02x}", *timed_ct("falcon-512", "fpemu-m4", f"{seed:02x}"))


def bench_controls(args) -> None:
    for pattern in ("early-exit", "branch", "udiv"):
        report(f"control-{pattern} leaky", *timed_ct(f"control-{pattern}", "leaky", "c7"))


def bench_analysis(args) -> None:
    import numpy as np

    from pqscope.ct import CtSample, analyse
    from pqscope.protocol import Status

    rng = np.random.default_rng(1)
    signatures, functions = 24_000, 100
    samples, intervals = [], []
    for index in range(signatures):
        cycles = rng.integers(0, 50, functions) + 1000
        samples.append(CtSample(index, index % 2, 0, bytes(32), int(cycles.sum()), 0, Status.OK))
        intervals.append({"sample_id": index, "functions": {f"f{i}": [int(c), 1] for i, c in enumerate(cycles)}})
    started = time.monotonic()
    result = analyse(samples, intervals, None)
    print(f"analysis of {signatures:,} signatures x {functions} functions: {result.verdict} in "
          f"{time.monotonic() - started:.1f} s", flush=True)


CASES = {"fpnative": bench_fpnative, "fpemu-m4": bench_fpemu_m4, "controls": bench_controls,
         "analysis": bench_analysis}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*", choices=list(CASES), default=[], metavar="case",
                        help=f"one of {', '.join(CASES)} (default: all)")
    parser.add_argument("--seeds", type=int, default=10, help="fpemu-m4 runs (default 10)")
    args = parser.parse_args()
    for name in args.cases or CASES:
        CASES[name](args)


if __name__ == "__main__":
    main()
