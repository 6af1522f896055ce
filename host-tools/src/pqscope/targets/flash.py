"""Flashing a real board with OpenOCD and the configuration in its board folder: on this machine,
or on the labgrid exporter that holds the board's debug probe (over ssh, as labgrid's OpenOCD
driver does)."""

import shlex
import shutil
import subprocess
from pathlib import Path

from ..project.boards import Board
from ..project.build import SETUP_HINT
from ..project.errors import PqscopeError

OPENOCD_CONFIG = "openocd.cfg"
FLASH_TIMEOUT_SECONDS = 120
# OpenOCD messages that mean "no probe or no target", worded for the user.
NO_PROBE_HINTS = ("open failed", "no device found", "unable to find", "libusb_open", "error connecting dp",
                  "couldn't find", "not found")
# Never ask for a password or a host key: a farm is reached with keys, or the flash fails clearly.
SSH_OPTIONS = ("-o", "BatchMode=yes", "-o", "ConnectTimeout=10")
SSH_UNREACHABLE = 255  # ssh's own exit code: the connection, not the remote command, failed


def _config(board: Board) -> Path:
    config = board.directory / OPENOCD_CONFIG
    if not config.is_file():
        raise PqscopeError(f"board {board.name} has no flasher configuration ({config})")
    return config


def openocd_arguments(config: str, elf: str, adapter: str | None = None, usb_location: str | None = None) -> list[str]:
    """OpenOCD's arguments that program, verify and reset: the probe chosen by its serial number
    (`adapter`) or by the USB port it is plugged into (`usb_location`, e.g. 1-1.2, as labgrid
    names it), before `program` initialises it. Forward slashes and no spaces trouble OpenOCD's
    Tcl parser less than quoting does."""
    choose = (["-c", f"adapter serial {adapter}"] if adapter else []) + (
        ["-c", f'adapter usb location "{usb_location}"'] if usb_location else [])
    return ["-f", config, *choose, "-c", f"program {elf} verify reset exit"]


def openocd_command(board: Board, elf: Path, adapter: str | None = None) -> list[str]:
    openocd = shutil.which("openocd")
    if openocd is None:
        raise PqscopeError(f"openocd not found on PATH; {SETUP_HINT}")
    return [openocd, *openocd_arguments(_config(board).as_posix(), elf.as_posix(), adapter)]


def flash(board: Board, elf: Path, adapter: str | None = None) -> None:
    """Programs and verifies `elf`, then resets the board so that it boots the new image; `adapter`
    is the serial number of the board's debug probe (None: the only one plugged in)."""
    _check_openocd(_run(openocd_command(board, elf, adapter), f"flashing {board.name}"), board, elf)


def flash_on_exporter(board: Board, elf: Path, host: str, usb_location: str, place: str) -> None:
    """Programs `elf` through the debug probe at `usb_location` on the labgrid exporter `host`:
    the board's OpenOCD configuration and the image are copied to a fresh directory there (scp),
    OpenOCD runs there (ssh), and the directory is removed."""
    where = f"labgrid place {place}'s exporter {host}"
    made = _ssh(host, ["mktemp", "-d", "/tmp/pqscope-flash.XXXXXX"], where)
    directory = made.stdout.strip()
    try:
        copy = _run(["scp", "-q", *SSH_OPTIONS, str(_config(board)), str(elf), f"{host}:{directory}/"],
                    f"copying {elf.name} to {where}")
        if copy.returncode != 0:
            raise PqscopeError(f"cannot copy {elf.name} to {where} (scp): {_last_line(copy)}")
        result = _ssh(host, ["openocd", *openocd_arguments(f"{directory}/{OPENOCD_CONFIG}", f"{directory}/{elf.name}",
                                                           usb_location=usb_location)], where, check=False)
        _check_openocd(result, board, elf, f" on {where}")
    finally:
        _ssh(host, ["rm", "-rf", directory], where, check=False)


def _ssh(host: str, command: list[str], where: str, check: bool = True) -> subprocess.CompletedProcess:
    result = _run(["ssh", *SSH_OPTIONS, host, "--", shlex.join(command)], f"reaching {where}")
    if result.returncode == SSH_UNREACHABLE or (check and result.returncode != 0):
        raise PqscopeError(f"cannot reach {where} over ssh (pqscope flashes there, as labgrid does): "
                           f"{_last_line(result)}")
    return result


def _run(command: list[str], what: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=FLASH_TIMEOUT_SECONDS)
    except FileNotFoundError:
        raise PqscopeError(f"{command[0]} not found on PATH ({what})") from None
    except subprocess.TimeoutExpired:
        raise PqscopeError(f"{command[0]} did not finish within {FLASH_TIMEOUT_SECONDS} s ({what})") from None


def _last_line(result: subprocess.CompletedProcess) -> str:
    lines = [line.strip() for line in (result.stderr + result.stdout).splitlines() if line.strip()]
    return lines[-1] if lines else f"exit code {result.returncode}"


def _check_openocd(result: subprocess.CompletedProcess, board: Board, elf: Path, where: str = "") -> None:
    if result.returncode == 0:
        return
    log = result.stderr + result.stdout
    if any(hint in log.lower() for hint in NO_PROBE_HINTS):
        raise PqscopeError(f"no {board.name} found{where}: connect the board's ST-LINK USB port (openocd could not "
                           "open the debug probe)")
    raise PqscopeError(f"openocd failed to flash {elf.name} onto {board.name}{where} (exit code {result.returncode})",
                       details=log)
