#!/usr/bin/env python3
"""How soon `pqscope ct` with its defaults decides each row on the virtual board (issue #57: every
catalogue row within 60 s on this 2-core machine, unloaded; a target printed, never asserted):
per row its wall time, the CPU time of the command and its emulators (what an unloaded machine's
two cores would share), the load beside it, its verdict and how it was decided (ct.json's
`sequential.stopped`, or all -n), and where the time went: each exact check (the test's clock and
the other clock, `taint-fast/`, unless derived from the first), the statistics' signatures and the
key pool's generation in them.

    tests/bench/ct_decides.py [--out DIR] [--board BOARD] [ROW ...]
      (ROW: scheme/impl; a finished DIR/ROW is read back; BOARD: a virtual board, default `virtual`,
      e.g. nucleo-l4r5zi-virtual for the rows that fit only the L4R5ZI)
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/support"))
from gate_status import VERDICT_STATUSES  # noqa: E402
from tool_command import PQSCOPE, tool_environment  # noqa: E402

# One row per family, then the SPHINCS+ and SLH-DSA 128f and 128s sets.
ROWS = ("ml-dsa-44/m4f", "falcon-512/fpemu-m4", "fndsa_provisional-512/m4f", "ecdsa-p256/mbedtls",
        "sphincs-sha2-128f-simple/clean", "slh-dsa-sha2-128f/slhdsa-c", "sphincs-sha2-128s-simple/clean",
        "slh-dsa-sha2-128s/slhdsa-c")
TARGET_SECONDS = 60


def seconds_between(meta: dict) -> float | None:
    """A capture's wall time from its meta.json (whole seconds)."""
    if not meta.get("started_at") or not meta.get("finished_at"):
        return None
    parse = lambda text: datetime.strptime(text, "%Y-%m-%dT%H:%M:%S%z")  # noqa: E731
    return (parse(meta["finished_at"]) - parse(meta["started_at"])).total_seconds()


def emulator(directory: Path) -> dict:
    path = directory / "vboard-stats.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def shard_stats(run: Path) -> list[dict]:
    """The emulator statistics of each shard of a capture (the capture's own if it had one shard)."""
    return [emulator(shard) for shard in sorted((run / "shards").glob("*"))] or [emulator(run)]


def emulators(stats: list[dict]) -> str:
    """Their slowest run's seconds, on how many, and their mean model cycles a second."""
    run = max((s.get("run_seconds", 0) for s in stats), default=0)
    rate = sum(s.get("model_cycles_per_second", 0) for s in stats) / max(len(stats), 1)
    return f"on {len(stats)} {run:.1f} s ({rate / 1e6:.0f} M/s"


def phases(out: Path) -> list[str]:
    """Each part of the test: its exact checks, then the statistics (emulator run seconds, model cycles/s)."""
    parts = []
    for check in sorted(out.glob("taint*")):
        stats, meta = shard_stats(check), json.loads((check / "meta.json").read_text())
        clock = (meta.get("result") or {}).get("clock", {}).get("hz") or stats[0].get("clock", {}).get("hclk_hz", 0)
        parts.append(f"exact check {clock / 1e6:.0f} MHz {meta.get('samples_completed')} sig {emulators(stats)})")
    meta = json.loads((out / "meta.json").read_text())
    keygen = sum(key["cycles"] for key in meta.get("keys") or [])
    rows = (out / "ct.csv").read_text().splitlines()[1:]
    signing = sum(int(row.split(",")[4]) for row in rows)
    parts.append(f"statistics {len(rows)} sig {emulators(shard_stats(out))}; "
                 f"{len(meta.get('keys') or [])} keys {keygen / 1e9:.2f} G cycles, signing {signing / 1e9:.2f} G)")
    return parts


def run_row(row: str, out: Path, board: str) -> tuple[float | None, float | None]:
    """`pqscope ct` with its defaults on `row` on `board` into `out` (wall and CPU seconds), unless
    done there."""
    if (out / "ct.json").is_file():
        return None, None
    scheme, impl = row.split("/")
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    result = subprocess.run([*PQSCOPE, "ct", "--scheme", scheme, "--impl", impl, "--board", board, "--out", str(out),
                             "--json"],
                            capture_output=True, text=True, env=tool_environment())
    wall, after = time.monotonic() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if result.returncode not in VERDICT_STATUSES:
        error = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit status {result.returncode}"
        raise Undecided(f"undecided after {wall:.0f} s wall, {cpu:.0f} s CPU: {error}")
    return wall, cpu


class Undecided(Exception):
    """The command ended without a verdict (its last line of error given)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "ct-decides")
    parser.add_argument("--board", default="virtual")
    parser.add_argument("rows", nargs="*", default=list(ROWS), metavar="ROW")
    arguments = parser.parse_args()
    print(f"pqscope ct, defaults, board {arguments.board}; target {TARGET_SECONDS} s a row on 2 unloaded cores",
          flush=True)
    for row in arguments.rows:
        out = arguments.out / row.replace("/", "-")
        load = os.getloadavg()[0]
        try:
            wall, cpu = run_row(row, out, arguments.board)
        except Undecided as undecided:
            print(f"{row:32} {'-':12} load {load:.1f}-{os.getloadavg()[0]:.1f}; {undecided}", flush=True)
            continue
        document = json.loads((out / "ct.json").read_text())
        meta = json.loads((out / "meta.json").read_text())
        wall = seconds_between(meta) if wall is None else wall
        decided = (document.get("sequential") or {}).get("stopped") or f"all {meta.get('samples_completed')} signatures"
        timing = f"{wall:6.0f} s wall" + ("" if cpu is None else f", {cpu:6.0f} s CPU") + \
            f", load {load:.1f}-{os.getloadavg()[0]:.1f}"
        print(f"{row:32} {document['verdict']:12} {timing}", flush=True)
        print(f"  decided: {decided}", flush=True)
        for part in phases(out):
            print(f"  {part}", flush=True)
        for derived in (item for item in document.get("other_clocks") or () if item.get("derived")):
            print(f"  exact check {derived['clock']['hz'] / 1e6:.0f} MHz derived: {derived['verdict']}", flush=True)


if __name__ == "__main__":
    main()
