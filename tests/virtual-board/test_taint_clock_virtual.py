"""The exact check at the product's clock (issue #54): control-flash-table's key-indexed loads from a
table in flash cost the same for every key at 24 MHz (0 wait states: a note, no-leak), but at 168 MHz
(5 wait states behind the ART's data cache) a load waits unless its line is cached, so the time
follows the key: a leak, at its line. The twin looks up in an SRAM copy, the same at both clocks."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from gate_status import gate_document

CONTROL = "firmware/schemes/controls/control.c"
CLOCKS = {"benchmark": {"name": "benchmark", "hz": 24_000_000, "flash_wait_states": 0},
          "fast": {"name": "fast", "hz": 168_000_000, "flash_wait_states": 5}}


def pqscope(*arguments: str) -> dict:
    result = subprocess.run([sys.executable, "-m", "pqscope", *arguments, "--seed", "7", "--json"],
                            capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=600)
    return gate_document(result)


def taint(impl: str, clock: str, tmp_path) -> dict:
    return pqscope("taint", "--scheme", "control-flash-table", "--impl", impl, "-n", "2", "--clock", clock,
                   "--out", str(tmp_path / f"taint-{impl}-{clock}"))


def the_lookup(document: dict) -> dict:
    """The check's only finding: the table lookup `table[sk[i]]`, an address on the key."""
    (finding,) = document["findings"]
    assert finding["kind"] == "address" and finding["function"] == "key_dependent_value", finding
    assert finding["file"] == CONTROL
    assert "table[sk[i]]" in (ROOT / CONTROL).read_text().splitlines()[finding["line"] - 1]
    return finding


@pytest.mark.parametrize("clock, verdict", [("benchmark", "no-leak"), ("fast", "leak")])
def test_a_key_indexed_flash_table_leaks_only_behind_the_flash_wait_states(clock, verdict, tmp_path):
    document = taint("leaky", clock, tmp_path)
    assert document["clock"] == CLOCKS[clock]
    assert document["verdict"] == verdict
    finding = the_lookup(document)
    assert finding["region"] == "flash" and finding["leak"] == (verdict == "leak")
    assert finding.get("timed", False) == (clock == "fast")  # absent at 0 wait states, as before the clock


def test_the_twins_lookups_in_sram_are_a_note_at_168_mhz(tmp_path):
    document = taint("ct", "fast", tmp_path)
    assert document["clock"] == CLOCKS["fast"] and document["verdict"] == "no-leak"
    finding = the_lookup(document)
    assert finding["region"] == "sram" and not finding["leak"] and "timed" not in finding


def test_the_constant_time_test_at_168_mhz_is_decided_by_its_exact_check_there(tmp_path):
    """`pqscope ct --clock fast` runs its exact check on the same 168 MHz board: its leak decides the
    verdict, after the 20 signatures the test takes once the exact check found one."""
    document = pqscope("ct", "--scheme", "control-flash-table", "--impl", "leaky", "-n", "100", "--clock", "fast",
                       "-j", "1", "--no-report", "--out", str(tmp_path / "ct"))
    assert document["clock"] == CLOCKS["fast"] and document["verdict"] == "leak", document["reason"]
    (decided,) = [item for item in document["evidence"] if item["by"] == "exact check"]
    assert decided["kind"] == "address" and decided["function"] == "key_dependent_value"
    assert document["n"]["fixed"] + document["n"]["random"] == 20


def same_findings(document: dict) -> list[tuple]:
    return sorted((f["kind"], f["address"], f["count"], f["region"], f["leak"]) for f in document["findings"])


@pytest.mark.parametrize("impl, fast", [("leaky", "leak"), ("ct", "no-leak")])
def test_the_constant_time_test_gives_both_clocks_verdicts_side_by_side(impl, fast, tmp_path):
    """`pqscope ct` at the benchmark clock gives the exact check's verdict at the fastest clock too:
    the test's own verdict stays 24 MHz's, the 168 MHz one stands beside it. With the key indexing a
    table in flash the check runs there (kept in taint-fast/); with lookups in SRAM only, the check
    at 24 MHz is the same at every clock and the verdict is derived, and it is what a check run at
    168 MHz finds, finding for finding."""
    out = tmp_path / f"ct-{impl}"
    document = pqscope("ct", "--scheme", "control-flash-table", "--impl", impl, "-n", "200", "--fixed-n",
                       "--no-report", "--out", str(out))
    assert document["verdict"] == "no-leak" and document["clock"]["hz"] == 24_000_000, document["reason"]
    (at_fast,) = document["other_clocks"]
    assert at_fast["clock"] == CLOCKS["fast"] and at_fast["verdict"] == fast
    assert at_fast["leaking_functions"] == (["key_dependent_value"] if fast == "leak" else [])
    assert at_fast.get("derived", False) == (impl == "ct") and (out / "taint-fast").is_dir() == (impl == "leaky")
    kept = json.loads((out / at_fast["directory"] / "taint.json").read_text())
    if impl == "leaky":
        assert kept["clock"] == CLOCKS["fast"] and kept["verdict"] == fast
    else:
        run_there = taint("ct", "fast", tmp_path)
        assert kept["clock"] == CLOCKS["benchmark"] and run_there["verdict"] == fast
        assert same_findings(run_there) == same_findings(kept) != []
