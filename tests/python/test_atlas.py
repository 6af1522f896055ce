"""pqscope atlas without an emulator: its document read back as written, shards dealt by position in
the sorted row list and merged into the whole's document, every exact-check finding sorted (and
what leaves one unsorted), the hashing functions per family, pqm4's tables, and every row chosen
(the catalogue's and the discovered ones) either measured or listed with its status and reason."""

import csv
import io
from dataclasses import replace

import pytest

from pqscope.jobs import atlas
from pqscope.jobs.atlas_rows import core, hashing, hashing_share, row_seed, sorted_findings
from pqscope.project.errors import PqscopeError
from pqscope.results.documents.atlas import (DECLASSIFIED, LEAK, NOTE, UNCHANGED, UNSORTED, AtlasDocument, AtlasEntry,
                                             AtlasFinding, AtlasPlan, ListedRow, RowKey, ShardPart, RowVerdict)
from pqscope.results.documents.ct import CtDocument
from pqscope.results.documents.profile import FunctionTime, ProfiledInterval
from pqscope.results.documents.relational import RelationalCheck
from pqscope.results.documents.runs import CycleStats
from pqscope.results.documents.taint import Finding, TaintDocument
from pqscope.views import atlas as view

ROWS = tuple(sorted(RowKey(scheme, impl, "virtual") for scheme, impl in (
    ("control-branch", "ct"), ("control-branch", "leaky"), ("ml-dsa-44", "m4f"), ("falcon-512", "fpnative"),
    ("sphincs-sha2-128f-simple", "clean"))))
LISTED = (ListedRow(RowKey("aimer192f", "m4speed", "virtual"), "AIMer", "does-not-fit",
                    "pqm4 measures 203,264 bytes of stack"),
          ListedRow(RowKey("cross-sha2-r-sdpg-1-small", "ref", "virtual"), "CROSS", "fails",
                    "a corrupted copy | accepted"))
PLAN = AtlasPlan(("virtual",), (), (), (), 10, "a7", 32, 100, 1, ROWS, LISTED)


def entry(key: RowKey, sign: int, verdict: str) -> AtlasEntry:
    stats = CycleStats(sign - 10, sign - 5, sign, sign + 1.4, sign + 5, sign + 10, 3.0)
    return AtlasEntry(key, "control", "00" * 32, 24_000_000, 10, 10, {"keygen": stats, "sign": stats, "verify": stats},
                      {"keygen": 300, "sign": 600, "verify": 700}, 18_000, 376, 2_552, 32, 32 + sign % 7, 0.5,
                      ("keccak_f1600",), RowVerdict(verdict, "why", verdict, 1, 1000, "inconclusive", 20, 1.5, 3.0, 0.01))


def finding(key: RowKey, sort: str) -> AtlasFinding:
    return AtlasFinding(key, sort, "branch", None, False, "f", "control.c", 42, "0x08000100", 3,
                        secret="the long-term key" if sort == LEAK else None)


def whole() -> AtlasDocument:
    entries = tuple(entry(key, 1000 * (index + 1), "leak" if key.impl == "leaky" else "no-leak")
                    for index, key in enumerate(ROWS))
    findings = tuple(finding(key, LEAK) for key in ROWS if key.impl == "leaky") + (finding(ROWS[-1], DECLASSIFIED),)
    return atlas.document(atlas.StartedAtlas(PLAN, None),
                          [atlas.RowResult(item, tuple(f for f in findings if f.key == item.key)) for item in entries])


def shard(document: AtlasDocument, part: ShardPart) -> AtlasDocument:
    rows = [key for position, key in enumerate(document.plan.rows) if part.owns(position)]
    return AtlasDocument(document.plan, part, tuple(e for e in document.entries if e.key in rows),
                         tuple(f for f in document.findings if f.key in rows))


