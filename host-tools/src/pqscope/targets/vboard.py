"""Running the virtual board (the pqscope-vboard emulator) on an image, with its UART on a pty."""

import ctypes
import fcntl
import os
import queue
import re
import select
import signal
import struct
import subprocess
import termios
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ..link.transport import POLL_SECONDS, TransportError
from ..project.elf import ElfError, Symbolizer
from ..project.errors import PqscopeError
from ..project.metadata import load_json

UART_PREFIX = "vboard: uart "
ERROR_PREFIX = "vboard: error: "
IDLE_LINE = re.compile(r"vboard: idle rx=(\d+) tx=(\d+)")
# The emulator's exit status when it stopped at its --max-cycles budget (emulator/machine.h), and
# its error line then, which says the budget and where the image was.
EXIT_CYCLE_LIMIT = 3
CYCLE_LIMIT = re.compile(r"cycle limit (\d+) exceeded at address (0x[0-9a-f]+)")
# An error at an instruction of the image's code, which the emulator names by its function: "... in
# crypto_sign_signature at address 0x080001b2" (a store into the harness's guarded memory).
CODE_ADDRESS = re.compile(r" in \S+ at address (0x[0-9a-f]+)")
STOP_SECONDS = 5.0
# The emulator runs the Keccak permutation's calls on the host once it has learnt them, with the
# same results (docs/pages/virtual-board.md, "Calls run on the host"); PQSCOPE_NATIVE_CALLS=off
# emulates every call, to compare.
NATIVE_CALLS_SWITCH = "PQSCOPE_NATIVE_CALLS"
EXIT_GRACE_SECONDS = 2.0  # after a failed session, how long an emulator that is ending may take to exit


class VBoardError(PqscopeError):
    pass


class CycleBudgetExhausted(VBoardError):
    """The emulator stopped at its budget of cycles (--max-cycles) before the image was done: on a
    deterministic board the same image given the same budget stops at the same place again."""

    def __init__(self, message: str, budget: int, address: int):
        super().__init__(message)
        self.budget, self.address = budget, address


PR_SET_PDEATHSIG = 1  # linux/prctl.h
_prctl = ctypes.CDLL(None).prctl  # looked up here: the forked child only calls it


