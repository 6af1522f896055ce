import shutil
import subprocess

import pytest

from conftest import REPO
from pqscope.project.boards import get_board, load_boards
from pqscope.project.build import (BuildError, ImageSize, build_emulator, build_image, check_fits, code_digest,
                           read_size)
from pqscope.project.catalogue import find_implementation, load_catalogue
from pqscope.project.errors import PqscopeError, UnknownNameError
from pqscope.targets.kinds import open_target
from pqscope.project.toolchain import Toolchain


def test_sizes_match_gnu_size(tiny_elf):
    elf, size_tool = tiny_elf
    if shutil.which(size_tool) is None:
        pytest.skip(f"{size_tool} not installed")
    output = subprocess.run([size_tool, str(elf)], capture_output=True, text=True, check=True).stdout
    text, data, bss = map(int, output.splitlines()[1].split()[:3])
    assert read_size(elf) == ImageSize(text, data, bss)
    # The test program: 300 bytes of constants, one initialised int, 100 zeroed ints.
    assert text >= 300 and data >= 4 and bss >= 400


def test_the_harness_bulk_section_is_counted_apart(tiny_elf, tmp_path):
    elf, size_tool = tiny_elf
    compiler = "arm-none-eabi-gcc" if size_tool.startswith("arm-") else "cc"
    if shutil.which(size_tool) is None:
        pytest.skip(f"{size_tool} not installed")
    source = tmp_path / "bulk.c"
    source.write_text('char pool[4096] __attribute__((section(".pqscope_bulk")));\n'
                      "char *entry(void) { return pool; }\n")
    with_bulk = tmp_path / "bulk.elf"
    flags = ["-mcpu=cortex-m4", "-mthumb"] if compiler.startswith("arm-") else ["-static"]
    subprocess.run([compiler, *flags, "-O1", "-nostdlib", "-Wl,-e,entry", "-o", str(with_bulk), str(source)],
                   check=True)
    output = subprocess.run([size_tool, str(with_bulk)], capture_output=True, text=True, check=True).stdout
    text, data, bss = map(int, output.splitlines()[1].split()[:3])
    size = read_size(with_bulk)
    assert size.bulk == 4096
    # GNU size counts it (as data or bss, by its section type); pqscope does not.
    assert size.text == text and size.data + size.bss + size.bulk == data + bss


def _patch_symbol(elf, name: str, offset: int, data: bytes):
    """Overwrites bytes of symbol `name` in the ELF file, `offset` bytes into it."""
    from elftools.elf.elffile import ELFFile
    with elf.open("rb") as stream:
        image = ELFFile(stream)
        symbol = image.get_section_by_name(".symtab").get_symbol_by_name(name)[0]
        section = image.get_section(symbol["st_shndx"])
        position = section["sh_offset"] + symbol["st_value"] - section["sh_addr"] + offset
    content = bytearray(elf.read_bytes())
    content[position:position + len(data)] = data
    elf.write_bytes(bytes(content))


def test_the_code_digest_leaves_out_the_build_id_only(tiny_elf, tmp_path):
    elf, size_tool = tiny_elf
    compiler = "arm-none-eabi-gcc" if size_tool.startswith("arm-") else "cc"
    source = tmp_path / "id.c"
    # As the firmware's linker script does, the build id lands in an executable section.
    source.write_text('const char pqs_build_id[48] __attribute__((section(".text.id"))) = "0123abcd";\n'
                      "int entry(int x) { return pqs_build_id[x] * 3 + 1; }\n")
    built = tmp_path / "id.elf"
    flags = ["-mcpu=cortex-m4", "-mthumb"] if compiler.startswith("arm-") else ["-static"]
    subprocess.run([compiler, *flags, "-O1", "-nostdlib", "-Wl,-e,entry", "-o", str(built), str(source)],
                   check=True)
    original = code_digest(built)
    _patch_symbol(built, "pqs_build_id", 0, b"4567ef01-dirty")
    assert code_digest(built) == original
    _patch_symbol(built, "entry", 0, b"\xff")
    assert code_digest(built) != original


def test_reading_a_non_elf_is_a_build_error(tmp_path):
    bogus = tmp_path / "bogus.elf"
    bogus.write_bytes(b"not an elf at all")
    with pytest.raises(BuildError, match="cannot read .*bogus.elf"):
        read_size(bogus)


