"""Rows discovered from pqm4's folder layout (issue #57), as pqm4's own scripts find them: every
<folder>/<scheme>/<impl>/ of pqm4's, mupq's and PQClean's crypto_sign, a symlinked parameter set too,
less the folders of other processors; a folder a catalogue row builds from is that row; a row that
skiplist.py's estimate does not fit on a board is does-not-fit there, without building; the measured
statuses (discovered-status.json) cover exactly the folders of the pinned pqm4."""

import json
import os
import shutil

import pytest
from click.testing import CliRunner

from conftest import FAKE_CATALOGUE, REPO
from pqscope.cli import cli
from pqscope.project.boards import load_boards
from pqscope.project.catalogue import load_catalogue
from pqscope.project.discovery import (PQM4_FETCHED, STATUS_FILE, Folder, discover_folders, discovered_rows,
                                       estimated_memory, find_row, fit_reason, host_references, load_statuses,
                                       pinned_pqm4, pqm4_tree)

DISCOVERY_RAM = json.loads((REPO / "boards/stm32f4discovery/board.json").read_text())["memory"]["ram"]["bytes"]
NUCLEO_RAM = json.loads((REPO / "boards/nucleo-l4r5zi/board.json").read_text())["memory"]["ram"]["bytes"]
# skiplist.py's estimates for the fake tree, against the boards' RAM as board.json gives it.
ESTIMATES = {
    ("ml-dsa-44", "m4f"): DISCOVERY_RAM // 2,  # the catalogue's row
    ("mayo1", "ref"): DISCOVERY_RAM + 1,  # the Nucleo's only
    ("mayo2", "ref"): DISCOVERY_RAM,  # fits exactly, as pqm4 compares (estmemory > memory skips)
    ("snova-24-5-16-4-ssk", "ref"): NUCLEO_RAM + 1,  # neither
}
FOLDERS = ["crypto_sign/ml-dsa-44/m4f", "mupq/crypto_sign/mayo1/ref", "mupq/crypto_sign/mayo2/ref",
           "mupq/crypto_sign/snova-24-5-16-4-ssk/ref", "mupq/pqclean/crypto_sign/hawk512/clean"]


def _fake_pqm4(pqm4):
    """A pqm4 tree as pqm4 lays it out: mayo2's folder links to mayo1's (a symlinked parameter set),
    snova's files link into mayo1's; an avx2 folder and loose files beside the schemes."""
    for folder in ("crypto_sign/ml-dsa-44/m4f", "crypto_sign/ml-dsa-44/avx2", "mupq/crypto_sign/mayo1/ref",
                   "mupq/crypto_sign/snova-24-5-16-4-ssk/ref", "mupq/pqclean/crypto_sign/hawk512/clean"):
        (pqm4 / folder).mkdir(parents=True)
        (pqm4 / folder / "api.h").write_text("int crypto_sign_keypair(unsigned char *pk, unsigned char *sk);\n")
    (pqm4 / "mupq/crypto_sign/mayo2").mkdir()
    os.symlink("../mayo1/ref", pqm4 / "mupq/crypto_sign/mayo2/ref")
    os.symlink("../../mayo1/ref/api.h", pqm4 / "mupq/crypto_sign/snova-24-5-16-4-ssk/ref/sign.h")
    (pqm4 / "mupq/crypto_sign/speed.c").write_text("")
    (pqm4 / "skiplist.py").write_text("skip_list = [\n" + "".join(
        f"    {{'scheme': '{scheme}', 'implementation': '{impl}', 'estmemory': {memory}}},\n"
        for (scheme, impl), memory in ESTIMATES.items()) + "]\n")
    return pqm4


