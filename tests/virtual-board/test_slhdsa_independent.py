"""SLH-DSA (FIPS 205) on the virtual board against an implementation no one here wrote (issue #57):
slhdsa-c's images (catalogue rows slh-dsa-*) sign, and the pure-Python `slh-dsa` package, fed the
device's randomness, must make the same key pair and the same signature byte for byte, and accept
it. The package draws SK.seed, SK.prf, PK.seed (key generation) and opt_rand (hedged signing) from
secrets.token_bytes, n bytes each, in the order slhdsa-c draws them from randombytes(); the test
hands it the device's DRBG stream there (tests/support/device_drbg.py), the message drawn between
the two as the harness draws it. The device reports SHA3-256(pk || sk || msg || sig) (DIGEST): the
package's values must hash to it. Deterministic images (opt_rand = PK.seed) sign through the
package's deterministic mode, which draws nothing; hedged ones through its randomized mode.
The catalogue's slow rows (the 128s sets, and SHAKE-128f: slhdsa-c's portable Keccak makes it sign
in 2.1 G cycles) are the slow tier's."""

import hashlib

import pytest
import slhdsa
import slhdsa.lowlevel.slhdsa as slhdsa_signing

from conftest import catalogue_rows
from device_drbg import DeviceDrbg
from pqscope.link.protocol import Op, Status
from pqscope.results.records import sample_seed

MASTER_SEED = b"pqscope slh-dsa against the slh-dsa package"
MSG_LEN = 33
RANDOMIZED = {"slhdsa-c": True, "slhdsa-c-deterministic": False}
SLOW = {(row["scheme"], row["impl"]) for row in catalogue_rows() if row.get("slow", False)}
SETS = [pytest.param(hash_name, size, impl, id=f"slh-dsa-{hash_name}-{size}/{impl}",
                     marks=pytest.mark.slow if (f"slh-dsa-{hash_name}-{size}", impl) in SLOW else ())
        for hash_name in ("sha2", "shake") for size in ("128f", "128s") for impl in RANDOMIZED]


def _package_sample(parameter_set, seed: bytes, randomized: bool, monkeypatch):
    """The package's key pair, message and signature for the device's sample of `seed`."""
    drbg = DeviceDrbg(seed)
    monkeypatch.setattr(slhdsa_signing, "token_bytes", drbg.generate)
    keys = slhdsa.KeyPair.gen(parameter_set)
    message = drbg.generate(MSG_LEN)
    return keys, message, keys.sign_pure(message, randomize=randomized)


@pytest.mark.parametrize("hash_name,size,impl", SETS)
def test_the_device_signs_as_the_slh_dsa_package_does(hash_name, size, impl, image_session, monkeypatch):
    session = image_session(f"slh-dsa-{hash_name}-{size}", impl)
    session.hello()
    seed = sample_seed(MASTER_SEED, 0)
    result = session.run_sample(seed, MSG_LEN, (Op.KEYGEN, Op.SIGN, Op.VERIFY), 0, digest=True)
    # The device verified its signature and rejected it with one bit flipped.
    assert result.done.status == Status.OK
    keys, message, signature = _package_sample(getattr(slhdsa, f"{hash_name}_{size}"), seed, RANDOMIZED[impl],
                                               monkeypatch)
    assert keys.verify_pure(message, signature)
    forged = bytes([signature[0] ^ 1]) + signature[1:]
    assert not keys.verify_pure(message, forged)
    expected = hashlib.sha3_256(keys.pub.digest() + keys.sec.digest() + message + signature).digest()
    assert result.digest == expected, f"seed {seed.hex()}: the device's key pair or signature differs"


def test_hedged_and_deterministic_signatures_differ(monkeypatch):
    """The hedged images' check is not the deterministic one again: the same key pair and message
    give another signature when opt_rand is drawn."""
    seed = sample_seed(MASTER_SEED, 0)
    _, _, hedged = _package_sample(slhdsa.sha2_128f, seed, True, monkeypatch)
    _, _, deterministic = _package_sample(slhdsa.sha2_128f, seed, False, monkeypatch)
    assert hedged != deterministic
