"""The exact check (pqscope taint) on SLH-DSA-SHA2-128f (issue #57), the key and the signing
randomness (hedged opt_rand) secret: slhdsa-c's only secret-dependent instructions are the ones its
catalogue row declares public, and both of its reasons are met (the authentication-path order in
fors_pk_from_sig and xmss_pk_from_sig, the WOTS+ chain lengths in sha2_256_chain). Two minutes of
emulation: the slow tier."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT


@pytest.mark.slow
def test_slh_dsa_sha2_128f_has_only_declassified_findings(tmp_path):
    result = subprocess.run([sys.executable, "-m", "pqscope", "taint", "--scheme", "slh-dsa-sha2-128f",
                             "--impl", "slhdsa-c", "--seed", "7", "--out", str(tmp_path / "taint"), "--json"],
                            capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=1800)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["verdict"] == "no-leak" and document["instructions"] > 0
    assert document["findings"] and all(finding["declassified"] for finding in document["findings"])
    reasons = {reason for finding in document["findings"] for reason in finding["declassified_by"]}
    assert reasons == {"slh-dsa-auth-path", "slh-dsa-chain-length"}, reasons
