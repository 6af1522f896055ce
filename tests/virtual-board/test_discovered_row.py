"""A row discovered from pqm4's folders (issue #57), named by its scheme and impl as a catalogue row
is, builds from its pqm4 folder as it is (the board's bring-your-own tree) and signs and verifies on
the virtual Discovery, a corrupted signature rejected; a discovered row that does not fit the board is
refused before anything is built."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from pqscope.project.discovery import find_row, pqm4_tree
from pqscope.project.elf import read_symbols

# HAWK-512's reference code: one of the rows the issue's acceptance names, quick to build and sign.
SCHEME, IMPL = "hawk512", "ref"


@pytest.fixture(autouse=True)
def fetched_pqm4():
    if pqm4_tree(ROOT) is None:
        pytest.skip("no build tree has fetched pqm4: configure the stm32f4discovery preset")


def _pqscope(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pqscope", *args], env={**os.environ, "PQSCOPE_ROOT": str(ROOT)},
                          capture_output=True, text=True)


def test_a_discovered_row_named_by_scheme_and_impl_signs_and_verifies_from_its_pqm4_folder(tmp_path):
    row = find_row(ROOT, SCHEME, IMPL)
    assert (row.pqm4_folder, row.family, row.status_on("stm32f4discovery")) == (
        "mupq/crypto_sign/hawk512/ref", "HAWK", "ok")
    result = _pqscope("run", "--board", "virtual", "--scheme", SCHEME, "--impl", IMPL, "-n", "2", "--json",
                      "--no-report", "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr[-3000:]
    results = json.loads(result.stdout)["results"]
    assert [(entry["scheme"], entry["impl"], entry["op"], entry["n"], entry["verified"], entry["corrupt_accepted"])
            for entry in results] == [(SCHEME, IMPL, op, 2, 2, 0) for op in ("keygen", "sign", "verify")]
    meta = json.loads((tmp_path / "run/meta.json").read_text())
    # A row, not a bring-your-own directory (a resumed run finds it by name), built from pqm4's folder.
    assert meta.get("impl_dir") is None
    assert meta["elf"].endswith(f"build/stm32f4discovery.impl-dir/images/{SCHEME}/{IMPL}.elf")
    assert "hawk_sign_finish" in {symbol.name for symbol in read_symbols(ROOT / meta["elf"])}  # HAWK's hawk.h


def test_a_discovered_row_that_does_not_fit_is_one_error_before_any_build(tmp_path):
    row = find_row(ROOT, "mayo1", "ref")  # skiplist.py: 221,184 bytes, the Discovery has 128 KiB of SRAM
    result = _pqscope("run", "--board", "virtual", "--scheme", "mayo1", "--impl", "ref", "-n", "1",
                      "--out", str(tmp_path / "run"))
    assert result.returncode != 0
    assert result.stderr.splitlines()[-1] == (f"Error: mayo1 ref is not built for board stm32f4discovery "
                                              f"(does-not-fit): {row.reason_on('stm32f4discovery')}")
    assert not (tmp_path / "run" / "meta.json").exists()
