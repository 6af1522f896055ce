"""A key pair made on one virtual board and written to another (KEY_READ and KEY_WRITE,
firmware/PROTOCOL.md "Key slots": the boards of a constant-time test share a key whose generation
is dear): the slot then holds the key's bytes and signs in the cycles, and with the stack, of the
slot whose key generation made them. ML-DSA-44's key pair, 3,872 bytes, is nine chunks."""

import pytest

from pqscope.link.device import DeviceError
from pqscope.link.messages import KeygenSlot
from pqscope.link.protocol import KEY_CHUNK_BYTES, Status
from pqscope.results.records import KEYGEN_ID_BASE

KEY_SEED, SIGN_SEED = bytes(range(32)), bytes(range(32, 64))


def test_a_key_written_to_another_board_signs_as_where_it_was_made(image_session):
    maker, taker = image_session("ml-dsa-44", "m4f"), image_session("ml-dsa-44", "m4f")
    info = maker.hello()
    taker.hello()
    assert maker.keygen_slot(1, KEY_SEED, KEYGEN_ID_BASE).status == Status.OK
    pair = maker.read_key(1)
    assert len(pair) == info.pk_bytes + info.sk_bytes > 8 * KEY_CHUNK_BYTES
    taker.write_key(2, pair, KeygenSlot(2, KEYGEN_ID_BASE, KEY_SEED))
    assert taker.read_key(2) == pair
    made, written = maker.sign_slot(1, SIGN_SEED, 32, 1), taker.sign_slot(2, SIGN_SEED, 32, 1)
    assert made.status == written.status == Status.OK
    assert (written.cycles, written.stack_bytes) == (made.cycles, made.stack_bytes)


def test_a_slot_holds_a_written_key_only_once_its_last_byte_is_in(image_session):
    """A key pair cut short leaves the slot empty (its first chunk emptied it), not holding part of a key."""
    session = image_session("ml-dsa-44", "m4f")
    session.hello()
    session.keygen_slot(1, KEY_SEED, KEYGEN_ID_BASE)
    pair = session.read_key(1)
    session.write_key(1, pair[:-1], KeygenSlot(1, KEYGEN_ID_BASE, KEY_SEED))
    with pytest.raises(DeviceError, match="BAD_ARGUMENT: SIGN_SLOT: the slot has no key yet"):
        session.sign_slot(1, SIGN_SEED, 32, 1)
    with pytest.raises(DeviceError, match="BAD_ARGUMENT: KEY_READ: the slot has no key"):
        session.read_key(1)
