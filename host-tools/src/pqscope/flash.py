"""Flashing a real board with OpenOCD and the configuration in its board folder."""

import shutil
import subprocess
from pathlib import Path

from .boards import Board
from .build import SETUP_HINT
from .errors import PqscopeError

OPENOCD_CONFIG = "openocd.cfg"
FLASH_TIMEOUT_SECONDS = 120
# OpenOCD messages that mean "no probe or no target", worded for the user.
NO_PROBE_HINTS = ("open failed", "no device found", "unable to find", "libusb_open", "error connecting dp",
                  "couldn't find", "not found")


def openocd_command(board: Board, elf: Path, adapter: str | None = None) -> list[str]:
    openocd = shutil.which("openocd")
    if openocd is None:
        raise PqscopeError(f"openocd not found on PATH; {SETUP_HINT}")
    config = board.directory / OPENOCD_CONFIG
    if not config.is_file():
        raise PqscopeError(f"board {board.name} has no flasher configuration ({config})")
    # Forward slashes and no spaces trouble OpenOCD's Tcl parser less than quoting does.
    # The adapter serial number picks one probe among several (before `program` initialises it).
    choose = ["-c", f"adapter serial {adapter}"] if adapter else []
    return [openocd, "-f", str(config), *choose, "-c", f"program {elf.as_posix()} verify reset exit"]


def flash(board: Board, elf: Path, adapter: str | None = None) -> None:
    """Programs and verifies `elf`, then resets the board so that it boots the new image; `adapter`
    is the serial number of the board's debug probe (None: the only one plugged in)."""
    command = openocd_command(board, elf, adapter)
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=FLASH_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        raise PqscopeError(f"openocd did not finish within {FLASH_TIMEOUT_SECONDS} s flashing {board.name}") from None
    if result.returncode == 0:
        return
    log = result.stderr + result.stdout
    if any(hint in log.lower() for hint in NO_PROBE_HINTS):
        raise PqscopeError(f"no {board.name} found: connect the board's ST-LINK USB port (openocd could not "
                           "open the debug probe)")
    raise PqscopeError(f"openocd failed to flash {elf.name} onto {board.name} (exit code {result.returncode})",
                       details=log)
