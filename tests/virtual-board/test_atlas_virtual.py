"""pqscope atlas on the virtual board, over three fast control rows (a constant-time twin and two
leaky ones), a row discovered from pqm4's tree (HAWK-512's reference code) and one that does not fit
the Discovery (MAYO-1): its shards run apart, one of them killed and resumed, merged give the
document of one run; the leaky controls' findings are reported leaks with their function, line,
secret and statistics, the twin has no finding unsorted; the tables have pqm4's columns and a line
per row, the row that does not fit listed with its status and reason; the HTML has the figure."""

import csv
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rich.console import Console

from pqscope.jobs.atlas import merge
from pqscope.project.errors import PqscopeError
from pqscope.results import store
from pqscope.results.documents.atlas import LEAK, AtlasDocument, RowKey
from pqscope.views import render
from pqscope.views.atlas import CSV_HEADINGS, SPEED_HEADINGS

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PQSCOPE_ROOT": str(ROOT)}
ROWS = ("control-branch/ct", "control-branch/leaky", "control-early-exit/leaky", "hawk512/ref")
LISTED = "mayo1/m4f"  # ok on the Nucleo-L4R5ZI only
# Two samples and the smallest test: the rows' answers, not their precision, are what is checked.
ARGUMENTS = [*(argument for row in (*ROWS, LISTED) for argument in ("--row", row)), "-n", "2", "--ct-n", "20",
             "--seed", "a7"]


def atlas(*arguments: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "pqscope", "atlas", *arguments], capture_output=True, text=True,
                            env=ENV, timeout=1800)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def document(path: Path) -> AtlasDocument:
    return AtlasDocument.from_json(store.read(path / "atlas.json"))


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("atlas") / "whole"
    atlas(*ARGUMENTS, "-j", "2", "--out", str(out))
    return out


def test_shards_run_apart_one_killed_and_resumed_merge_into_the_document_of_one_run(whole, tmp_path):
    shard1, shard2 = tmp_path / "shard1", tmp_path / "shard2"
    first = subprocess.Popen([sys.executable, "-m", "pqscope", "atlas", *ARGUMENTS, "-j", "1", "--shard", "1/2",
                              "--out", str(shard1)], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    second = subprocess.Popen([sys.executable, "-m", "pqscope", "atlas", *ARGUMENTS, "-j", "1", "--shard", "2/2",
                               "--out", str(shard2)], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
    # Shard 1/2 killed once its first row is done: its second row half measured or not started.
    while not list(shard1.glob("virtual/*/row.json")):
        assert first.poll() is None, "shard 1/2 ended before its first row was done"
        time.sleep(0.02)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    assert not (shard1 / "atlas.json").exists() and len(list(shard1.glob("virtual/*/row.json"))) == 1
    atlas("--resume", str(shard1))
    assert second.wait(timeout=1800) == 0, second.stderr.read()
    one, two = document(shard1), document(shard2)
    # The sorted rows dealt in turn: 1/2 the first and third, 2/2 the second and fourth.
    assert [entry.key.name for entry in one.entries] == [ROWS[0], ROWS[2]]
    assert [entry.key.name for entry in two.entries] == [ROWS[1], ROWS[3]]
    assert one.complete and two.complete and one.plan == two.plan == document(whole).plan
    atlas("--merge", str(shard2), "--merge", str(shard1), "--out", str(tmp_path / "merged"))
    assert document(tmp_path / "merged").to_json() == document(whole).to_json()
    # Merged with a shard missing: refused, naming a row it lacks.
    with pytest.raises(PqscopeError, match="control-branch/leaky"):
        merge([(shard1, one)])


def test_the_leaky_controls_findings_are_reported_leaks_and_nothing_is_unsorted(whole):
    atlas_document = document(whole)
    assert atlas_document.unsorted == ()
    verdicts = {entry.key.name: entry.verdict for entry in atlas_document.entries}
    assert verdicts == {"control-branch/ct": "no-leak", "control-branch/leaky": "leak",
                        "control-early-exit/leaky": "leak", "hawk512/ref": "no-leak"}
    for name in ("control-branch/leaky", "control-early-exit/leaky"):
        leaks = [finding for finding in atlas_document.findings_of(RowKey(*name.split("/"), "virtual"))
                 if finding.sort == LEAK]
        assert leaks, name
        for leak in leaks:
            assert leak.function.startswith("key_dependent_value") and leak.file.endswith("controls/control.c")
            assert leak.line > 0 and leak.kind == "branch" and leak.secret and leak.statistics
    assert all(finding.sort != LEAK for finding in atlas_document.findings_of(RowKey("control-branch", "ct", "virtual")))
    for entry in atlas_document.entries:
        assert set(entry.cycles) == {"keygen", "sign", "verify"} and entry.verified == entry.samples == 2
        assert entry.cycles["sign"].min <= entry.cycles["sign"].median <= entry.cycles["sign"].max
        assert entry.stack_bytes["sign"] > 0 and entry.text_bytes > 0
        assert entry.test.exact_signatures == 1 and entry.test.signatures >= 20
        # The controls and HAWK sign with SHAKE (Keccak): part of their time is hashing.
        assert 0 < entry.hashing_share < 1
    controls = [entry for entry in atlas_document.entries if entry.family == "control"]
    assert len(controls) == 3 and all(entry.sig_bytes == 32 and "keccak_f1600" in entry.hashing_functions
                                      for entry in controls)
    # The row that does not fit the Discovery is listed with its status and why, not measured.
    (listed,) = atlas_document.plan.listed
    assert listed.key.name == LISTED and listed.status == "does-not-fit" and "stack" in listed.reason


def test_the_tables_have_pqm4s_columns_and_a_line_per_row_and_the_page_its_figure(whole):
    markdown = (whole / "benchmarks.md").read_text().splitlines()
    speed = markdown.index("| " + " | ".join(SPEED_HEADINGS) + " |")
    rows = markdown[speed + 2:speed + 2 + len(ROWS)]
    assert [line.split(" | ")[1] for line in rows] == ["ct", "leaky", "leaky", "ref"]
    assert all(line.count("AVG: ") == 3 and line.endswith(("| leak |", "| no-leak |")) for line in rows)
    assert not markdown[speed + 2 + len(ROWS)].startswith("| ")
    assert markdown[markdown.index("# Not Measured") + 4].startswith("| mayo1 | m4f | does-not-fit | ")
    table = list(csv.reader(io.StringIO((whole / "benchmarks.csv").read_text())))
    assert tuple(table[0]) == CSV_HEADINGS and len(table) == 1 + len(ROWS) + 1
    verdict, status = CSV_HEADINGS.index("Constant time"), CSV_HEADINGS.index("Status")
    assert [(row[verdict], row[status]) for row in table[1:]] == [
        ("no-leak", "ok"), ("leak", "ok"), ("leak", "ok"), ("no-leak", "ok"), ("", "does-not-fit")]
    assert render(whole, "csv", Console()) == (whole / "benchmarks.csv").read_text()  # what `pqscope report` prints
    html = (whole / "report.html").read_text()
    assert '<img alt="signature bytes against median signing cycles' in html and "data:image/png;base64," in html
