"""Labgrid places as pqscope reads them (pqscope.targets.farm), against a stand-in labgrid-client that
prints a place environment, and flashing a place's board through its exporter (stand-ins for
ssh and scp run the exporter's side on this machine); the real farm is
tests/virtual-board/test_labgrid_virtual.py."""

import json
import os
import re
import sys
from pathlib import Path

import pytest
from rich.console import Console

from pqscope.project.boards import get_board
from pqscope.project.errors import PqscopeError
from pqscope.targets.farm import Place
from pqscope.targets.serial import LabgridTarget
from pqscope.targets.target import Link

REPO = Path(__file__).resolve().parents[2]

SERIAL = "- NetworkSerialPort:\n    name: RawSerialPort\n    speed: 115200\n    host: farm.lab\n    port: 50035\n"
PROBE = "- USBDebugger:\n    busnum: 1\n    devnum: 4\n"
EXPORTED_PROBE = ("- NetworkUSBDebugger:\n    host: exporter-1\n    busnum: 1\n    devnum: 7\n    path: 1-1.2\n"
                  "    vendor_id: 1155\n    model_id: 14155\n")


@pytest.fixture
def labgrid_client(tmp_path):
    """A labgrid-client that logs its arguments, prints `resources` as the place's environment
    for `env`, and fails every command with `failure` if given."""
    log = tmp_path / "client.log"

    def install(resources: str = SERIAL, failure: str | None = None) -> tuple[str, object]:
        environment = "targets:\n  bench-1:\n    resources:\n" + "".join(
            f"    {line}\n" for line in resources.splitlines())
        script = tmp_path / "labgrid-client"
        script.write_text(f"#!{sys.executable}\nimport sys\nopen({str(log)!r}, 'a').write(' '.join(sys.argv[1:]) + "
                          f"'\\n')\nfailure = {failure!r}\nif failure:\n    print(failure, file=sys.stderr)\n"
                          f"    sys.exit(1)\nif sys.argv[-1] == 'env':\n    print({environment!r})\n")
        script.chmod(0o755)
        return str(script), log

    return install


def test_the_serial_port_is_reached_over_rfc2217_without_waiting_for_modem_lines(labgrid_client):
    client, log = labgrid_client()
    place = Place("bench-1", "lab:20408", client)
    place.acquire()
    resources = place.resources()
    place.release()
    assert resources.serial_url == "rfc2217://farm.lab:50035?ign_set_control"
    assert (resources.baud, resources.debug_probe) == (115200, None)
    assert log.read_text().splitlines() == ["-x lab:20408 -p bench-1 acquire", "-x lab:20408 -p bench-1 env",
                                            "-x lab:20408 -p bench-1 release"]


def test_a_debug_probe_is_seen(labgrid_client):
    client, _ = labgrid_client(SERIAL + PROBE)
    assert Place("bench-1", None, client).resources().debug_probe


@pytest.mark.parametrize(("resources", "error"), [
    (PROBE, "labgrid place bench-1 has no serial port (NetworkSerialPort)"),
    (SERIAL + "    protocol: raw\n", "labgrid place bench-1: its serial port speaks raw, not rfc2217"),
])
def test_a_place_pqscope_cannot_use_is_one_clear_error(labgrid_client, resources, error):
    client, _ = labgrid_client(resources)
    with pytest.raises(PqscopeError, match=re.escape(error)):
        Place("bench-1", None, client).resources()


def test_labgrids_own_error_is_passed_on_with_the_place(labgrid_client):
    client, _ = labgrid_client(failure="Traceback noise\nlabgrid-client: error: Place bench-1 is already acquired by "
                                       "lab1/alice.")
    with pytest.raises(PqscopeError, match=r"^labgrid: cannot acquire place bench-1 \(coordinator lab:20408\): "
                                           r"labgrid-client: error: Place bench-1 is already acquired by lab1/alice\.$"):
        Place("bench-1", "lab:20408", client).acquire()


def test_an_exported_usb_debugger_is_the_probe_pqscope_flashes_through(labgrid_client):
    client, _ = labgrid_client(SERIAL + PROBE + EXPORTED_PROBE)
    probe = Place("bench-1", None, client).resources().debug_probe
    assert (probe.resource, probe.host, probe.usb_location, probe.flashable) == (
        "NetworkUSBDebugger", "exporter-1", "1-1.2", True)
    client, _ = labgrid_client(SERIAL + "- NetworkJLinkDevice:\n    host: exporter-1\n")
    assert not Place("bench-1", None, client).resources().debug_probe.flashable


