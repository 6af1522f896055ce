"""The compiler wrappers of the board's images (firmware/cmake/compilers), with stand-in compilers
on PATH: what each runs, and how."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLANG = ROOT / "firmware/cmake/compilers/clang-thumbv7em"
ADDR_NO_RANDOMIZE = 0x0040000  # linux/personality.h


def _stand_in(directory: Path, name: str) -> None:
    """A compiler that writes its arguments and its process's personality to <name>.log."""
    script = directory / name
    script.write_text(f'#!/bin/sh\n{{ echo "$@"; cat /proc/self/personality; }} > "{directory}/{name}.log"\n')
    script.chmod(0o755)


def _run_clang_wrapper(tmp_path: Path, *arguments: str) -> None:
    for name in ("clang", "arm-none-eabi-gcc"):
        _stand_in(tmp_path, name)
    subprocess.run([str(CLANG), *arguments], check=True, env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"})


def test_clang_compiles_c_for_the_m4_without_address_randomisation(tmp_path):
    """clang 14's code depends on where its own data lands, which randomisation changes per run: the
    wrapper turns it off, so that the same command makes the same object (a matrix cell's results
    are its code's)."""
    _run_clang_wrapper(tmp_path, "-O3", "-c", "sha2.c", "-o", "sha2.o")
    arguments, personality = (tmp_path / "clang.log").read_text().splitlines()
    assert arguments.startswith("--target=thumbv7em-none-eabihf -fshort-enums")
    assert arguments.endswith("-O3 -c sha2.c -o sha2.o")
    assert int(personality, 16) & ADDR_NO_RANDOMIZE
    assert not (tmp_path / "arm-none-eabi-gcc.log").exists()


def test_everything_but_compiling_c_stays_arm_none_eabi_gcc(tmp_path):
    _run_clang_wrapper(tmp_path, "-mcpu=cortex-m4", "start.o", "-o", "image.elf")
    arguments, personality = (tmp_path / "arm-none-eabi-gcc.log").read_text().splitlines()
    assert arguments == "-mcpu=cortex-m4 start.o -o image.elf"
    assert not int(personality, 16) & ADDR_NO_RANDOMIZE
    assert not (tmp_path / "clang.log").exists()
