"""host-tools/flashers/openocd: pqm4's platform layer programs a Nucleo-L4R5ZI with
`openocd -f st_nucleo_l4r5.cfg -c "program X.hex verify reset exit"`; the shim hands the served
virtual board the Intel HEX file's bytes as a raw image at its address, through the flash socket
st-flash uses. And `pqscope vboard-serve --board` serves only a virtual board."""

import json
import socket
import subprocess
import sys
import threading

from click.testing import CliRunner

from conftest import REPO
from pqscope.cli import cli

OPENOCD = REPO / "host-tools/flashers/openocd"


def _record(kind: int, address: int, data: bytes) -> str:
    body = bytes([len(data), address >> 8, address & 0xFF, kind]) + data
    return ":" + (body + bytes([-sum(body) % 256])).hex().upper()


def _served_flash(tmp_path):
    """A flash socket as `pqscope vboard-serve` opens one, answering ok to one request it keeps."""
    link = tmp_path / "vboard"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(link) + ".flash")
    server.listen(1)
    requests = []

    def answer():
        connection, _ = server.accept()
        with connection, connection.makefile("rw") as stream:
            request = json.loads(stream.readline())
            requests.append({**request, "bytes": open(request["image"], "rb").read()})
            stream.write(json.dumps({"ok": True}) + "\n")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return link, server, thread, requests


def _openocd(link, *args):
    return subprocess.run([sys.executable, str(OPENOCD), *args], capture_output=True, text=True, timeout=30,
                          env={"PQSCOPE_VBOARD": str(link), "PATH": "/usr/bin:/bin"})


def test_a_hex_file_is_flashed_as_its_bytes_at_its_address(tmp_path):
    hex_file = tmp_path / "image.hex"
    # Two records with a gap of two erased bytes between them, above the extended linear base 0x0800.
    hex_file.write_text("\n".join([_record(4, 0, b"\x08\x00"), _record(0, 0x10, b"\x01\x02"),
                                   _record(0, 0x14, b"\x03"), _record(1, 0, b"")]) + "\n")
    link, server, thread, requests = _served_flash(tmp_path)
    with server:
        result = _openocd(link, "-f", "st_nucleo_l4r5.cfg", "-c", f"program {hex_file} verify reset exit")
        thread.join(timeout=30)
    assert result.returncode == 0, result.stderr
    (request,) = requests
    assert (request["address"], request["bytes"]) == (0x08000010, b"\x01\x02\xff\xff\x03")


def test_a_file_that_is_not_intel_hex_is_one_error(tmp_path):
    hex_file = tmp_path / "image.hex"
    hex_file.write_text(_record(0, 0, b"\x01")[:-2] + "00\n")  # a wrong checksum
    result = _openocd(tmp_path / "vboard", "-c", f"program {hex_file} verify reset exit")
    assert result.returncode == 1
    assert result.stderr.strip() == f"openocd (pqscope virtual board): {hex_file}:1: not an Intel HEX record"


def test_vboard_serve_refuses_a_board_on_a_serial_port(fake_repo):
    result = CliRunner().invoke(cli, ["vboard-serve", "--board", "stm32f4discovery"])
    assert result.exit_code != 0 and isinstance(result.exception, SystemExit)
    (line,) = result.stderr.splitlines()
    assert "board stm32f4discovery is reached over a serial port: vboard-serve serves a virtual board" in line
