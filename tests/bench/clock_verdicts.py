#!/usr/bin/env python3
"""The constant-time verdicts of the Falcon and ML-DSA rows at both of the board's clocks on the
virtual board: 24 MHz with 0 flash wait states, and 168 MHz with 5 behind the ART accelerator.
Each `pqscope ct` (default test, seed 01) runs into runs/clocks/<clock>/<scheme>-<impl>/ and is
resumed there if it was interrupted; a finished one is read back. Prints one line per row and
whether the verdict is the same at both clocks.

    tests/bench/clock_verdicts.py [ROW ...]     (ROW: scheme/impl; default: all of them)
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/support"))
from gate_status import VERDICT_STATUSES  # noqa: E402
OUT = ROOT / "runs" / "clocks"
CLOCKS = ("benchmark", "fast")
ROWS = ("control-flash-table/leaky", "control-flash-table/ct", "ml-dsa-44/m4f", "falcon-512/fpnative",
        "falcon-512/fpemu-m4", "ml-dsa-44/m4fstack", "ml-dsa-65/m4f", "ml-dsa-87/m4f", "falcon-512/fpemu-c",
        "falcon-1024/fpnative", "falcon-1024/fpemu-m4")


def verdict(row: str, clock: str) -> tuple[dict, float]:
    """The row's ct.json at `clock` and the seconds this call took (0: read back)."""
    scheme, impl = row.split("/")
    path = OUT / clock / f"{scheme}-{impl}"
    if (path / "ct.json").exists():
        return json.loads((path / "ct.json").read_text()), 0.0
    command = ["--resume", str(path)] if (path / "meta.json").exists() else [
        "--scheme", scheme, "--impl", impl, "--clock", clock, "--seed", "01", "--out", str(path)]
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "pqscope", "ct", *command, "--json"], capture_output=True,
                            text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})
    if result.returncode not in VERDICT_STATUSES:
        raise SystemExit(f"{row} at {clock}: {result.stderr.strip()}")
    return json.loads(result.stdout), time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rows", nargs="*", default=list(ROWS), metavar="ROW")
    rows = parser.parse_args().rows
    for row in rows:
        results = {clock: verdict(row, clock) for clock in CLOCKS}
        cells = []
        for clock, (document, seconds) in results.items():
            n = document["n"]["fixed"] + document["n"]["random"]
            took = f", {seconds:.0f} s" if seconds else ""
            cells.append(f"{clock}: {document['verdict']} at {n} signatures (max |t| {document['max_abs_t']:.1f}{took})")
        same = len({document["verdict"] for document, _ in results.values()}) == 1
        print(f"{row}: {'; '.join(cells)}; {'same' if same else 'DIFFERENT'}", flush=True)


if __name__ == "__main__":
    main()
