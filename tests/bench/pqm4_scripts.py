#!/usr/bin/env python3
"""pqm4's own scripts against the virtual board (issue #33), printed, never asserted: test.py and
testvectors.py for ML-DSA-44/65/87 and FN-DSA-512 (every implementation pqm4 has of them; with
--platform nucleo-l4r5zi, on the virtual Nucleo-L4R5ZI, ML-DSA-44, FN-DSA-512 and MAYO-1), then
benchmarks.py's speed results for their m4f implementations beside `pqscope run`'s for the same
images' code, each over the same number of signatures of 59-byte messages (as pqm4's speed.c).
Both give their minimum and median cycles per operation: the seeds differ, so a signing's
rejection rounds differ, and the minimum (one round, in both) is what compares.

    .venv/bin/python tests/bench/pqm4_scripts.py [-n ITERATIONS] [--platform nucleo-l4r5zi]
    (results: runs/pqm4/results.json, runs/pqm4-nucleo-l4r5zi/results.json)"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "host-tools/src"), str(ROOT / "tests/virtual-board")]

from pqm4_own import VIRTUAL_BOARDS, outcomes, pqm4_tree, run_script, served_board, speed_results  # noqa: E402

# pqm4's platform -> the schemes run on its virtual twin
SCHEMES = {"stm32f4discovery": ("ml-dsa-44", "ml-dsa-65", "ml-dsa-87", "fndsa_provisional-512"),
           "nucleo-l4r5zi": ("ml-dsa-44", "fndsa_provisional-512", "mayo1")}
OPS = {"keypair": "keygen", "sign": "sign", "verify": "verify"}  # pqm4's names, ours


def ours(scheme: str, samples: int, directory: Path, board: str) -> dict[str, list[int]]:
    out = directory / f"run-{scheme}"
    result = subprocess.run([sys.executable, "-m", "pqscope", "run", "--board", board, "--scheme", scheme,
                             "--impl", "m4f", "-n",
                             str(samples), "--msg-len", "59", "--out", str(out), "--no-report"],
                            capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})
    if result.returncode:
        raise SystemExit(result.stderr)
    cycles: dict[str, list[int]] = {}
    for line in (out / "samples.csv").read_text().splitlines()[1:]:
        fields = line.split(",")
        cycles.setdefault(fields[1], []).append(int(fields[3]))
    return cycles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--iterations", type=int, default=10)
    parser.add_argument("--platform", choices=tuple(SCHEMES), default="stm32f4discovery", help="pqm4's platform")
    args = parser.parse_args()
    n, platform, schemes = args.iterations, args.platform, SCHEMES[args.platform]
    out = ROOT / ("runs/pqm4" if platform == "stm32f4discovery" else f"runs/pqm4-{platform}")
    out.mkdir(parents=True, exist_ok=True)
    document = {"iterations": n, "scripts": {}, "speed": {}}
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        tree = pqm4_tree(directory)
        with served_board(directory, "--flash-timing", "free", platform=platform) as link:
            for script in ("test.py", "testvectors.py"):
                started = time.monotonic()
                result = run_script(tree, link, script, *schemes, platform=platform)
                document["scripts"][script] = {"exit": result.returncode, "outcomes": outcomes(result),
                                               "seconds": round(time.monotonic() - started)}
                print(f"{script}: exit {result.returncode}, {time.monotonic() - started:.0f} s")
                for name, outcome in outcomes(result).items():
                    print(f"  {name}: {outcome}")
        with served_board(directory, platform=platform) as link:
            result = run_script(tree, link, "benchmarks.py", "-i", str(n), "--nostack", "--nohashing", "--nosize",
                                *schemes, platform=platform)
            print(f"benchmarks.py -i {n}: exit {result.returncode}")
        print(f"\n{'implementation':28} {'op':7} {'pqm4 min':>11} {'pqscope min':>12} {'diff':>7} "
              f"{'pqm4 median':>12} {'pqscope median':>15} {'diff':>7}")
        for scheme in schemes:
            theirs = speed_results(tree, scheme, "m4f")
            mine = ours(scheme, len(theirs), directory, VIRTUAL_BOARDS[platform])
            rows = document["speed"][f"{scheme}/m4f"] = {}
            for their_op, our_op in OPS.items():
                a, b = [r[their_op] for r in theirs], mine[our_op]
                rows[our_op] = {"pqm4": a, "pqscope": b}
                low, mid = min(a) / min(b) - 1, statistics.median(a) / statistics.median(b) - 1
                print(f"{scheme + ' m4f':28} {our_op:7} {min(a):>11,} {min(b):>12,} {low:>+7.2%} "
                      f"{statistics.median(a):>12,.0f} {statistics.median(b):>15,.0f} {mid:>+7.2%}")
    (out / "results.json").write_text(json.dumps(document, indent=1))


if __name__ == "__main__":
    main()
