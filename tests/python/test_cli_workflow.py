"""The workflow commands around a run: flash (with a stand-in OpenOCD), report, the default suite."""

import json
import os
import sys

import pytest
from click.testing import CliRunner

from pqscope.cli import cli
from pqscope.results.runmeta import RunMeta
from pqscope.measure.measurement import resumed_implementation

RUN = ("run", "--scheme", "ml-dsa-44", "--impl", "m4f")
FLASH = ("flash", "--board", "stm32f4discovery", "--scheme", "ml-dsa-44", "--impl", "m4f")


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def fake_openocd(tmp_path, monkeypatch):
    """An `openocd` that logs its arguments (a JSON list per call) and exits with the given code and message."""
    bin_dir = tmp_path / "openocd-bin"
    bin_dir.mkdir()
    log = tmp_path / "openocd.log"

    def install(exit_code: int = 0, message: str = "") -> object:
        script = bin_dir / "openocd"
        script.write_text(f"#!{sys.executable}\nimport json, sys\nopen({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
                          f"print({message!r}, file=sys.stderr)\nsys.exit({exit_code})\n")
        script.chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        return log

    return install


def test_flash_programs_verifies_and_resets_with_the_board_config(fake_repo, fake_toolchain, fake_openocd):
    log = fake_openocd()
    result = invoke(*FLASH)
    assert result.exit_code == 0, result.stderr
    (args,) = map(json.loads, log.read_text().splitlines())
    elf = fake_repo / "build/stm32f4discovery/images/ml-dsa-44/m4f.elf"
    assert args == ["-f", str(fake_repo / "boards/stm32f4discovery/openocd.cfg"),
                    "-c", f"program {elf.as_posix()} verify reset exit"]
    assert f"flashed {elf}" in result.stdout


def test_boards_of_a_sharded_test_are_each_flashed_through_their_own_probe(fake_repo, fake_toolchain, fake_openocd,
                                                                          pty_device, tmp_path):
    log = fake_openocd()
    ports = [arg for _ in range(2) for arg in ("--port", pty_device()[1])]
    result = invoke("ct", "--board", "stm32f4discovery", "--scheme", "ml-dsa-44", "--impl", "m4f", "-n", "20", *ports,
                    "--no-replay", "--adapter-serial", "066DFF", "--adapter-serial", "0670FF", "--out", str(tmp_path / "ct"))
    assert result.exit_code == 5, result.stderr  # inconclusive: 20 signatures are too few for no-leak
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [call[call.index("-c") + 1] for call in calls] == ["adapter serial 066DFF", "adapter serial 0670FF"]


@pytest.mark.parametrize(
    ("exit_code", "message", "expected"),
    [
        (1, "Error: open failed", "no stm32f4discovery found: connect the board's ST-LINK USB port"),
        (1, "Error: checksum mismatch - attempting binary compare", "openocd failed to flash m4f.elf onto"),
    ],
)
def test_flash_failures_are_explained(fake_repo, fake_toolchain, fake_openocd, exit_code, message, expected):
    fake_openocd(exit_code, message)
    result = invoke(*FLASH)
    assert result.exit_code != 0 and "Traceback" not in result.stderr
    assert expected in result.stderr.splitlines()[-1]


