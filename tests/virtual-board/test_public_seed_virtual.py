"""Statistics that tell the public key from the secret (issue #54). control-public-seed's secret key
carries a public seed (declared public, as ML-DSA's rho is) that signing expands by rejection
sampling: the random-key class draws whole keys, so its time differs from the fixed key's, though
nothing secret moves it. The default `pqscope ct` sets that time apart (the exact check beside it
shows the code runs on declared-public values only), says the time depends on the public key, and
finds no leak; the leaky twin expands the secret half and is a leak by both checks."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT
from gate_status import gate_document


def pqscope(*arguments: str) -> dict:
    result = subprocess.run([sys.executable, "-m", "pqscope", *arguments, "--seed", "5e", "--json"],
                            capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=1800)
    return gate_document(result)


@pytest.mark.parametrize("impl, verdict", [("ct", "no-leak"), ("leaky", "leak")])
def test_the_exact_check_declassifies_the_seed_only(impl, verdict, tmp_path):
    document = pqscope("taint", "--scheme", "control-public-seed", "--impl", impl, "--out", str(tmp_path))
    assert document["verdict"] == verdict
    (branch,) = [finding for finding in document["findings"] if finding["function"] == "expand_by_rejection"]
    assert branch["declassified"] == (impl == "ct") and branch["leak"] == (impl == "leaky")


def test_time_that_follows_the_public_seed_is_not_a_leak(tmp_path):
    document = pqscope("ct", "--scheme", "control-public-seed", "--impl", "ct", "-n", "2000", "--no-report",
                       "--out", str(tmp_path))
    assert document["verdict"] == "no-leak", document["reason"]
    assert document["reason"].startswith("time depends on the public key (expand_by_rejection), not on a secret")
    public = document["public_time"]
    assert public["from_exact_check"] == ["expand_by_rejection"] and public["verdict"] == "leak"
    # Without the exact check's word, the same signatures' total is a leak: the classes differ.
    assert document["uncorrected"]["verdict"] == "leak"


def test_time_that_follows_the_secret_half_is_a_leak(tmp_path):
    document = pqscope("ct", "--scheme", "control-public-seed", "--impl", "leaky", "-n", "2000", "--no-report",
                       "--out", str(tmp_path))
    assert document["verdict"] == "leak", document["reason"]
    assert "public_time" not in document and document["taint"]["verdict"] == "leak"
