"""A run, a suite and a constant-time test killed at any point resume to exactly what an
uninterrupted one with the same seed measures: killed after k records, killed while a record's
frame was half received, and killed while a record was being appended to the samples file (every
cut of that file, as a SIGKILL leaves it)."""

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import without_board
from pqscope.cli import cli
from test_cli import RUN, invoke
from test_ct_resume import CT, ct_rows, ports_of
from test_resume import SEED, SUITE_OPTIONS, kill_after, rows_of, suite_catalogue

SAMPLES = 12


def measured(result, status: int = 0) -> None:
    """Asserts that the command ended with `status` (ct: its verdict's, 4 for a leak)."""
    assert result.exit_code == status, result.stderr


def uninterrupted_run(tmp_path: Path, samples: int = SAMPLES) -> Path:
    whole = tmp_path / "whole"
    measured(invoke(*RUN, "-n", str(samples), "--seed", SEED, "--out", str(whole), "--no-report"))
    return whole


def assert_resumed_like(out: Path, whole: Path, samples_file: str = "samples.csv") -> None:
    """The resumed measurement holds what the uninterrupted one holds, and says it is complete."""
    assert (out / samples_file).read_bytes() == (whole / samples_file).read_bytes()
    meta = json.loads((out / "meta.json").read_text())
    assert (meta["status"], meta["samples_completed"]) == ("complete", meta["samples"])


@pytest.mark.parametrize(("killed_at", "cut_frame"), [(0, False), (5, False), (SAMPLES - 1, False), (1, True),
                                                     (7, True)])
def test_a_killed_run_resumes_to_the_uninterrupted_run(fake_repo, fake_toolchain, tmp_path, killed_at, cut_frame):
    """Killed between records (after k samples), or inside the frame of sample k+1's first record."""
    whole = uninterrupted_run(tmp_path)
    out = tmp_path / "killed"
    kill_after([*RUN, "-n", str(SAMPLES), "--seed", SEED, "--out", str(out), "--no-report"], killed_at,
               tmp_path / "stopped", behaviour={"cut_frame": cut_frame})
    assert len(rows_of(out)) == 3 * killed_at
    measured(invoke("run", "--resume", str(out), "--no-report"))
    assert_resumed_like(out, whole)