def _end_with_parent() -> None:
    """In the emulator's process before it starts: SIGTERM when pqscope ends, even killed, so that
    no emulator outlives the command that started it (its own session keeps it from Ctrl-C)."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def virtual_board_serial(number: int) -> str:
    """The serial number (96-bit unique ID, 24 hex digits) of the `number`th virtual board a
    measurement starts: "VIRTUAL" in ASCII, then the number."""
    return f"{b'VIRTUAL'.hex().upper()}{number:010X}"


class VirtualBoard:
    """Context manager: starts the emulator, exposes `port` (its pty) and `open_uart`, and on exit
    stops it and loads `stats`.

    If the emulator died on its own, leaving the context raises its error line as VBoardError
    (replacing whatever the session raised, e.g. a lost connection, which was only a symptom);
    CycleBudgetExhausted when it stopped at its budget of cycles.
    """

    def __init__(
        self,
        emulator: Path,
        elf: Path,
        stats_path: Path,
        *,
        max_cycles: int | None = None,
        startup_timeout: float = 10.0,
        extra_args: tuple[str, ...] = (),
        serial: str = virtual_board_serial(0),
    ):
        self.elf = elf
        emulated = ("--native-calls", "off") if os.environ.get(NATIVE_CALLS_SWITCH) == "off" else ()
        self.command = [str(emulator), "--elf", str(elf), "--uart", "pty", "--stats", str(stats_path),
                        "--uid", serial, *emulated, *extra_args]
        if max_cycles is not None:
            self.command += ["--max-cycles", str(max_cycles)]
        self.stats_path = stats_path
        self.startup_timeout = startup_timeout
        self.port: str | None = None
        self.stats: dict | None = None
        self._stderr: list[str] = []
        self._traffic = _Traffic()

    def __enter__(self) -> "VirtualBoard":
        try:
            self._process = subprocess.Popen(
                self.command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=True,
                # Its own session: Ctrl-C stops pqscope, which then stops the emulator and keeps its stats.
                start_new_session=True, preexec_fn=_end_with_parent,
            )
        except OSError as error:
            raise VBoardError(f"cannot start the emulator {self.command[0]}: {error.strerror}") from None
        uart_paths: queue.Queue[str | None] = queue.Queue()
        # Draining stderr all along keeps the emulator from blocking on a full pipe.
        self._reader = threading.Thread(target=self._read_stderr, args=(uart_paths,), daemon=True)
        self._reader.start()
        try:
            self.port = uart_paths.get(timeout=self.startup_timeout)
        except queue.Empty:
            self._stop()
            raise VBoardError(f"the emulator did not report its uart within {self.startup_timeout:g} s") from None
        if self.port is None:
            self._stop()
            raise self._failure()
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        died = self._process.poll() is not None or (exc is not None and self._exits_by_itself())
        self._stop()
        if self.stats_path.exists():
            self.stats = load_json(self.stats_path)
        if died and self._process.returncode != 0:
            raise self._failure() from exc

    def open_uart(self) -> "VirtualUart":
        """The board's UART (its pty) as a pyserial-like port that knows when the device waits."""
        return VirtualUart(self.port, self._traffic)

    def _read_stderr(self, uart_paths: "queue.Queue[str | None]") -> None:
        for line in self._process.stderr:
            line = line.rstrip("\n")
            if idle := IDLE_LINE.fullmatch(line):
                # Not kept: one per command, and never what a failure should report.
                with self._traffic.changed:
                    self._traffic.idle = int(idle[1]), int(idle[2])
                    self._traffic.changed.notify_all()
                continue
            self._stderr.append(line)
            if line.startswith(UART_PREFIX):
                uart_paths.put(line[len(UART_PREFIX) :].strip())
        uart_paths.put(None)
        with self._traffic.changed:
            self._traffic.ended = True
            self._traffic.changed.notify_all()

    def _exits_by_itself(self) -> bool:
        """Whether the emulator is ending of its own accord: a session that failed because the
        emulator stopped (e.g. at --max-cycles) sees its pty close a moment before the exit."""
        try:
            self._process.wait(timeout=EXIT_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            return False
        return True

    def _stop(self) -> None:
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._reader.join()

    def _failure(self) -> VBoardError:
        """Why the emulator ended: its error line (with the source line of the instruction it
        names), typed by its exit status when it stopped at its budget of cycles; or the signal
        that killed it."""
        for line in self._stderr:
            if line.startswith(ERROR_PREFIX):
                error = line[len(ERROR_PREFIX):]
                message = f"virtual board: {_with_source_line(error, self.elf)}"
                limit = CYCLE_LIMIT.match(error)
                if self._process.returncode == EXIT_CYCLE_LIMIT and limit:
                    return CycleBudgetExhausted(message, int(limit[1]), int(limit[2], 16))
                return VBoardError(message)
        if self._process.returncode < 0:
            name = signal.Signals(-self._process.returncode).name
            return VBoardError(f"the emulator was killed by {name} (not by pqscope); what was measured before is "
                               "kept: resume the run with --resume DIR")
        last = self._stderr[-1] if self._stderr else "no output"
        return VBoardError(f"the emulator exited with code {self._process.returncode} ({last})")


def _with_source_line(error: str, elf: Path) -> str:
    """The emulator's error, with the source line of the code address it names, when the image's
    DWARF knows it: "... in flip at address 0x080001b2 (overflow.c:23)"."""
    place = CODE_ADDRESS.search(error)
    if place is None:
        return error
    address = int(place[1], 16)
    try:
        file, line = Symbolizer(elf, [address]).line(address)
    except ElfError:
        return error
    if file is None:
        return error
    return f"{error[:place.end()]} ({Path(file).name}:{line}){error[place.end():]}"


@dataclass
class _Traffic:
    """The bytes written to and read from the board's UART, over every port opened on it (as the
    emulator counts them), and (rx, tx) of the emulator's latest idle line."""

    written: int = 0
    read: int = 0
    idle: tuple[int, int] | None = None
    ended: bool = False  # the emulator's stderr closed
    changed: threading.Condition = field(default_factory=threading.Condition)  # notified with each change


class VirtualUart:
    """The virtual board's UART: its pty, read and written directly, counting the bytes it carries
    so that `device_waiting` can compare them with the emulator's idle line.

    Not a pyserial port: pyserial's open discards pending input, and bytes still on their way
    through the kernel's pty buffer survive that discard, so no count taken at opening could be
    trusted. The emulator holds the pty open itself, so everything the device sent, before this
    port and after an earlier one closed, is read here and counted: the counts agree exactly."""

    def __init__(self, path: str, traffic: _Traffic):
        self.port = path
        self._traffic = traffic
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError as error:
            raise TransportError(f"cannot open the virtual board's uart {path}: {error.strerror}") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # one reader, as pyserial's exclusive=True
        except OSError:
            os.close(self._fd)
            raise TransportError(f"port {path} is busy (another program has it open)") from None

    @property
    def in_waiting(self) -> int:
        return struct.unpack("i", fcntl.ioctl(self._fd, termios.FIONREAD, b"\0\0\0\0"))[0]

    def device_waiting(self) -> bool:
        """True when the device has consumed every byte written, waits for input, and every byte
        it sent has been read: nothing more will come until we write."""
        return self._traffic.idle == (self._traffic.written, self._traffic.read)

    def read(self, size: int = 1) -> bytes:
        """Up to `size` bytes; empty after POLL_SECONDS without any, like a pyserial port's timeout."""
        readable, _, _ = select.select([self._fd], [], [], POLL_SECONDS)
        if not readable:
            return b""
        try:
            data = os.read(self._fd, size)
        except BlockingIOError:
            return b""
        self._traffic.read += len(data)
        return data

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        while view:
            select.select([], [self._fd], [])
            try:
                view = view[os.write(self._fd, view):]
            except BlockingIOError:
                continue
        self._traffic.written += len(data)
        return len(data)

    def flush(self) -> None:
        """Nothing to do: `write` returns when the pty holds every byte."""

    def reset_input_buffer(self) -> None:
        # Read, not discarded, so that the count still matches the emulator's.
        while waiting := self.in_waiting:
            self.read(waiting)

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> "VirtualUart":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
