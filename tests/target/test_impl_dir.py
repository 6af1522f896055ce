"""pqscope_add_impl_dir on the toy signature (tests/toy_signature): the image of a directory that
is not in the catalogue reports its api.h sizes, signs, verifies and rejects a corrupted signature
on the virtual board, and replays from its seed."""

import pytest

from pqscope.protocol import Op, Status

ALL_OPS = (Op.KEYGEN, Op.SIGN, Op.VERIFY)


@pytest.mark.parametrize("impl", ["mac", "own-fips202"])  # own-fips202: the toy with its own FIPS 202 code
def test_toy_image_runs_verifies_and_replays(image_session, impl):
    session = image_session("toy-signature", impl)
    info = session.hello()
    assert (info.scheme, info.impl) == ("toy-signature", impl)
    assert (info.pk_bytes, info.sk_bytes, info.sig_bytes) == (32, 32, 32)
    first = session.run_sample(bytes(32), 100, ALL_OPS, 0, digest=True)
    again = session.run_sample(bytes(32), 100, ALL_OPS, 1, digest=True)
    other = session.run_sample(bytes([1]) + bytes(31), 100, ALL_OPS, 2, digest=True)
    assert first.done.status == Status.OK  # verify accepted the signature and rejected a flipped bit
    assert [s.status for s in first.samples] == [Status.OK] * 3
    assert [s.cycles for s in first.samples] == [s.cycles for s in again.samples]
    assert first.digest == again.digest != other.digest
