"""`pqscope compare-falcon` end to end on the virtual board, with its default sample counts (about
ten minutes): the slow tier, ctest --preset stm32f4discovery-slow -R compare-falcon."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pqscope.results import store

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def test_compare_falcon_side_by_side(tmp_path):
    out = tmp_path / "compare"
    result = subprocess.run([sys.executable, "-m", "pqscope", "compare-falcon", "--seed", "c7", "--out", str(out),
                             "--json"], capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)},
                            timeout=3600)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document == store.read(out / "compare.json")
    assert (out / "report.html").is_file()

    native = document["modes"]["fpnative"]
    assert native["ct"]["verdict"] == "leak", native["ct"]["reason"]
    soft_float = [f["function"] for f in native["ct"]["top_functions"] if f["depends_on_class"]]
    assert any(name.startswith("__") for name in soft_float), soft_float
    for function in soft_float:
        assert function in (out / "report.html").read_text()
    for mode in ("fpemu-c", "fpemu-m4"):  # decided at the defaults: the exact check beside every test
        assert document["modes"][mode]["ct"]["verdict"] == "no-leak", document["modes"][mode]["ct"]["reason"]
    assert [mode["verdict"] for mode in document["falcon"][0]["modes"]] == ["leak", "no-leak", "no-leak"]
    assert document["price_of_constant_time"]["fpemu-c/fpnative"]["sign"] > 1

    verdicts = {(e["op"], e["mode"]): e["verdict"] for e in document["fp_operations"]}
    assert len(verdicts) == 18
    assert verdicts[("mul", "fpnative")] == "leak"
    assert all(verdicts[(op, mode)] == "no-leak" for op, mode in verdicts if mode != "fpnative"), verdicts
    assert all(e["cycles_per_op"] > 0 for e in document["fp_operations"])
