"""Labgrid places as pqscope reads them (pqscope.farm), against a stand-in labgrid-client that
prints a place environment; the real farm is tests/target/test_labgrid_virtual.py."""

import re
import sys

import pytest

from pqscope.errors import PqscopeError
from pqscope.farm import Place

SERIAL = "- NetworkSerialPort:\n    name: RawSerialPort\n    speed: 115200\n    host: farm.lab\n    port: 50035\n"
PROBE = "- USBDebugger:\n    busnum: 1\n    devnum: 4\n"


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
    assert (resources.baud, resources.debug_probe) == (115200, False)
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
