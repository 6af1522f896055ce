"""A measurement is a transaction (issue #55): one writer per run directory (a second is refused
with the holder's process id, a killed one's lock blocks nothing); SIGTERM, SIGHUP and Ctrl-C end
it as interrupted with its samples kept and the resume command said (exit 128 + the signal), a
build too; a full disk leaves it resumable; a complete run resumes to nothing; signatures that did
not verify fail `run`; `report` says what is not complete in its headline. Every fault is placed by
the test: at the sample it names, never by a clock."""

import errno
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from pqscope.link.device import DeviceSession
from pqscope.link.protocol import Op, Status
from pqscope.cli.options import runner as runner_on
from pqscope.measure import runner
from pqscope.measure.capture import SampleCapture
from pqscope.measure.measurement import resumed
from pqscope.project.errors import PqscopeError
from pqscope.results.lock import LOCK_NAME
from pqscope.results.rundir import RunDirectory
from test_cli import RUN, assert_one_line_error, invoke
from test_ct_resume import CT, ports_of
from test_resume import SEED, SUITE_OPTIONS, kill_after, rows_of, suite_catalogue

SAMPLES = 12


@pytest.fixture(autouse=True)
def wide_lines(monkeypatch):
    """Long paths stay on one line of rich's output, in this process and the ones it starts."""
    monkeypatch.setenv("COLUMNS", "1000")


