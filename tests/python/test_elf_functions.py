"""The host tool's function extents (pqscope.project.elf.Symbolizer) on an assembled image:
assembly functions declared without .size, as pqm4's Keccak and NTTs are, have the bytes up to
the next function or their section's end, as the emulator's ELF reader gives them
(boards/virtual/emulator/elf_test.c); a sizeless label inside a sized function stays its
function's."""

import shutil
import subprocess

import pytest

from pqscope.project.elf import Symbolizer, read_sections, read_symbols

ASSEMBLY = """\
    .syntax unified
    .thumb
    .text
    .global entry
    .type entry, %function
entry:
    bx lr
    .size entry, .-entry
    .global permute
    .type permute, %function
permute:
    nop
    nop
    bx lr
    .global body
    .type body, %function
body:
    nop
    .type label, %function
label:
    nop
    bx lr
    .size body, .-body
    .global tail
    .type tail, %function
tail:
    nop
    bx lr
"""


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    if not shutil.which("arm-none-eabi-gcc"):
        pytest.skip("skipped: no arm-none-eabi-gcc to assemble the test image")
    directory = tmp_path_factory.mktemp("asm")
    (directory / "functions.S").write_text(ASSEMBLY)
    elf = directory / "functions.elf"
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-Wl,-e,entry", "-o", str(elf),
                    str(directory / "functions.S")], check=True)
    return elf


def test_sizeless_functions_reach_the_next_function_or_their_sections_end(image):
    symbols = {symbol.name: symbol for symbol in read_symbols(image) if symbol.function}
    assert symbols["permute"].size == symbols["tail"].size == symbols["label"].size == 0  # as assembled
    (text,) = [section for section in read_sections(image) if section.name == ".text"]
    names = Symbolizer(image)
    permute, body, tail = symbols["permute"].address, symbols["body"].address, symbols["tail"].address
    assert [names.function(address) for address in range(permute, body, 2)] == ["permute"] * ((body - permute) // 2)
    assert names.function(symbols["label"].address) == "body"
    assert names.function(text.address + text.size - 2) == "tail" and names.function(tail) == "tail"
    assert names.function(text.address + text.size) is None
