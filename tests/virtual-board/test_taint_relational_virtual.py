"""A finding convicts only when a secret can change it (issue #54). control-cancelling-bounds loops
from a key-derived value to another: in its constant-time twin they differ by a public 24 rounds, so
the loop's exit branch is tainted (both operands are secret) but goes the same way for every key; in
the leaky twin their difference holds key bits. The exact check compares what each finding did
between signatures with other secrets: the twin's branch is `unchanged` (no leak), the leaky one's
is confirmed with the pair of signatures and the first execution where they differ. The default
`pqscope ct` gives the same verdicts. Falcon-512 fpnative's soft-float leaks are confirmed, a pair
shown for each function's findings (slow tier)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from pqscope.analysis.taint import MOST_VARIANTS

from conftest import ROOT
from gate_status import gate_document

CONTROL = "firmware/schemes/controls/control.c"
LOOP = "for (uint32_t i = start; i != end; i++)"


def pqscope(*arguments: str, seed: str = "7") -> dict:
    result = subprocess.run([sys.executable, "-m", "pqscope", *arguments, "--seed", seed, "--json"],
                            capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=1800)
    return gate_document(result)


def loop_branches(document: dict) -> list[dict]:
    """The findings at the loop (its entry test and its exit branch): branches whose operands are the bounds."""
    lines = (ROOT / CONTROL).read_text().splitlines()
    at_the_loop = [finding for finding in document["findings"] if finding["file"] == CONTROL
                   and LOOP in lines[finding["line"] - 1]]
    assert at_the_loop and all(finding["kind"] == "branch" for finding in at_the_loop), document["findings"]
    return at_the_loop


def test_bounds_with_a_public_difference_are_tainted_but_unchanged_by_the_key(tmp_path):
    document = pqscope("taint", "--scheme", "control-cancelling-bounds", "--impl", "ct", "--out", str(tmp_path))
    assert document["verdict"] == "no-leak" and document["signatures"] == 2
    for finding in loop_branches(document):
        # every variant tried: the check's 2 signatures and all it adds while a finding is unchanged
        # (its signing is cheap: as many as the check adds at most)
        assert finding["relational"] == {"state": "unchanged", "variants": 2 + MOST_VARIANTS, "pair": None}
        assert not finding["leak"]


def test_bounds_with_a_secret_difference_are_confirmed_by_a_pair_of_keys(tmp_path):
    document = pqscope("taint", "--scheme", "control-cancelling-bounds", "--impl", "leaky", "--out", str(tmp_path))
    assert document["verdict"] == "leak"
    (exit_branch,) = [finding for finding in loop_branches(document) if finding["leak"]]
    relational = exit_branch["relational"]
    assert relational["state"] == "confirmed"
    pair = relational["pair"]
    assert pair["signatures"][0] != pair["signatures"][1] and pair["key_seeds"][0] != pair["key_seeds"][1]
    # one key's loop leaves where the other's goes round again: 24 rounds and more
    assert pair["visit"] > 24 and sorted(pair["outcomes"]) == ["not taken", "taken"]


def test_a_killed_check_resumes_with_its_variants(tmp_path):
    """The confirming variants are signatures of the check like its -n ones: killed among them (3 of
    those signed kept, the third's line cut in half), --resume signs the rest and ends with the
    uninterrupted check's document."""
    whole = tmp_path / "whole"
    expected = pqscope("taint", "--scheme", "control-cancelling-bounds", "--impl", "ct", "--out", str(whole))
    rows = (whole / "taint.csv").read_text().splitlines(keepends=True)
    calls = (whole / "taint-calls.jsonl").read_text().splitlines(keepends=True)
    assert len(rows) == 1 + 2 + MOST_VARIANTS and len(calls) == 2 + MOST_VARIANTS
    killed = tmp_path / "killed"
    shutil.copytree(whole, killed)
    (killed / "taint.csv").write_text("".join(rows[:4]))
    (killed / "taint-calls.jsonl").write_text("".join(calls[:2]) + calls[2][:len(calls[2]) // 2])
    meta = json.loads((killed / "meta.json").read_text())
    meta.update(status="running", samples_completed=0)
    meta.pop("result")
    (killed / "meta.json").write_text(json.dumps(meta))
    (killed / "taint.json").unlink()
    result = subprocess.run([sys.executable, "-m", "pqscope", "taint", "--resume", str(killed), "--json"],
                            capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=600)
    assert gate_document(result) == expected  # no leak, exit status 0, as uninterrupted
    assert (killed / "taint.csv").read_text() == "".join(rows)


@pytest.mark.parametrize("impl, verdict", [("ct", "no-leak"), ("leaky", "leak")])
def test_the_default_constant_time_test_agrees(impl, verdict, tmp_path):
    """`pqscope ct` with its exact check first, as by default; the statistics decide the twin."""
    document = pqscope("ct", "--scheme", "control-cancelling-bounds", "--impl", impl, "-n", "2000", "--no-report",
                       "--out", str(tmp_path), seed="c7")
    assert document["verdict"] == verdict, document["reason"]
    assert document["taint"]["verdict"] == verdict


@pytest.mark.slow
def test_falcon_native_doubles_leaks_are_confirmed_with_a_pair_per_function(tmp_path):
    """Falcon-512 fpnative's libgcc soft-float branches: each function with a leak shows a pair of
    signatures (keys and signing seeds) whose executions went different ways."""
    document = pqscope("taint", "--scheme", "falcon-512", "--impl", "fpnative", "--out", str(tmp_path))
    assert document["verdict"] == "leak"
    confirmed = [finding for finding in document["findings"]
                 if finding.get("relational") and finding["relational"]["state"] == "confirmed"]
    assert all(finding["leak"] for finding in confirmed) and len(confirmed) >= 10
    for function in {finding["function"] for finding in confirmed}:
        pair = next(finding["relational"]["pair"] for finding in confirmed if finding["function"] == function)
        assert pair["outcomes"][0] != pair["outcomes"][1] and len(pair["sign_seeds"][0]) == 64, pair
    assert {"__aeabi_dadd", "__muldf3"} <= {finding["function"] for finding in confirmed}