def pqscope(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pqscope", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=os.environ | (env or {}))


def finished(*args: str) -> subprocess.CompletedProcess:
    """`pqscope args` in a process of its own, run to its end."""
    process = pqscope(*args)
    stdout, stderr = process.communicate(timeout=300)  # bounds only a failure
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def one_line(text: str) -> str:
    return " ".join(text.split())


def meta_of(run: Path) -> dict:
    return json.loads((run / "meta.json").read_text())


def measure(out: Path, *options: str):
    return invoke(*RUN, "-n", str(SAMPLES), "--seed", SEED, "--out", str(out), "--no-report", *options)


def test_a_second_writer_is_refused_and_the_first_keeps_every_sample(fake_repo, fake_toolchain, tmp_path, monkeypatch):
    """While this process measures (its 5th sample just written), a resume and a new run of the
    same directory, each in a process of its own, are refused naming this process; a report
    there says it is running. The first then ends with all of its samples."""
    out = tmp_path / "run"
    beside: dict[str, subprocess.CompletedProcess] = {}
    write_rows = RunDirectory.write_rows

    def written_then_intruded(self, rows):
        write_rows(self, rows)
        if rows[0].sample_id == 4:
            beside["resume"] = finished("run", "--resume", str(out))
            beside["new run"] = finished(*RUN, "-n", "2", "--out", str(out))
            beside["report"] = finished("report", str(out))

    monkeypatch.setattr(RunDirectory, "write_rows", written_then_intruded)
    result = measure(out)
    assert result.exit_code == 0, result.stderr
    for name in ("resume", "new run"):
        refused = beside[name]
        assert refused.returncode == 1, (name, refused.stderr)
        (line,) = refused.stderr.splitlines()
        assert f"{out} is being measured by process {os.getpid()} (" in line, name
        assert "wait for it to end" in line
    assert beside["report"].returncode == 0, beside["report"].stderr
    assert one_line(beside["report"].stdout).startswith(
        f"running: run running ({SAMPLES} samples asked), by process {os.getpid()}; this report shows")
    assert sorted({int(row["sample_id"]) for row in rows_of(out)}) == list(range(SAMPLES))
    assert len(rows_of(out)) == 3 * SAMPLES
    assert (meta_of(out)["status"], meta_of(out)["samples_completed"]) == ("complete", SAMPLES)
    assert not (out / LOCK_NAME).exists()  # released with the measurement


def test_the_lock_of_a_killed_writer_blocks_nothing(fake_repo, fake_toolchain, tmp_path):
    """SIGKILL leaves the lock file and meta.json's "running": a report calls it interrupted, and
    a resume takes the directory over and completes it."""
    out = tmp_path / "run"
    kill_after([*RUN, "-n", str(SAMPLES), "--seed", SEED, "--out", str(out), "--no-report"], 5, tmp_path / "stopped")
    assert (out / LOCK_NAME).is_file() and meta_of(out)["status"] == "running"
    report = invoke("report", str(out))
    assert report.exit_code == 0, report.stderr
    assert one_line(report.stdout).startswith(
        f"partial: run interrupted (its process ended mid-measurement; {SAMPLES} samples asked); resume with "
        f"`pqscope run --resume {out}`")
    resumed = invoke("run", "--resume", str(out), "--no-report")
    assert resumed.exit_code == 0, resumed.stderr
    assert len(rows_of(out)) == 3 * SAMPLES and meta_of(out)["status"] == "complete"
    assert "partial" not in invoke("report", str(out)).stdout


def stopped_after(samples: int, args: list[str], stopped: Path) -> subprocess.Popen:
    """`pqscope args` on a fake board that answers `samples` samples, once it waits for the next."""
    process = pqscope(*args, "--timeout", "3600", env={
        "FAKE_DEVICE": json.dumps({"answer_signatures": samples}), "FAKE_VBOARD_STOPPED": str(stopped)})
    deadline = time.monotonic() + 120  # only bounds a failure
    while not stopped.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert stopped.exists(), process.communicate()[1]
    return process


@pytest.mark.parametrize(("number", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)],
                         ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_interrupts_a_run_as_ctrl_c_does(fake_repo, fake_toolchain, tmp_path, number, status):
    out = tmp_path / "run"
    process = stopped_after(5, [*RUN, "-n", str(SAMPLES), "--seed", SEED, "--out", str(out), "--no-report"],
                            tmp_path / "stopped")
    process.send_signal(number)
    _, stderr = process.communicate(timeout=1800)
    assert process.returncode == status, stderr
    assert (f"interrupted after 5 of {SAMPLES} samples; data kept in {out}, resume with `pqscope run --resume {out}`"
            in one_line(stderr))
    assert "Traceback" not in stderr
    assert (meta_of(out)["status"], meta_of(out)["samples_completed"]) == ("interrupted", 5)
    assert len(rows_of(out)) == 3 * 5
    report = invoke("report", str(out))
    assert one_line(report.stdout).startswith(
        f"partial: run interrupted after 5 of {SAMPLES} samples; resume with `pqscope run --resume {out}`")
    markdown = invoke("report", str(out), "--format", "md")  # the pages say it too, the line goes to stderr
    assert (f"**PARTIAL** this report: run interrupted after 5 of {SAMPLES} samples; resume with `pqscope run "
            f"--resume {out}`") in markdown.stdout
    assert one_line(markdown.stderr).startswith("partial: run interrupted")
    assert invoke("run", "--resume", str(out), "--no-report").exit_code == 0
    assert len(rows_of(out)) == 3 * SAMPLES


def test_a_signal_the_capturing_thread_takes_interrupts_the_test(fake_repo, fake_toolchain, pty_device, tmp_path):
    """The kernel hands a process's signal to any of its threads, and Python handles it in the main
    thread only: Ctrl-C taken by the thread that captures the board's signatures (here it alone is
    sent it) interrupts the test while the main thread waits for a signature that never comes."""
    (device,), ports = ports_of(pty_device, 1, answer_signatures=30)
    out = tmp_path / "ct"
    ended, lost = threading.Event(), []

    def interrupt_the_capture() -> None:
        device.stopped_answering.wait()
        capture = next(thread for thread in threading.enumerate() if thread.name == "shard 0")
        signal.pthread_kill(capture.ident, signal.SIGINT)
        if not ended.wait(300):  # bounds only a failure: the signal was held off, so it is sent again where it acts
            lost.append(True)
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    threading.Thread(target=interrupt_the_capture, daemon=True).start()
    result = invoke(*CT, *ports, "--out", str(out), "--timeout", "3600")
    ended.set()
    assert result.exit_code == 130 and not lost, result.stderr
    assert (meta_of(out)["status"], meta_of(out)["samples_completed"]) == ("interrupted", 30)


@pytest.mark.parametrize(("number", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_a_build_exits_with_its_status(fake_repo, fake_toolchain, tmp_path, number, status):
    """Ctrl-C (or SIGTERM) while cmake builds: the signal's status, one line, and no directory
    left behind to block --out."""
    building = tmp_path / "building"
    cmake = tmp_path / "bin" / "cmake"  # fake_toolchain's: now one that builds until it is stopped
    cmake.write_text(f"#!{sys.executable}\nimport pathlib, time\npathlib.Path({str(building)!r}).touch()\n"
                     "time.sleep(3600)\n")
    out = tmp_path / "run"
    process = pqscope(*RUN, "--out", str(out))
    deadline = time.monotonic() + 120  # only bounds a failure
    while not building.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert building.exists(), process.communicate()[1]
    process.send_signal(number)
    _, stderr = process.communicate(timeout=1800)
    assert process.returncode == status, stderr
    assert stderr.splitlines()[-1] == f"interrupted ({signal.Signals(number).name})"
    assert "Traceback" not in stderr
    assert not out.exists()


@pytest.mark.parametrize("meta_too", [False, True], ids=["samples", "samples-and-meta"])
def test_a_full_disk_leaves_the_run_resumable(fake_repo, fake_toolchain, tmp_path, monkeypatch, meta_too):
    """The samples file refuses sample 3's rows for want of space (and, `meta_too`, meta.json its
    last word): one line naming the file and the space left, the run interrupted after 3 samples
    (or meta.json's "running" read as interrupted); once there is space, it resumes to what an
    uninterrupted run measures."""
    whole, out = tmp_path / "whole", tmp_path / "run"
    assert measure(whole).exit_code == 0
    disk_full = [False]
    write_rows, write_meta = RunDirectory.write_rows, runner.write_meta

    def refused_from_sample_3(self, rows):
        disk_full[0] |= rows[0].sample_id == 3
        if disk_full[0]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path / "samples.csv"))
        write_rows(self, rows)

    def meta_refused_too(path, meta):
        if disk_full[0]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path / "meta.json.tmp"))
        write_meta(path, meta)

    monkeypatch.setattr(RunDirectory, "write_rows", refused_from_sample_3)
    if meta_too:
        monkeypatch.setattr(runner, "write_meta", meta_refused_too)
    result = measure(out)
    assert result.exit_code == 1
    assert_one_line_error(result, f"no space left on device: {out / 'samples.csv'} (")
    assert f"MB free); free some space and resume with `pqscope run --resume {out}`" in result.stderr
    recorded = ("running", 0) if meta_too else ("interrupted", 3)
    assert (meta_of(out)["status"], meta_of(out)["samples_completed"]) == recorded
    assert one_line(invoke("report", str(out)).stdout).startswith("partial: run interrupted")
    disk_full[0] = False
    monkeypatch.setattr(RunDirectory, "write_rows", write_rows)
    assert invoke("run", "--resume", str(out), "--no-report").exit_code == 0
    assert (out / "samples.csv").read_bytes() == (whole / "samples.csv").read_bytes()
    assert meta_of(out)["status"] == "complete"


