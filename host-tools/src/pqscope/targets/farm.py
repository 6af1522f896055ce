"""Boards of a labgrid farm: places acquired from a labgrid coordinator through `labgrid-client`
(labgrid's own command line, used as OpenOCD's is for flashing), their serial ports reached over
RFC 2217 as labgrid's SerialDriver reaches them, and released when the measurement ends."""

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..project.build import SETUP_HINT
from ..project.errors import PqscopeError

CLIENT = "labgrid-client"
CLIENT_TIMEOUT_SECONDS = 60.0
# The serial port resources labgrid exports (ser2net behind them) and the debug probes it knows;
# pqscope flashes through an exported USB debugger (an ST-LINK) with OpenOCD on its exporter.
SERIAL_PORTS = ("NetworkSerialPort",)
DEBUG_PROBES = ("USBDebugger", "NetworkUSBDebugger", "JLinkDevice", "NetworkJLinkDevice")
FLASHABLE_PROBE = "NetworkUSBDebugger"


def labgrid_client(root: Path) -> str:
    """labgrid-client on PATH, else the one setup.sh installs (.venv-labgrid)."""
    found = shutil.which(CLIENT) or root / ".venv-labgrid/bin" / CLIENT
    if not os.access(found, os.X_OK):
        raise PqscopeError(f"{CLIENT} not found on PATH (labgrid); {SETUP_HINT}")
    return str(found)


@dataclass(frozen=True)
class DebugProbe:
    """A place's debug probe: its labgrid resource class and, for an exported USB debugger, the
    exporter's host and the USB port the probe is plugged into there (e.g. 1-1.2)."""

    resource: str
    host: str | None = None
    usb_location: str | None = None

    @property
    def flashable(self) -> bool:
        return self.resource == FLASHABLE_PROBE and bool(self.host and self.usb_location)


@dataclass(frozen=True)
class Resources:
    """What a place offers pqscope: its serial port's RFC 2217 URL and its debug probe, if any."""

    serial_url: str
    baud: int | None
    debug_probe: DebugProbe | None


@dataclass(frozen=True)
class Place:
    """A labgrid place, on `coordinator` (HOST:PORT; None: labgrid's default, LG_COORDINATOR)."""

    name: str
    coordinator: str | None
    client: str

    def acquire(self) -> None:
        """Takes the place for this measurement; a place someone else holds is an error naming them."""
        self._client("acquire")

    def release(self) -> None:
        self._client("release")

    def resources(self) -> Resources:
        """The acquired place's serial port and debug probe (labgrid's environment of the place)."""
        document = yaml.safe_load(self._client("env"))
        try:
            (target,) = document["targets"].values()
            entries = [(cls, args or {}) for resource in target.get("resources") or [] for cls, args in resource.items()]
        except (TypeError, KeyError, ValueError, AttributeError):
            raise PqscopeError(f"labgrid place {self.name}: labgrid-client env printed no place environment") from None
        ports = [args for cls, args in entries if cls in SERIAL_PORTS]
        if not ports:
            raise PqscopeError(f"labgrid place {self.name} has no serial port (NetworkSerialPort): add a match for "
                               "the board's USB-TTL adapter (labgrid-client -p PLACE add-match)")
        port = ports[0]
        if port.get("protocol", "rfc2217") != "rfc2217":
            raise PqscopeError(f"labgrid place {self.name}: its serial port speaks {port['protocol']}, not rfc2217")
        # ser2net cannot set modem lines on every port: like labgrid's SerialDriver, do not wait for it to.
        probes = [DebugProbe(cls, args.get("host"), args.get("path")) for cls, args in entries if cls in DEBUG_PROBES]
        probes.sort(key=lambda probe: not probe.flashable)
        return Resources(f"rfc2217://{port['host']}:{port['port']}?ign_set_control", port.get("speed"),
                         probes[0] if probes else None)

    def _client(self, *args: str) -> str:
        command = [self.client, *(["-x", self.coordinator] if self.coordinator else []), "-p", self.name, *args]
        where = self.coordinator or os.environ.get("LG_COORDINATOR", "labgrid's default coordinator")
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            raise PqscopeError(f"labgrid: no answer from the coordinator at {where} within "
                               f"{CLIENT_TIMEOUT_SECONDS:g} s ({args[0]} place {self.name})") from None
        if result.returncode != 0:
            lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
            why = lines[-1] if lines else f"exit code {result.returncode}"
            raise PqscopeError(f"labgrid: cannot {args[0]} place {self.name} (coordinator {where}): {why}")
        return result.stdout