def cuts(data: bytes) -> list[int]:
    """Where a kill can leave a file being appended line by line: at each line's end, one byte
    into the next line and halfway through it."""
    ends = [0, *(index + 1 for index, byte in enumerate(data) if byte == ord("\n"))]
    return sorted({offset for start, end in zip(ends, ends[1:]) for offset in (start, start + 1, (start + end) // 2)}
                  | {len(data)})


def killed_copy(whole: Path, out: Path, samples_file: str, cut: int) -> None:
    """`whole` as a kill leaves it with `cut` bytes of its samples file written: its meta.json
    still says running, nothing is reported."""
    shutil.copytree(whole, out)
    data = (whole / samples_file).read_bytes()
    (out / samples_file).write_bytes(data[:cut])
    meta = json.loads((out / "meta.json").read_text())
    meta.update(status="running", samples_completed=0)
    meta.pop("result", None)
    (out / "meta.json").write_text(json.dumps(meta))
    for report in ("report.md", "report.html", "ct.json", "evidence.csv"):
        (out / report).unlink(missing_ok=True)


def test_a_run_killed_while_appending_its_samples_resumes_to_the_uninterrupted_run(fake_repo, fake_toolchain,
                                                                                     tmp_path):
    whole = uninterrupted_run(tmp_path, samples=3)
    data = (whole / "samples.csv").read_bytes()
    # Before any sample, after each one, and inside each of the last sample's three rows (a
    # sample's rows are written at once: a kill leaves all of them or a cut of them).
    ends = [0, *(index + 1 for index, byte in enumerate(data) if byte == ord("\n"))]
    for cut in sorted({0, *ends[1::3], *(cut for cut in cuts(data) if cut > ends[-4])}):
        out = tmp_path / f"cut-{cut}"
        killed_copy(whole, out, "samples.csv", cut)
        measured(invoke("run", "--resume", str(out), "--no-report"))
        assert_resumed_like(out, whole)


@pytest.mark.parametrize("killed_at", [0, 7])
def test_a_killed_suite_resumes_to_the_uninterrupted_suite(fake_repo, fake_toolchain, tmp_path, killed_at):
    members = suite_catalogue(fake_repo)
    whole, out = tmp_path / "whole", tmp_path / "killed"
    measured(invoke("run", *SUITE_OPTIONS, "-n", str(SAMPLES), "--seed", SEED, "--out", str(whole)))
    kill_after(["run", *SUITE_OPTIONS, "-n", str(SAMPLES), "--seed", SEED, "--out", str(out)], killed_at, tmp_path / "stopped",
               image="/".join(members[1]), behaviour={"cut_frame": True})
    # Each sample on the board that measured the whole's.
    measured(invoke("run", "--resume", str(out), "-j", "1", "--no-report"))
    for scheme, impl in members:
        assert_resumed_like(out / f"{scheme}-{impl}", whole / f"{scheme}-{impl}")


CT_SAMPLES = 40


def ct_whole(tmp_path: Path, pty_device) -> tuple[Path, dict]:
    _devices, ports = ports_of(pty_device, 1, key_leak=400)
    whole = tmp_path / "whole"
    ct = [*CT[:CT.index("-n")], "-n", str(CT_SAMPLES), "--seed", "07", "--fixed-n"]
    result = CliRunner().invoke(cli, [*ct, *ports, "--out", str(whole), "--json"])
    measured(result, status=4)  # a leak
    return whole, json.loads(result.stdout)


def assert_ct_resumes_like(out: Path, whole: Path, expected: dict, pty_device) -> None:
    """`ct --resume` of `out` on a fresh board signs what the uninterrupted test `whole` signed and
    comes to its verdict document (but for the boards it names: a resumed test names both)."""
    _devices, ports = ports_of(pty_device, 1, key_leak=400)
    result = CliRunner().invoke(cli, ["ct", "--resume", str(out), *ports, "--no-flash", "--json"])
    measured(result, status=4)  # the leak, as uninterrupted
    assert without_board(ct_rows(out)) == without_board(ct_rows(whole))
    assert {k: v for k, v in json.loads(result.stdout).items() if k not in ("run_dir", "boards")} == {
        k: v for k, v in expected.items() if k != "run_dir"}


def test_a_ct_killed_while_appending_resumes_to_the_uninterrupted_test(fake_repo, fake_toolchain, pty_device,
                                                                        tmp_path):
    whole, expected = ct_whole(tmp_path, pty_device)
    data = (whole / "ct.csv").read_bytes()
    # Every cut in the first and the last signature's lines, and a line's end in the middle.
    middle = cuts(data)[len(cuts(data)) // 2]
    for cut in [*cuts(data)[:4], middle, *cuts(data)[-4:]]:
        out = tmp_path / f"cut-{cut}"
        killed_copy(whole, out, "ct.csv", cut)
        assert_ct_resumes_like(out, whole, expected, pty_device)


@pytest.mark.parametrize("killed_at", [1, 27])
def test_a_ct_killed_inside_a_frame_resumes_to_the_uninterrupted_test(fake_repo, fake_toolchain, pty_device,
                                                                       tmp_path, killed_at):
    whole, expected = ct_whole(tmp_path, pty_device)
    (device,), ports = ports_of(pty_device, 1, key_leak=400, answer_signatures=killed_at, cut_frame=True)
    out = tmp_path / "killed"
    ct = [*CT[:CT.index("-n")], "-n", str(CT_SAMPLES), "--seed", "07", "--fixed-n"]
    # The timeout keeps the host waiting for the rest of the frame until it is killed.
    process = subprocess.Popen([sys.executable, "-m", "pqscope", *ct, *ports, "--out", str(out), "--timeout", "3600"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stopped = device.stopped_answering.wait(timeout=1800)  # bounds only a failure
    process.send_signal(signal.SIGKILL)
    _, stderr = process.communicate()
    assert stopped, stderr.decode()
    assert len(ct_rows(out)) == killed_at
    assert_ct_resumes_like(out, whole, expected, pty_device)
