"""pqm4 folders as pqm4 lays them out, given to --impl-dir (issue #57), copied out of the pinned
pqm4 with their relative links as they are, sign and verify on a virtual board, and a corrupted
signature is rejected: HAETAE-3's m4f, whose files link into HAETAE-2's folder and whose api.h
declares the API in an included header (sign.h, through macros), on the Discovery's; MAYO-1's m4f,
whose files link into mupq's reference folder and which takes its define (MAYO_M4) from pqm4's
config.mk and pqm4's AES, on the NUCLEO-L4R5ZI's; UOV's ov-Ip-pkc m4fstack, whose two key pairs do
not fit beside its stack in the NUCLEO-L4R5ZI's 640 KiB, with one key pair for a run, refused for a
constant-time test."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from pqscope.project.elf import read_symbols

PQM4 = Path(os.environ.get("PQSCOPE_PQM4", ROOT / "build/stm32f4discovery/_deps/pqm4-src"))


def _copied(tmp_path: Path, *folders: str) -> Path:
    """The pqm4 `folders`, copied with their links as they are into a pqm4 tree of their own."""
    for folder in folders:
        if not (PQM4 / folder).is_dir():
            pytest.skip(f"no {folder} in {PQM4}: configure the stm32f4discovery preset")
        shutil.copytree(PQM4 / folder, tmp_path / "pqm4" / folder, symlinks=True)
    return tmp_path / "pqm4"


def _links(folder: Path) -> dict[str, str]:
    return {path.name: os.readlink(path) for path in folder.iterdir() if path.is_symlink()}


def _run(tmp_path: Path, own: Path, *args: str) -> list[dict]:
    """`pqscope run` of the folder, two signatures: its results (keygen, sign, verify)."""
    result = subprocess.run([sys.executable, "-m", "pqscope", "run", "--impl-dir", str(own), *args, "-n", "2", "--json",
                             "--out", str(tmp_path / "run")],
                            env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)["results"]


def _signed_and_verified(results: list[dict], scheme: str, impl: str) -> None:
    assert [(row["scheme"], row["impl"], row["op"]) for row in results] == [
        (scheme, impl, op) for op in ("keygen", "sign", "verify")]
    assert [(row["n"], row["verified"], row["corrupt_accepted"]) for row in results] == [(2, 2, 0)] * 3


# Each named apart (--scheme): a folder named as a catalogue row is refused, and the catalogue takes in pqm4's.
def test_a_pqm4_folder_linking_into_another_scheme_with_its_api_in_a_header_signs_and_verifies(tmp_path):
    own = _copied(tmp_path, "crypto_sign/haetae2", "crypto_sign/haetae3") / "crypto_sign/haetae3/m4f"
    assert _links(own)["sign.c"] == "../../haetae2/m4f/sign.c"
    assert "crypto_sign_keypair" not in (own / "api.h").read_text()
    results = _run(tmp_path, own, "--scheme", "own-haetae3", "--stack-bytes", str(84 * 1024))  # pqm4: 83,420 bytes
    _signed_and_verified(results, "own-haetae3", "m4f")


def test_a_pqm4_folder_linking_into_mupq_with_its_config_mk_signs_and_verifies(tmp_path):
    if not (ROOT / "build/nucleo-l4r5zi/_deps/pqm4-src").is_dir():
        pytest.skip("the nucleo-l4r5zi preset's tree has not fetched its dependencies: configure it")
    pqm4 = _copied(tmp_path, "crypto_sign/mayo1", "mupq/crypto_sign/mayo1")
    own = pqm4 / "crypto_sign/mayo1/m4f"
    assert _links(own)["api.h"] == "../../../mupq/crypto_sign/mayo1/ref/api.h"
    assert "-DMAYO_M4" in (own / "config.mk").read_text()
    results = _run(tmp_path, own, "--board", "nucleo-l4r5zi-virtual", "--scheme", "own-mayo1",
                   "--stack-bytes", str(256 * 1024))  # pqm4 measures 253,484 bytes
    _signed_and_verified(results, "own-mayo1", "m4f")
    # Only MAYO_M4's arithmetic calls the Cortex-M4 assembly (m4r.S); without it the linker drops it.
    image = ROOT / "build/nucleo-l4r5zi.impl-dir/images/own-mayo1/m4f.elf"
    assert "multiply_P1_right_m4f_V_V_O_asm" in {symbol.name for symbol in read_symbols(image)}


def test_a_pqm4_folder_whose_two_key_pairs_do_not_fit_runs_with_one_and_ct_says_why_it_cannot(tmp_path):
    if not (ROOT / "build/nucleo-l4r5zi/_deps/pqm4-src").is_dir():
        pytest.skip("the nucleo-l4r5zi preset's tree has not fetched its dependencies: configure it")
    own = (_copied(tmp_path, "crypto_sign/ov-Ip", "crypto_sign/ov-Ip-pkc", "mupq/crypto_sign/ov-Ip",
                   "mupq/crypto_sign/ov-Ip-pkc")
           / "crypto_sign/ov-Ip-pkc/m4fstack")
    # pqm4 measures 145,236 bytes of stack; a key pair is 43,576 + 237,896 bytes.
    board = ("--board", "nucleo-l4r5zi-virtual", "--scheme", "own-ov-Ip-pkc", "--stack-bytes", str(146 * 1024))
    results = _run(tmp_path, own, *board)
    _signed_and_verified(results, "own-ov-Ip-pkc", "m4fstack")
    assert json.loads((tmp_path / "run/meta.json").read_text())["info"]["key_slots"] == 1
    ct = subprocess.run([sys.executable, "-m", "pqscope", "ct", "--impl-dir", str(own), *board, "-n", "20", "--out",
                         str(tmp_path / "ct")], env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, capture_output=True,
                        text=True)
    assert ct.returncode != 0
    assert ("image too big for RAM: its static data plus the stack it needs (the catalogue's stack_bytes, or "
            "--stack-bytes) exceed the board's RAM, with the two key pairs a constant-time test holds at once (with "
            "one, as pqscope run holds, it fits)") in " ".join(ct.stderr.split())
