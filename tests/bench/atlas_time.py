#!/usr/bin/env python3
"""pqscope atlas's wall time, printed, never asserted: one atlas of the rows chosen (by default a
few of each family on the virtual Discovery, or `--all`: every ok row of the boards given), then
per family its rows, the seconds its rows took, split into what each part of a row took (the
samples, the exact check, the statistics), and its slowest row; then the whole atlas's wall time.
A row's parts are its run directories' times (meta.json: started and finished, to the second);
with -j above 1 rows overlap, so the families' seconds add up to more than the wall time.

    .venv/bin/python tests/bench/atlas_time.py [--row SCHEME/IMPL ...] [--family F ...] [--board B ...]
        [--all] [-n 10] [-j N] [--out DIR] [--seed HEX]

The atlas's own output (its table and findings) is printed after the times."""

import argparse
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "host-tools/src"))
sys.path.insert(0, str(ROOT / "tests/support"))

from tool_command import PQSCOPE, tool_environment  # noqa: E402
from pqscope.results import store  # noqa: E402
from pqscope.results.documents.atlas import AtlasDocument  # noqa: E402
from pqscope.results.rundir import resume_parameters  # noqa: E402

# Without --row, --family or --all: a fast row or two of each family the catalogue has on the Discovery.
DEFAULT_ROWS = ("control-branch/ct", "control-branch/leaky", "ml-dsa-44/m4f", "fndsa_provisional-512/m4f",
                "falcon-512/fpemu-m4", "sphincs-sha2-128f-simple/clean", "slh-dsa-shake-128f/slhdsa-c",
                "ecdsa-p256/mbedtls")


def seconds(path: Path, kind: str) -> float:
    """A run directory's time from its start to its end (0 if it has none)."""
    if not (path / "meta.json").is_file():
        return 0.0
    meta = resume_parameters(path, kind=kind)
    if not (meta.started_at and meta.finished_at):
        return 0.0
    return (datetime.fromisoformat(meta.finished_at) - datetime.fromisoformat(meta.started_at)).total_seconds()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--row", action="append", default=[], help="SCHEME/IMPL (repeatable)")
    parser.add_argument("--family", action="append", default=[], help="a family (repeatable)")
    parser.add_argument("--board", action="append", default=[], help="a virtual board (repeatable)")
    parser.add_argument("--all", action="store_true", help="every ok row of the boards")
    parser.add_argument("-n", default="10")
    parser.add_argument("-j", default=None)
    parser.add_argument("--seed", default="a7")
    parser.add_argument("--out", type=Path)
    arguments = parser.parse_args()
    rows = arguments.row or ([] if arguments.all or arguments.family else list(DEFAULT_ROWS))
    with tempfile.TemporaryDirectory() as scratch:
        out = arguments.out or Path(scratch) / "atlas"
        command = [*PQSCOPE, "atlas", "-n", arguments.n, "--seed", arguments.seed,
                   "--out", str(out), *(["-j", arguments.j] if arguments.j else []),
                   *(option for row in rows for option in ("--row", row)),
                   *(option for family in arguments.family for option in ("--family", family)),
                   *(option for board in arguments.board for option in ("--board", board))]
        started = time.monotonic()
        atlas = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=tool_environment())
        wall = time.monotonic() - started
        if atlas.returncode != 0:
            sys.exit(f"pqscope atlas failed ({atlas.returncode}):\n{atlas.stderr}")
        document = AtlasDocument.from_json(store.read(out / "atlas.json"))
        families: dict[str, list[tuple[str, float, float, float]]] = {}
        for entry in document.entries:
            row = out / entry.key.directory
            parts = (seconds(row, "run"), seconds(row / "ct" / "taint", "taint"), seconds(row / "ct", "ct"))
            # The test's time includes its exact check's (a companion, measured first): the statistics are the rest.
            families.setdefault(entry.family, []).append(
                (f"{entry.key.name} ({entry.key.board})", parts[0], parts[1], max(0.0, parts[2] - parts[1])))
        print(f"pqscope atlas: {len(document.entries)} rows, -n {arguments.n}, -j {arguments.j or 'one per core'}")
        print(f"{'family':<16} {'rows':>4} {'seconds':>8} {'samples':>8} {'exact':>8} {'statistics':>10}  slowest row")
        for family, timed in families.items():
            totals = [sum(part[index] for part in timed) for index in (1, 2, 3)]
            slowest = max(timed, key=lambda part: sum(part[1:]))
            print(f"{family:<16} {len(timed):>4} {sum(totals):>8.0f} {totals[0]:>8.0f} {totals[1]:>8.0f} "
                  f"{totals[2]:>10.0f}  {slowest[0]} ({sum(slowest[1:]):.0f} s)")
        print(f"all: {wall:.0f} s wall time (pqscope's start, the images' build check and the reports included)")
        print()
        print(atlas.stdout, end="")


if __name__ == "__main__":
    main()