def test_resuming_a_complete_run_says_so_and_measures_nothing(fake_repo, fake_toolchain, tmp_path):
    out = tmp_path / "run"
    assert measure(out).exit_code == 0
    log = tmp_path / "cmake.log"  # fake_toolchain's: every build and emulator start goes through cmake
    before = {name: (out / name).read_bytes() for name in ("samples.csv", "meta.json", "raw.bin")}, log.read_text()
    result = invoke("run", "--resume", str(out), "--no-report")
    assert result.exit_code == 0, result.stderr
    assert one_line(result.stderr) == f"{out} is complete ({SAMPLES} samples): nothing to resume"
    assert ({name: (out / name).read_bytes() for name in before[0]}, log.read_text()) == before


def session_answering(sample_id: int, status: Status):
    """DeviceSession.run_sample, but sample `sample_id`'s verification ends with `status`."""
    run_sample = DeviceSession.run_sample

    def answered(self, seed, msg_len, ops, index, **options):
        result = run_sample(self, seed, msg_len, ops, index, **options)
        if index != sample_id:
            return result
        return replace(result, done=replace(result.done, status=status), samples=[
            replace(sample, status=status) if sample.op == Op.VERIFY else sample for sample in result.samples])
    return answered


def test_a_run_whose_signatures_do_not_verify_fails(fake_repo, fake_toolchain, tmp_path, monkeypatch):
    monkeypatch.setattr(DeviceSession, "run_sample", session_answering(2, Status.VALID_REJECTED))
    result = invoke(*RUN, "-n", "4", "--seed", SEED, "--out", str(tmp_path / "run"), "--no-report")
    assert result.exit_code == 3, result.stderr
    assert result.stderr.splitlines()[-1] == ("Error: signatures did not verify: ml-dsa-44 m4f: 1 of 4 samples (the "
                                              "first, sample 2: verify valid rejected)")
    assert "verify" in result.stdout  # the table is shown all the same


