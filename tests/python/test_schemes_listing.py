"""`pqscope schemes` at the catalogue's size (issue #57), the rows discovered from pqm4's folders
included: at 80 columns no scheme or implementation name is cut short (each row a plain line when the table is wider than the terminal), on a wide
terminal the table, and the rows filtered by family, board and status."""

import json
import shutil

import pytest
from click.testing import CliRunner

from conftest import FAKE_CATALOGUE, REPO
from pqscope.cli import cli
from pqscope.project.discovery import load_rows

FIRMWARE_BOARDS = ("nucleo-l4r5zi", "stm32f4discovery")


def _schemes(*args: str, columns: int = 80):
    return CliRunner(env={"COLUMNS": str(columns)}).invoke(cli, ["schemes", *args])


@pytest.fixture
def whole_catalogue(monkeypatch):
    monkeypatch.setenv("PQSCOPE_ROOT", str(REPO))
    return load_rows(REPO)


def test_at_80_columns_every_row_of_the_whole_catalogue_is_named_in_full(whole_catalogue):
    result = _schemes()
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout
    lines = result.stdout.splitlines()
    assert len(lines) == len(whole_catalogue)
    for line, row in zip(lines, whole_catalogue):
        statuses = ", ".join(f"{board} {row.status_on(board)}" for board in FIRMWARE_BOARDS)
        # A discovered row's key and signature sizes are the device's to tell: left out until then.
        sizes = f"pk {row.pk_bytes:,} B, " if row.pk_bytes else f"stack {row.stack_bytes:,} B;"
        assert line.startswith(f"{row.scheme}/{row.impl} ({row.family}): {sizes}")
        assert line.endswith(f"; {statuses}")


def test_a_terminal_wide_enough_shows_the_whole_catalogue_as_a_table(whole_catalogue):
    result = _schemes(columns=400)
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout
    cells = [[cell.strip() for cell in line.split("│")[1:-1]] for line in result.stdout.splitlines() if "│" in line]
    assert [cells[:3] + cells[-2:] for cells in cells] == [
        [row.scheme, row.impl, row.family, *(row.status_on(board) for board in FIRMWARE_BOARDS)]
        for row in whole_catalogue]


ROW = FAKE_CATALOGUE["implementations"][0]
ROWS = [
    ROW,  # ml-dsa-44 m4f, ML-DSA, ok everywhere
    {**ROW, "impl": "clean", "status": "does-not-fit", "reason": "too big"},
    {**ROW, "scheme": "mayo1", "family": "MAYO", "boards": {"stm32f4discovery": "does-not-fit"}, "reason": "stack"},
    {**ROW, "scheme": "mayo2", "family": "MAYO", "status": "build-fails", "reason": "error: x"},
]


@pytest.fixture
def four_rows(fake_repo):
    (fake_repo / "firmware/schemes/catalogue.json").write_text(json.dumps({"schema": 1, "implementations": ROWS}))
    (fake_repo / "boards/nucleo-l4r5zi").mkdir()
    shutil.copy(REPO / "boards/nucleo-l4r5zi/board.json", fake_repo / "boards/nucleo-l4r5zi")


@pytest.mark.parametrize("args, expected", [
    ((), ["ml-dsa-44/m4f", "ml-dsa-44/clean", "mayo1/m4f", "mayo2/m4f"]),
    (("--family", "mayo"), ["mayo1/m4f", "mayo2/m4f"]),  # any case
    (("--family", "MAYO", "--family", "ML-DSA"), ["ml-dsa-44/m4f", "ml-dsa-44/clean", "mayo1/m4f", "mayo2/m4f"]),
    (("--status", "does-not-fit"), ["ml-dsa-44/clean", "mayo1/m4f"]),  # on either board
    (("--status", "ok", "--board", "nucleo-l4r5zi"), ["ml-dsa-44/m4f", "mayo1/m4f"]),
    (("--status", "ok", "--board", "virtual"), ["ml-dsa-44/m4f"]),  # the Discovery's images
    (("--family", "MAYO", "--status", "build-fails", "--status", "ok"), ["mayo1/m4f", "mayo2/m4f"]),
])
def test_rows_filtered_by_family_board_and_status(four_rows, args, expected):
    result = _schemes(*args, "--json")
    assert result.exit_code == 0, result.output
    assert [f"{row['scheme']}/{row['impl']}" for row in json.loads(result.stdout)["schemes"]] == expected


def test_the_status_shown_is_the_status_on_each_board_asked_for(four_rows):
    result = _schemes("--family", "MAYO", "--board", "virtual", "--board", "nucleo-l4r5zi")
    assert result.stdout.splitlines() == [
        "mayo1/m4f (MAYO): pk 1,312 B, sk 2,560 B, sig 2,420 B, stack 65,536 B; virtual does-not-fit, nucleo-l4r5zi ok",
        "mayo2/m4f (MAYO): pk 1,312 B, sk 2,560 B, sig 2,420 B, stack 65,536 B; virtual build-fails, "
        "nucleo-l4r5zi build-fails"]


@pytest.mark.parametrize("args, error", [
    (("--status", "dosnt-fit"), "unknown status 'dosnt-fit' (no row has it on nucleo-l4r5zi, stm32f4discovery); "
                                "did you mean does-not-fit?"),
    (("--status", "fails", "--board", "virtual"), "unknown status 'fails' (no row has it on virtual); did you mean "
                                                  "build-fails?"),
    (("--family", "Mayo2"), "unknown family 'Mayo2'; did you mean MAYO?"),
    (("--board", "discovery"), "unknown board 'discovery'; did you mean stm32f4discovery?"),
])
def test_a_filter_that_names_nothing_is_one_error(four_rows, args, error):
    result = _schemes(*args)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [f"Error: {error}"]


def test_filters_that_leave_no_row_say_so(four_rows):
    result = _schemes("--family", "ML-DSA", "--status", "build-fails")
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr == ("no row of the catalogue is of family ML-DSA with status build-fails on nucleo-l4r5zi or "
                             "stm32f4discovery\n")
