"""Correctness, like pqm4's test vectors: for fixed seeds and message lengths (one for a row
that is its own reference), each image's
transcript digest (SHA3-256 of pk || sk || msg || sig, DIGEST record) equals the one a host build
of its catalogue "host_reference" prints (firmware/transcripts). So ML-DSA m4f/m4fstack must
compute exactly what PQClean's clean code computes, FN-DSA m4f what ref computes, all three Falcon
modes what the portable emulated-FP code computes, and each remaining row what its own portable
sources compute on the host. Slow rows are marked slow: the slow tier runs them.

Environment: PQSCOPE_TRANSCRIPTS (default build/host/transcripts), and conftest.py's."""

import os
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, discovery_rows
from pqscope.results.records import sample_seed
from pqscope.link.protocol import Op, Status

TRANSCRIPTS = Path(os.environ.get("PQSCOPE_TRANSCRIPTS", ROOT / "build/host/transcripts"))
MASTER_SEED = b"pqscope transcript vectors"
MESSAGE_LENGTHS = (33, 1024)  # a short message and the longest one a RUN allows
ROWS = [row for row in discovery_rows() if "host_reference" in row]


def _host_digest(scheme: str, impl: str, seed: bytes, msg_len: int) -> bytes:
    program = TRANSCRIPTS / f"transcript.{scheme}.{impl}"
    result = subprocess.run([program, seed.hex(), str(msg_len)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return bytes.fromhex(result.stdout.strip())


@pytest.mark.parametrize("row", [
    pytest.param(row, id=f"{row['scheme']}/{row['impl']}", marks=pytest.mark.slow if row.get("slow", False) else ())
    for row in ROWS
])
def test_device_transcripts_equal_the_host_reference(row, image_session):
    session = image_session(row["scheme"], row["impl"])
    session.hello()
    # A row that is its own reference runs the host's code on the device: one vector checks the
    # platform (compiler, libraries, memory); other code (m4f against clean) is checked on both.
    lengths = MESSAGE_LENGTHS[:1] if row["host_reference"] == row["impl"] else MESSAGE_LENGTHS
    for index, msg_len in enumerate(lengths):
        seed = sample_seed(MASTER_SEED, index)
        result = session.run_sample(seed, msg_len, (Op.KEYGEN, Op.SIGN, Op.VERIFY), index, digest=True)
        # Each operation succeeded; the device verified the signature and rejected a forgery of it.
        assert result.done.status == Status.OK
        assert [(sample.op, sample.status) for sample in result.samples] == [(op, Status.OK) for op in Op]
        expected = _host_digest(row["scheme"], row["host_reference"], seed, msg_len)
        assert result.digest == expected, f"seed {seed.hex()}, msg_len {msg_len}"


def test_digests_depend_on_the_seed_and_the_message_length():
    """The vectors are not vacuous: the host program's digest changes with each input."""
    digests = {_host_digest("ml-dsa-44", "clean", sample_seed(MASTER_SEED, i), n) for i in (0, 1) for n in (0, 33)}
    assert len(digests) == 4
