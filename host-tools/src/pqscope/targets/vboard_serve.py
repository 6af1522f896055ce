"""The virtual board as a serial device for other people's tools (pqm4's test.py, testvectors.py
and benchmarks.py; a terminal): a pty at a fixed path that stays open while images come and go,
and beside it a flash socket through which a flasher stand-in (host-tools/flashers/st-flash)
loads the image a tool flashes and resets the board, as an ST-LINK would.

Each flash starts the emulator afresh on the image, its UART on the pty: what the tool writes
reaches the board, what the board sends reaches the tool. Output nobody reads for a while is
dropped, as a UART with nothing listening loses it."""

import contextlib
import json
import os
import select
import socket
import subprocess
import threading
import tty
from collections.abc import Callable
from pathlib import Path

from ..project.errors import PqscopeError

DEFAULT_LINK = Path("/tmp/pqscope-vboard")
FLASH_SOCKET_SUFFIX = ".flash"
FLASH_BASE = 0x0800_0000  # where st-flash writes a .bin on the Discovery
STOP_SECONDS = 5.0
DROP_AFTER_SECONDS = 2.0  # output the pty cannot take for this long is lost


def flash_socket(link: Path) -> Path:
    return link.with_name(link.name + FLASH_SOCKET_SUFFIX)


class SerialDeviceServer:
    """Serves the virtual board at `link` until stopped; `log` gets a line per flash and halt."""

    def __init__(self, emulator: Path, link: Path, emulator_args: tuple[str, ...] = (),
                 log: Callable[[str], object] = print):
        self.emulator, self.link, self.emulator_args, self.log = emulator, link, emulator_args, log
        self._board: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def serve(self) -> None:
        """Until stop() (or an interrupt): the pty at `link`, flash requests on its socket."""
        master, slave = os.openpty()
        # Kept open here, so that the pty lives on while a tool closes and reopens it.
        tty.setraw(slave)
        control_path = flash_socket(self.link)
        for path in (self.link, control_path):
            if path.is_symlink() or path.is_socket():
                path.unlink()
            elif path.exists():
                raise PqscopeError(f"{path} exists and is not a link or socket this command made: choose another "
                                   "--link")
        self.link.symlink_to(os.ttyname(slave))
        self._master = master
        threading.Thread(target=self._forward_input, daemon=True).start()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as control:
            control.bind(str(control_path))
            control.listen()
            control.settimeout(0.2)
            self.log(f"virtual board serial device: {self.link} (flash socket {control_path})")
            try:
                while not self._stopping.is_set():
                    try:
                        connection, _ = control.accept()
                    except TimeoutError:
                        continue
                    with connection:
                        self._answer(connection)
            finally:
                self._stop_board()
                for path in (self.link, control_path):
                    path.unlink(missing_ok=True)
                os.close(master)
                os.close(slave)

    def stop(self) -> None:
        self._stopping.set()

    def _answer(self, connection: socket.socket) -> None:
        connection.settimeout(10)
        with connection.makefile("rw") as stream:
            try:
                request = json.loads(stream.readline())
                self.flash(Path(request["image"]), int(request["address"]))
                answer = {"ok": True}
            except (PqscopeError, ValueError, KeyError, TypeError) as error:
                answer = {"error": str(error)}
            stream.write(json.dumps(answer) + "\n")

    def flash(self, image: Path, address: int) -> None:
        """Resets the board onto `image` (an ELF, or a raw .bin written at `address`)."""
        if not image.is_file():
            raise PqscopeError(f"no image {image}")
        if image.suffix == ".elf":
            load = ("--elf", str(image))
        elif address == FLASH_BASE:
            load = ("--bin", str(image))
        else:
            raise PqscopeError(f"{image.name}: the virtual board loads a raw image at 0x{FLASH_BASE:08x} (flash), not "
                               f"at 0x{address:08x}")
        with self._lock:
            self._stop_board()
            board = subprocess.Popen([str(self.emulator), *load, "--uart", "stdio", *self.emulator_args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self._board = board
        threading.Thread(target=self._forward_output, args=(board,), daemon=True).start()
        threading.Thread(target=self._report_end, args=(board, image.name), daemon=True).start()
        self.log(f"flashed {image.name}")

    def _stop_board(self) -> None:
        board, self._board = self._board, None
        if board is None or board.poll() is not None:
            return
        board.terminate()
        try:
            board.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            board.kill()
            board.wait()

    def _forward_input(self) -> None:
        while not self._stopping.is_set():
            if not select.select([self._master], [], [], 0.2)[0]:
                continue
            try:
                data = os.read(self._master, 4096)
            except OSError:
                return
            board = self._board
            if board is not None and board.poll() is None:
                with contextlib.suppress(BrokenPipeError, OSError):
                    board.stdin.write(data)
                    board.stdin.flush()

    def _forward_output(self, board: subprocess.Popen) -> None:
        while data := board.stdout.read1(4096):
            while data and select.select([], [self._master], [], DROP_AFTER_SECONDS)[1]:
                data = data[os.write(self._master, data):]

    def _report_end(self, board: subprocess.Popen, name: str) -> None:
        last = ""
        for line in board.stderr:
            if text := line.decode(errors="replace").strip():
                last = text
        code = board.wait()
        if self._board is board or self._board is None:
            self.log(f"{name} ended: {last or f'exit status {code}'}")
