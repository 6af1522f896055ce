"""Running the virtual board (the pqscope-vboard emulator) on an image, with its UART on a pty."""

import queue
import signal
import subprocess
import threading
from pathlib import Path

from .errors import PqscopeError
from .metadata import load_json

UART_PREFIX = "vboard: uart "
ERROR_PREFIX = "vboard: error: "
STOP_SECONDS = 5.0


class VBoardError(PqscopeError):
    pass


class VirtualBoard:
    """Context manager: starts the emulator, exposes `port`, and on exit stops it and loads `stats`.

    If the emulator died on its own, leaving the context raises its error line as VBoardError
    (replacing whatever the session raised, e.g. a lost connection, which was only a symptom).
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
    ):
        self.command = [str(emulator), "--elf", str(elf), "--uart", "pty", "--stats", str(stats_path), *extra_args]
        if max_cycles is not None:
            self.command += ["--max-cycles", str(max_cycles)]
        self.stats_path = stats_path
        self.startup_timeout = startup_timeout
        self.port: str | None = None
        self.stats: dict | None = None
        self._stderr: list[str] = []

    def __enter__(self) -> "VirtualBoard":
        try:
            self._process = subprocess.Popen(
                self.command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=True,
                # Its own session: Ctrl-C stops pqscope, which then stops the emulator and keeps its stats.
                start_new_session=True,
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
            raise VBoardError(self._failure())
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        died = self._process.poll() is not None
        self._stop()
        if self.stats_path.exists():
            self.stats = load_json(self.stats_path)
        if died and self._process.returncode != 0:
            raise VBoardError(self._failure()) from exc

    def _read_stderr(self, uart_paths: "queue.Queue[str | None]") -> None:
        for line in self._process.stderr:
            line = line.rstrip("\n")
            self._stderr.append(line)
            if line.startswith(UART_PREFIX):
                uart_paths.put(line[len(UART_PREFIX) :].strip())
        uart_paths.put(None)

    def _stop(self) -> None:
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._reader.join()

    def _failure(self) -> str:
        for line in self._stderr:
            if line.startswith(ERROR_PREFIX):
                return f"virtual board: {line[len(ERROR_PREFIX):]}"
        last = self._stderr[-1] if self._stderr else "no output"
        return f"the emulator exited with code {self._process.returncode} ({last})"
