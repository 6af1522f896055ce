"""pqscope_add_impl_dir on directories that are not catalogue rows: the image of each reports its
api.h sizes, signs, verifies and rejects a corrupted signature on the virtual board, and replays
from its seed. The toy signature (tests/toy_signature), alone and with its own FIPS 202 code, and
PQClean's SPHINCS+-SHA2-128f directory as it comes (namespaced API, the harness's SHA-256); and
which bit the harness corrupts: the signed-message toy (tests/toy_signed_message) and its control."""

import pytest

from pqscope.link.protocol import Op, Status

ALL_OPS = (Op.KEYGEN, Op.SIGN, Op.VERIFY)


TOY_SIZES = (32, 32, 32)
SPHINCS_SIZES = (32, 64, 17088)  # PQClean's api.h for sphincs-sha2-128f-simple


@pytest.mark.parametrize("scheme, impl, sizes", [
    ("toy-signature", "mac", TOY_SIZES),
    ("toy-signature", "own-fips202", TOY_SIZES),
    ("sphincs-sha2-128f-simple", "pqclean-dir", SPHINCS_SIZES)])
def test_image_runs_verifies_and_replays(image_session, scheme, impl, sizes):
    session = image_session(scheme, impl)
    info = session.hello()
    assert (info.scheme, info.impl) == (scheme, impl)
    assert (info.pk_bytes, info.sk_bytes, info.sig_bytes) == sizes
    first = session.run_sample(bytes(32), 100, ALL_OPS, 0, digest=True)
    again = session.run_sample(bytes(32), 100, ALL_OPS, 1, digest=True)
    other = session.run_sample(bytes([1]) + bytes(31), 100, ALL_OPS, 2, digest=True)
    assert first.done.status == Status.OK  # verify accepted the signature and rejected a flipped bit
    assert [s.status for s in first.samples] == [Status.OK] * 3
    assert [s.cycles for s in first.samples] == [s.cycles for s in again.samples]
    assert first.digest == again.digest != other.digest


SEEDS = [bytes([i]) + bytes(31) for i in range(16)]


def test_the_corrupted_copy_flips_a_bit_verification_must_read(image_session):
    """The harness corrupts a bit of the signature's first byte (after the message that a signed
    message starts with), not one anywhere: the signed-message toy, whose tail (room a fixed-size
    encoding leaves, as CROSS 1.1's proofs) crypto_sign_open does not read, rejects every corrupted
    copy; its control, which does not read the tag's first byte either, accepts every one."""
    def statuses(impl):
        session = image_session("toy-signed-message", impl)
        session.hello()
        return [session.run_sample(seed, 100, ALL_OPS, i).done.status for i, seed in enumerate(SEEDS)]

    assert statuses("tail") == [Status.OK] * len(SEEDS)
    assert statuses("blind-first-byte") == [Status.CORRUPT_ACCEPTED] * len(SEEDS)
