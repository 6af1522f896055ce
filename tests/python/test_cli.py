import csv
import signal
import subprocess
import sys
import time
import json

import pytest
from click.testing import CliRunner

from fakedevice import fake_cycles, fake_stack
from pqscope.project.build import read_size
from pqscope.results.records import sample_seed
from pqscope.jobs.bench import BENCH_SAMPLES, BENCH_SEED
from pqscope.cli import cli
from pqscope.link.frames import FrameDecoder
from pqscope.link.protocol import PROTOCOL_VERSION, Op
from pqscope.link.messages import Info, decode_message
from pqscope.targets.vboard import virtual_board_serial


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def assert_one_line_error(result, expected: str) -> None:
    assert result.exit_code != 0
    assert isinstance(result.exception, SystemExit), result.exception  # handled, not a crash
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert expected in line


RUN = ("run", "--scheme", "ml-dsa-44", "--impl", "m4f")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("run", "--board", "nucleo", "--scheme", "ml-dsa-44", "--impl", "m4f"),
         "unknown board 'nucleo'; valid: stm32f4discovery, virtual"),
        (("run", "--scheme", "no-such-scheme", "--impl", "m4f"), "unknown scheme 'no-such-scheme'; valid: "),
        (("run", "--scheme", "ml-dsa-44"), "give both --scheme and --impl, or neither for the default suite"),
        (("build", "--board", "virtual", "--scheme", "ml-dsa-44", "--impl", "ref"),
         "unknown impl 'ref' of scheme ml-dsa-44; valid: m4f"),
        ((*RUN, "--ops", "sign,encrypt"), "unknown op 'encrypt'; valid: keygen, sign, verify"),
        (("taint", "--board", "stm32f4discovery", "--scheme", "ml-dsa-44", "--impl", "m4f"),
         "board stm32f4discovery cannot track the key through its instructions: taint runs on the virtual board"),
        (("ct", "--board", "stm32f4discovery", "--port", "/dev/null", "--scheme", "ml-dsa-44", "--impl", "m4f",
          "--taint", "--no-replay"), "--taint runs on the virtual board: on stm32f4discovery, in the replay (drop "
                                     "--no-replay)"),
        (("model-check", "--board", "stm32f4discovery"),
         "board stm32f4discovery is reached over a serial port: pass --port"),
        ((*RUN, "--seed", "xyz"), "--seed must be hex digits (an odd count is read with a leading 0: 7 is 07), not 'xyz'"),
        ((*RUN, "-n", "many"), "Invalid value for '-n'"),
        ((*RUN, "--board", "stm32f4discovery"), "board stm32f4discovery is reached over a serial port: pass --port"),
        ((*RUN, "--board", "stm32f4discovery", "--port", "/dev/null", "--without-hse"),
         "--without-hse starts the virtual board without its HSE; board stm32f4discovery's clock is its own"),
        (("frobnicate",), "No such command 'frobnicate'"),
    ],
)
def test_bad_input_is_one_line_without_traceback(fake_repo, args, expected):
    assert_one_line_error(invoke(*args), expected)


def test_missing_port(fake_repo, fake_toolchain):
    result = invoke(*RUN, "--board", "stm32f4discovery", "--port", "/dev/ttyNOPE0")
    assert result.exit_code != 0
    assert "port /dev/ttyNOPE0 does not exist" in result.stderr.splitlines()[-1]


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"FAKE_VBOARD_ERROR": "cannot load ELF: bad magic"}, "virtual board: cannot load ELF: bad magic"),
        ({"FAKE_DEVICE": '{"answer_commands": 1}'}, "device not answering on /dev/"),
        ({"FAKE_DEVICE": f'{{"version": {PROTOCOL_VERSION + 1}}}'}, f"the device speaks protocol version {PROTOCOL_VERSION + 1}"),
    ],
)
def test_run_failures_are_one_line(fake_repo, fake_toolchain, monkeypatch, tmp_path, env, expected):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = invoke(*RUN, "-n", "2", "--out", str(tmp_path / "run"))
    assert_one_line_error(result, expected)
    meta = json.loads((tmp_path / "run/meta.json").read_text())
    assert meta["status"].startswith("failed: ") and expected in meta["status"]


def test_build_json(fake_repo, fake_toolchain, tiny_elf):
    result = invoke("build", "--board", "virtual", "--scheme", "ml-dsa-44", "--impl", "m4f", "--json")
    assert result.exit_code == 0, result.stderr
    elf = fake_repo / "build/stm32f4discovery/images/ml-dsa-44/m4f.elf"
    size = read_size(tiny_elf[0])
    assert json.loads(result.stdout) == {"images": [{
        "board": "virtual", "scheme": "ml-dsa-44", "impl": "m4f", "toolchain": {"compiler": "gcc12", "opt": "catalogue"},
        "elf": str(elf),
        "text": size.text, "data": size.data, "bss": size.bss, "bulk": 0, "stack_bytes": 65536,
    }]}


