"""The same Discovery images on QEMU's STM32F405 board (tests/virtual-board/qemu_board.py) as on the virtual
board, driven by the same protocol code: one image per family must give the same transcript
digests, statuses and stack bytes on both, a check of the virtual board by an emulator no one here
wrote. Cycles are not compared (QEMU's are not instruction-timed).

Stack bytes are the deepest the stack went, interrupt frames included: an operation of 2^24 cycles
or more takes the SysTick interrupt (the period restarts before each operation), whose frame (26
words with the FP state, plus 4 bytes of alignment) and its handler's own (the call that counts the
wrap in the harness's guarded state: 8 bytes) land wherever the core is then. The virtual board
lands them where a Discovery does; QEMU, whose SysTick runs on instruction counts (-icount),
elsewhere. Such an operation's stack bytes may differ by up to those, and only then (FN-DSA-512
keygen: 14,416 bytes on the virtual board, 14,304 on QEMU, for a seed whose interrupt lands at the
deepest point).

The comparison is shown to fail for an image that differs on purpose (ML-DSA-44 m4fstack, whose
outputs are m4f's, with less stack).

Environment: conftest.py's, PQSCOPE_QEMU and PQSCOPE_GDB (qemu_board.py)."""

from dataclasses import dataclass

import pytest

from conftest import IMAGES
from pqscope.results.records import sample_seed
from pqscope.link.protocol import Op, Status
from pqscope.targets.vboard import virtual_board_serial
from qemu_board import LEAST_QEMU, qemu_session, qemu_version

FAMILIES = [("ml-dsa-44", "m4f"), ("fndsa_provisional-512", "m4f"), ("falcon-512", "fpemu-m4"),
            ("sphincs-sha2-128f-simple", "clean"), ("ecdsa-p256", "mbedtls")]
MASTER_SEED = b"pqscope on qemu"
MSG_LEN = 59
SAMPLES = 2
OPS = (Op.KEYGEN, Op.SIGN, Op.VERIFY)
SYSTICK_PERIOD = 1 << 24  # boards/stm32f4discovery/board.c: SYSTICK_RELOAD + 1
RESTART_SLACK = 1000  # cycles between the period's restart and the operation's first counted one
EXCEPTION_FRAME_BYTES = 26 * 4 + 4 + 8  # the frame, its alignment, and the SysTick handler's own call


@dataclass(frozen=True)
class Transcript:
    """What two faithful emulations of one image must agree on, per sample."""

    digest: bytes
    status: Status
    operations: tuple[tuple[Op, Status, int, bool], ...]  # status, stack bytes, took a SysTick interrupt


def transcripts(session) -> list[Transcript]:
    results = [session.run_sample(sample_seed(MASTER_SEED, index), MSG_LEN, OPS, index, digest=True)
               for index in range(SAMPLES)]
    return [Transcript(result.digest, result.done.status,
                       tuple((sample.op, sample.status, sample.stack_bytes,
                              sample.cycles >= SYSTICK_PERIOD - RESTART_SLACK) for sample in result.samples))
            for result in results]


def differences(qemu: list[Transcript], virtual: list[Transcript]) -> list[str]:
    found = []
    for index, (on_qemu, on_virtual) in enumerate(zip(qemu, virtual, strict=True)):
        if on_qemu.digest != on_virtual.digest:
            found.append(f"sample {index}: digest {on_qemu.digest.hex()} on QEMU, {on_virtual.digest.hex()} virtual")
        if on_qemu.status != on_virtual.status:
            found.append(f"sample {index}: status {on_qemu.status.name} on QEMU, {on_virtual.status.name} virtual")
        for (op, status, stack, interrupted), (_, virtual_status, virtual_stack, virtual_interrupted) in zip(
                on_qemu.operations, on_virtual.operations, strict=True):
            frame = EXCEPTION_FRAME_BYTES if interrupted or virtual_interrupted else 0
            if status != virtual_status or abs(stack - virtual_stack) > frame:
                found.append(f"sample {index} {op.name.lower()}: {status.name}, {stack} stack bytes on QEMU; "
                             f"{virtual_status.name}, {virtual_stack} virtual")
    return found


def on_qemu(scheme: str, impl: str) -> tuple[object, list[Transcript]]:
    with qemu_session(IMAGES / scheme / f"{impl}.elf", virtual_board_serial(0)) as session:
        return session.hello(), transcripts(session)


def on_virtual_board(image_session, scheme: str, impl: str) -> tuple[object, list[Transcript]]:
    session = image_session(scheme, impl)
    return session.hello(), transcripts(session)


def test_qemu_is_recent_enough():
    assert qemu_version() >= (LEAST_QEMU,)


@pytest.mark.parametrize(("scheme", "impl"), FAMILIES, ids=[f"{s}/{i}" for s, i in FAMILIES])
def test_qemu_and_the_virtual_board_agree(image_session, scheme, impl):
    qemu_info, qemu = on_qemu(scheme, impl)
    virtual_info, virtual = on_virtual_board(image_session, scheme, impl)
    assert differences(qemu, virtual) == []
    assert all(t.status == Status.OK and [op[1] for op in t.operations] == [Status.OK] * 3 for t in qemu)
    assert len({t.digest for t in qemu}) == SAMPLES  # each seed its own transcript
    # Both report the unique ID the test gave; QEMU's RCC never reports a PLL ready, so the image
    # boots on its HSI there, and says so.
    assert qemu_info.board_serial == virtual_info.board_serial == virtual_board_serial(0)
    assert (virtual_info.clock_source, virtual_info.clock_fallback_reason) == ("HSE", "")
    assert (qemu_info.clock_source, qemu_info.clock_fallback_reason, qemu_info.clock_hz) == \
           ("HSI", "the PLL did not lock", 16_000_000)


def test_an_image_that_differs_on_purpose_is_caught(image_session):
    """m4fstack computes what m4f computes with less stack: the digests agree, every stack size does not."""
    _, qemu = on_qemu("ml-dsa-44", "m4fstack")
    _, virtual = on_virtual_board(image_session, "ml-dsa-44", "m4f")
    found = differences(qemu, virtual)
    assert len(found) == SAMPLES * len(OPS)
    assert all("stack bytes on QEMU" in line for line in found)


def test_only_an_interrupted_operation_may_differ_by_an_exception_frame():
    def one(stack: int, interrupted: bool) -> list[Transcript]:
        return [Transcript(b"d", Status.OK, ((Op.KEYGEN, Status.OK, stack, interrupted),))]

    assert differences(one(1000, True), one(1000 + EXCEPTION_FRAME_BYTES, False)) == []
    assert differences(one(1000, False), one(1000 + EXCEPTION_FRAME_BYTES, True)) == []
    assert differences(one(1000, True), one(1001 + EXCEPTION_FRAME_BYTES, True)) != []
    assert differences(one(1000, False), one(1004, False)) != []