def test_flash_without_openocd_points_to_setup(fake_repo, fake_toolchain, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # only the fake cmake and compiler
    result = invoke(*FLASH)
    assert result.exit_code != 0
    assert "openocd not found on PATH; run host-tools/setup.sh" in result.stderr.splitlines()[-1]


def test_the_virtual_board_is_not_flashed(fake_repo, fake_toolchain):
    result = invoke("flash", "--board", "virtual", "--scheme", "ml-dsa-44", "--impl", "m4f")
    assert "is emulated: it loads the image itself" in result.stderr.splitlines()[-1]


def test_report_formats_agree_with_the_run(fake_repo, fake_toolchain, tmp_path):
    out = tmp_path / "run"
    run = invoke(*RUN, "-n", "5", "--seed", "02", "--out", str(out), "--json")
    assert run.exit_code == 0, run.stderr
    measured = json.loads(run.stdout)["results"]

    reported = json.loads(invoke("report", str(out), "--format", "json").stdout)["results"]
    assert reported == measured

    markdown = invoke("report", str(out), "--format", "md").stdout
    assert markdown.startswith("# pqscope on virtual at 24 MHz")
    # Each operation in both tables: its cycles, then its time and memory.
    assert sum(line.startswith("| ml-dsa-44 m4f |") for line in markdown.splitlines()) == 2 * 3

    csv_lines = invoke("report", str(out), "--format", "csv").stdout.splitlines()
    assert csv_lines[0].startswith("scheme,impl,op,n,verified,min,p05,median")
    assert len(csv_lines) == 4

    page = invoke("report", str(out), "--format", "html").stdout
    # Two figures and two tables of results (each a header and three operations), then the TLS
    # budget's table (header and one row) and plot (test_tls.py).
    assert page.count("<img") == 3 and page.count("<tr>") == 2 * 4 + 2 and "data:image/png;base64," in page
    # `run` wrote the same reports beside the samples.
    assert (out / "report.html").read_text() == page
    assert (out / "report.md").read_text() == markdown


def test_report_of_a_directory_without_runs_is_one_line(tmp_path):
    result = invoke("report", str(tmp_path))
    assert result.exit_code != 0
    assert "is not a run directory (no meta.json) and holds none" in result.stderr.splitlines()[-1]


def test_default_suite_measures_every_suite_row_into_one_report(fake_repo, fake_toolchain, tmp_path):
    out = tmp_path / "suite"
    # The fake emulator has no exact check: the suite's samples alone (tests/python/test_main_job.py has the rest).
    result = invoke("run", "-n", "2", "--seed", "03", "--out", str(out), "--ct-n", "0", "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["run_dir"] == str(out)
    # The fake catalogue holds one suite implementation: it gets its own run directory.
    assert {(r["scheme"], r["impl"]) for r in document["results"]} == {("ml-dsa-44", "m4f")}
    assert (out / "ml-dsa-44-m4f/samples.csv").is_file() and (out / "report.html").is_file()


@pytest.mark.parametrize(
    ("linker_says", "expected"),
    [
        ("ld: image too big for RAM: .data + .bss + the scheme's stack need exceed the 128 KiB SRAM",
         "image.ml-dsa-44.m4f: image too big for RAM: its static data plus the stack it needs"),
        ("ld: m4f.elf section `.text' will not fit in region `rom'\nld: region `rom' overflowed by 12 bytes",
         "image.ml-dsa-44.m4f: image too big for flash"),
    ],
)
def test_an_image_that_does_not_fit_is_one_line(fake_repo, fake_toolchain, linker_says, expected):
    (fake_repo / "build/stm32f4discovery").mkdir(parents=True)
    (fake_repo / "build/stm32f4discovery/CMakeCache.txt").write_text("")  # configured: the build fails
    (fake_repo / "build/stm32f4discovery/build.ninja").write_text("")
    fake_toolchain(fail=linker_says)
    result = invoke("build", "--board", "stm32f4discovery", "--scheme", "ml-dsa-44", "--impl", "m4f")
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"Error: {expected}")


def test_build_of_your_own_implementation_configures_a_tree_of_its_own(fake_repo, fake_toolchain, tmp_path):
    log = fake_toolchain()
    own = tmp_path / "crypto_sign/my-scheme/opt"
    own.mkdir(parents=True)
    (own / "api.h").write_text("#define CRYPTO_BYTES 1\n")
    result = invoke("build", "--board", "stm32f4discovery", "--impl-dir", str(own), "--json")
    assert result.exit_code == 0, result.stderr
    (image,) = json.loads(result.stdout)["images"]
    assert (image["scheme"], image["impl"]) == ("my-scheme", "opt")  # named as pqm4 lays them out
    assert image["elf"] == str(fake_repo / "build/stm32f4discovery.impl-dir/images/my-scheme/opt.elf")
    calls = log.read_text().splitlines()
    # The board's tree (build/stm32f4discovery), which a kill could leave naming the directory, is not touched.
    configure = "--preset stm32f4discovery -B build/stm32f4discovery.impl-dir -DPQSCOPE_COMPILER=gcc12 -DPQSCOPE_OPT="
    assert calls == [
        f"{configure} -DPQSCOPE_IMPL_DIR={own} -DPQSCOPE_IMPL_SCHEME=my-scheme "
        "-DPQSCOPE_IMPL_NAME=opt -DPQSCOPE_IMPL_STACK_BYTES=16384 -DPQSCOPE_EXTRA_PROBES= -DPQSCOPE_IMPL_KEY_SLOTS=",
        "--build build/stm32f4discovery.impl-dir --target image.my-scheme.opt",
    ]


def test_a_directory_without_the_signature_api_is_refused(fake_repo, fake_toolchain, tmp_path):
    result = invoke("run", "--impl-dir", str(tmp_path), "--scheme", "x", "--impl", "y")
    assert result.exit_code != 0
    assert result.stderr.splitlines()[-1] == f"Error: {tmp_path} has no api.h: not a pqm4/NIST signature implementation"


def test_a_run_records_the_compiler_flags_and_dependency_pins(fake_repo, fake_toolchain, tmp_path):
    build_info = {"compiler": "GNU 12.2.1", "c_flags": "-mcpu=cortex-m4 -O3",
                  "dependencies": {"pqm4": {"url": "https://github.com/mupq/pqm4", "pin": "cc2c1b9"}}}
    (fake_repo / "build/stm32f4discovery").mkdir(parents=True)
    (fake_repo / "build/stm32f4discovery/CMakeCache.txt").write_text("")
    (fake_repo / "build/stm32f4discovery/build.ninja").write_text("")
    (fake_repo / "build/stm32f4discovery/build-info.json").write_text(json.dumps(build_info))
    result = invoke(*RUN, "-n", "1", "--seed", "01", "--out", str(tmp_path / "run"))
    assert result.exit_code == 0, result.stderr
    assert json.loads((tmp_path / "run/meta.json").read_text())["build"] == build_info


def test_your_own_implementation_gets_the_stack_it_asks_for(fake_repo, fake_toolchain, tmp_path):
    log = fake_toolchain()
    own = tmp_path / "crypto_sign/my-scheme/opt"
    own.mkdir(parents=True)
    (own / "api.h").write_text("#define CRYPTO_BYTES 1\n")
    result = invoke("build", "--board", "stm32f4discovery", "--impl-dir", str(own), "--stack-bytes", "70000", "--json")
    assert result.exit_code == 0, result.stderr
    (image,) = json.loads(result.stdout)["images"]
    assert image["stack_bytes"] == 70000
    assert "-DPQSCOPE_IMPL_STACK_BYTES=70000" in log.read_text().splitlines()[0]


def test_stack_bytes_is_refused_for_a_catalogue_row(fake_repo):
    result = invoke("build", "--board", "stm32f4discovery", "--scheme", "ml-dsa-44", "--impl", "m4f",
                    "--stack-bytes", "70000")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith("Error: --stack-bytes sizes the stack of your own implementation")


def test_a_resumed_run_of_your_own_implementation_keeps_its_stack(tmp_path):
    meta = RunMeta(kind="run", scheme="my-scheme", impl="opt", impl_dir=str(tmp_path), impl_stack_bytes=70000)
    implementation = resumed_implementation(tmp_path, meta)
    assert (implementation.directory, implementation.stack_bytes) == (tmp_path.resolve(), 70000)
