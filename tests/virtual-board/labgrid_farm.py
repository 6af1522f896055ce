"""A labgrid farm on localhost for the tests and the benchmark: labgrid's own coordinator, an
exporter serving virtual boards' UARTs through ser2net, and a place per board."""

import contextlib
import socket
import subprocess
import time
from pathlib import Path

from pqscope.targets.vboard import VirtualBoard, virtual_board_serial

ROOT = Path(__file__).resolve().parents[2]
LABGRID = ROOT / ".venv-labgrid/bin"
EXPORTER_NAME = "pqscope-test"
WAIT_SECONDS = 120  # bounds only a failure: a farm that never comes up


def labgrid_installed() -> bool:
    return (LABGRID / "labgrid-client").exists()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} within {WAIT_SECONDS} s")
        time.sleep(0.2)


class LabgridFarm(contextlib.ExitStack):
    """Context manager: `places` (one per virtual board running `elf`) on the coordinator at
    `coordinator`; `stop_exporter` and `start_exporter` take the boards' serial ports away and
    bring them back. Logs go to `directory`."""

    def __init__(self, directory: Path, emulator: Path, elf: Path, places: tuple[str, ...]):
        super().__init__()
        self.directory, self.emulator, self.elf, self.places = directory, emulator, elf, places
        self.coordinator = f"127.0.0.1:{free_port()}"
        self._exporter: subprocess.Popen | None = None

    def __enter__(self) -> "LabgridFarm":
        super().__enter__()
        try:
            self._start("coordinator", str(LABGRID / "labgrid-coordinator"), "-l", self.coordinator)
            # The exporter gives up on a coordinator that is not listening yet.
            wait_for(lambda: self.client("places", check=False).returncode == 0, "coordinator")
            # Each place a board of its own serial number, as a farm's boards are.
            boards = [self.enter_context(VirtualBoard(self.emulator, self.elf, self.directory / f"{place}.stats.json",
                                                      serial=virtual_board_serial(number)))
                      for number, place in enumerate(self.places)]
            self._config = self.directory / "exporter.yaml"
            self._config.write_text("".join(f"{place}:\n  RawSerialPort:\n    port: {board.port}\n    speed: 115200\n"
                                            for place, board in zip(self.places, boards)))
            self.start_exporter()
            self.callback(self.stop_exporter)
            for place in self.places:
                self.client("-p", place, "create")
                self.client("-p", place, "add-match", f"{EXPORTER_NAME}/{place}/*")
        except BaseException:
            self.close()
            raise
        return self

    def client(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([LABGRID / "labgrid-client", "-x", self.coordinator, *args], capture_output=True,
                                text=True, timeout=WAIT_SECONDS)
        if check and result.returncode != 0:
            raise RuntimeError(f"labgrid-client {' '.join(args)}: {result.stderr.strip()}")
        return result

    def start_exporter(self) -> None:
        self._exporter = self._start("exporter", str(LABGRID / "labgrid-exporter"), "-c", self.coordinator, "-n",
                                     EXPORTER_NAME, "--hostname", "127.0.0.1", str(self._config), stop=False)
        wait_for(lambda: all(f"{EXPORTER_NAME}/{place}/" in self.client("resources", check=False).stdout
                             for place in self.places), "exporter's resources at the coordinator")

    def stop_exporter(self) -> None:
        """Ends the exporter, and with it the ser2net serving each board's UART."""
        if self._exporter is not None:
            self._exporter.terminate()
            self._exporter.wait()
            self._exporter = None

    def _start(self, name: str, *command: str, stop: bool = True) -> subprocess.Popen:
        log = self.enter_context((self.directory / f"{name}.log").open("a"))
        process = subprocess.Popen(command, cwd=self.directory, stdout=log, stderr=subprocess.STDOUT)
        if stop:
            self.callback(lambda: (process.terminate(), process.wait()))
        return process
