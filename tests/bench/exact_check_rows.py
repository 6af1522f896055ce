#!/usr/bin/env python3
"""The exact check (`pqscope taint -n 2`, seed c7) of every catalogue row that builds, at the
board's benchmark clock (24 MHz, 0 wait states) and at its fastest (168 MHz, 5 behind the ART).
Each check runs into runs/exact/<clock>/<scheme>-<impl>/ and is resumed there if it was
interrupted; a finished one is read back. Prints a line per row: each clock's verdict, its
leaking instructions, the findings no secret changed (`unchanged`), the declassified ones, and
whether the verdict differs between the clocks; with --markdown, the table of the documentation's
results page (docs/pages/results/exact-check.md).

    tests/bench/exact_check_rows.py [--markdown | --clock CLOCK] [ROW ...]
        (ROW: scheme/impl; default: every row. --clock: that clock's checks only, the others left
        for a later run: the 24 MHz verdicts of the slowest rows first)
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/support"))
from gate_status import VERDICT_STATUSES  # noqa: E402
OUT = ROOT / "runs" / "exact"
CLOCKS = ("benchmark", "fast")


def catalogue_rows() -> list[str]:
    document = json.loads((ROOT / "firmware" / "schemes" / "catalogue.json").read_text())
    return [f"{row['scheme']}/{row['impl']}" for row in document["implementations"] if row.get("status") == "ok"]


def checked(row: str, clock: str) -> dict:
    """The row's taint.json at `clock`, checked now or read back."""
    scheme, impl = row.split("/")
    path = OUT / clock / f"{scheme}-{impl}"
    if (path / "taint.json").exists():
        return json.loads((path / "taint.json").read_text())
    command = ["--resume", str(path)] if (path / "meta.json").exists() else [
        "--scheme", scheme, "--impl", impl, "--clock", clock, "--seed", "c7", "--out", str(path)]
    result = subprocess.run([sys.executable, "-m", "pqscope", "taint", *command, "--json"], capture_output=True,
                            text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})
    if result.returncode not in VERDICT_STATUSES:
        raise SystemExit(f"{row} at {clock}: {result.stderr.strip()}")
    return json.loads(result.stdout)


def counts(document: dict) -> tuple[int, int, int]:
    """Leaking instructions, findings no secret changed, declassified findings."""
    findings = document["findings"]
    unchanged = sum((finding.get("relational") or {}).get("state") == "unchanged" for finding in findings)
    return (sum(finding["leak"] for finding in findings), unchanged,
            sum(finding["declassified"] for finding in findings))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print the documentation's table")
    parser.add_argument("--clock", choices=CLOCKS, help="check at this clock only")
    parser.add_argument("rows", nargs="*", metavar="ROW")
    arguments = parser.parse_args()
    if arguments.clock and arguments.markdown:
        parser.error("--markdown needs both clocks' checks: leave --clock out")
    lines = []
    for row in arguments.rows or catalogue_rows():
        if arguments.clock:
            document = checked(row, arguments.clock)
            leaks, unchanged, declassified = counts(document)
            print(f"{row:38} {arguments.clock} {document['verdict']:8} leaks {leaks:3} unchanged {unchanged:2} "
                  f"declassified {declassified:3}", flush=True)
            continue
        at = {clock: checked(row, clock) for clock in CLOCKS}
        (slow_leaks, slow_unchanged, declassified), (fast_leaks, fast_unchanged, _) = map(counts, at.values())
        same = at["benchmark"]["verdict"] == at["fast"]["verdict"]
        if arguments.markdown:
            lines.append(f"| {row.replace('/', ' ')} | {at['benchmark']['verdict']} | {slow_leaks} | {slow_unchanged} "
                         f"| {declassified} | {at['fast']['verdict']} | {fast_leaks} |")
        else:
            print(f"{row:38} 24 MHz {at['benchmark']['verdict']:8} leaks {slow_leaks:3} unchanged {slow_unchanged:2} "
                  f"declassified {declassified:3} | 168 MHz {at['fast']['verdict']:8} leaks {fast_leaks:3} "
                  f"unchanged {fast_unchanged:2}" + ("" if same else "  <- the clocks differ"), flush=True)
    if arguments.markdown:
        print("| row | 24 MHz | leaking instructions | unchanged | declassified | 168 MHz | leaking instructions |")
        print("|---|---|---|---|---|---|---|")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
