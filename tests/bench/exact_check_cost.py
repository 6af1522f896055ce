#!/usr/bin/env python3
"""The exact check's cost against an earlier revision (issue #54): the time of `pqscope taint -n N`
(default 2) of each row at each --clock (default benchmark) in this tree and in a checkout from
before, alternately, the fastest of ROUNDS each (the machine is shared), and their ratio. Each
check runs once untimed first, so that its image is built. Prints per row and clock: both times,
the ratio, the signatures the check signed (its -n and the confirming variants), both verdicts and
whether the two wrote the same taint.json and taint.csv.

    tests/bench/exact_check_cost.py --before DIR [--rounds N] [-n N] [--clock C ...] [ROW ...]
                                                                              (ROW: scheme/impl)

Measured with it: the relational confirmation against 5d024f8 (ML-DSA-44 and Falcon-512, the
default rows; acceptance at most 3x), and the 168 MHz exact check's speed-up against acc61ba
(`--clock benchmark --clock fast -n 1 sphincs-sha2-128f-simple/clean`).

DIR is a checkout of the revision before (e.g. 5d024f8, the commit before the emulator kept its
outcomes) with its build trees configured; from this tree, without fetching the dependencies again:

    git worktree add --detach /tmp/pqscope-before 5d024f8 && ln -s $PWD/.venv /tmp/pqscope-before/.venv
    deps=$PWD/build/stm32f4discovery/_deps; cd /tmp/pqscope-before && cmake --preset host &&
    cmake --preset stm32f4discovery -DFETCHCONTENT_FULLY_DISCONNECTED=ON
        -DFETCHCONTENT_SOURCE_DIR_PQM4=$deps/pqm4-src -DFETCHCONTENT_SOURCE_DIR_MBEDTLS=$deps/mbedtls-src
        -DFETCHCONTENT_SOURCE_DIR_PQM4_ROUND3=$deps/pqm4_round3-src -DFETCHCONTENT_SOURCE_DIR_UNITY=$deps/unity-src
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/support"))
from gate_status import VERDICT_STATUSES  # noqa: E402
ROWS = ("ml-dsa-44/m4f", "falcon-512/fpnative")


def check(root: Path, row: str, clock: str, n: int, out: Path) -> tuple[float, dict, int]:
    """`pqscope taint -n N` of `row` at `clock` with the tree at `root` (its host tool and build
    trees): the seconds it took, its document and how many signatures it signed."""
    scheme, impl = row.split("/")
    env = {**os.environ, "PQSCOPE_ROOT": str(root), "PYTHONPATH": str(root / "host-tools" / "src")}
    # The benchmark clock is every revision's default: one from before `--clock` takes it without.
    at_clock = [] if clock == "benchmark" else ["--clock", clock]
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "pqscope", "taint", "--scheme", scheme, "--impl", impl,
                             "-n", str(n), *at_clock, "--seed", "7", "--out", str(out), "--json"],
                            capture_output=True, text=True, env=env)
    seconds = time.monotonic() - started
    if result.returncode not in VERDICT_STATUSES:
        raise SystemExit(f"{row} in {root}: {result.stderr.strip()}")
    signed = len((out / "taint.csv").read_text().splitlines()) - 1
    return seconds, json.loads(result.stdout), signed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, metavar="DIR")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("-n", type=int, default=2)
    parser.add_argument("--clock", action="append", dest="clocks", metavar="CLOCK")
    parser.add_argument("rows", nargs="*", default=list(ROWS), metavar="ROW")
    arguments = parser.parse_args()
    trees = {"before": arguments.before.resolve(), "after": ROOT}
    with tempfile.TemporaryDirectory(prefix="pqscope-exact-check-cost-") as scratch:
        for row in arguments.rows:
            for clock in arguments.clocks or ["benchmark"]:
                measure(row, clock, arguments, trees, Path(scratch))


def measure(row: str, clock: str, arguments: argparse.Namespace, trees: dict[str, Path], scratch: Path) -> None:
    runs = 0

    def timed(name: str) -> tuple[float, dict, int, Path]:
        nonlocal runs
        runs += 1
        out = scratch / f"{row.replace('/', '-')}-{clock}-{name}-{runs}"
        return (*check(trees[name], row, clock, arguments.n, out), out)

    outs = {name: timed(name)[3] for name in trees}  # builds the image
    best: dict[str, tuple[float, dict, int, Path]] = {}
    for _ in range(arguments.rounds):
        for name in trees:
            measured = timed(name)
            if name not in best or measured[0] < best[name][0]:
                best[name] = measured
    (before, old, _, _), (after, new, signed, _) = best["before"], best["after"]
    same = all((outs["before"] / name).read_bytes() == (outs["after"] / name).read_bytes()
               for name in ("taint.json", "taint.csv"))
    print(f"{row} at {clock}: before {before:.1f} s, after {after:.1f} s: {after / before:.2f}x "
          f"({signed} signatures signed for -n {arguments.n}; verdict {old['verdict']} before, {new['verdict']} after; "
          f"{'same files' if same else 'FILES DIFFER'})", flush=True)


if __name__ == "__main__":
    main()
