"""`pqscope run --resume`: a killed run goes on to exactly its N samples; damaged run directories
give one clear line, never a traceback."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakedevice import fake_cycles, fake_stack
from pqscope.results.records import sample_seed
from pqscope.link.protocol import Op
from pqscope.results.rundir import CSV_FIELDS, keep_complete_samples, read_samples
from pqscope.targets.vboard import virtual_board_serial
from test_cli import RUN, assert_one_line_error, invoke

SAMPLES = 200
SEED = "0b"
# A suite of samples only, on one emulator: the fake emulator has no exact check for the suite's
# constant-time tests (tests/python/test_main_job.py has them), and these tests count its rows.
SUITE_OPTIONS = ("--ct-n", "0", "-j", "1", "--no-report")


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def rows_of(run: Path) -> list[dict]:
    with (run / "samples.csv").open(newline="") as stream:
        return list(csv.DictReader(stream))


def kill_after(args: list[str], samples: int, stopped: Path, image: str | None = None,
               behaviour: dict | None = None) -> None:
    """Runs `pqscope args` on a fake board (running `image`, "<scheme>/<impl>", or any) that answers
    `samples` samples, then SIGKILLs it, as a crash would, once it asked for the next one: by then
    the rows of exactly `samples` samples are written. `behaviour`: more of the board's Behaviour."""
    env = os.environ | {"FAKE_DEVICE": json.dumps({"answer_signatures": samples, **(behaviour or {})}),
                        "FAKE_VBOARD_STOPPED": str(stopped)}
    if image:
        env["FAKE_DEVICE_IMAGE"] = image
    # The timeout keeps the host waiting for the unanswered sample until it is killed.
    process = subprocess.Popen([sys.executable, "-m", "pqscope", *args, "--timeout", "3600"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 120  # only bounds a failure
    while not stopped.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    emulators = children(process.pid)
    process.send_signal(signal.SIGKILL)
    _, stderr = process.communicate()
    for pid in emulators:  # in its own session, it outlives the killed host
        os.kill(pid, signal.SIGTERM)
    assert stopped.exists(), stderr.decode()


def test_a_killed_run_resumes_to_exactly_n_verified_samples(fake_repo, fake_toolchain, tmp_path):
    out = tmp_path / "run"
    kill_after([*RUN, "-n", str(SAMPLES), "--seed", SEED, "--out", str(out)], 10, tmp_path / "stopped")
    killed_at = len(rows_of(out))
    assert killed_at == 3 * 10
    with (out / "samples.csv").open("a") as stream:
        stream.write(f"{killed_at // 3},sign,00")  # as if killed in the middle of a line

    result = invoke("run", "--resume", str(out), "--json")
    assert result.exit_code == 0, result.stderr
    rows = rows_of(out)
    assert len(rows) == 3 * SAMPLES
    assert sorted((int(r["sample_id"]), r["op"]) for r in rows) == [
        (i, op.label) for i in range(SAMPLES) for op in (Op.KEYGEN, Op.SIGN, Op.VERIFY)]
    for row in rows:
        seed = sample_seed(bytes.fromhex(SEED), int(row["sample_id"]))
        op = Op[row["op"].upper()]
        assert row == {"sample_id": row["sample_id"], "op": row["op"], "seed": seed.hex(),
                       "cycles": str(fake_cycles(seed, op)), "stack_bytes": str(fake_stack(op)),
                       "status": "ok", "verified": "true", "board": virtual_board_serial(0)}
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["samples_completed"] == SAMPLES and len(meta["resumed_at"]) == 1
    assert all(result["n"] == SAMPLES for result in json.loads(result.stdout)["results"])


def make_run(tmp_path: Path, samples: int = 3) -> Path:
    out = tmp_path / "run"
    # No report: what these tests read are the run's files (its report's views have tests of their own).
    result = invoke(*RUN, "-n", str(samples), "--seed", SEED, "--out", str(out), "--no-report")
    assert result.exit_code == 0, result.stderr
    return out


def test_resuming_a_complete_run_changes_nothing(fake_repo, fake_toolchain, tmp_path):
    out = make_run(tmp_path)
    before = rows_of(out)
    assert invoke("run", "--resume", str(out)).exit_code == 0
    assert rows_of(out) == before


def test_report_skips_a_line_cut_short(fake_repo, fake_toolchain, tmp_path):
    out = make_run(tmp_path)
    with (out / "samples.csv").open("a") as stream:
        stream.write("3,keygen,ab")
    result = invoke("report", str(out), "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert [r["n"] for r in json.loads(result.stdout)["results"]] == [3, 3, 3]


@pytest.mark.parametrize(("damage", "command", "expected"), [
    (lambda run: (run / "meta.json").write_text("{\"scheme\": "), "report", "meta.json is not valid JSON"),
    (lambda run: (run / "meta.json").write_text("[]"), "report", "meta.json is damaged: it lacks 'scheme'"),
    (lambda run: (run / "meta.json").unlink(), "resume", "it is not a run directory (no meta.json)"),
    (lambda run: (run / "meta.json").write_text('{"board": "virtual"}'), "resume", "meta.json lacks 'scheme'"),
    (lambda run: (run / "samples.csv").unlink(), "report", "has no samples.csv"),
    (lambda run: (run / "samples.csv").write_bytes(b"\xff\xfe"), "resume", "samples.csv is damaged: not text"),
    (lambda run: (run / "samples.csv").write_text("a,b\n"), "report", "samples.csv is damaged: its header"),
    (lambda run: (run / "samples.csv").write_text(
        (run / "samples.csv").read_text().replace(",sign,", ",sing,", 1)), "report", "damaged at line 3"),
    (lambda run: (run / "samples.csv").write_text(
        (run / "samples.csv").read_text().replace(sample_seed(bytes.fromhex(SEED), 0).hex(), "00" * 32)),
     "resume", "the seed of sample 0 is not derived from meta.json's master seed"),
])
def test_a_damaged_run_directory_is_one_clear_error(fake_repo, fake_toolchain, tmp_path, damage, command, expected):
    out = make_run(tmp_path)
    damage(out)
    args = ("report", str(out)) if command == "report" else ("run", "--resume", str(out))
    assert_one_line_error(invoke(*args), expected)


def test_resume_refuses_parameters_of_its_own(fake_repo, fake_toolchain, tmp_path):
    out = make_run(tmp_path)
    assert_one_line_error(invoke("run", "--resume", str(out), "--scheme", "ml-dsa-44", "-n", "5"),
                          "--resume takes the run's parameters from its meta.json; drop --scheme, -n")


def suite_catalogue(fake_repo: Path) -> list[tuple[str, str]]:
    """Three default-suite rows (the fake device answers with any row's name and ML-DSA's sizes)."""
    catalogue = json.loads((fake_repo / "firmware/schemes/catalogue.json").read_text())
    (row,) = catalogue["implementations"]
    members = [("ml-dsa-44", "m4f"), ("falcon-512", "fpnative"), ("falcon-512", "fpemu-c")]
    catalogue["implementations"] = [row | {"scheme": scheme, "impl": impl} for scheme, impl in members]
    (fake_repo / "firmware/schemes/catalogue.json").write_text(json.dumps(catalogue))
    return members


def test_a_killed_suite_resumes_to_exactly_n_samples_in_every_member(fake_repo, fake_toolchain, tmp_path):
    members = suite_catalogue(fake_repo)
    out = tmp_path / "suite"
    first, second, third = (out / f"{scheme}-{impl}" for scheme, impl in members)
    kill_after(["run", *SUITE_OPTIONS, "-n", str(SAMPLES), "--seed", SEED, "--out", str(out)], 10, tmp_path / "stopped",
               image="/".join(members[1]))
    assert len(rows_of(second)) == 3 * 10
    assert not third.exists()
    complete_before = (first / "samples.csv").read_bytes(), (first / "meta.json").read_bytes()

    result = invoke("run", "--resume", str(out), "--json")
    assert result.exit_code == 0, result.stderr
    # The complete member is left alone, the killed one goes on, the third one is measured.
    assert ((first / "samples.csv").read_bytes(), (first / "meta.json").read_bytes()) == complete_before
    assert len(json.loads((second / "meta.json").read_text())["resumed_at"]) == 1
    for run in (first, second, third):
        assert sorted((int(r["sample_id"]), r["op"]) for r in rows_of(run)) == [
            (i, op.label) for i in range(SAMPLES) for op in (Op.KEYGEN, Op.SIGN, Op.VERIFY)]
        assert all(r["seed"] == sample_seed(bytes.fromhex(SEED), int(r["sample_id"])).hex() for r in rows_of(run))
        assert json.loads((run / "meta.json").read_text())["status"] == "complete"
    document = json.loads(result.stdout)
    assert {(r["scheme"], r["impl"]) for r in document["results"]} == set(members)
    assert all(r["n"] == SAMPLES for r in document["results"])


@pytest.mark.parametrize("writing_meta", [False, True])
def test_a_suite_member_killed_before_its_meta_json_starts_afresh(fake_repo, fake_toolchain, tmp_path, writing_meta):
    members = suite_catalogue(fake_repo)
    out = tmp_path / "suite"
    assert invoke("run", *SUITE_OPTIONS, "-n", "3", "--seed", SEED, "--out", str(out)).exit_code == 0
    last = out / "-".join(members[-1])
    meta = (last / "meta.json").read_text()
    # As the member's files are just after it created them (its meta.json not written yet, or being
    # written: killed before write_atomically's rename, as atlas.virtual's kill once landed).
    for child in last.iterdir():
        child.unlink()
    (last / "raw.bin").touch()
    (last / "samples.csv").write_text("sample_id,op,seed,cycles,stack_bytes,status,verified\n")
    if writing_meta:
        (last / "meta.json.tmp").write_text(meta[:len(meta) // 2])
    assert invoke("run", "--resume", str(out)).exit_code == 0
    assert len(rows_of(last)) == 9
    assert not (last / "meta.json.tmp").exists()


def test_a_suite_member_with_data_but_no_meta_json_is_one_clear_error(fake_repo, fake_toolchain, tmp_path):
    members = suite_catalogue(fake_repo)
    out = tmp_path / "suite"
    assert invoke("run", *SUITE_OPTIONS, "-n", "3", "--seed", SEED, "--out", str(out)).exit_code == 0
    (out / "-".join(members[1]) / "meta.json").unlink()
    assert_one_line_error(invoke("run", "--resume", str(out)), "holds data but no meta.json")


def test_a_suite_with_a_damaged_manifest_is_one_clear_error(fake_repo, fake_toolchain, tmp_path):
    suite_catalogue(fake_repo)
    out = tmp_path / "suite"
    assert invoke("run", *SUITE_OPTIONS, "-n", "2", "--seed", SEED, "--out", str(out)).exit_code == 0
    (out / "suite.json").write_text('{"board": "virtual", "members": [{"scheme": 1}]}')
    assert_one_line_error(invoke("run", "--resume", str(out)), "suite.json lacks 'ops'")


def test_resume_refuses_an_image_whose_code_changed(fake_repo, fake_toolchain, tmp_path):
    out = make_run(tmp_path)
    meta = json.loads((out / "meta.json").read_text())
    assert len(meta["code_sha256"]) == 64
    # As if built from other code, and interrupted (a complete run resumes to nothing).
    (out / "meta.json").write_text(json.dumps(meta | {"code_sha256": "0" * 64, "status": "interrupted"}))
    before = (out / "samples.csv").read_bytes()
    assert_one_line_error(invoke("run", "--resume", str(out)), "changed since the run started")
    assert (out / "samples.csv").read_bytes() == before


def test_a_run_from_before_samples_named_their_board_is_read_and_resumed(tmp_path):
    """samples.csv without the board column (an older pqscope's): its rows read with an empty
    board, and a resume writes the kept ones back in today's columns."""
    seeds = [sample_seed(b"\x07", index) for index in range(3)]
    samples = tmp_path / "samples.csv"
    samples.write_text("sample_id,op,seed,cycles,stack_bytes,status,verified\n" + "".join(
        f"{index},sign,{seed.hex()},{1000 + index},64,ok,true\n" for index, seed in enumerate(seeds)))
    rows, _ = read_samples(samples)
    assert [(row.sample_id, row.cycles, row.board) for row in rows] == [(0, 1000, ""), (1, 1001, ""), (2, 1002, "")]
    assert [row.sample_id for row in keep_complete_samples(samples, b"\x07")] == [0, 1]
    assert samples.read_text().splitlines()[0] == ",".join(CSV_FIELDS)
    assert [row.board for row in read_samples(samples)[0]] == ["", ""]
