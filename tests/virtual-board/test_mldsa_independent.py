"""ML-DSA (FIPS 204) on the virtual board against an implementation no one here wrote (issue #57):
pqm4's images (catalogue rows ml-dsa-44/65/87: m4f, m4fstack and PQClean's clean, where it fits
the Discovery) sign, and the pure-Python `dilithium-py` package, fed the device's randomness, must
make the same key pair and the same signature byte for byte, and accept it.

What pqm4 draws from randombytes() (crypto_sign/ml-dsa-*/m4f/sign.c; m4fstack and clean alike):
key generation the 32-byte seed xi (`randombytes(seedbuf, SEEDBYTES)`, expanded as FIPS 204's
Algorithm 6 does, SHAKE256(xi || k || l)); signing, which is hedged, the 32-byte rnd
(`randombytes(rnd, RNDBYTES)`, rho'' = SHAKE256(K || rnd || mu)), and it signs
M' = 0 || |ctx| || ctx || M with the empty context (api.h's crypto_sign_signature passes NULL, 0).
The package draws the same two values through its instance's `random_bytes` (ML_DSA.keygen and
ML_DSA.sign with deterministic=False) and formats M' the same way; the test hands it the device's
DRBG stream there (tests/support/device_drbg.py), the message drawn between the two as the harness
draws it. The device reports SHA3-256(pk || sk || msg || sig) (DIGEST): the package's values must
hash to it, and the package's deterministic signature (rnd = 0) of the same message must not, so
the device's rnd is what made the signature."""

import hashlib

import pytest
from dilithium_py.ml_dsa import ML_DSA_44, ML_DSA_65, ML_DSA_87

from conftest import discovery_rows
from device_drbg import DeviceDrbg
from pqscope.link.protocol import Op, Status
from pqscope.results.records import sample_seed

MASTER_SEED = b"pqscope ml-dsa against the dilithium-py package"
MSG_LEN = 33
PACKAGE = {"ml-dsa-44": ML_DSA_44, "ml-dsa-65": ML_DSA_65, "ml-dsa-87": ML_DSA_87}
ROWS = [pytest.param(row["scheme"], row["impl"], id=f"{row['scheme']}/{row['impl']}")
        for row in discovery_rows() if row["scheme"] in PACKAGE]


def _package_sample(scheme: str, seed: bytes, monkeypatch):
    """The package's key pair, message and hedged signature for the device's sample of `seed`."""
    drbg = DeviceDrbg(seed)
    ml_dsa = PACKAGE[scheme]
    monkeypatch.setattr(ml_dsa, "random_bytes", drbg.generate)
    pk, sk = ml_dsa.keygen()
    message = drbg.generate(MSG_LEN)
    return pk, sk, message, ml_dsa.sign(sk, message)


def _digest(pk: bytes, sk: bytes, message: bytes, signature: bytes) -> bytes:
    return hashlib.sha3_256(pk + sk + message + signature).digest()


def test_every_ml_dsa_row_of_the_discovery_is_checked():
    """The rows above are the catalogue's: all nine but ML-DSA-87 clean, which does not fit."""
    assert sorted(param.id for param in ROWS) == sorted(
        f"ml-dsa-{level}/{impl}" for level in (44, 65, 87) for impl in ("m4f", "m4fstack", "clean")
        if (level, impl) != (87, "clean"))


@pytest.mark.parametrize("scheme,impl", ROWS)
def test_the_device_signs_as_the_dilithium_py_package_does(scheme, impl, image_session, monkeypatch):
    session = image_session(scheme, impl)
    session.hello()
    seed = sample_seed(MASTER_SEED, 0)
    result = session.run_sample(seed, MSG_LEN, (Op.KEYGEN, Op.SIGN, Op.VERIFY), 0, digest=True)
    # The device verified its signature and rejected it with one bit flipped.
    assert result.done.status == Status.OK
    pk, sk, message, signature = _package_sample(scheme, seed, monkeypatch)
    ml_dsa = PACKAGE[scheme]
    assert ml_dsa.verify(pk, message, signature)
    forged = bytes([signature[0] ^ 1]) + signature[1:]
    assert not ml_dsa.verify(pk, message, forged)
    assert result.digest == _digest(pk, sk, message, signature), \
        f"seed {seed.hex()}: the device's key pair or signature differs"
    # Hedged: the device's rnd went into its signature (a deterministic signer would match this).
    assert result.digest != _digest(pk, sk, message, ml_dsa.sign(sk, message, deterministic=True))


def test_another_seed_gives_another_sample(monkeypatch):
    """The comparison above fails without the device's randomness: the stream of another seed
    gives the package another key pair and signature."""
    ours = _package_sample("ml-dsa-44", sample_seed(MASTER_SEED, 0), monkeypatch)
    other = _package_sample("ml-dsa-44", sample_seed(MASTER_SEED, 1), monkeypatch)
    assert ours[0] != other[0] and ours[1] != other[1] and ours[3] != other[3]
