"""`pqscope ct --resume`: a killed constant-time test goes on to exactly its N signatures, the same
ones (classes, keys, seeds) an uninterrupted test makes, with the emulator's intervals kept line
for line."""

import csv
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import without_board
from fakedevice import Behaviour, make_info
from pqscope.cli import cli
from pqscope.project.errors import PqscopeError
from pqscope.analysis.ct_schedule import CT_FIELDS, capture_ct, keep_captured, load_intervals
from pqscope.results.records import KEYGEN_ID_BASE, derive_seed
from pqscope.link.protocol import Status
from test_ct import FakeSession
from test_cli import assert_one_line_error

SAMPLES = 300
KILLED_AT = 100  # signatures answered before the killed test's device falls silent
# --fixed-n: a sequential test of this leak would stop at its first look, before the kill.
# No report: these tests read the test's files and JSON (its report's views have tests of their own).
CT = ("ct", "--board", "stm32f4discovery", "--no-flash", "--no-replay", "--scheme", "ml-dsa-44", "--impl", "m4f",
      "-n", str(SAMPLES), "--seed", "07", "--fixed-n", "--no-report")


def test_a_resumed_capture_makes_the_signatures_and_keys_the_uninterrupted_one_makes():
    whole = FakeSession()
    everything = list(capture_ct(whole, make_info(), samples=200, master_seed=b"m", msg_len=32, key_refresh=5))
    resumed = FakeSession()
    rest = list(capture_ct(resumed, make_info(), samples=200, master_seed=b"m", msg_len=32, key_refresh=5,
                           done=range(77)))
    assert rest == everything[77:]
    signs = [call for call in whole.calls if call[0] == "sign"]
    assert [call for call in resumed.calls if call[0] == "sign"] == signs[77:]
    # The pool is rebuilt first, slot by slot, with the keys the uninterrupted run held there at
    # that point (refreshed ones among them), each from its own seed.
    slots = make_info().key_slots
    rebuilt = resumed.calls[:slots]
    assert [(call[0], call[1]) for call in rebuilt] == [("keygen", slot) for slot in range(slots)]
    assert {call[2] for call in rebuilt} <= {call[2] for call in whole.calls if call[0] == "keygen"}
    assert any(call[3] - KEYGEN_ID_BASE >= slots for call in rebuilt)


def write_ct(path: Path, rows: int, intervals: int, master_seed: bytes = b"\x07") -> None:
    path.mkdir()
    lines = [",".join(CT_FIELDS)] + [
        f"{i},{i % 2},0,{derive_seed(master_seed, 'sign', i).hex()},{1000 + i},100,ok,B{i % 2}" for i in range(rows)]
    (path / "ct.csv").write_text("\r\n".join(lines) + "\r\n")
    (path / "intervals.jsonl").write_text("".join(json.dumps({"interval": i, "sample_id": i, "functions": {}}) + "\n"
                                                  for i in range(intervals)))


def test_a_look_during_the_test_reads_the_intervals_the_emulators_have_ended(tmp_path):
    # A shard's emulator is writing the interval of the signature it just finished (a line longer
    # than its stdio buffer reaches the file in parts): a look reads every ended line.
    path = tmp_path / "ct"
    write_ct(path, rows=4, intervals=3)
    shard = path / "shards/1"
    shard.mkdir(parents=True)
    (shard / "intervals.jsonl").write_text(json.dumps({"interval": 0, "sample_id": 3, "functions": {}}) + "\n"
                                           + '{"interval": 1, "sample_id": 5, "start_cycle": 76349800, "')
    assert sorted(interval.sample_id for interval in load_intervals(path)) == [0, 1, 2, 3]


def test_keep_captured_drops_cut_lines_and_signatures_without_their_interval(tmp_path):
    path = tmp_path / "ct"
    write_ct(path, rows=10, intervals=8)
    with (path / "ct.csv").open("a") as stream:
        stream.write("10,1,0,ab")  # killed while writing
    with (path / "intervals.jsonl").open("a") as stream:
        stream.write('{"interval": 8, "func')
    kept = keep_captured(path, b"\x07", 300, with_intervals=True)
    assert [sample.index for sample in kept] == list(range(8))
    assert kept[3].cycles == 1003 and kept[3].status == Status.OK
    assert len(list(csv.reader((path / "ct.csv").open()))) == 1 + 8
    assert len((path / "intervals.jsonl").read_text().splitlines()) == 8
    # On a real board there are no intervals: every complete line is kept.
    path2 = tmp_path / "board"
    write_ct(path2, rows=10, intervals=0)
    assert len(keep_captured(path2, b"\x07", 300, with_intervals=False)) == 10


def test_keep_captured_refuses_signatures_of_another_test(tmp_path):
    path = tmp_path / "ct"
    write_ct(path, rows=5, intervals=5, master_seed=b"\x08")
    with pytest.raises(PqscopeError, match="does not belong to this test: line 2 is not a signature of meta.json's master seed"):
        keep_captured(path, b"\x07", 300, with_intervals=True)


def ct_rows(path: Path) -> list[dict]:
    with (path / "ct.csv").open(newline="") as stream:
        return list(csv.DictReader(stream))


# With probes: their columns and readings survive the kill, and the localisation is the same.
PROBED = {"probes": ("sqrt", "__aeabi_d2lz"), "probe_leak": 300}


def ports_of(pty_device, boards: int, **behaviour) -> tuple[list, list[str]]:
    """`boards` fake boards: their devices, and --port for each."""
    devices, ports = zip(*(pty_device(behaviour=Behaviour(**behaviour)) for _ in range(boards)))
    return list(devices), [arg for port in ports for arg in ("--port", port)]