def test_a_forgery_accepted_beside_a_verified_signature_is_no_failure(fake_repo, fake_toolchain, tmp_path,
                                                                         monkeypatch):
    """Falcon's verifier accepts some flipped padding bits: counted apart, not a failed signature."""
    monkeypatch.setattr(DeviceSession, "run_sample", session_answering(2, Status.CORRUPT_ACCEPTED))
    result = invoke(*RUN, "-n", "4", "--seed", SEED, "--out", str(tmp_path / "run"), "--no-report")
    assert result.exit_code == 0, result.stderr


def test_resuming_a_complete_constant_time_test_says_so_and_measures_nothing(fake_repo, fake_toolchain, pty_device,
                                                                            tmp_path):
    (device,), ports = ports_of(pty_device, 1)
    out = tmp_path / "ct"
    assert invoke(*CT, *ports, "--out", str(out)).exit_code == 5  # inconclusive: too few signatures for no-leak
    before = {name: (out / name).read_bytes() for name in ("ct.csv", "ct.json", "meta.json")}
    signed = device.signatures
    result = invoke("ct", "--resume", str(out), *ports, "--no-flash", "--json")
    assert result.exit_code == 5, result.stderr  # the test's verdict, said again
    completed = meta_of(out)["samples_completed"]
    assert one_line(result.stderr) == f"{out} is complete ({completed} signatures): nothing to resume"
    assert json.loads(result.stdout)["verdict"] == json.loads(before["ct.json"])["verdict"]
    assert {name: (out / name).read_bytes() for name in before} == before and device.signatures == signed


def test_resuming_a_complete_suite_says_so_and_measures_nothing(fake_repo, fake_toolchain, tmp_path):
    members = suite_catalogue(fake_repo)
    out = tmp_path / "suite"
    assert invoke("run", *SUITE_OPTIONS, "-n", "2", "--seed", SEED, "--out", str(out)).exit_code == 0
    log = tmp_path / "cmake.log"
    before = sorted((path, path.read_bytes()) for path in out.rglob("*") if path.is_file()), log.read_text()
    result = invoke("run", "--resume", str(out), "--no-report")
    assert result.exit_code == 0, result.stderr
    assert one_line(result.stderr) == f"{out}: every member is complete: nothing to resume"
    assert (sorted((path, path.read_bytes()) for path in out.rglob("*") if path.is_file()), log.read_text()) == before
    assert all((out / f"{scheme}-{impl}" / "samples.csv").is_file() for scheme, impl in members)


def test_a_resume_read_before_another_writer_went_on_is_refused(fake_repo, fake_toolchain, tmp_path):
    """`ct` and `taint` read the directory before their runner takes its lock: if another writer
    went on meanwhile (here: completed it), the runner refuses rather than write stale meta.json."""
    out = tmp_path / "run"
    kill_after([*RUN, "-n", str(SAMPLES), "--seed", SEED, "--out", str(out), "--no-report"], 5, tmp_path / "stopped")
    stale = resumed(fake_repo, out, SampleCapture)
    assert invoke("run", "--resume", str(out), "--no-report").exit_code == 0
    complete = {name: (out / name).read_bytes() for name in ("samples.csv", "meta.json")}
    (member,) = stale.members
    with pytest.raises(PqscopeError, match="another process measured into it after this one read it"):
        runner_on(fake_repo, stale.board, port=None, baud=None, timeout=60.0, flash=False).measure(
            member.implementation, out, stale.what, member.resume_from)
    assert {name: (out / name).read_bytes() for name in complete} == complete


def test_a_report_of_a_test_without_its_result_says_why(fake_repo, fake_toolchain, pty_device, tmp_path):
    """A constant-time test that stopped (its board fell silent after 30 signatures) has no
    verdict to report: one line saying so and how to go on, not a complaint about its meta.json."""
    _devices, ports = ports_of(pty_device, 1, answer_signatures=30)
    out = tmp_path / "ct"
    assert invoke(*CT, *ports, "--out", str(out), "--timeout", "1").exit_code == 1  # the board never answers again
    assert_one_line_error(invoke("report", str(out)), f"{out} holds no ct result yet: partial: ct failed: device not "
                                                      f"answering on ")
    assert f"after 30 of {meta_of(out)['samples']} signatures; resume with `pqscope ct --resume {out}`" in (
        invoke("report", str(out)).stderr)
