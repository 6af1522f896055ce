"""pqm4 (its pinned commit) built by its own Makefile for a platform (stm32f4discovery, or
nucleo-l4r5zi) and driven by its own unmodified host scripts (test.py, testvectors.py,
benchmarks.py) against that board's virtual twin, which `pqscope vboard-serve --board` serves as a
serial device and host-tools/flashers/st-flash (the Discovery's) or openocd (the Nucleo's) flashes
as pqm4's platform layer flashes the real board. The scripts write into the tree they run in (obj/,
elf/, bin/, benchmarks/, mupq.log): each use works on a copy of it.

Environment: PQSCOPE_PQM4 (pqm4's tree as the board build fetched it, with its submodules)."""

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PQM4 = Path(os.environ.get("PQSCOPE_PQM4", ROOT / "build/stm32f4discovery/_deps/pqm4-src"))
FLASHERS = ROOT / "host-tools/flashers"
# pqm4's platform -> the virtual board that emulates it
VIRTUAL_BOARDS = {"stm32f4discovery": "virtual", "nucleo-l4r5zi": "nucleo-l4r5zi-virtual"}
SERVE_START_SECONDS = 600  # it builds the emulator first if it must
OUTCOME = re.compile(r"(\S+) - (\S+) (SUCCESSFUL|FAILED)")
SPEED = re.compile(r"(keypair|sign|verify) cycles:\s*(\d+)")


# Where pqm4's scripts find a scheme's implementations (interface.py's scheme_folders).
SCHEME_FOLDERS = ("crypto_sign", "mupq/crypto_sign", "mupq/pqclean/crypto_sign")


def pqm4_tree(directory: Path, *, only: dict[str, tuple[str, ...]] | None = None) -> Path:
    """A copy of pqm4's tree to run its scripts in; with `only` ({scheme: implementations}), those
    schemes' other implementations left out of it (the scripts select schemes, not implementations,
    and compile each one they find three times)."""
    if not (PQM4 / "test.py").exists():
        raise FileNotFoundError(f"no pqm4 tree at {PQM4}: configure the stm32f4discovery preset first")
    tree = directory / "pqm4"
    shutil.copytree(PQM4, tree, symlinks=True)
    for scheme, kept in (only or {}).items():
        for folder in SCHEME_FOLDERS:
            for implementation in (tree / folder / scheme).glob("*"):
                if implementation.is_dir() and implementation.name not in kept:
                    shutil.rmtree(implementation)
    return tree


@contextlib.contextmanager
def served_board(directory: Path, *options: str, platform: str = "stm32f4discovery") -> Iterator[Path]:
    """The virtual twin of pqm4's `platform` served at a link in `directory` for as long as the context lasts."""
    link = directory / "vboard"
    server = subprocess.Popen([sys.executable, "-m", "pqscope", "vboard-serve", "--link", str(link),
                               "--board", VIRTUAL_BOARDS[platform], *options],
                              env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + SERVE_START_SECONDS
        while not link.with_name(link.name + ".flash").exists():
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"pqscope vboard-serve did not start: {server.stderr.read()}")
            time.sleep(0.1)
        yield link
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def run_script(tree: Path, link: Path, script: str, *args: str, platform: str = "stm32f4discovery",
               timeout: float = 3600) -> subprocess.CompletedProcess:
    """pqm4's `script` for `platform`, its UART the served board, its flasher (st-flash, openocd) ours."""
    env = {**os.environ, "PATH": f"{FLASHERS}:{os.environ['PATH']}", "MUPQ_ST_FLASH_ARGS": f"--serial {link}",
           "PQSCOPE_VBOARD": str(link)}
    return subprocess.run([sys.executable, script, "-p", platform, "-u", str(link), *args], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=timeout)


def outcomes(result: subprocess.CompletedProcess) -> dict[str, str]:
    """What the script said of each implementation it ran: {"ml-dsa-44/m4f": "SUCCESSFUL", ...}."""
    text = (result.stdout + result.stderr).replace("\r", "\n")
    return {f"{scheme}/{impl}": outcome for scheme, impl, outcome in OUTCOME.findall(text)}


def speed_results(tree: Path, scheme: str, impl: str) -> list[dict[str, int]]:
    """benchmarks.py's speed results of an implementation: one {op: cycles} per iteration."""
    directory = tree / "benchmarks/speed/crypto_sign" / scheme / impl
    return [{op: int(cycles) for op, cycles in SPEED.findall(path.read_text())}
            for path in sorted(directory.iterdir())]