def test_build_failure_shows_the_log_then_one_line(fake_repo, fake_toolchain):
    fake_toolchain(fail="undefined reference to `crypto_sign'")
    result = invoke("build", "--board", "stm32f4discovery", "--scheme", "ml-dsa-44", "--impl", "m4f")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "error: undefined reference to `crypto_sign'",
        "Error: `cmake --preset stm32f4discovery -B build/stm32f4discovery -DPQSCOPE_COMPILER=gcc12 -DPQSCOPE_OPT=` "
        "failed with exit code 1 (log above)",
    ]


def test_boards_and_schemes_json(fake_repo):
    boards = json.loads(invoke("boards", "--json").stdout)["boards"]
    assert [(b["name"], b["runner"], b["emulates"]) for b in boards] == [
        ("stm32f4discovery", "serial", None), ("virtual", "vboard", "stm32f4discovery"),
    ]
    schemes = json.loads(invoke("schemes", "--json").stdout)["schemes"]
    assert [(s["scheme"], s["impl"], s["stack_bytes"]) for s in schemes] == [("ml-dsa-44", "m4f", 65536)]


def test_a_run_on_two_boards_is_the_run_on_one(fake_repo, fake_toolchain, pty_device, tmp_path):
    """`run` deals its samples to the boards in pairs: samples.csv holds the same rows in the same
    order, each naming the board that measured it, and meta.json names both boards."""
    rows = {}
    for boards in (1, 2):
        devices, paths = zip(*(pty_device() for _ in range(boards)))  # each with a serial number of its own
        ports = [arg for path in paths for arg in ("--port", path)]
        out = tmp_path / f"on-{boards}"
        result = invoke(*RUN, "--board", "stm32f4discovery", "--no-flash", *ports, "-n", "9", "--seed", "c0ffee",
                        "--out", str(out), "--json")
        assert result.exit_code == 0, result.stderr
        with (out / "samples.csv").open() as stream:
            rows[boards] = list(csv.DictReader(stream))
        serials = [device.info.board_serial for device in devices]
        assert all(row["board"] == serials[int(row["sample_id"]) // 2 % boards] for row in rows[boards])
        assert sorted(json.loads((out / "meta.json").read_text())["boards"]) == sorted(serials)
    assert [{**row, "board": None} for row in rows[1]] == [{**row, "board": None} for row in rows[2]]


def test_run_on_the_virtual_board(fake_repo, fake_toolchain, tiny_elf, tmp_path):
    out = tmp_path / "run"
    result = invoke(*RUN, "-n", "4", "--seed", "c0ffee", "--ops", "sign,keygen", "--out", str(out), "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert {k: document[k] for k in ("schema", "board", "clock_hz", "run_dir")} == {
        "schema": 1, "board": "virtual", "clock_hz": 24_000_000, "run_dir": str(out)}

    seeds = [sample_seed(bytes.fromhex("c0ffee"), i) for i in range(4)]
    keygen, sign = document["results"]
    for result_row, op in ((keygen, Op.KEYGEN), (sign, Op.SIGN)):
        cycles = sorted(fake_cycles(seed, op) for seed in seeds)
        assert result_row["op"] == op.label and result_row["n"] == 4 and result_row["verified"] == 4
        assert result_row["cycles"]["min"] == cycles[0] and result_row["cycles"]["max"] == cycles[-1]
        assert result_row["cycles"]["median"] == (cycles[1] + cycles[2]) / 2
        assert result_row["stack_bytes"] == fake_stack(op)
        assert result_row["code_bytes"] == read_size(tiny_elf[0]).text

    with (out / "samples.csv").open() as stream:
        rows = list(csv.DictReader(stream))
    assert [(r["sample_id"], r["op"]) for r in rows] == [(str(i), op) for i in range(4) for op in ("keygen", "sign")]
    assert rows[3] == {"sample_id": "1", "op": "sign", "seed": seeds[1].hex(),
                       "cycles": str(fake_cycles(seeds[1], Op.SIGN)), "stack_bytes": str(fake_stack(Op.SIGN)),
                       "status": "ok", "verified": "true", "board": virtual_board_serial(0)}

    records = [decode_message(f) for f in FrameDecoder().feed((out / "raw.bin").read_bytes())]
    infos = sum(isinstance(r, Info) for r in records)
    assert infos in (1, 2)  # opening the port flushes its input: the boot INFO may be gone
    assert [type(r).__name__ for r in records[infos:]] == ["Sample", "Sample", "Done"] * 4

    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["samples_completed"] == 4
    assert meta["master_seed"] == "c0ffee"
    assert meta["info"]["scheme"] == "ml-dsa-44" and meta["clock_hz"] == 24_000_000
    assert meta["emulator_stats"]["model_cycles"] > 0


def test_run_is_replayed_by_its_seed_and_prints_a_table(fake_repo, fake_toolchain, tmp_path):
    first = invoke(*RUN, "-n", "3", "--seed", "01", "--out", str(tmp_path / "a"), "--json")
    table = invoke(*RUN, "-n", "3", "--seed", "01", "--out", str(tmp_path / "b"))
    assert first.exit_code == table.exit_code == 0
    assert (tmp_path / "a/samples.csv").read_text() == (tmp_path / "b/samples.csv").read_text()
    for op in ("keygen", "sign", "verify"):
        assert op in table.stdout
    assert f"run saved in {tmp_path / 'b'}" in table.stdout.replace("\n", "")


def test_an_odd_number_of_seed_digits_reads_as_with_a_leading_zero(fake_repo, fake_toolchain, tmp_path):
    short = invoke(*RUN, "-n", "2", "--seed", "7", "--out", str(tmp_path / "a"))
    padded = invoke(*RUN, "-n", "2", "--seed", "07", "--out", str(tmp_path / "b"))
    assert short.exit_code == padded.exit_code == 0, short.stderr
    assert json.loads((tmp_path / "a/meta.json").read_text())["master_seed"] == "07"
    assert (tmp_path / "a/samples.csv").read_text() == (tmp_path / "b/samples.csv").read_text()


def test_default_run_directory_and_random_seed(fake_repo, fake_toolchain):
    result = invoke(*RUN, "-n", "1", "--json")
    assert result.exit_code == 0, result.stderr
    run_dir = json.loads(result.stdout)["run_dir"]
    assert run_dir.startswith(str(fake_repo / "runs")) and run_dir.endswith("-virtual-ml-dsa-44-m4f")
    assert len(json.loads((fake_repo / "runs" / run_dir / "meta.json").read_text())["master_seed"]) == 64


def test_run_refuses_a_non_empty_directory(fake_repo, fake_toolchain, tmp_path):
    (tmp_path / "old.txt").write_text("keep me")
    assert_one_line_error(invoke(*RUN, "--out", str(tmp_path)), "is not empty; choose another --out")


def test_vboard_bench_json(fake_repo, fake_toolchain):
    result = invoke("vboard-bench", "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["scheme"] == "ml-dsa-44" and document["impl"] == "m4f"
    # The fake device's sign cycles: 2,000,000 plus the seed's first two bytes, per sample.
    assert document["model_cycles"] == BENCH_SAMPLES * 2_000_000 + sum(
        int.from_bytes(sample_seed(BENCH_SEED, i)[:2], "little") for i in range(BENCH_SAMPLES))
    assert document["model_cycles_per_second"] > 0
    assert [b["scheme"] for b in document["benchmarks"]] == ["ml-dsa-44"]


def test_a_run_cut_short_keeps_every_sample_received(fake_repo, fake_toolchain, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_DEVICE", '{"answer_commands": 3}')  # HELLO and two samples
    out = tmp_path / "run"
    result = invoke(*RUN, "-n", "5", "--ops", "verify", "--out", str(out))
    # Known from the device (it waits for input), not from a deadline.
    assert_one_line_error(result, "no record of sample 2, and it waits for input")
    with (out / "samples.csv").open() as stream:
        assert [row["sample_id"] for row in csv.DictReader(stream)] == ["0", "1"]
    meta = json.loads((out / "meta.json").read_text())
    assert meta["samples_completed"] == 2 and meta["status"].startswith("failed")


def test_ctrl_c_stops_the_run_and_keeps_everything(fake_repo, fake_toolchain, tmp_path):
    out = tmp_path / "run"
    process = subprocess.Popen([sys.executable, "-m", "pqscope", *RUN, "-n", "1000000", "--out", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120  # only bounds a failure
    while not (out / "samples.csv").exists() or len((out / "samples.csv").read_text().splitlines()) < 10:
        assert time.monotonic() < deadline and process.poll() is None, process.stderr.read()
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=300)  # only bounds a failure: a loaded machine is slow to stop
    assert process.returncode == 130
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "interrupted"
    assert f"interrupted after {meta['samples_completed']} of 1000000 samples" in stderr
    with (out / "samples.csv").open() as stream:
        rows = len(list(csv.DictReader(stream)))
    # The interrupt may land between writing a sample's rows and counting it.
    assert 3 * meta["samples_completed"] <= rows <= 3 * (meta["samples_completed"] + 1)
    assert meta["emulator_stats"]["model_cycles"] > 0  # the emulator was stopped cleanly
