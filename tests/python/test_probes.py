"""On-device probes through the whole host path on a real-board target (a fake device on a serial
port): the probed image is built, the probe names come from the device, every sample's readings
land in the CSV, and reports and the constant-time analysis read them back."""

import csv
import json

import pytest
from click.testing import CliRunner

from fakedevice import PROBE_CALL_CYCLES, Behaviour, fake_probe
from pqscope.results.records import sample_seed
from pqscope.cli import cli
from pqscope.results.documents.runs import ProbeSet
from pqscope.results.probes import confirmation, names_from_columns, probe_columns, probe_profile, probes_timing
from pqscope.link.messages import ProbeReading
from test_cli import assert_one_line_error

NAMES = ("sqrt", "__aeabi_d2lz")
RUN = ("run", "--board", "stm32f4discovery", "--no-flash", "--scheme", "ml-dsa-44", "--impl", "m4f", "--seed", "07")
CT = ("ct", "--board", "stm32f4discovery", "--no-flash", "--no-replay", "--scheme", "ml-dsa-44", "--impl", "m4f",
      "-n", "300", "--seed", "07")


def test_probe_columns_name_each_probe_twice_and_parse_back():
    columns = probe_columns(NAMES)
    assert columns == ("probe:sqrt:cycles", "probe:sqrt:calls", "probe:__aeabi_d2lz:cycles", "probe:__aeabi_d2lz:calls")
    assert names_from_columns(columns) == NAMES
    with pytest.raises(ValueError, match="not probe:<name>:cycles"):
        names_from_columns(columns[:3])


def test_a_probe_profile_books_public_functions_apart():
    readings = (ProbeReading(100, 1), ProbeReading(40, 2), ProbeReading(7, 3))
    profile = probe_profile(("a", "pub1", "pub2"), readings, ("pub1", "pub2"), "(public)")
    assert profile == {"functions": {"a": (100, 1), "(public)": (47, 0)}}


def test_run_with_probes_writes_their_columns_and_reports_them(fake_repo, fake_toolchain, pty_device, tmp_path):
    _device, port = pty_device(behaviour=Behaviour(probes=NAMES))
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, [*RUN, "--probe", "__aeabi_d2lz", "-n", "3", "--port", port, "--out", str(out),
                                      "--json"])
    assert result.exit_code == 0, result.stderr
    built = (fake_repo.parent / "cmake.log").read_text()
    assert "-DPQSCOPE_EXTRA_PROBES=__aeabi_d2lz" in built and "--target image.ml-dsa-44.m4f.probed" in built

    with (out / "samples.csv").open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert list(rows[0])[-4:] == list(probe_columns(NAMES))
    for row in rows:
        seed = sample_seed(b"\x07", int(row["sample_id"]))
        for index, name in enumerate(NAMES):
            expected = fake_probe(seed, index)
            assert (int(row[f"probe:{name}:cycles"]), int(row[f"probe:{name}:calls"])) == (expected.cycles,
                                                                                          expected.calls)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["probes"]["names"] == list(NAMES) and meta["variant"] == {"probed": True,
                                                                        "extra_probes": ["__aeabi_d2lz"]}
    assert meta["result"]["probe_inflation"]["sign"]["mean_cycles"] == 3 * PROBE_CALL_CYCLES
    sign = next(r for r in json.loads(result.stdout)["results"] if r["op"] == "sign")
    assert [p["function"] for p in sign["probes"]] == list(NAMES)
    # Every probed call costs the code around it call_cycles: 1 + 2 calls per operation.
    assert sign["probe_inflation"]["mean_cycles"] == 3 * PROBE_CALL_CYCLES

    report = CliRunner().invoke(cli, ["report", str(out), "--format", "md"])
    assert report.exit_code == 0, report.stderr
    assert "## Probes" in report.stdout and "| ml-dsa-44 | m4f | sign | __aeabi_d2lz |" in report.stdout
    assert "<h2>Probes</h2>" in (out / "report.html").read_text()


def test_a_run_without_probes_has_no_probe_columns(fake_repo, fake_toolchain, pty_device, tmp_path):
    _device, port = pty_device()
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, [*RUN, "-n", "2", "--port", port, "--out", str(out), "--json"])
    assert result.exit_code == 0, result.stderr
    assert (out / "samples.csv").read_text().splitlines()[0] == "sample_id,op,seed,cycles,stack_bytes,status,verified,board"
    assert all("probes" not in r for r in json.loads(result.stdout)["results"])
    assert "probes" not in json.loads((out / "meta.json").read_text())