@pytest.fixture
def fake_tree(fake_repo):
    """fake_repo with both boards, the real family table and a fake pqm4 tree where the Discovery's
    build tree fetches it; hawk512 measured ok on the Nucleo."""
    (fake_repo / "boards/nucleo-l4r5zi").mkdir()
    shutil.copy(REPO / "boards/nucleo-l4r5zi/board.json", fake_repo / "boards/nucleo-l4r5zi")
    shutil.copy(REPO / "firmware/schemes/families.json", fake_repo / "firmware/schemes")
    catalogue = json.loads((REPO / "firmware/schemes/catalogue.json").read_text())
    (fake_repo / "firmware/schemes/catalogue.json").write_text(json.dumps(
        FAKE_CATALOGUE | {"declassification_reasons": catalogue["declassification_reasons"]}))
    (fake_repo / STATUS_FILE).write_text(json.dumps({"schema": 1, "pins": {"pqm4": "fake"}, "rows": {
        "mupq/pqclean/crypto_sign/hawk512/clean": {"nucleo-l4r5zi": {"status": "ok", "reason": "",
                                                                     "stack_bytes": 20480}}}}))
    return _fetched(_fake_pqm4(fake_repo / "build/stm32f4discovery/_deps/pqm4-src"))


def _fetched(pqm4):
    """`pqm4` as FetchContent leaves it once the fetch ended (its populate step's stamp)."""
    stamp = pqm4.parent / PQM4_FETCHED
    stamp.parent.mkdir(parents=True)
    stamp.touch()
    return pqm4


def test_every_folder_is_found_a_symlinked_parameter_set_too_and_no_other_processors(tmp_path):
    pqm4 = _fake_pqm4(tmp_path / "pqm4")
    assert [folder.path for folder in discover_folders(pqm4)] == FOLDERS
    assert {(folder.scheme, folder.impl) for folder in discover_folders(pqm4)} >= {("mayo2", "ref")}
    assert estimated_memory(pqm4) == ESTIMATES


def test_a_tree_still_being_fetched_is_not_searched(fake_repo, fake_tree):
    # The Nucleo's first configure, beside: pqm4's own files are there, its submodules' not yet.
    fetching = fake_repo / "build/nucleo-l4r5zi/_deps/pqm4-src"
    fetching.mkdir(parents=True)
    (fetching / "skiplist.py").write_text("skip_list = []\n")
    assert pqm4_tree(fake_repo) == fake_tree
    shutil.rmtree(fake_tree.parent / PQM4_FETCHED.parts[0])
    assert pqm4_tree(fake_repo) is None


def test_a_catalogue_row_is_found_without_the_pqm4_tree_and_a_discovered_one_in_it(fake_repo, fake_tree):
    (fake_tree / "skiplist.py").write_text("")  # searching the tree would fail on it
    assert find_row(fake_repo, "ML-DSA-44", "m4f").scheme == "ml-dsa-44"
    with pytest.raises(ValueError, match="assigns no skip_list"):
        find_row(fake_repo, "hawk512", "clean")


def test_a_folder_a_catalogue_row_builds_from_is_that_row(fake_repo, fake_tree):
    catalogue = load_catalogue(fake_repo)
    rows = discovered_rows(fake_repo, catalogue)
    assert [row.pqm4_folder for row in rows] == FOLDERS[1:]  # ml-dsa-44/m4f is the catalogue's
    assert [(row.directory, row.family) for row in rows[:1]] == [(fake_tree / FOLDERS[1], "MAYO")]
    # The family table's declassifications come with the family.
    assert [item.what for item in rows[0].declassify] == ["sample_solution"]


def test_a_rows_host_reference_is_its_schemes_first_folder_pqm4_builds_for_the_host(fake_repo, fake_tree):
    rows = discovered_rows(fake_repo, load_catalogue(fake_repo))
    assert {row.scheme: row.host_reference for row in rows} == {
        "mayo1": "ref", "mayo2": "ref", "snova-24-5-16-4-ssk": "ref", "hawk512": "clean"}
    # As mupq.py's TestVectors: the first in pqm4's order (its folders, then names sorted) of
    # families.json's names; a scheme with none has no reference.
    folders = [Folder("s", impl, f"mupq/crypto_sign/s/{impl}") for impl in ("m4f", "opt", "ref")]
    names = json.loads((REPO / "firmware/schemes/families.json").read_text())["host_reference_impls"]
    assert host_references(folders, names) == {"s": "opt"}
    assert host_references(folders[:1], names) == {}


