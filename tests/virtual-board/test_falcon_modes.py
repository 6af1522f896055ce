"""The three Falcon images are built in the floating-point mode their names claim, judged from the
linked ELF files alone:

- fpnative: IEEE doubles in C; on the single-precision FPU the compiler calls libgcc's soft-float
  routines (__aeabi_dadd, __aeabi_dmul, ...) and the emulation functions are absent;
- fpemu-c, fpemu-m4: no double arithmetic at all, the emulation functions (falcon_inner_fpr_add,
  ...) instead;
- fpemu-m4: those functions are upstream's Cortex-M4 assembly: the instructions of
  falcon_inner_fpr_add are, mnemonic for mnemonic, the inline assembly of fpr_add in upstream
  fpr.c; in fpemu-c they are not (the compiler's code for the C fallback).

Environment: PQSCOPE_IMAGES (default build/stm32f4discovery/images) and PQSCOPE_FALCON_ROUND3
(the fetched pqm4 Round3 tree; default build/stm32f4discovery/_deps/pqm4_round3-src).
"""

import os
import re
from pathlib import Path

import capstone
import pytest
from elftools.elf.elffile import ELFFile

ROOT = Path(__file__).resolve().parents[2]
IMAGES = Path(os.environ.get("PQSCOPE_IMAGES", ROOT / "build/stm32f4discovery/images"))
ROUND3 = Path(os.environ.get("PQSCOPE_FALCON_ROUND3", ROOT / "build/stm32f4discovery/_deps/pqm4_round3-src"))
SCHEMES = ("falcon-512", "falcon-1024")
SOFT_DOUBLE = {"__aeabi_dadd", "__aeabi_dsub", "__aeabi_dmul", "__aeabi_ddiv"}
EMULATION = {"falcon_inner_fpr_add", "falcon_inner_fpr_mul", "falcon_inner_fpr_div", "falcon_inner_fpr_sqrt"}


def _functions(elf_path: Path) -> dict[str, bytes]:
    """Every function symbol of the image with its code."""
    with elf_path.open("rb") as file:
        elf = ELFFile(file)
        segments = [(s["p_vaddr"], s.data()) for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
        functions = {}
        for symbol in elf.get_section_by_name(".symtab").iter_symbols():
            if symbol["st_info"]["type"] != "STT_FUNC":
                continue
            address = symbol["st_value"] & ~1  # Thumb bit
            for base, data in segments:
                if base <= address < base + len(data):
                    functions[symbol.name] = data[address - base : address - base + symbol["st_size"]]
        return functions


def _mnemonics(code: bytes) -> list[str]:
    disassembler = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB)
    return [re.sub(r"\.[wn]$", "", insn.mnemonic) for insn in disassembler.disasm(code, 0)]


def _upstream_asm_mnemonics(fpr_c: Path, function: str) -> list[str]:
    """The mnemonics of the naked inline-assembly body of `function` in upstream fpr.c."""
    text = fpr_c.read_text()
    match = re.search(rf"__attribute__\(\(naked\)\)\s*fpr\s*{function}\([^)]*\)[^{{]*{{\s*__asm__\s*\((.*?)\);",
                      text, re.S)
    assert match, f"no naked assembly {function} in {fpr_c}"
    mnemonics = []
    for literal in re.findall(r'"((?:[^"\\]|\\.)*)"', match.group(1)):
        line = literal.replace("\\n", "").replace("\\t", " ").split("@")[0].strip()
        if line and not line.endswith(":") and not line.startswith("."):
            mnemonics.append(line.split()[0].lower())
    return mnemonics


@pytest.fixture(scope="module", params=SCHEMES)
def falcon(request):
    scheme = request.param
    modes = {mode: _functions(IMAGES / scheme / f"{mode}.elf") for mode in ("fpnative", "fpemu-c", "fpemu-m4")}
    asm = _upstream_asm_mnemonics(ROUND3 / "crypto_sign" / scheme / "m4-ct/fpr.c", "fpr_add")
    return modes, asm


def test_only_fpnative_uses_double_arithmetic(falcon):
    modes, _asm = falcon
    assert SOFT_DOUBLE <= modes["fpnative"].keys()
    assert not EMULATION & modes["fpnative"].keys()
    for mode in ("fpemu-c", "fpemu-m4"):
        assert not {name for name in modes[mode] if name.startswith("__aeabi_d")}, mode
        assert EMULATION <= modes[mode].keys(), mode


def test_only_fpemu_m4_runs_the_cortex_m4_assembly(falcon):
    modes, asm = falcon
    assert len(asm) > 100  # the whole routine was found, not a fragment
    assert _mnemonics(modes["fpemu-m4"]["falcon_inner_fpr_add"]) == asm
    assert _mnemonics(modes["fpemu-c"]["falcon_inner_fpr_add"]) != asm