# Plain and probed on one board; in shards on two boards, resumed on two, or on one.
@pytest.mark.parametrize(("probed", "boards", "resumed_on"), [(False, 1, 1), (True, 1, 1), (False, 2, 2), (False, 2, 1)],
                         ids=["plain", "probed", "two-boards", "two-boards-resumed-on-one"])
def test_a_killed_ct_resumes_to_the_uninterrupted_result(fake_repo, fake_toolchain, pty_device, tmp_path, probed,
                                                         boards, resumed_on):
    device_options = {"key_leak": 400, **(PROBED if probed else {})}
    ct = (*CT, "--probes") if probed else CT
    _devices, ports = ports_of(pty_device, 1, **device_options)
    whole = tmp_path / "whole"
    result = CliRunner().invoke(cli, [*ct, *ports, "--out", str(whole), "--json"])
    assert result.exit_code == 4, result.stderr  # a leak
    expected = json.loads(result.stdout)

    devices, ports = ports_of(pty_device, boards, **device_options, answer_signatures=KILLED_AT // boards)
    out = tmp_path / "killed"
    # The timeout keeps the host waiting for the unanswered signature until it is killed.
    process = subprocess.Popen([sys.executable, "-m", "pqscope", *ct, *ports, "--out", str(out),
                                "--timeout", "3600"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=os.environ)
    # Each board asked for the signature after its last answer: the rows before it are written.
    stopped = all(device.stopped_answering.wait(timeout=1800) for device in devices)  # bounds only a failure
    process.send_signal(signal.SIGKILL)
    _, stderr = process.communicate()
    assert stopped, stderr.decode()
    assert len(ct_rows(out)) == KILLED_AT
    assert json.loads((out / "meta.json").read_text())["status"] == "running"

    _devices, ports = ports_of(pty_device, resumed_on, **device_options)  # boards that answer the rest
    result = CliRunner().invoke(cli, ["ct", "--resume", str(out), *ports, "--no-flash", "--json", "--no-report"])
    assert result.exit_code == 4, result.stderr  # the leak, as uninterrupted
    # In the schedule's order, whichever board took each signature.
    assert without_board(ct_rows(out)) == without_board(ct_rows(whole))
    document = json.loads(result.stdout)
    assert {k: v for k, v in document.items() if k not in ("run_dir", "boards")} == {
        k: v for k, v in expected.items() if k != "run_dir"}
    meta = json.loads((out / "meta.json").read_text())
    # Every board that measured, before and after the kill, is named, and each signature names one.
    assert len(meta["boards"]) == boards + resumed_on
    assert {row["board"] for row in ct_rows(out)} == set(meta["boards"])
    assert meta["status"] == "complete" and meta["samples_completed"] == SAMPLES and len(meta["resumed_at"]) == 1
    assert sorted(key["key_id"] for key in meta["keys"]) == list(range(len(meta["keys"])))
    if probed:
        assert list(ct_rows(out)[0])[-4:] == ["probe:sqrt:cycles", "probe:sqrt:calls", "probe:__aeabi_d2lz:cycles",
                                              "probe:__aeabi_d2lz:calls"]
        assert document["top_functions"][0]["function"] == "__aeabi_d2lz"


def test_resuming_with_an_image_of_other_probes_is_refused(fake_repo, fake_toolchain, pty_device, tmp_path):
    device, port = pty_device(behaviour=Behaviour(**PROBED, answer_signatures=KILLED_AT))
    out = tmp_path / "killed"
    process = subprocess.Popen([sys.executable, "-m", "pqscope", *CT, "--probes", "--port", port, "--out", str(out),
                                "--timeout", "3600"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=os.environ)
    stopped = device.stopped_answering.wait(timeout=1800)  # the timeout only bounds a failure
    process.send_signal(signal.SIGKILL)
    assert stopped, process.communicate()[1].decode()
    _device, port = pty_device(behaviour=Behaviour(probes=("sqrt",)))
    assert_one_line_error(CliRunner().invoke(cli, ["ct", "--resume", str(out), "--port", port, "--no-flash"]),
                          "ct.csv holds other columns (another image's probes)")




def test_ct_resume_refuses_a_run_directory_and_its_own_parameters(fake_repo, fake_toolchain, pty_device, tmp_path):
    _device, port = pty_device()
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, ["run", "--board", "stm32f4discovery", "--port", port, "--no-flash",
                                      "--scheme", "ml-dsa-44", "--impl", "m4f", "-n", "2", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    assert_one_line_error(CliRunner().invoke(cli, ["ct", "--resume", str(out), "--port", port]),
                          "it is a 'run' run; resume it with `pqscope run --resume`")
    assert_one_line_error(CliRunner().invoke(cli, ["ct", "--resume", str(out), "-n", "50", "--key-refresh", "2"]),
                          "drop -n, --key-refresh")


def test_ct_resume_refuses_an_image_whose_code_changed(fake_repo, fake_toolchain, pty_device, tmp_path):
    _device, port = pty_device()
    out = tmp_path / "ct"
    result = CliRunner().invoke(cli, [*CT, "--port", port, "--out", str(out)])
    assert result.exit_code == 5, result.stderr  # inconclusive: too few signatures for no-leak
    meta = json.loads((out / "meta.json").read_text())
    # As if built from other code, and interrupted (a complete test resumes to nothing).
    (out / "meta.json").write_text(json.dumps(meta | {"code_sha256": "0" * 64, "status": "interrupted"}))
    assert_one_line_error(CliRunner().invoke(cli, ["ct", "--resume", str(out), "--port", port, "--no-flash"]),
                          "changed since the run started")
