"""A labgrid farm on localhost: a coordinator, an exporter serving two virtual boards' UARTs through
ser2net as two places, and `pqscope ct` sharded across both places; its signatures equal the
same seed's on one virtual board. No mock: labgrid's own coordinator, exporter and client."""

import csv
import json
import os
import subprocess
import sys

import pytest

from conftest import EMULATOR, IMAGES, ROOT
from gate_status import gate_document
from labgrid_farm import LabgridFarm, free_port, labgrid_installed, wait_for
from pqscope.targets.vboard import virtual_board_serial

SCHEME, IMPL = "control-branch", "ct"
PLACES = ("pqscope-a", "pqscope-b")
CT = ("ct", "--scheme", SCHEME, "--impl", IMPL, "--fixed-n", "--seed", "c7", "--json", "--no-report")

if not labgrid_installed():
    pytest.skip("labgrid is not installed (host-tools/setup.sh installs it into .venv-labgrid)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def farm(tmp_path_factory):
    """A place per virtual board running the control's image. Each test leaves every place released."""
    built = pqscope("build", "--board", "virtual", "--scheme", SCHEME, "--impl", IMPL)  # the image the boards run
    assert built.returncode == 0, built.stderr
    with LabgridFarm(tmp_path_factory.mktemp("farm"), EMULATOR, IMAGES / SCHEME / f"{IMPL}.elf", PLACES) as farm:
        yield farm


def on_places(farm: LabgridFarm, *places: str) -> tuple[str, ...]:
    return ("--board", "stm32f4discovery", "--labgrid-coordinator", farm.coordinator,
            *(arg for place in places for arg in ("--labgrid-place", place)))


def ct_csv(path) -> list[dict]:
    with (path / "ct.csv").open() as stream:
        return list(csv.DictReader(stream))


def without_board(rows: list[dict]) -> list[dict]:
    """ct.csv but for the column naming the board that measured each signature."""
    return [{key: value for key, value in row.items() if key != "board"} for row in rows]


def ct_rows(path) -> int:
    try:
        with (path / "ct.csv").open() as stream:
            return len(list(csv.DictReader(stream)))
    except FileNotFoundError:
        return 0


def pqscope(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pqscope", *args], capture_output=True, text=True,
                          env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=3600)


SIGNATURES = 100


@pytest.fixture(scope="module")
def local_ct(tmp_path_factory) -> tuple[dict, list[dict]]:
    """The same test on one virtual board (its document and ct.csv), its statistics alone: a
    place's board is a board, whose no-leak is its statistics' (the virtual board's own exact check
    would clear it at any -n)."""
    out = tmp_path_factory.mktemp("local")
    local = pqscope(*CT, "-n", str(SIGNATURES), "--board", "virtual", "-j", "1", "--no-taint", "--out", str(out))
    return gate_document(local), without_board(ct_csv(out))


def test_ct_across_two_places_equals_one_virtual_board(farm, local_ct, tmp_path):
    local, local_rows = local_ct
    farmed = pqscope(*CT, "-n", str(SIGNATURES), *on_places(farm, *PLACES), "--out", str(tmp_path / "farm"))
    assert gate_document(farmed)["verdict"] == local["verdict"]
    assert without_board(ct_csv(tmp_path / "farm")) == local_rows
    meta = json.loads((tmp_path / "farm/meta.json").read_text())
    assert [(shard["target"], shard["place"]) for shard in meta["shards"]] == [("labgrid", place) for place in PLACES]
    # Which board measured each signature: the place's board (its serial number, from its INFO).
    serials = [shard["board_serial"] for shard in meta["shards"]]
    assert serials == [virtual_board_serial(number) for number in range(len(PLACES))]
    assert {serial: board["place"] for serial, board in meta["boards"].items()} == dict(zip(serials, PLACES))
    assert all(row["board"] == serials[int(row["index"]) // 2 % 2] for row in ct_csv(tmp_path / "farm"))
    assert all(shard["port"].startswith("rfc2217://127.0.0.1:") for shard in meta["shards"])
    assert ct_rows(tmp_path / "farm") == SIGNATURES
    # Both places were released: they can be acquired again.
    for place in PLACES:
        farm.client("-p", place, "acquire")
        farm.client("-p", place, "release")


def test_a_place_someone_holds_is_one_clear_error(farm, tmp_path):
    farm.client("-p", PLACES[1], "acquire")
    result = pqscope(*CT, "-n", "400", *on_places(farm, *PLACES), "--out", str(tmp_path / "farm"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"Error: labgrid: cannot acquire place {PLACES[1]} (coordinator {farm.coordinator}): " in result.stderr
    farm.client("-p", PLACES[0], "acquire")  # the first place, acquired before the error, was released
    for place in PLACES:
        farm.client("-p", place, "release")


def test_a_place_without_a_serial_port_is_one_clear_error(farm, tmp_path):
    farm.client("-p", "empty", "create")
    result = pqscope(*CT, "-n", "400", *on_places(farm, "empty"), "--out", str(tmp_path / "farm"))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == ("Error: labgrid place empty has no serial port (NetworkSerialPort): "
                                                      "add a match for the board's USB-TTL adapter (labgrid-client -p "
                                                      "PLACE add-match)")


def test_a_coordinator_that_does_not_answer_is_one_clear_error(tmp_path):
    nobody = f"127.0.0.1:{free_port()}"
    result = pqscope(*CT, "-n", "400", "--board", "stm32f4discovery", "--labgrid-coordinator", nobody,
                     "--labgrid-place", "any", "--out", str(tmp_path / "farm"))
    assert result.returncode == 1
    assert f"Error: labgrid: cannot acquire place any (coordinator {nobody}): " in result.stderr
    assert "Could not connect to coordinator" in result.stderr


def test_a_place_that_drops_out_stops_the_test_and_resume_completes_it(farm, local_ct, tmp_path):
    out = tmp_path / "farm"
    process = subprocess.Popen([sys.executable, "-m", "pqscope", *CT, "-n", str(SIGNATURES),
                                *on_places(farm, *PLACES), "--timeout", "20", "--out", str(out)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})
    try:
        wait_for(lambda: ct_rows(out) >= 30 or process.poll() is not None, "30 signatures")
        farm.stop_exporter()  # both boards' ports close under the test
        _, stderr = process.communicate(timeout=600)
    finally:
        farm.start_exporter()
    errors = [line for line in stderr.splitlines() if line.startswith("Error: ")]
    assert process.returncode == 1 and len(errors) == 1 and "Traceback" not in stderr, stderr
    assert errors[0].startswith("Error: shard ") and "(labgrid place pqscope-" in errors[0]
    assert "lost the connection to rfc2217://" in errors[0]
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"].startswith("failed: ") and SIGNATURES > meta["samples_completed"] == ct_rows(out) >= 30

    resumed = pqscope("ct", "--resume", str(out), *on_places(farm, *PLACES)[2:], "--json")
    assert gate_document(resumed)["verdict"] == local_ct[0]["verdict"]
    assert without_board(ct_csv(out)) == local_ct[1]
