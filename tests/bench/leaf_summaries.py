#!/usr/bin/env python3
"""The exact check's leaf summaries (docs/pages/exact-check.md, "Leaf calls"): `pqscope taint -n 1`
of each row with the emulator replaying leaf calls and with every call tracked
(PQSCOPE_TAINT_LEAF_SUMMARIES=off), alternately, the fastest of ROUNDS each (the machine may be
shared); per row both emulator run times, their ratio, the leaf calls recorded and replayed, and
whether the two checks wrote the same files byte for byte.

    tests/bench/leaf_summaries.py [--rounds N] [--clock benchmark|fast] [ROW ...]   (ROW: scheme/impl)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/support"))
from gate_status import VERDICT_STATUSES  # noqa: E402
ROWS = ("sphincs-sha2-128f-simple/clean", "slh-dsa-sha2-128f/slhdsa-c", "sphincs-sha2-128s-simple/clean",
        "ml-dsa-44/m4f", "falcon-512/fpnative")
OUTPUTS = ("vboard-taint.json", "taint-calls.jsonl", "taint.json")


def check(row: str, clock: str, out: Path, summaries: str) -> dict:
    """The emulator's statistics of one `pqscope taint -n 1` of `row`."""
    scheme, impl = row.split("/")
    env = {**os.environ, "PQSCOPE_ROOT": str(ROOT), "PQSCOPE_TAINT_LEAF_SUMMARIES": summaries}
    result = subprocess.run([sys.executable, "-m", "pqscope", "taint", "--scheme", scheme, "--impl", impl, "-n", "1",
                             "--clock", clock, "--seed", "c7", "--out", str(out), "--json"],
                            capture_output=True, text=True, env=env)
    if result.returncode not in VERDICT_STATUSES:
        raise SystemExit(f"{row}: {result.stderr.strip()}")
    return json.loads((out / "vboard-stats.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--clock", default="benchmark")
    parser.add_argument("rows", nargs="*", default=list(ROWS), metavar="ROW")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pqscope-leaf-summaries-") as scratch:
        for row in arguments.rows:
            best, calls, same = {}, None, True
            for round_ in range(arguments.rounds):
                outs = {}
                for summaries in ("on", "off"):
                    outs[summaries] = Path(scratch) / f"{row.replace('/', '-')}-{summaries}-{round_}"
                    stats = check(row, arguments.clock, outs[summaries], summaries)
                    best[summaries] = min(best.get(summaries, float("inf")), stats["run_seconds"])
                    calls = stats["taint_leaf_calls"] if summaries == "on" else calls
                same &= all((outs["on"] / name).read_bytes() == (outs["off"] / name).read_bytes() for name in OUTPUTS)
            print(f"{row:34} summaries {best['on']:8.1f} s  every call tracked {best['off']:8.1f} s  "
                  f"{best['off'] / best['on']:5.1f}x  recorded {calls['recorded']:6} replayed {calls['replayed']:8}  "
                  f"{'same files' if same else 'FILES DIFFER'}", flush=True)


if __name__ == "__main__":
    main()