@pytest.mark.parametrize(("probe_leak", "verdict", "status"), [(300, "leak", 4), (0, "inconclusive", 5)])
def test_ct_with_probes_localises_through_them(fake_repo, fake_toolchain, pty_device, tmp_path, probe_leak, verdict,
                                               status):
    _device, port = pty_device(behaviour=Behaviour(probes=NAMES, probe_leak=probe_leak))
    out = tmp_path / "ct"
    result = CliRunner().invoke(cli, [*CT, "--probes", "--port", port, "--out", str(out), "--json"])
    assert result.exit_code == status, result.stderr
    document = json.loads(result.stdout)
    assert document["verdict"] == verdict
    assert document["localised_by"].startswith("on-device probes")
    ranked = {f["function"]: f for f in document["top_functions"]}
    assert set(ranked) == set(NAMES)
    assert (abs(ranked["__aeabi_d2lz"]["t"]) > 10) == bool(probe_leak)
    assert document["probe_inflation"]["mean_cycles"] == 3 * PROBE_CALL_CYCLES
    assert "on-device probes" in (out / "report.html").read_text()


def test_ct_keeps_each_boards_own_probe_costs(fake_repo, fake_toolchain, pty_device, tmp_path):
    # Each board measures its probes' costs at boot, with its own counter's noise: meta.json keeps
    # each one's, which the confirmation on probes takes apart.
    ports = [pty_device(behaviour=Behaviour(probes=NAMES, probe_self_cycles=self_cycles))[1]
             for self_cycles in (11, 14)]
    out = tmp_path / "ct"
    result = CliRunner().invoke(cli, [*CT, "--probes", *(arg for port in ports for arg in ("--port", port)),
                                      "--out", str(out), "--json"])
    assert result.exit_code == 5, result.stderr  # inconclusive: no leak, too few signatures to say so
    boards = json.loads((out / "meta.json").read_text())["boards"].values()
    # Keyed by port: pty numbers need not sort as they were opened (/dev/pts/16 before /dev/pts/3).
    assert {board["port"]: (board["probe_self_cycles"], board["probe_call_cycles"]) for board in boards} == {
        ports[0]: (11, PROBE_CALL_CYCLES), ports[1]: (14, PROBE_CALL_CYCLES)}


def test_ct_refuses_probes_that_miss_what_its_corrections_need(fake_repo, fake_toolchain, pty_device, tmp_path):
    catalogue = json.loads((fake_repo / "firmware/schemes/catalogue.json").read_text())
    catalogue["implementations"][0]["retry_function"] = "poly_challenge"
    (fake_repo / "firmware/schemes/catalogue.json").write_text(json.dumps(catalogue))
    _device, port = pty_device(behaviour=Behaviour(probes=NAMES))
    result = CliRunner().invoke(cli, [*CT, "--probes", "--port", port, "--out", str(tmp_path / "ct")])
    assert_one_line_error(result, "m4f.probed.elf does not probe poly_challenge")


def test_probe_set_round_trips_through_meta_json():
    probes = ProbeSet(NAMES, 11, 29)
    assert ProbeSet.from_json(probes.to_json()) == probes
    assert probes.inflation((ProbeReading(5, 2), ProbeReading(9, 4))) == 6 * 29


def test_confirmation_names_the_probes_a_board_needs_and_what_a_probe_cannot_reach(tiny_elf):
    confirm = confirmation(["entry", "twice", "nowhere"], probed=(), elf=tiny_elf[0], board="stm32f4discovery",
                           selection=["--scheme", "toy", "--impl", "c"])
    assert confirm["probes"] == ["entry"]
    assert confirm["not_probeable"] == [
        {"function": "twice", "why": "static in its file: a probe cannot reach it, probe a caller"},
        {"function": "nowhere", "why": "not a function of the image"}]
    assert confirm["command"] == ("host-tools/pqscope ct --board stm32f4discovery --port /dev/ttyUSB0 --scheme toy "
                                  "--impl c --probes --probe entry")
    # A function the row's probed image already times needs no --probe.
    assert confirmation(["entry"], ("entry",), tiny_elf[0], "b", [])["command"].endswith("--probes")


def test_a_function_is_timed_by_its_own_probe_or_one_at_its_address(tiny_elf):
    # libgcc's `__muldf3` is called as `__aeabi_dmul`, the name at the same address a probe can wrap.
    assert probes_timing(["entry", "twice", "nowhere"], ("twice_caller", "entry_alias"), tiny_elf[0]) == {
        "entry": ("entry_alias", 1)}
    assert probes_timing(["entry", "twice"], ("twice", "entry"), tiny_elf[0]) == {
        "entry": ("entry", 1), "twice": ("twice", 0)}