@pytest.fixture
def exporter(tmp_path, monkeypatch):
    """ssh and scp that reach a stand-in exporter host on this machine (logging each call), and
    its openocd: logs its arguments with the files they name, exits with the given code."""
    bin_dir = tmp_path / "exporter-bin"
    bin_dir.mkdir()
    log = tmp_path / "exporter.log"

    def script(name: str, body: str) -> None:
        path = bin_dir / name
        path.write_text(f"#!{sys.executable}\nimport json, os, shutil, subprocess, sys\n"
                        f"log = open({str(log)!r}, 'a')\nargs = sys.argv[1:]\n"
                        "while args[0].startswith('-'):\n    args = args[2:] if args[0] == '-o' else args[1:]\n"
                        + body)
        path.chmod(0o755)

    def install(openocd_exit: int = 0, ssh_exit: int | None = None) -> Path:
        script("ssh", f"log.write(json.dumps(['ssh', *args]) + '\\n')\nif {ssh_exit!r} is not None:\n"
                      f"    print('ssh: connect to host exporter-1 port 22: No route to host', file=sys.stderr)\n"
                      f"    sys.exit({ssh_exit!r})\n"
                      "assert args[1] == '--'\nsys.exit(subprocess.run(['sh', '-c', args[2]]).returncode)\n")
        script("scp", "log.write(json.dumps(['scp', *args]) + '\\n')\nhost, directory = args[-1].split(':', 1)\n"
                      "[shutil.copy(name, directory) for name in args[:-1]]\n")
        openocd = bin_dir / "openocd"
        openocd.write_text(f"#!{sys.executable}\nimport json, os, sys\nlog = open({str(log)!r}, 'a')\n"
                           "files = [a for a in sys.argv[1:] if os.path.isfile(a)] + "
                           "[a.split()[1] for a in sys.argv[1:] if a.startswith('program ') and os.path.isfile(a.split()[1])]\n"
                           "log.write(json.dumps(['openocd', *sys.argv[1:], {'files present': files}]) + '\\n')\n"
                           f"print('Error: open failed', file=sys.stderr) if {openocd_exit} else None\n"
                           f"sys.exit({openocd_exit})\n")
        openocd.chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        return log

    return install


def _flash_place(client, tmp_path):
    elf = tmp_path / "m4f.elf"
    elf.write_bytes(b"\x7fELF image")
    target = LabgridTarget(REPO, get_board(REPO, "stm32f4discovery"), Link(), Place("bench-1", None, client))
    target.flash(elf, Console(file=open(os.devnull, "w")))
    return elf


def test_a_place_is_flashed_with_openocd_on_its_exporter_through_the_probe_s_usb_port(labgrid_client, exporter,
                                                                                      tmp_path):
    client, client_log = labgrid_client(SERIAL + EXPORTED_PROBE)
    log = exporter()
    _flash_place(client, tmp_path)
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    made, copied, ran, removed = [call for call in calls if call[0] in ("ssh", "scp")]
    assert made[1] == "exporter-1" and made[3].startswith("mktemp -d /tmp/pqscope-flash.")
    assert copied[-1].startswith("exporter-1:/tmp/pqscope-flash.")
    (openocd,) = [call for call in calls if call[0] == "openocd"]
    remote = copied[-1].split(":", 1)[1]
    assert openocd[1:-1] == ["-f", f"{remote}openocd.cfg", "-c", 'adapter usb location "1-1.2"',
                             "-c", f"program {remote}m4f.elf verify reset exit"]
    assert len(openocd[-1]["files present"]) == 2  # the configuration and the image were there
    assert removed[3] == f"rm -rf {remote.rstrip('/')}" and not Path(remote).exists()
    assert ran[1] == "exporter-1" and ran[3].startswith("openocd ")
    assert client_log.read_text().splitlines() == ["-p bench-1 acquire", "-p bench-1 env",
                                                                 "-p bench-1 release"]


@pytest.mark.parametrize(("openocd_exit", "ssh_exit", "error"), [
    (1, None, "no stm32f4discovery found on labgrid place bench-1's exporter exporter-1: connect the board's ST-LINK"),
    (0, 255, "cannot reach labgrid place bench-1's exporter exporter-1 over ssh (pqscope flashes there, as labgrid "
             "does): ssh: connect to host exporter-1 port 22: No route to host"),
])
def test_flashing_through_the_exporter_fails_clearly_and_releases_the_place(labgrid_client, exporter, tmp_path,
                                                                           openocd_exit, ssh_exit, error):
    client, client_log = labgrid_client(SERIAL + EXPORTED_PROBE)
    exporter(openocd_exit, ssh_exit)
    with pytest.raises(PqscopeError, match=re.escape(error)):
        _flash_place(client, tmp_path)
    assert client_log.read_text().splitlines()[-1] == "-p bench-1 release"


def test_a_probe_pqscope_cannot_flash_through_is_one_clear_error(labgrid_client, tmp_path):
    client, _ = labgrid_client(SERIAL + "- NetworkJLinkDevice:\n    host: exporter-1\n")
    with pytest.raises(PqscopeError, match=re.escape("labgrid place bench-1: its debug probe (NetworkJLinkDevice) is "
                                                     "not an exported USB debugger (NetworkUSBDebugger)")):
        _flash_place(client, tmp_path)