def test_fit_check_counts_flash_and_ram_like_the_board_json():
    board = get_board(REPO, "stm32f4discovery")
    check_fits(board, REPO / "x.elf", ImageSize(1_048_000, 576, 0), stack_bytes=0)
    too_big = r"needs 1048577 bytes of flash \(text\+data\), board stm32f4discovery has 1048576"
    with pytest.raises(BuildError, match=too_big):
        check_fits(board, REPO / "x.elf", ImageSize(1_048_000, 577, 0), stack_bytes=0)
    check_fits(board, REPO / "x.elf", ImageSize(10, 1000, 64_000), stack_bytes=131_072 - 65_000)
    with pytest.raises(BuildError, match=r"needs 131073 bytes of RAM \(data\+bss\+66073 bytes of stack\)"):
        check_fits(board, REPO / "x.elf", ImageSize(10, 1000, 64_000), stack_bytes=131_072 - 64_999)


def test_virtual_board_inherits_the_emulated_board(fake_repo):
    boards = load_boards(fake_repo)
    virtual, discovery = boards["virtual"], boards["stm32f4discovery"]
    assert open_target(fake_repo, virtual).kind == "virtual" and open_target(fake_repo, discovery).kind == "serial"
    assert (virtual.flash_bytes, virtual.ram_bytes, virtual.clock_hz) == (1_048_576, 131_072, 24_000_000)
    assert virtual.cmake_preset == "stm32f4discovery"
    assert virtual.firmware_names == {"virtual", "stm32f4discovery"}


def test_a_clock_brings_its_own_build_and_wait_states(fake_repo):
    virtual = get_board(fake_repo, "virtual")
    assert (virtual.clock.name, virtual.clock.flash_wait_states) == ("benchmark", 0)
    fast = virtual.at_clock("fast")
    assert (fast.clock_hz, fast.clock.flash_wait_states, fast.cmake_preset) == (
        168_000_000, 5, "stm32f4discovery-fast")
    assert fast.clock.describe() == "168 MHz, 5 flash wait states" and fast.name == "virtual"
    with pytest.raises(UnknownNameError, match="unknown clock of board virtual 'slow'; valid: benchmark, fast"):
        virtual.at_clock("slow")


def test_unknown_names_list_the_valid_ones(fake_repo):
    with pytest.raises(UnknownNameError, match="unknown board 'nucleo'; valid: stm32f4discovery, virtual"):
        get_board(fake_repo, "nucleo")
    catalogue = load_catalogue(fake_repo)
    with pytest.raises(UnknownNameError, match="unknown scheme 'rsa'; valid: ml-dsa-44"):
        find_implementation(catalogue, "rsa", "m4f")
    with pytest.raises(UnknownNameError, match="unknown impl 'ref' of scheme ml-dsa-44; valid: m4f"):
        find_implementation(catalogue, "ml-dsa-44", "ref")


def test_broken_metadata_names_the_file(fake_repo):
    (fake_repo / "boards/virtual/board.json").write_text("{")
    with pytest.raises(PqscopeError, match="boards/virtual/board.json is not valid JSON"):
        load_boards(fake_repo)


def test_build_configures_once_then_builds_the_image_target(fake_repo, fake_toolchain, tiny_elf):
    log = fake_toolchain()
    board = get_board(fake_repo, "virtual")
    first = build_image(fake_repo, board, "ml-dsa-44", "m4f")
    again = build_image(fake_repo, board, "ml-dsa-44", "m4f")
    assert first == again == fake_repo / "build/stm32f4discovery/images/ml-dsa-44/m4f.elf"
    assert log.read_text().splitlines() == [
        "--preset stm32f4discovery -B build/stm32f4discovery -DPQSCOPE_COMPILER=gcc12 -DPQSCOPE_OPT=",
        "--build build/stm32f4discovery --target image.ml-dsa-44.m4f",
        "--build build/stm32f4discovery --target image.ml-dsa-44.m4f",
    ]
    assert build_emulator(fake_repo) == fake_repo / "build/host/boards/virtual/emulator/pqscope-vboard"


