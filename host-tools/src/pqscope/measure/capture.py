"""From a session with a board running an image to rows of measurements: check, run samples."""

from collections.abc import Callable, Collection, Iterator

from ..link.device import DeviceSession
from ..link.protocol import Info, Op, Status
from ..project.boards import Board
from ..project.catalogue import Implementation
from ..project.errors import PqscopeError
from ..results.records import Row, sample_seed


def check_info(info: Info, board: Board, implementation: Implementation, msg_len: int) -> None:
    """The device must run the image we mean to measure."""
    running = f"{info.board}/{info.scheme}/{info.impl}"
    wanted = f"{board.name}/{implementation.scheme}/{implementation.impl}"
    if (info.scheme, info.impl) != (implementation.scheme, implementation.impl) or (
        info.board not in board.firmware_names
    ):
        raise PqscopeError(f"the device runs {running}, not {wanted}: flash the right image")
    if info.clock_hz != board.clock_hz:
        raise PqscopeError(f"the device's image runs at {info.clock_hz / 1e6:g} MHz, not at --clock {board.clock.name} "
                           f"({board.clock.describe()}): flash the image built for that clock")
    compiled = (info.pk_bytes, info.sk_bytes, info.sig_bytes)
    catalogued = (implementation.pk_bytes, implementation.sk_bytes, implementation.sig_bytes)
    # A bring-your-own implementation (--impl-dir) has no catalogue sizes: the device's are the truth.
    if implementation.directory is None and compiled != catalogued:
        raise PqscopeError(
            f"{implementation.scheme}/{implementation.impl}: the image's api.h sizes (pk, sk, sig) {compiled} "
            f"differ from the catalogue's {catalogued}: fix firmware/schemes/catalogue.json")
    if msg_len > info.max_msg_len:
        raise PqscopeError(f"--msg-len {msg_len} exceeds the image's maximum of {info.max_msg_len}")


def capture(
    session: DeviceSession, *, ops: tuple[Op, ...], samples: int, msg_len: int, master_seed: bytes,
    skip: Collection[int] = (), owns: Callable[[int], bool] = lambda index: True, board: str = "",
) -> Iterator[list[Row]]:
    """Runs the samples that `owns` selects one by one, except those in `skip` (a resumed run's
    completed samples), yielding each one's rows as soon as it is done; `board` is the serial
    number of the board `session` reaches."""
    for index in range(samples):
        if index in skip or not owns(index):
            continue
        seed = sample_seed(master_seed, index)
        result = session.run_sample(seed, msg_len, ops, index)
        verified = result.done.status == Status.OK
        yield [
            Row(index, sample.op, seed, sample.cycles, sample.stack_bytes, sample.status, verified, sample.probes, board)
            for sample in result.samples
        ]
