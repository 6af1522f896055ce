"""Keys an exact check made, for the statistics after it (measure.key_pairs): a key whose generation
was dear is read back from the check's board and written to each statistics board of the same image
and clock, which signs with it as with its own; a cheap key, or one a statistics board made, is made
again on each board."""

from dataclasses import replace

from fakedevice import Behaviour, LoopbackPort, make_info
from pqscope.link.device import DeviceSession
from pqscope.link.protocol import Status
from pqscope.measure.key_pairs import CYCLES_PER_KEY_BYTE, SHARED_ABOVE_CYCLES, KeyPairs

SEED, SIGN_SEED, KEY_ID = bytes(range(32)), bytes(range(32, 64)), 7
# What carrying the fake board's key pair costs: a key generation that took longer is dear.
CARRIED = SHARED_ABOVE_CYCLES + CYCLES_PER_KEY_BYTE * (make_info().pk_bytes + make_info().sk_bytes)
DEAR, CHEAP = CARRIED + 1, CARRIED


def board(keygen_cycles: int, info=None) -> tuple[DeviceSession, LoopbackPort]:
    port = LoopbackPort(info or make_info(), Behaviour(keygen_cycles=keygen_cycles))
    session = DeviceSession(port, answer_timeout=60, sample_timeout=60)
    session.hello()
    return session, port


def test_a_dear_key_the_check_made_is_written_to_the_boards_after_it():
    pairs = KeyPairs()
    (check, check_port), *statistics = board(DEAR), board(DEAR), board(DEAR)
    made = pairs.make_and_keep(check, check_port.device.info, 0, SEED, KEY_ID)
    written = [pairs.make(session, port.device.info, slot, SEED, KEY_ID) for slot, (session, port) in
               enumerate(statistics, start=1)]
    assert [port.device.keygens for _, port in [(check, check_port), *statistics]] == [1, 0, 0]
    assert written == [made, made] and made.status == Status.OK  # its key generation's SAMPLE, where that ran
    assert [session.read_key(slot) for slot, (session, _) in enumerate(statistics, start=1)] == [check.read_key(0)] * 2
    assert ({session.sign_slot(slot, SIGN_SEED, 32, 0).cycles for slot, (session, _) in enumerate(statistics, start=1)}
            == {check.sign_slot(0, SIGN_SEED, 32, 0).cycles})


def test_a_cheap_key_another_images_or_a_statistics_boards_is_made_again():
    pairs = KeyPairs()
    (check, check_port), (other_image, other_port) = board(DEAR), board(DEAR, replace(make_info(), build_id="another"))
    pairs.make_and_keep(check, check_port.device.info, 0, SEED, KEY_ID)
    pairs.make(other_image, other_port.device.info, 1, SEED, KEY_ID)
    (cheap_check, cheap_check_port), (cheap, cheap_port) = board(CHEAP), board(CHEAP)
    pairs.make_and_keep(cheap_check, cheap_check_port.device.info, 0, SIGN_SEED, KEY_ID)
    pairs.make(cheap, cheap_port.device.info, 1, SIGN_SEED, KEY_ID)
    (first, first_port), (second, second_port) = board(DEAR), board(DEAR)
    dear_seed = bytes(32)
    pairs.make(first, first_port.device.info, 1, dear_seed, KEY_ID)
    pairs.make(second, second_port.device.info, 1, dear_seed, KEY_ID)
    assert [port.device.keygens for port in (other_port, cheap_port, first_port, second_port)] == [1, 1, 1, 1]
