"""The main job on the virtual board (`pqscope run` of a suite): each member's cycles, then its
constant-time test with the exact check, gathered into one document and report. A suite of the
rows whose verdicts the mission names (native-double Falcon leaks, its M4 emulation and ML-DSA do
not), with the sections the same suite through boards has (tests/python/test_main_job.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pqscope.results import store

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/python"))

from main_job import SECTIONS  # noqa: E402
from report_layout import blemishes, html_sections, markdown_sections, too_wide  # noqa: E402

MEMBERS = ("ml-dsa-44/m4f", "falcon-512/fpnative", "falcon-512/fpemu-m4")
VERDICTS = {"ML-DSA-44 m4f": "no-leak", "Falcon-512 fpnative": "leak", "Falcon-512 fpemu-m4": "no-leak"}


def test_the_main_job_answers_with_cycles_verdicts_falcons_modes_and_words(tmp_path):
    out = tmp_path / "suite"
    members = [argument for row in MEMBERS for argument in ("--member", row)]
    result = subprocess.run([sys.executable, "-m", "pqscope", "run", *members, "-n", "4", "--seed", "c7", "--out",
                             str(out)], capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)},
                            timeout=1800)
    assert result.returncode == 0, result.stderr
    document = store.read(out / "suite-report.json")
    found = {item["name"]: item for item in document["implementations"]}
    assert {name: item["constant_time"]["verdict"] for name, item in found.items()} == VERDICTS
    derived = 0
    for name, item in found.items():
        exact = item["constant_time"]["exact_check"]
        # One signature's exact check for Falcon, whose signing and key generation take over 1e8 cycles.
        assert exact["signatures"] == (1 if name.startswith("Falcon") else 2)
        assert (exact["leaking_instructions"] > 0) == (VERDICTS[name] == "leak")
        assert item["stack_bytes"] > 0 and item["code_bytes"] > 0 and item["cycles"]["sign"] > 0
        assert item["ms"]["sign"]["24000000"] == pytest.approx(item["cycles"]["sign"] / 24e3, rel=1e-12)
        assert item["variance"]["max"] >= item["variance"]["min"] > 0
        # The verdict at a product's clock beside the benchmark's: the exact check at 168 MHz, derived
        # from the benchmark clock's when that has no load from flash at a secret address.
        (fast,) = item["constant_time"]["other_clocks"]
        assert fast["clock"] == {"name": "fast", "hz": 168_000_000, "flash_wait_states": 5}
        run_dir = out / item["constant_time"]["run_dir"]
        flash_loads = [f for f in json.loads((run_dir / "taint/taint.json").read_text())["findings"]
                       if f["kind"] == "address" and f["region"] == "flash" and not f["declassified"]]
        assert fast.get("derived", False) == (not flash_loads)
        derived += fast.get("derived", False)
        assert fast["verdict"] == VERDICTS[name] and (run_dir / fast["directory"]).is_dir()
    # ML-DSA's signing time varies several-fold with its public rejections, not with a secret.
    assert found["ML-DSA-44 m4f"]["variance"]["cv"] > 0.1
    native = found["Falcon-512 fpnative"]
    assert all(name.startswith("__") for name in native["constant_time"]["exact_check"]["leaking_functions"])
    (falcon,) = document["falcon"]
    modes = {mode["impl"]: mode for mode in falcon["modes"]}
    assert modes["fpemu-m4"]["price"]["sign"] > 0 and modes["fpnative"]["profile"]["fp_share"] > 0.3
    assert {"add", "mul", "div", "sqrt"} <= set(modes["fpemu-m4"]["profile"]["fp_primitives"])
    summary = " ".join(document["summary"])
    assert "Falcon-512 fpnative leaks" in summary and "(M4 assembly" in summary
    assert "No leak found in Falcon-512 fpemu-m4 and ML-DSA-44 m4f" in summary
    assert ("At 168 MHz, 5 wait states behind the ART, the exact check gives the same verdicts (3 tested"
            + (f", {derived} derived from the tests' clock: no load from flash at a secret address" if derived else "")
            + ")." in summary)
    assert "Falcon-512 fpnative (168 MHz: LEAK)" in result.stdout
    assert summary.replace("`", "").split("Largest stack")[0][:200] in result.stdout.replace("\n", " ")
    assert html_sections(out / "report.html") == markdown_sections(out / "report.md") == SECTIONS
    assert too_wide(out / "report.html", tmp_path) == [] and blemishes(out / "report.md") == []
    for member in ("falcon-512-fpnative", "ml-dsa-44-m4f"):  # each test's own report, with the exact check's findings
        assert blemishes(out / member / "ct/report.md") == []
