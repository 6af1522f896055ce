"""What the gates tell a CI system (issue #58), from typed documents: SARIF fingerprints that an edit
above a finding does not change, GitHub's limit on results, suppressions with their reason; JUnit's
outcome per matrix cell; workflow annotations escaped as the runner reads them; the baseline's
limits and the refusal of a baseline that does not compare."""

import xml.etree.ElementTree as ElementTree
from dataclasses import replace
from pathlib import Path

import click
import jsonschema
import pytest

from pqscope.cli.ci_outputs import report_to_ci
from pqscope.jobs.baseline import Limit, Limits, benchmark_entries, compare
from pqscope.project.errors import PqscopeError
from pqscope.project.toolchain import Toolchain
from pqscope.results.documents.matrix import CellResult, LeakLine, MatrixCell, MatrixDocument, MatrixPlan, Seconds
from pqscope.results.documents.runs import CycleStats, OpResult, RunsDocument
from pqscope.results.documents.taint import Finding, TaintDocument
from pqscope.views import sarif as sarif_view
from pqscope.views.ci import of_matrix, of_taint
from pqscope.views.ci_notes import annotations
from pqscope.views.junit import junit_text

CWD = Path("/work/library")
BRANCH = Finding("branch", 0x08000a1c, 4, False, None, "decompose", "/work/library/ref/rounding.c", 40)
DIVISION = Finding("division", 0x08000b00, 2, False, None, "reduce", "build/x/sources/s/i/reduce.c", 7)
DECLASSIFIED = Finding("branch", 0x08000c00, 9, True, None, "sample", "/work/library/ref/sampler.c", 12,
                       declassified_by=("sampler-public",))
NOTE = Finding("address", 0x08000d00, 3, False, "sram", "lookup", "/work/library/ref/table.c", 5)
REASONS = ({"kind": "decision", "what": "sample", "reason": "sampler-public", "why": "its rejections are public"},)


def taint(*findings: Finding) -> TaintDocument:
    return TaintDocument("mylib", "ref", "virtual", 2, 1000, "leak", findings, declassifications=REASONS)


def results(*findings: Finding) -> list[dict]:
    return sarif_view.sarif([of_taint(taint(*findings))], CWD)["runs"][0]["results"]


