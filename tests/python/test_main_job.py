"""The main job through two boards (fake devices on ptys, flashed by a stand-in for OpenOCD): the
suite's cycles, then each member's constant-time test, and one report with every section the
virtual board's has (tests/virtual-board/test_main_job_virtual.py), readable at 1280 pixels."""

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from main_job import SECTIONS
from pqscope.targets import serial
from pqscope.cli import cli
from pqscope.results import store
from report_layout import blemishes, html_sections, markdown_sections, too_wide

FALCON_MODES = ("fpnative", "fpemu-c", "fpemu-m4")


@pytest.fixture
def falcon_catalogue(fake_repo):
    """The fake catalogue with Falcon-512's three modes beside ML-DSA-44 (the fake device's sizes)."""
    path = fake_repo / "firmware/schemes/catalogue.json"
    catalogue = json.loads(path.read_text())
    (row,) = catalogue["implementations"]
    catalogue["implementations"] += [{**row, "scheme": "falcon-512", "impl": mode, "family": "Falcon"}
                                     for mode in FALCON_MODES]
    path.write_text(json.dumps(catalogue))


def test_the_main_job_on_two_boards_writes_the_virtual_boards_sections(fake_repo, fake_toolchain, falcon_catalogue,
                                                                       pty_device, monkeypatch, tmp_path):
    devices = {}

    def flash(board, elf: Path, adapter) -> None:
        device = devices[adapter]
        device.info = replace(device.info, scheme=elf.parent.name, impl=elf.stem)
        device.reset()

    monkeypatch.setattr(serial, "openocd_flash", flash)
    connection = []
    for probe in ("PROBE0", "PROBE1"):
        devices[probe], port = pty_device()
        connection += ["--port", port, "--adapter-serial", probe]
    out = tmp_path / "suite"
    members = [argument for row in ("ml-dsa-44/m4f", *(f"falcon-512/{mode}" for mode in FALCON_MODES))
               for argument in ("--member", row)]
    result = CliRunner().invoke(cli, ["run", "--board", "stm32f4discovery", *connection, *members, "-n", "4",
                                      "--ct-n", "40", "--no-replay", "--seed", "05", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    document = store.read(out / "suite-report.json")
    names = [item["name"] for item in document["implementations"]]
    assert sorted(names) == ["Falcon-512 fpemu-c", "Falcon-512 fpemu-m4", "Falcon-512 fpnative", "ML-DSA-44 m4f"]
    for item in document["implementations"]:
        test = item["constant_time"]
        # A board gives what statistics give: no exact check without the replay.
        assert test["signatures"] == 40 and test["exact_check"] is None, test
        assert set(item["cycles"]) == {"keygen", "sign", "verify"} and item["variance"]["cv"] >= 0
    (falcon,) = document["falcon"]
    assert [mode["impl"] for mode in falcon["modes"]] == list(FALCON_MODES)
    assert all(mode["price"]["sign"] is not None for mode in falcon["modes"])
    assert document["summary"] and any("Fastest signing" in sentence for sentence in document["summary"])
    assert html_sections(out / "report.html") == markdown_sections(out / "report.md") == SECTIONS
    assert too_wide(out / "report.html", tmp_path) == [] and blemishes(out / "report.md") == []
    for fmt, name in (("md", "report.md"), ("html", "report.html")):  # `pqscope report` makes them again
        assert CliRunner().invoke(cli, ["report", str(out), "--format", fmt]).stdout == (out / name).read_text()
    # Every step announced by name, each member measured on both boards.
    steps = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert len(steps) == 8 and steps[0].startswith("[1/8] cycles and stack:") and "constant-time test" in steps[-1]
    assert all(len(devices[probe].commands) > 0 for probe in devices)