def test_the_document_reads_back_as_it_was_written():
    document = whole()
    assert AtlasDocument.from_json(document.to_json()) == document
    # An atlas written before rows were listed left them out: it reads as listing none.
    older = document.to_json()
    del older["plan"]["listed"]
    assert AtlasDocument.from_json(older).plan == replace(PLAN, listed=())
    assert document.complete and document.to_json()["sorted"] == {
        DECLASSIFIED: 1, LEAK: 1, UNCHANGED: 0, NOTE: 0, UNSORTED: 0}


def test_shards_take_every_nth_row_of_the_sorted_list_and_merge_into_the_whole():
    document = whole()
    parts = [shard(document, ShardPart(index, 3)) for index in (1, 2, 3)]
    assert [[e.key for e in part.entries] for part in parts] == [list(ROWS[0::3]), list(ROWS[1::3]),
                                                                  list(ROWS[2::3])]
    assert all(part.complete for part in parts)
    merged = atlas.merge([(f"shard{index}", part) for index, part in zip((3, 1, 2), parts[::-1])])
    assert merged.to_json() == document.to_json() and merged.plan.listed == LISTED
    with pytest.raises(PqscopeError, match="lack 1 of the plan's 5 rows"):
        atlas.merge([("a", parts[0]), ("b", parts[1])])
    other = replace(parts[2], plan=replace(PLAN, master_seed="b8"))
    with pytest.raises(PqscopeError, match="another plan"):
        atlas.merge([("a", parts[0]), ("b", parts[1]), ("c", other)])


def test_a_rows_seed_is_its_names_not_its_position():
    seed = bytes.fromhex("a7")
    assert row_seed(seed, RowKey("ml-dsa-44", "m4f", "virtual")) == row_seed(seed, RowKey("ml-dsa-44", "m4f", "other"))
    assert row_seed(seed, ROWS[0]) != row_seed(seed, ROWS[1]) != row_seed(bytes.fromhex("a8"), ROWS[1])


def test_hashing_is_sha2_sha3_and_aes_wherever_they_are_but_not_a_namespace_that_names_sha2():
    assert hashing("ML-DSA", "KeccakF1600_StatePermute") and hashing("ML-DSA", "shake256_inc_absorb")
    assert hashing("SPHINCS+", "crypto_hashblocks_sha256.isra.0") and hashing("ECDSA", "mbedtls_internal_sha256_process")
    assert not hashing("SPHINCS+", "PQCLEAN_SPHINCSSHA2128FSIMPLE_CLEAN_treehashx1")
    assert hashing("FN-DSA", "fndsa_sha3_process_block") and not hashing("ML-DSA", "fndsa_sha3_process_block")
    assert hashing("SLH-DSA", "shake_wots_chain") and not hashing("Falcon", "falcon_inner_sampler")
    assert core("KeccakF1600_StatePermute") and core("crypto_hashblocks_sha256.isra.0")
    assert not core("shake256_inc_absorb") and not core("keccak_absorb")


def test_the_hashing_share_counts_a_core_with_its_callees_and_the_rest_with_its_own_cycles():
    # shake256_inc_absorb calls the permutation; inside a call booked apart as public the profiler keeps
    # only the permutation's cycles with its callees (its own are 0): they count all the same.
    interval = ProfiledInterval(0, 1000, {"shake256_inc_absorb": FunctionTime(50, 2, 450),
                                          "KeccakF1600_StatePermute": FunctionTime(0, 4, 400),
                                          "poly_ntt": FunctionTime(500, 1, 500)})
    share, functions = hashing_share("ML-DSA", [interval, interval])
    assert share == pytest.approx(0.45) and functions == ("KeccakF1600_StatePermute", "shake256_inc_absorb")
    assert hashing_share("ML-DSA", []) == (None, ())


def taint(*findings: Finding) -> TaintDocument:
    return TaintDocument("s", "i", "virtual", 1, 100, "leak", findings,
                         declassifications=({"kind": "decision", "what": "f", "reason": "rejection",
                                             "why": "a public rejection"},))


