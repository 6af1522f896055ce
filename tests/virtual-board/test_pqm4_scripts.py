"""pqm4's own firmware and scripts on the virtual board (tests/virtual-board/pqm4_own.py), for ML-DSA-44:
test.py and testvectors.py pass for m4f (the slow tier: every implementation pqm4 has of it, m4f,
m4fstack and PQClean's clean), and benchmarks.py's verification cycles for m4f are those `pqscope run` measures (ML-DSA
verification does not depend on the seed). tests/bench/pqm4_scripts.py runs the same for ML-DSA-44,
65 and 87 and FN-DSA-512 and prints the table of docs/pages/results/pqm4-and-qemu.md. The same
scripts pass on the virtual Nucleo-L4R5ZI for ML-DSA-44, FN-DSA-512 and MAYO-1 (slow: pqm4 builds
libopencm3 for the STM32L4 and every implementation pqm4 has of the three)."""

import json
import os
import subprocess
import sys

import pytest

from pqm4_own import ROOT, outcomes, pqm4_tree, run_script, served_board, speed_results

SCHEME = "ml-dsa-44"
MSG_LEN = 59  # pqm4's speed.c signs 59 bytes
L4R5_SCHEMES = ("ml-dsa-44", "fndsa_provisional-512", "mayo1")


@pytest.mark.parametrize("implementations", [
    pytest.param(("m4f",), id="m4f"),
    pytest.param(("m4f", "m4fstack", "clean"), id="every-implementation", marks=pytest.mark.slow),
])
def test_pqm4_scripts_pass_and_measure_what_pqscope_measures(implementations, tmp_path):
    tree = pqm4_tree(tmp_path / "tests", only={SCHEME: implementations})
    # testvectors.py compares the board's output with a host build of the scheme's clean code, which
    # it runs on the board too.
    with_reference = tuple(sorted({*implementations, "clean"}))
    trees = {"test.py": (tree, implementations),
             "testvectors.py": (pqm4_tree(tmp_path / "testvectors", only={SCHEME: with_reference}), with_reference)}
    # Flash timing free for the function tests: pqm4's test images run at 168 MHz, whose flash model
    # is several times slower to emulate; their cycles are not looked at.
    with served_board(tmp_path, "--flash-timing", "free") as link:
        for script, (script_tree, ran) in trees.items():
            result = run_script(script_tree, link, script, SCHEME)
            assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
            assert outcomes(result) == {f"{SCHEME}/{impl}": "SUCCESSFUL" for impl in ran}, script
    with served_board(tmp_path) as link:  # benchmarks at 24 MHz, priced as a Discovery
        result = run_script(tree, link, "benchmarks.py", "--nostack", "--nohashing", "--nosize", SCHEME)
        assert result.returncode == 0, result.stderr[-2000:]
    (pqm4,) = speed_results(tree, SCHEME, "m4f")

    run = subprocess.run([sys.executable, "-m", "pqscope", "run", "--scheme", SCHEME, "--impl", "m4f", "-n", "2",
                          "-j", "1", "--msg-len", str(MSG_LEN), "--out", str(tmp_path / "run"), "--no-report",
                          "--json"], capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)},
                         timeout=1800)
    assert run.returncode == 0, run.stderr
    ours = {result["op"]: result["cycles"] for result in json.loads(run.stdout)["results"]}
    assert abs(pqm4["verify"] / ours["verify"]["median"] - 1) < 0.02, (pqm4, ours["verify"])
    assert pqm4["keypair"] > 0 and pqm4["sign"] > 0


@pytest.mark.slow
def test_pqm4_scripts_pass_on_the_virtual_nucleo_l4r5zi(tmp_path):
    tree = pqm4_tree(tmp_path)
    with served_board(tmp_path, "--flash-timing", "free", platform="nucleo-l4r5zi") as link:
        for script in ("test.py", "testvectors.py"):
            result = run_script(tree, link, script, *L4R5_SCHEMES, platform="nucleo-l4r5zi")
            assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
            found = outcomes(result)
            assert {f"{scheme}/m4f" for scheme in L4R5_SCHEMES} <= found.keys(), (script, found)
            assert set(found.values()) == {"SUCCESSFUL"}, (script, found)