def test_sarif_locates_each_leak_and_suppresses_a_declassified_line_with_its_reason():
    found = results(BRANCH, DIVISION, DECLASSIFIED, NOTE)
    by_rule = {result["ruleId"]: result for result in found}
    assert set(by_rule) == {"secret-branch", "secret-division"} and len(found) == 3  # the note is left out
    leak = next(r for r in found if r["ruleId"] == "secret-branch" and "suppressions" not in r)
    assert leak["locations"][0]["physicalLocation"] == {"artifactLocation": {"uri": "ref/rounding.c"},
                                                        "region": {"startLine": 40}}
    assert by_rule["secret-division"]["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "reduce.c", "uriBaseId": "IMPLEMENTATION"}
    (suppressed,) = [r for r in found if "suppressions" in r]
    assert suppressed["level"] == "note"
    assert "its rejections are public" in suppressed["suppressions"][0]["justification"]


def test_a_fingerprint_survives_an_edit_above_its_line_and_not_a_move_to_another_function():
    (before,) = results(BRANCH)
    (moved,) = results(replace(BRANCH, line=52, address=0x08000a40))
    (elsewhere,) = results(replace(BRANCH, function="round"))
    assert before["partialFingerprints"] == moved["partialFingerprints"]
    assert before["partialFingerprints"] != elsewhere["partialFingerprints"]


def test_results_stop_at_the_code_hosts_limit_leaks_first(monkeypatch):
    monkeypatch.setattr(sarif_view, "MOST_RESULTS", 2)
    log = sarif_view.sarif([of_taint(taint(DECLASSIFIED, BRANCH, DIVISION))], CWD)
    (run,) = log["runs"]
    assert [r.get("suppressions") for r in run["results"]] == [None, None]
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert "1 of 3 results left out" in notification["message"]["text"]


def matrix(*cells: MatrixCell) -> MatrixDocument:
    plan = MatrixPlan("virtual", "00", 0, 2, (("mylib", "ref"),), tuple(cell.toolchain for cell in cells))
    return MatrixDocument(plan, Seconds(0, 0, 0), True, cells)


def cell(opt: str, result: CellResult) -> MatrixCell:
    return MatrixCell("mylib", "ref", Toolchain("gcc12", opt), result)


def test_junit_fails_a_leaking_cell_errs_without_a_verdict_and_skips_a_refused_build():
    leak = CellResult("leak", 100, "ab", (LeakLine("division", "reduce", "reduce.c", 7, 1, 2, False),))
    document = matrix(cell("-O0", leak), cell("-O2", CellResult("no-leak", 90, "cd", ())),
                      cell("-O3", CellResult("hang")), cell("-Os", CellResult("build-failed", error="refused")))
    suite = ElementTree.fromstring(junit_text(of_matrix(document), "matrix")).find("testsuite")
    outcomes = {case.get("name"): [child.tag for child in case] for case in suite}
    assert outcomes == {"mylib/ref gcc12 -O0": ["failure"], "mylib/ref gcc12 -O2": [],
                        "mylib/ref gcc12 -O3": ["error"], "mylib/ref gcc12 -Os": ["skipped"]}
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("1", "1", "1")
    assert "reduce.c:7" in suite.find("testcase/failure").get("message")


def test_annotations_name_the_checkouts_files_and_escape_what_the_runner_parses():
    commands = annotations([of_taint(taint(BRANCH, DIVISION))], CWD)
    assert commands[0].startswith("::error file=ref/rounding.c,line=40,title=pqscope%3A A branch on a secret "
                                  "(mylib/ref)::")
    assert commands[1].startswith("::error title=")  # a file outside the checkout: named in the message
    assert all("\n" not in command for command in commands)


def test_inside_github_actions_a_command_annotates_on_stderr_and_appends_its_summary(tmp_path, monkeypatch, capsys):
    summary = tmp_path / "summary.md"
    summary.write_text("an earlier step's summary\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    with click.Context(click.Command("taint")) as ctx:
        report_to_ci(ctx, "taint", [of_taint(taint(BRANCH))])
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("::error ") and "rounding.c:40 in decompose" in err
    text = summary.read_text()
    assert text.startswith("an earlier step's summary\n# pqscope taint")
    assert "| mylib/ref | leak | 1 | A branch on a secret at rounding.c:40 in decompose |" in text


def runs(sign_cycles: float, stack: int, board: str = "virtual") -> RunsDocument:
    stats = CycleStats(int(sign_cycles), sign_cycles, sign_cycles, sign_cycles, sign_cycles, int(sign_cycles), 0.0)
    return RunsDocument(board, 24_000_000, "/runs/x", (OpResult("mylib", "ref", "sign", 3, 3, 0, stats, stack, 1000),))


LIMITS = Limits(Limit.parse("+2%", "--max-cycles"), Limit.parse("+0", "--max-stack"), None)


@pytest.mark.parametrize("cycles, stack, regressed", [(1000, 500, False), (1020, 500, False), (1021, 500, True),
                                                      (900, 504, True), (900, 496, False)])
def test_the_baseline_gate_holds_each_figure_to_its_limit(cycles, stack, regressed):
    comparison = compare(runs(1000, 500), runs(cycles, stack), LIMITS, "old")
    assert comparison.regressed == regressed
    assert comparison.changes[0].operation == "mylib/ref sign"


def test_a_baseline_of_another_board_or_a_bad_limit_is_refused():
    with pytest.raises(PqscopeError, match="their cycles do not compare"):
        compare(runs(1000, 500, board="stm32f4discovery"), runs(1000, 500), LIMITS, "old")
    with pytest.raises(PqscopeError, match=r"--max-cycles '2 percent'.*\+N%"):
        Limit.parse("2 percent", "--max-cycles")


def test_benchmark_entries_are_what_github_action_benchmark_reads():
    schema = {"type": "array", "items": {"type": "object", "required": ["name", "unit", "value"],
                                         "properties": {"value": {"type": "number"}}}}
    entries = benchmark_entries(runs(1000, 500))
    jsonschema.validate(entries, schema)
    assert {entry["name"]: entry["value"] for entry in entries} == {
        "mylib/ref sign median cycles": 1000, "mylib/ref sign stack bytes": 500, "mylib/ref sign code bytes": 1000}
