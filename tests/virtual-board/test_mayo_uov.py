"""MAYO and UOV, which need more RAM than the Discovery has, sign and verify on the virtual
Nucleo-L4R5ZI (issue #56), each operation within the stack pqm4 measured for the same code on the
real board (its benchmarks.md at the pinned commit; skiplist.py's estimate is below pqm4's own
measurement for MAYO, so it is no bound). MAYO-1 in the quick tier; MAYO-2 and UOV (175 M cycles
of key generation) in the slow one."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

BOARD = "nucleo-l4r5zi-virtual"
PQM4 = Path(os.environ.get("PQSCOPE_PQM4", ROOT / "build/nucleo-l4r5zi/_deps/pqm4-src"))
HARNESS_FRAMES = 256  # the harness's frames around the implementation's, bytes
OPS = ("keygen", "sign", "verify")


def pqm4_stacks(scheme: str, impl: str) -> dict[str, int]:
    """pqm4's measured stack per operation (benchmarks.md, "Memory Evaluation")."""
    benchmarks = (PQM4 / "benchmarks.md").read_text()
    memory = benchmarks[benchmarks.index("# Memory Evaluation"):benchmarks.index("# Hashing Evaluation")]
    found = re.search(rf"^\| {re.escape(scheme)} \| {re.escape(impl)} \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \|", memory,
                      re.MULTILINE)
    assert found, f"pqm4's benchmarks.md has no stack of {scheme}/{impl}"
    return {op: int(value.replace(",", "")) for op, value in zip(OPS, found.groups())}


@pytest.mark.parametrize(("scheme", "impl"), [
    ("mayo1", "m4f"),
    pytest.param("mayo2", "m4f", marks=pytest.mark.slow),
    pytest.param("ov-Ip-pkc-skc", "m4fstack", marks=pytest.mark.slow),
])
def test_signs_and_verifies_on_the_virtual_nucleo_within_pqm4s_stack(scheme, impl, tmp_path):
    if not (PQM4 / "benchmarks.md").is_file():
        pytest.skip(f"no pqm4 tree at {PQM4}: configure the nucleo-l4r5zi preset first")
    result = subprocess.run([sys.executable, "-m", "pqscope", "run", "--board", BOARD, "--scheme", scheme,
                             "--impl", impl, "-n", "1", "--seed", "5eed", "--out", str(tmp_path / "run"), "--json",
                             "--no-report"], capture_output=True, text=True,
                            env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=3600)
    assert result.returncode == 0, result.stderr
    results = {entry["op"]: entry for entry in json.loads(result.stdout)["results"]}
    assert all(results[op]["n"] == results[op]["verified"] == 1 for op in OPS), results
    for op, theirs in pqm4_stacks(scheme, impl).items():
        assert results[op]["stack_bytes"] <= theirs + HARNESS_FRAMES, (op, results[op]["stack_bytes"], theirs)
