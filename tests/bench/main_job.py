#!/usr/bin/env python3
"""The main job as a newcomer runs it (issue #32's targets), timed and printed, never asserted: a
fresh clone of this checkout's HEAD, then its `host-tools/pqscope` (installation, builds, the
default suite, the constant-time tests, the report), and what its report says: each
implementation's verdict on signing and whether it is definite, the Falcon section, the summary.

    .venv/bin/python tests/bench/main_job.py [--keep DIR]

The clone's dependencies come from the network or from your git mirrors (url.<base>.insteadOf),
as any build's do; its Python environment is created anew (pip's cache makes it quick)."""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET_SECONDS = 6 * 60
DEFINITE = ("leak", "no-leak")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, help="clone into this (new) directory and keep it")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        clone = arguments.keep or Path(scratch) / "pqscope"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        out = clone / "runs" / "main-job"
        started = time.monotonic()
        job = subprocess.Popen([str(clone / "host-tools/pqscope"), "run", "--out", str(out)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        steps, errors = [], []
        for line in job.stderr:  # each step's line, when it came
            errors.append(line)
            if line.startswith("["):
                steps.append(f"{time.monotonic() - started:5.0f} s  {line.rstrip()}")
        job.wait()
        seconds = time.monotonic() - started
        if job.returncode != 0:
            sys.exit(f"the main job failed ({job.returncode}): {''.join(errors)[-2000:]}")
        document = json.loads((out / "suite-report.json").read_text())
        print(f"main job on a fresh clone: {seconds:.0f} s (target {TARGET_SECONDS} s) including installation and "
              "builds")
        for item in document["implementations"]:
            test = item["constant_time"] or {}
            verdict = test.get("verdict", "not tested")
            print(f"  {item['name']}: {verdict}{'' if verdict in DEFINITE else ' (NOT definite)'}; sign "
                  f"{item['cycles'].get('sign', 0) / 1e6:,.2f} M cycles; {test.get('reason', '')[:110]}")
        for falcon in document["falcon"]:
            print(f"  {falcon['name']} section: " + ", ".join(
                f"{mode['impl']} {mode['verdict']}" + ("" if mode["impl"] == "fpnative" else
                                                       f" {mode['price']['sign']:+.0%}") for mode in falcon["modes"]))
        print("summary:")
        for sentence in document["summary"]:
            print(f"  {sentence}")
        print("steps (seconds from the start; installation and builds come before the first):")
        for step in steps:
            print(f"  {step}")


if __name__ == "__main__":
    main()