def test_does_not_fit_is_skiplist_s_estimate_against_each_board_s_ram(fake_repo, fake_tree):
    boards = [board for board in load_boards(fake_repo).values() if not board.emulates]
    for row in discovered_rows(fake_repo, load_catalogue(fake_repo)):
        estimate = ESTIMATES.get((row.scheme, row.impl))
        for board in boards:
            too_big = estimate is not None and estimate > board.ram_bytes
            assert (row.status_on(board.name) == "does-not-fit") == too_big, (row.scheme, board.name)
            assert (row.reason_on(board.name) == fit_reason(estimate, board)) == too_big
    rows = {row.scheme: row for row in discovered_rows(fake_repo, load_catalogue(fake_repo))}
    # Measured where it fits; a row neither fits nor measured says so, never ok.
    assert [rows["hawk512"].status_on(board) for board in ("nucleo-l4r5zi", "stm32f4discovery")] == ["ok", "unmeasured"]
    assert rows["hawk512"].stack_bytes == 20480  # the stack it signed and verified with


def test_schemes_lists_the_rows_that_do_not_fit_a_board(fake_repo, fake_tree):
    result = CliRunner().invoke(cli, ["schemes", "--status", "does-not-fit", "--board", "stm32f4discovery", "--json"])
    assert result.exit_code == 0, result.output
    expected = [f"{scheme}/{impl}" for (scheme, impl), memory in ESTIMATES.items() if memory > DISCOVERY_RAM]
    assert [f"{row['scheme']}/{row['impl']}" for row in json.loads(result.stdout)["schemes"]] == expected


def test_a_discovered_row_that_does_not_fit_is_refused_before_it_is_built(fake_repo, fake_tree):
    result = CliRunner().invoke(cli, ["run", "--board", "virtual", "--scheme", "mayo1", "--impl", "ref"])
    assert result.exit_code != 0 and isinstance(result.exception, SystemExit)
    assert result.stderr.splitlines()[-1] == (
        f"Error: mayo1 ref is not built for board stm32f4discovery (does-not-fit): skiplist.py estimates "
        f"{DISCOVERY_RAM + 1:,} bytes of memory, more than the {DISCOVERY_RAM:,} of stm32f4discovery")


@pytest.fixture
def pinned_tree():
    tree = pqm4_tree(REPO)
    if tree is None:
        pytest.skip("no build tree has fetched pqm4: configure the stm32f4discovery preset")
    return tree


def test_the_measured_statuses_cover_exactly_the_folders_of_the_pinned_pqm4(pinned_tree):
    document = json.loads((REPO / STATUS_FILE).read_text())
    # Measured at the pin the build fetches: a new pin needs measuring again (tests/bench/atlas_status.py).
    assert document["pins"]["pqm4"] == pinned_pqm4(REPO)
    catalogued = {row.pqm4_folder for row in load_catalogue(REPO)}
    assert set(load_statuses(REPO)) == {folder.path for folder in discover_folders(pinned_tree)} - catalogued
    boards = {name for name, board in load_boards(REPO).items() if not board.emulates}
    for folder, entries in load_statuses(REPO).items():
        assert set(entries) <= boards, folder
        assert {entry["status"] for entry in entries.values()} <= {"ok", "build-fails", "fails", "does-not-fit",
                                                                   "unmeasured"}, folder


def test_schemes_lists_every_pinned_row_that_does_not_fit_the_discovery(pinned_tree, monkeypatch):
    monkeypatch.setenv("PQSCOPE_ROOT", str(REPO))
    result = CliRunner().invoke(cli, ["schemes", "--status", "does-not-fit", "--board", "stm32f4discovery", "--json"])
    assert result.exit_code == 0, result.output
    discovered = {row["pqm4_folder"] for row in json.loads(result.stdout)["schemes"] if row["directory"]}
    catalogued = {row.pqm4_folder for row in load_catalogue(REPO)}
    memory = estimated_memory(pinned_tree)
    too_big = {folder.path for folder in discover_folders(pinned_tree)
               if memory.get((folder.scheme, folder.impl), 0) > DISCOVERY_RAM}
    # Or measured not to fit beside the harness (atlas_status.py); never a folder skiplist.py fits unmeasured.
    measured = {folder for folder, entries in load_statuses(REPO).items()
                if entries.get("stm32f4discovery", {}).get("status") == "does-not-fit"}
    assert discovered == (too_big - catalogued) | measured
    assert "mupq/crypto_sign/mayo1/ref" in discovered
