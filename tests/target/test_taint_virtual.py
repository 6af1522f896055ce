"""`pqscope taint` on the virtual board (issue #17): the exact check finds each leaky control's
secret-dependent instruction at its source line, and nothing in its constant-time twin; the
constant-time schemes' only findings are what their catalogue rows declare public (ML-DSA's
rejections, Falcon's sampler and restarts, the signature) or notes, while native-double Falcon
leaks in libgcc's soft-float routines."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

CONTROL = "firmware/schemes/controls/control.c"
# Each leaky control's finding: its kind and what its source line holds.
LEAKS = {"early-exit": ("branch", "if (sk[i] > KEY_LIMIT)"), "branch": ("branch", "(sk[0] & 1) ?"),
         "udiv": ("division", "n / d")}


def taint(scheme: str, impl: str, tmp_path) -> dict:
    result = subprocess.run([sys.executable, "-m", "pqscope", "taint", "--scheme", scheme, "--impl", impl, "--seed", "7",
                             "--out", str(tmp_path / "taint"), "--json"],
                            capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=600)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("pattern", LEAKS)
def test_a_leaky_control_is_found_at_its_line(pattern, tmp_path):
    document = taint(f"control-{pattern}", "leaky", tmp_path)
    kind, code = LEAKS[pattern]
    lines = (ROOT / CONTROL).read_text().splitlines()
    leaks = [finding for finding in document["findings"] if finding["leak"]]
    assert document["verdict"] == "leak" and document["signatures"] == 2
    at_the_leak = [finding for finding in leaks if finding["kind"] == kind and finding["file"] == CONTROL
                   and code in lines[finding["line"] - 1]]
    assert at_the_leak and all(finding["function"].startswith("key_dependent_value") for finding in at_the_leak), leaks


@pytest.mark.parametrize("pattern", LEAKS)
def test_a_constant_time_twin_has_no_finding(pattern, tmp_path):
    document = taint(f"control-{pattern}", "ct", tmp_path)
    assert (document["verdict"], document["findings"]) == ("no-leak", [])
    assert document["instructions"] > 0


# Each constant-time scheme and a declassification its signatures must exercise (so that a clean
# result is not an empty one).
CONSTANT_TIME = {("falcon-512", "fpemu-c"): "falcon-sampler", ("falcon-512", "fpemu-m4"): "falcon-sampler",
                 ("ml-dsa-44", "m4f"): "ml-dsa-rejection", ("ml-dsa-44", "clean"): "ml-dsa-rejection",
                 ("fndsa_provisional-512", "m4f"): "falcon-sampler"}


@pytest.mark.parametrize("scheme,impl", CONSTANT_TIME)
def test_a_constant_time_scheme_has_only_declassified_findings(scheme, impl, tmp_path):
    document = taint(scheme, impl, tmp_path)
    assert document["verdict"] == "no-leak" and document["instructions"] > 0
    undeclassified = [f for f in document["findings"] if not f["declassified"]]
    assert all(f["kind"] in ("address", "select") for f in undeclassified), undeclassified
    reasons = {reason for f in document["findings"] for reason in f["declassified_by"]}
    assert CONSTANT_TIME[scheme, impl] in reasons, reasons
    first, *later = document["coverage"]["new_instructions"]
    assert len(later) == 1 and first > 0 and document["coverage"]["instructions"] == first + sum(later)


def test_native_double_falcon_leaks_in_the_soft_float_routines(tmp_path):
    document = taint("falcon-512", "fpnative", tmp_path)
    leaks = {f["function"] for f in document["findings"] if f["leak"]}
    assert document["verdict"] == "leak"
    assert {"__aeabi_dadd", "__muldf3", "__divdf3"} <= leaks, leaks
    assert all(function.startswith("__") for function in leaks), leaks  # libgcc's and libm's only


def test_ct_shows_the_exact_check_beside_its_localisation(tmp_path):
    """The statistics localise control-branch's leak in the hashing its secret branch calls; the
    exact check names the branch itself: the report and ct.json carry both."""
    out = tmp_path / "ct"
    result = subprocess.run([sys.executable, "-m", "pqscope", "ct", "--scheme", "control-branch", "--impl", "leaky",
                             "--seed", "c7", "--taint", "--out", str(out)],
                            capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=600)
    assert result.returncode == 0, result.stderr
    document = json.loads((out / "ct.json").read_text())
    assert document["verdict"] == "leak" and document["taint"]["verdict"] == "leak"
    inside = document["taint"]["in_top_functions"]
    leaking = {function for function, found in inside.items() if found["leaks"]}
    assert leaking == {"key_dependent_value"}, inside
    assert document["top_functions"][0]["function"] != "key_dependent_value"  # where the time goes
    assert "exact check (2 signatures): leak" in result.stdout
    report = (out / "report.html").read_text()
    assert "The exact check beside it" in report and "control.c:" in report
    assert (out / "taint" / "taint.json").is_file()


@pytest.mark.parametrize("impl,region", [("leaky", "flash"), ("ct", "sram")])
def test_a_secret_table_lookup_is_a_note_at_24_mhz_and_names_its_memory(impl, region, tmp_path):
    """control-flash-table looks its table up by key bytes in flash (leaky) or in an SRAM copy
    (ct): at 24 MHz with 0 wait states both cost the same every time, so the exact check notes the
    secret address, with the memory it hit, and finds no leak."""
    document = taint("control-flash-table", impl, tmp_path)
    lines = (ROOT / CONTROL).read_text().splitlines()
    assert document["verdict"] == "no-leak"
    lookups = [f for f in document["findings"] if f["kind"] == "address" and f["file"] == CONTROL
               and "table[sk[i]]" in lines[f["line"] - 1]]
    assert lookups and {f["region"] for f in lookups} == {region}, document["findings"]
    assert not any(f["leak"] for f in document["findings"])