def raw(kind="branch", declassified=False, by=(), function="f", line=7, region=None, relational=None) -> Finding:
    return Finding(kind, 0x08000100, 4, declassified, region, function, "x.c" if line else None, line,
                   declassified_by=by, relational=relational)


def test_every_finding_is_sorted_and_what_leaves_one_unsorted():
    ct = CtDocument.from_json(CT_DOCUMENT)
    key = ROWS[0]
    findings = [raw(declassified=True, by=("rejection",)), raw(),
                raw(relational=RelationalCheck("unchanged", 8)), raw(kind="address", region="sram"),
                raw(kind="select"), raw(declassified=True, by=("unknown",)), raw(declassified=True),
                raw(function=None, line=None)]
    sorts = [item.sort for item in sorted_findings(key, taint(*findings), ct, [])]
    assert sorts == [DECLASSIFIED, LEAK, UNCHANGED, NOTE, NOTE, UNSORTED, UNSORTED, UNSORTED]
    first, leak = sorted_findings(key, taint(*findings[:2]), ct, [])
    assert [reason.why for reason in first.reasons] == ["a public rejection"]
    # No randomness drawn while signing: the key is the secret; the statistics' result beside it.
    assert leak.secret.startswith("the long-term key") and leak.statistics.startswith("inconclusive over 20 signatures")


def test_pqm4s_tables_have_its_columns_a_line_per_row_and_the_verdict():
    document = whole()
    markdown = view.benchmarks_md(document).splitlines()
    speed = markdown.index("| " + " | ".join(view.SPEED_HEADINGS) + " |")
    assert markdown[:2] == ["# Speed Evaluation", "## Signature Schemes"]
    rows = markdown[speed + 2:markdown.index("# Memory Evaluation")]
    assert len(rows) == len(ROWS) and rows[0].startswith("| control-branch (10 executions) | ct | AVG: 1,001 <br /> ")
    assert [line.rsplit(" | ", 1)[1] for line in rows] == [f"{e.verdict} |" for e in document.entries]
    table = list(csv.reader(io.StringIO(view.csv_text(document))))
    assert tuple(table[0]) == view.CSV_HEADINGS and len(table) == 1 + len(ROWS) + len(LISTED)
    assert table[1][:5] == ["control-branch (10 executions)", "ct", "1001", "990", "1010"]
    assert [row[-2:] for row in table[1:1 + len(ROWS)]] == [["ok", ""]] * len(ROWS)


def test_a_row_not_measured_is_in_every_table_with_its_status_and_reason():
    document = whole()
    markdown = view.benchmarks_md(document)
    listed = markdown[markdown.index("# Not Measured"):].splitlines()
    assert listed[1:3] == ["## Signature Schemes", "| Scheme | Implementation | Status | Reason |"]
    assert listed[4:] == ["| aimer192f | m4speed | does-not-fit | pqm4 measures 203,264 bytes of stack |",
                          "| cross-sha2-r-sdpg-1-small | ref | fails | a corrupted copy \\| accepted |"]
    table = list(csv.reader(io.StringIO(view.csv_text(document))))
    assert len(table) == 1 + len(ROWS) + len(LISTED)
    assert table[-1] == ["cross-sha2-r-sdpg-1-small", "ref", *[""] * 10, "virtual", "fails", "a corrupted copy | accepted"]
    assert "2 rows not measured (their status on the board is not ok): 1 does-not-fit, 1 fails" in view.summary(document)


CT_DOCUMENT = {
    "board": "virtual", "scheme": "s", "impl": "i", "verdict": "leak", "reason": "the exact check",
    "n": {"fixed": 10, "random": 10}, "max_abs_t": 1.2, "strongest_test": "raw", "tests": {},
    "nonparametric": {"mann_whitney": {"u": 1.0, "p": 0.5}, "kolmogorov_smirnov": {"d": 0.1, "p": 0.9}},
    "effect_size": 0.1, "samples_needed": None, "detectable_effect": 1.0, "bootstrap": {},
    "bound": {"cycles": 12.0, "share_of_mean": 0.001}, "failed_samples": 0, "corrupt_accepted": 0,
    "statistics": {"verdict": "inconclusive", "reason": "too few signatures"},
}