def test_a_tree_whose_configure_step_failed_is_configured_again(fake_repo, fake_toolchain):
    log = fake_toolchain()
    board = get_board(fake_repo, "virtual")
    # What a configure step that stopped at an error leaves: the cache, no build.ninja.
    (fake_repo / "build/stm32f4discovery").mkdir(parents=True)
    (fake_repo / "build/stm32f4discovery/CMakeCache.txt").write_text("")
    build_image(fake_repo, board, "ml-dsa-44", "m4f")
    assert log.read_text().splitlines() == [
        "--preset stm32f4discovery -B build/stm32f4discovery -DPQSCOPE_COMPILER=gcc12 -DPQSCOPE_OPT=",
        "--build build/stm32f4discovery --target image.ml-dsa-44.m4f",
    ]


def test_another_toolchain_builds_in_a_tree_of_its_own(fake_repo, fake_toolchain):
    log = fake_toolchain()
    board = get_board(fake_repo, "virtual").built_with(Toolchain.parse("clang", "Os"))
    assert build_image(fake_repo, board, "ml-dsa-44", "m4f") == (
        fake_repo / "build/stm32f4discovery.clang.Os/images/ml-dsa-44/m4f.elf")
    assert log.read_text().splitlines() == [
        "--preset stm32f4discovery -B build/stm32f4discovery.clang.Os -DPQSCOPE_COMPILER=clang -DPQSCOPE_OPT=-Os",
        "--build build/stm32f4discovery.clang.Os --target image.ml-dsa-44.m4f",
    ]


def test_unknown_compilers_and_levels_are_refused():
    with pytest.raises(PqscopeError, match="unknown compiler 'icc'; valid: clang, gcc11, gcc12"):
        Toolchain.parse("icc", None)
    with pytest.raises(PqscopeError, match="unknown optimisation level '-O1'; did you mean -O0 or -O2 or -O3 or -Os[?]"):
        Toolchain.parse(None, "O1")


def test_failed_build_carries_its_log(fake_repo, fake_toolchain):
    fake_toolchain(fail="ninja: build stopped")
    with pytest.raises(BuildError, match="`cmake --preset stm32f4discovery -B build/stm32f4discovery "
                                         "-DPQSCOPE_COMPILER=gcc12 -DPQSCOPE_OPT=` failed with exit code 1") as caught:
        build_image(fake_repo, get_board(fake_repo, "virtual"), "ml-dsa-44", "m4f")
    assert "ninja: build stopped" in caught.value.details


def test_missing_tools_name_the_setup_command(fake_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BuildError, match=r"cmake not found on PATH; run host-tools/setup.sh"):
        build_emulator(fake_repo)
    (tmp_path / "cmake").write_text("#!/bin/sh\n")
    (tmp_path / "cmake").chmod(0o755)
    with pytest.raises(BuildError, match=r"arm-none-eabi-gcc not found on PATH; run host-tools/setup.sh"):
        build_image(fake_repo, get_board(fake_repo, "stm32f4discovery"), "ml-dsa-44", "m4f")


def test_two_builds_of_one_tree_run_one_after_the_other(tmp_path, monkeypatch):
    import os
    import sys
    import threading

    from pqscope.project.build import HOST_TREE, _build

    log = tmp_path / "cmake.log"
    cmake = tmp_path / "bin/cmake"
    cmake.parent.mkdir()
    cmake.write_text(f"#!{sys.executable}\nimport time\nopen({str(log)!r}, 'a').write('start\\n')\n"
                     f"time.sleep(0.3)\nopen({str(log)!r}, 'a').write('end\\n')\n")
    cmake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{cmake.parent}{os.pathsep}{os.environ['PATH']}")
    (tmp_path / "build/host").mkdir(parents=True)
    (tmp_path / "build/host/CMakeCache.txt").write_text("")
    (tmp_path / "build/host/build.ninja").write_text("")
    builds = [threading.Thread(target=_build, args=(tmp_path, HOST_TREE, "pqscope-vboard")) for _ in range(2)]
    for build in builds:
        build.start()
    for build in builds:
        build.join()
    assert log.read_text().split() == ["start", "end", "start", "end"]


def test_a_resumed_run_builds_with_the_toolchain_it_was_built_with(fake_repo):
    from pqscope.results.runmeta import RunMeta
    from pqscope.measure.measurement import resumed_board

    clang = RunMeta(kind="run", board="virtual", toolchain={"compiler": "clang", "opt": "-Os"})
    assert resumed_board(fake_repo, clang).build_tree == "stm32f4discovery.clang.Os"
    # Runs from before toolchains were recorded were built by the default one.
    assert resumed_board(fake_repo, RunMeta(kind="run", board="virtual")).build_tree == "stm32f4discovery"
