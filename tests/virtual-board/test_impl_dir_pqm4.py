"""A pqm4 folder as pqm4 lays it out, given to --impl-dir (issue #57): ML-DSA-44's m4fstack, whose
files are relative links into its m4f sibling (api.h -> ../m4f/api.h), copied out of the pinned pqm4
with its links as they are, signs and verifies on the virtual board, and a corrupted signature is
rejected."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

PQM4 = Path(os.environ.get("PQSCOPE_PQM4", ROOT / "build/stm32f4discovery/_deps/pqm4-src"))


def test_a_pqm4_folder_with_relative_links_signs_and_verifies(tmp_path):
    if not (PQM4 / "crypto_sign/ml-dsa-44/m4fstack").is_dir():
        pytest.skip(f"no pqm4 tree at {PQM4}: configure the stm32f4discovery preset")
    scheme = tmp_path / "crypto_sign/ml-dsa-44"
    shutil.copytree(PQM4 / "crypto_sign/ml-dsa-44", scheme, symlinks=True)
    own = scheme / "m4fstack"
    links = {path.name: os.readlink(path) for path in own.iterdir() if path.is_symlink()}
    assert links["api.h"] == "../m4f/api.h" and any(name.endswith(".c") for name in links)
    # Named apart from the catalogue's row of the same folder.
    result = subprocess.run([sys.executable, "-m", "pqscope", "run", "--impl-dir", str(own), "--scheme", "own-ml-dsa-44",
                             "-n", "2", "--json", "--out", str(tmp_path / "run")],
                            env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    results = json.loads(result.stdout)["results"]
    assert [(row["scheme"], row["impl"], row["op"]) for row in results] == [
        ("own-ml-dsa-44", "m4fstack", op) for op in ("keygen", "sign", "verify")]
    assert [(row["n"], row["verified"], row["corrupt_accepted"]) for row in results] == [(2, 2, 0)] * 3
