#!/usr/bin/env python3
"""Issue #34's matrix on this machine, timed and printed, never asserted: `pqscope matrix` over its
default rows (every ML-DSA, FN-DSA and Falcon row, SPHINCS+-SHA2/SHAKE-128f) x 3 compilers x 5
levels, one emulator per core, into runs/matrix-bench/<timestamp>/. The toolchains' build trees
are removed first (--keep-trees keeps them), so the time includes building every image; the default
tree stays as it is. Prints the wall time by phase, how many cells are definite, how many decided
exactly as the kept document (tests/bench/results/matrix.json, docs/pages/results/matrix.md) did, and the matrix.

    .venv/bin/python tests/bench/matrix_bench.py [--keep-trees] [--ct-n N]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/support"))
from gate_status import VERDICT_STATUSES  # noqa: E402


DOCUMENT = ROOT / "tests" / "bench" / "results" / "matrix.json"
DECIDED = ("status", "sign_cycles", "code_sha256", "leaks")


def agreement_with_document(cells: list[dict]) -> str:
    """How many cells decided exactly as the kept document did (same code, verdict, cycles, leaks)."""
    def key(cell: dict) -> tuple:
        return cell["scheme"], cell["impl"], cell["compiler"], cell["opt"]
    documented = {key(cell): cell for cell in json.loads(DOCUMENT.read_text())["cells"]}
    compared, differing = 0, []
    for cell in cells:
        if key(cell) not in documented:
            continue
        compared += 1
        before = documented[key(cell)]
        changes = [f"{field} {before.get(field)!r:.60} -> {cell.get(field)!r:.60}"
                   for field in DECIDED if cell.get(field) != before.get(field)]
        if changes:
            differing.append(f"  {'/'.join(key(cell))}: " + ", ".join(changes))
    return "\n".join([f"as {DOCUMENT.relative_to(ROOT)} decided them: {compared - len(differing)} of {compared} "
                      "(code digest, verdict, signing cycles, leaks)", *differing])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep-trees", action="store_true", help="Keep the toolchains' build trees (time the checks)")
    parser.add_argument("--ct-n", default="10000", help="Signatures of each new leak's test on timing")
    arguments = parser.parse_args()
    if not arguments.keep_trees:
        for tree in (ROOT / "build").glob("stm32f4discovery.*"):
            shutil.rmtree(tree)
    out = ROOT / "runs" / "matrix-bench" / time.strftime("%Y%m%d-%H%M%S")
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "pqscope", "matrix", "--ct-n", arguments.ct_n, "--seed", "5",
                             "--out", str(out), "--json"], capture_output=True, text=True,
                            env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})
    seconds = time.monotonic() - started
    if result.returncode not in VERDICT_STATUSES:
        sys.exit(f"pqscope matrix failed: {result.stderr.strip().splitlines()[-1:]}")
    document = json.loads(result.stdout)
    cells = document["cells"]
    # A build that never signs is decided too (matrix.py: within its budget of cycles), and so is one
    # the compiler refuses (its error is the cell's answer); only a failure of the tool is not.
    definite = sum(cell["status"] in ("leak", "no-leak", "hang", "build-failed") for cell in cells)
    print(f"{len(document['rows'])} rows x {len(document['toolchains'])} builds = {len(cells)} cells in "
          f"{seconds / 60:.1f} min on {os.cpu_count()} cores (target 45 min): "
          + ", ".join(f"{what.replace('_', ' ')} {value / 60:.1f} min" for what, value in document["seconds"].items()))
    print(f"definite: {definite} of {len(cells)}; checked once for identical code: "
          f"{sum('same_code_as' in cell for cell in cells)}")
    print(agreement_with_document(cells))
    print(subprocess.run([sys.executable, "-m", "pqscope", "report", str(out), "--format", "md"], capture_output=True,
                         text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}).stdout)


if __name__ == "__main__":
    main()
