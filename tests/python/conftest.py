import json
import os
import shutil
import subprocess
import sys
import tty
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from fakedevice import FakeDevice, make_info
from pqscope.link.device import DeviceSession
from pqscope.link.transport import open_port
import pytest_session  # noqa: E402

# Each session a temporary directory of its own (see the module).
pytest_configure = pytest_session.pytest_configure
pytest_sessionfinish = pytest_session.pytest_sessionfinish

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

TINY_C = """
const char table[300] = {1};
int counter = 5;
int scratch[100];
static __attribute__((noinline, used)) int twice(int x) { return 2 * x; }
int entry(void) { return twice(table[counter]) + scratch[counter]; }
int entry_alias(void) __attribute__((alias("entry")));
"""

# The virtual board as boards/virtual/board.json describes it (see the host tool's brief).
VIRTUAL_BOARD_JSON = {
    "name": "virtual",
    "description": "pqscope-vboard emulator running stm32f4discovery images",
    "emulates": "stm32f4discovery",
    "runner": "vboard",
}


@pytest.fixture
def pty_device():
    """Starts FakeDevices on ptys; returns (device, slave path) for each call."""
    started = []

    def start(info=None, behaviour=None):
        master, slave = os.openpty()
        tty.setraw(slave)
        # Each board a serial number of its own, as real ones have.
        device = FakeDevice(master, info or make_info(serial=f"{len(started) + 1:024X}"), behaviour).start()
        started.append((device, master, slave))
        return device, os.ttyname(slave)

    yield start
    for device, master, slave in started:
        device.stop()
        os.close(master)
        os.close(slave)


@pytest.fixture
def session_on(pty_device):
    """A DeviceSession on a fresh fake device; returns (session, device). Its deadlines are long
    (a loaded machine may be slow to answer); tests of silence pass short ones."""
    ports = []

    def connect(info=None, behaviour=None, **session_options):
        device, path = pty_device(info, behaviour)
        port = open_port(path, 115200)
        ports.append(port)
        options = {"answer_timeout": 60, "sample_timeout": 60} | session_options
        return DeviceSession(port, **options), device

    yield connect
    for port in ports:
        port.close()


@pytest.fixture(scope="session")
def tiny_elf(tmp_path_factory) -> tuple[Path, str]:
    """A small linked ELF and the GNU size tool that matches it."""
    for compiler, flags, size_tool in (
        ("arm-none-eabi-gcc", ["-mcpu=cortex-m4", "-mthumb"], "arm-none-eabi-size"),
        ("cc", ["-static"], "size"),
    ):
        if shutil.which(compiler):
            break
    else:
        pytest.skip("no C compiler (arm-none-eabi-gcc or cc) to make a test ELF")
    directory = tmp_path_factory.mktemp("elf")
    (directory / "tiny.c").write_text(TINY_C)
    elf = directory / "tiny.elf"
    subprocess.run([compiler, *flags, "-O1", "-nostdlib", "-Wl,-e,entry", "-o", str(elf),
                    str(directory / "tiny.c")], check=True)
    return elf, size_tool


FAKE_CATALOGUE = {"schema": 1, "implementations": [{
    "scheme": "ml-dsa-44", "impl": "m4f", "family": "ML-DSA",
    "source": {"dependency": "pqm4", "path": "crypto_sign/ml-dsa-44/m4f"}, "symmetric": ["fips202"],
    "defines": [], "pk_bytes": 1312, "sk_bytes": 2560, "sig_bytes": 2420, "stack_bytes": 65536, "status": "ok",
}]}


@pytest.fixture
def fake_repo(tmp_path, monkeypatch) -> Path:
    """A repository root with the real Discovery board and catalogue plus the virtual board."""
    root = tmp_path / "repo"
    for relative in ("boards/stm32f4discovery/board.json", "boards/stm32f4discovery/openocd.cfg"):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / relative, root / relative)
    # A fixed one-row catalogue: the real one grows, these tests must not change with it.
    (root / "firmware/schemes").mkdir(parents=True)
    (root / "firmware/schemes/catalogue.json").write_text(json.dumps(FAKE_CATALOGUE))
    (root / "boards/virtual").mkdir()
    (root / "boards/virtual/board.json").write_text(json.dumps(VIRTUAL_BOARD_JSON))
    monkeypatch.setenv("PQSCOPE_ROOT", str(root))
    return root


FAKE_CMAKE = """#!{python}
# Stands in for cmake with the project's presets: logs its arguments and "builds" targets.
import shutil, sys
from pathlib import Path

args = sys.argv[1:]
with open({log!r}, "a") as log:  # paths relative to the repository
    log.write(" ".join(args).replace(str(Path.cwd()) + "/", "") + "\\n")
if {fail!r}:
    print("error: " + {fail!r})
    sys.exit(1)
if "--build" in args:
    build = Path(args[args.index("--build") + 1])
else:
    build = Path(args[args.index("-B") + 1])
if "--build" not in args:
    build.mkdir(parents=True, exist_ok=True)
    (build / "CMakeCache.txt").write_text("")
    (build / "build.ninja").write_text("")
    sys.exit(0)
target = args[args.index("--target") + 1]
if target == "pqscope-vboard":
    output = build / "boards/virtual/emulator/pqscope-vboard"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("#!/bin/sh\\nexec {python} {vboard} \\"$@\\"\\n")
    output.chmod(0o755)
else:
    _, scheme, impl = target.split(".", 2)
    output = build / "images" / scheme / (impl + ".elf")
    output.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy({elf!r}, output)
"""


@pytest.fixture
def fake_toolchain(tmp_path, tiny_elf, monkeypatch):
    """Puts a fake cmake (building tiny_elf images and the fake emulator) first on PATH.

    Returns a function making the fake cmake fail with a message, and the log of its calls.
    """
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "cmake.log"
    log.touch()

    def install(fail: str = "") -> Path:
        cmake = bin_dir / "cmake"
        cmake.write_text(FAKE_CMAKE.format(python=sys.executable, log=str(log), fail=fail,
                                           vboard=HERE / "fake_vboard.py", elf=str(tiny_elf[0])))
        cmake.chmod(0o755)
        return log

    # The build checks that the cross compiler exists; the fake cmake does not need it.
    compiler = bin_dir / "arm-none-eabi-gcc"
    compiler.write_text("#!/bin/sh\nexit 1\n")
    compiler.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    install()
    return install


def without_board(rows: list[dict]) -> list[dict]:
    """CSV rows (DictReader's) but for the column naming the board that measured each."""
    return [{key: value for key, value in row.items() if key != "board"} for row in rows]
