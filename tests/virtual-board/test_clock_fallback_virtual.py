"""A board whose HSE does not start: the virtual board started without it (--without-hse) boots the
Discovery image on the HSI at the same 24 MHz, INFO says so, the host prints it and the run records
it, and every sample is the one the board with its HSE measures."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FALLBACK_LINE = "clock: HSI fallback, HSE did not start"


def _run(out: Path, *options: str) -> tuple[subprocess.CompletedProcess, dict, list[dict]]:
    result = subprocess.run(
        [sys.executable, "-m", "pqscope", "run", "--scheme", "ml-dsa-44", "--impl", "m4f", "-n", "2", "-j", "1",
         "--seed", "c10c", "--out", str(out), "--no-report", *options],
        capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=1800)
    assert result.returncode == 0, result.stderr
    meta = json.loads((out / "meta.json").read_text())
    return result, meta, list(csv.DictReader((out / "samples.csv").open()))


def test_without_its_hse_the_board_runs_on_the_hsi_and_says_so(tmp_path):
    with_hse, meta_hse, samples_hse = _run(tmp_path / "hse")
    without, meta, samples = _run(tmp_path / "hsi", "--without-hse")

    assert FALLBACK_LINE in without.stderr.splitlines()
    assert "clock:" not in with_hse.stderr
    assert (meta["info"]["clock_source"], meta["info"]["clock_fallback_reason"]) == ("HSI", "HSE did not start")
    assert (meta_hse["info"]["clock_source"], meta_hse["info"]["clock_fallback_reason"]) == ("HSE", "")
    assert meta["hse"] == "absent" and "hse" not in meta_hse
    assert meta["info"]["clock_hz"] == meta_hse["info"]["clock_hz"] == 24_000_000
    assert meta["status"] == "complete" and len(samples) == 6
    assert all(row["verified"] == "true" for row in samples)
    # The core's cycles do not depend on the oscillator behind the PLL.
    assert [{k: v for k, v in row.items() if k != "board"} for row in samples] == \
           [{k: v for k, v in row.items() if k != "board"} for row in samples_hse]
