"""A catalogue row's status on one board: MAYO and UOV need more RAM than the Discovery has, so their
rows are built for the NUCLEO-L4R5ZI only, and asking for them on a Discovery (or its virtual twin)
is one clear error before anything is built."""

import json

from click.testing import CliRunner

from conftest import FAKE_CATALOGUE, REPO
from pqscope.cli import cli
from pqscope.project.catalogue import find_implementation, load_catalogue

NUCLEO_ONLY = {**FAKE_CATALOGUE["implementations"][0], "scheme": "mayo1", "impl": "m4f", "family": "MAYO",
               "boards": {"stm32f4discovery": "does-not-fit"}, "reason": "253,484 bytes of stack"}


def test_a_row_has_a_status_of_its_own_on_a_board(tmp_path):
    path = tmp_path / "firmware/schemes/catalogue.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"schema": 1, "implementations": [NUCLEO_ONLY]}))
    (row,) = load_catalogue(tmp_path)
    assert row.status_on("stm32f4discovery") == "does-not-fit"
    assert row.status_on("nucleo-l4r5zi") == "ok"


def test_a_row_that_does_not_fit_the_board_asked_for_is_refused_before_it_is_built(fake_repo):
    # fake_repo's CMake is the real one: a build would fail with CMake's own words, not these.
    (fake_repo / "firmware/schemes/catalogue.json").write_text(json.dumps({"schema": 1, "implementations": [
        *FAKE_CATALOGUE["implementations"], NUCLEO_ONLY]}))
    result = CliRunner().invoke(cli, ["run", "--board", "virtual", "--scheme", "mayo1", "--impl", "m4f"])
    assert result.exit_code != 0 and isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert "mayo1 m4f is not built for board stm32f4discovery (does-not-fit): 253,484 bytes of stack" in line


def test_the_catalogue_builds_mayo_and_uov_on_the_nucleo_only():
    catalogue = load_catalogue(REPO)
    for scheme, impl in (("mayo1", "m4f"), ("mayo2", "m4f"), ("ov-Ip-pkc-skc", "m4fstack")):
        row = find_implementation(catalogue, scheme, impl)
        assert (row.status_on("nucleo-l4r5zi"), row.status_on("stm32f4discovery")) == ("ok", "does-not-fit")
        assert "skiplist.py" in row.reason
