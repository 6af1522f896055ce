"""The Discovery image on QEMU's `olimex-stm32-h405` (an STM32F405, the Discovery's STM32F407 less
its Ethernet and camera interface), reached over the host tool's own transport and protocol code.

QEMU models the core, the flash, both RAMs (CCM from QEMU 10 on), USART2 and SysTick, but not the
RCC's ready flags, the unique ID or the DWT. What the image needs of those comes from outside,
never from firmware that knows where it runs:
- the ready flags: nothing. The image's clock bring-up gives up on each bounded wait and boots on
  the HSI it reset to, and says so (INFO: clock source HSI, "the PLL did not lock", 16 MHz);
- the unique ID (0x1FFF7A10, unmapped in QEMU: reading it is a bus fault): a GDB script, through
  QEMU's GDB stub, stops the image where it first asks for its serial number and fills the buffer
  that keeps it, as though the ID had been read;
- the DWT: reads as zero (only probed images use it).
QEMU counts no cycles worth comparing: its SAMPLE cycles are not the board's."""

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from pqscope.link.device import DeviceSession
from pqscope.link.transport import open_port

MACHINE = "olimex-stm32-h405"
QEMU = os.environ.get("PQSCOPE_QEMU", "qemu-system-arm")
GDB = os.environ.get("PQSCOPE_GDB", "gdb-multiarch")
LEAST_QEMU = 10  # the first with the STM32F405's CCM
START_SECONDS = 30.0


class QemuError(Exception):
    pass


def qemu_version() -> tuple[int, ...]:
    if shutil.which(QEMU) is None:
        raise QemuError(f"{QEMU} is not installed: tests/run-all installs QEMU {LEAST_QEMU} or later")
    first = subprocess.run([QEMU, "--version"], capture_output=True, text=True, check=True).stdout.split("\n")[0]
    return tuple(int(part) for part in first.split()[3].split("+")[0].split(".")[:2])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _supply_unique_id(elf: Path, gdb_port: int, serial: str) -> None:
    """Runs the image up to its first hal_board_serial() and writes `serial` (24 hex digits, as the
    firmware would make of the 96-bit ID) into the static buffer that caches it; the image then
    runs on, detached."""
    script = ["set pagination off", "set confirm off", f"target remote 127.0.0.1:{gdb_port}",
              "break hal_board_serial", "continue", f"set {{char[25]}} &'serial.0' = \"{serial}\"", "delete", "detach"]
    command = [GDB, "-batch", "-nx", *(arg for line in script for arg in ("-ex", line)), str(elf)]
    deadline = time.monotonic() + START_SECONDS
    while True:  # until QEMU's GDB stub listens
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        output = result.stdout + result.stderr
        if "Connection refused" not in output or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    if "Breakpoint 1, hal_board_serial" not in output or "Error" in output or "Cannot access" in output:
        raise QemuError(f"the GDB script did not supply the unique ID:\n{output}")


@contextlib.contextmanager
def qemu_session(elf: Path, serial: str, sample_timeout: float = 1800.0) -> Iterator[DeviceSession]:
    """A DeviceSession with `elf` running on QEMU's STM32F405 board, its unique ID `serial`."""
    if shutil.which(GDB) is None:
        raise QemuError(f"{GDB} is not installed: tests/run-all installs it")
    uart_port, gdb_port = _free_port(), _free_port()
    # USART1 first: QEMU hands out -serial options to the USARTs in order.
    qemu = subprocess.Popen(
        [QEMU, "-M", MACHINE, "-icount", "shift=0", "-kernel", str(elf), "-nographic", "-monitor", "none",
         "-serial", "null",
         "-serial", f"tcp:127.0.0.1:{uart_port},server=on,wait=off", "-S", "-gdb", f"tcp:127.0.0.1:{gdb_port}"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _supply_unique_id(elf, gdb_port, serial)
        with open_port(f"socket://127.0.0.1:{uart_port}", 115200) as port:
            yield DeviceSession(port, sample_timeout=sample_timeout)
    finally:
        qemu.terminate()
        try:
            qemu.wait(timeout=10)
        except subprocess.TimeoutExpired:
            qemu.kill()
            qemu.wait()