def test_the_rows_ok_on_the_board_are_measured_and_the_others_listed_each_sorted_by_name():
    from pqscope.measure.measurement import board_at_clock
    from pqscope.project.catalogue import Implementation
    from pqscope.project.paths import repo_root

    board = board_at_clock(repo_root(), "virtual", None)

    def row(scheme, impl, family, status="ok", boards=(), reasons=()):
        return Implementation(scheme, impl, family, 32, 32, 32, 2048, status, boards=boards, board_reasons=reasons)

    catalogue = [row("b", "x", "F1"), row("a", "y", "F2"), row("c", "z", "F1", "does-not-fit"),
                 row("d", "w", "F1", boards=(("stm32f4discovery", "fails"),), reasons=(("stm32f4discovery", "why"),))]
    listed = (ListedRow(RowKey("c", "z", "virtual"), "F1", "does-not-fit", ""),
              ListedRow(RowKey("d", "w", "virtual"), "F1", "fails", "why"))
    assert atlas.chosen_rows(catalogue, [board], (), (), ()) == (
        (RowKey("a", "y", "virtual"), RowKey("b", "x", "virtual")), listed)
    assert atlas.chosen_rows(catalogue, [board], ("f1",), (), ()) == ((RowKey("b", "x", "virtual"),), listed)
    assert atlas.chosen_rows(catalogue, [board], (), ("A",), ()) == ((RowKey("a", "y", "virtual"),), ())
    # A row named that is not ok is listed, not measured (nor left out).
    assert atlas.chosen_rows(catalogue, [board], (), (), (("d", "w"),)) == ((), listed[1:])
    with pytest.raises(PqscopeError, match="no row passes the filters given"):
        atlas.chosen_rows(catalogue, [board], ("f1",), ("a",), ())


def test_every_discovered_row_is_measured_or_listed_on_each_board():
    from pqscope.measure.measurement import board_at_clock
    from pqscope.project.discovery import load_rows, pqm4_tree
    from pqscope.project.paths import repo_root

    root = repo_root()
    if pqm4_tree(root) is None:
        pytest.skip("no build tree has fetched pqm4: configure the stm32f4discovery preset")
    rows = load_rows(root)
    boards = [board_at_clock(root, name, None) for name in ("virtual", "nucleo-l4r5zi-virtual")]
    measured, listed = atlas.chosen_rows(rows, boards, (), (), ())
    chosen = {*measured, *(item.key for item in listed)}
    assert len(measured) + len(listed) == len(chosen) == 2 * len(rows)
    assert RowKey("hawk512", "ref", "virtual") in measured
    assert RowKey("mayo1", "m4f", "nucleo-l4r5zi-virtual") in measured
    mayo = next(item for item in listed if item.key == RowKey("mayo1", "m4f", "virtual"))
    assert mayo.status == "does-not-fit" and mayo.reason
    assert {item.status for item in listed} <= {"does-not-fit", "build-fails", "fails", "unmeasured"}


def test_several_boards_have_a_table_each_and_the_csv_names_the_board():
    rows = tuple(sorted(RowKey("ml-dsa-44", "m4f", board) for board in ("virtual", "nucleo-l4r5zi-virtual")))
    plan = replace(PLAN, boards=("virtual", "nucleo-l4r5zi-virtual"), rows=rows, listed=())
    document = AtlasDocument(plan, None, tuple(entry(key, 5000, "no-leak") for key in rows), ())
    markdown = view.benchmarks_md(document)
    assert markdown.count("## Signature Schemes (nucleo-l4r5zi-virtual)") == 4  # speed, memory, hashing, size
    assert markdown.count("## Signature Schemes (virtual)") == 4 and "## Signature Schemes\n" not in markdown
    assert [line.split(",")[-3] for line in view.csv_text(document).splitlines()[1:]] == [
        "nucleo-l4r5zi-virtual", "virtual"]
