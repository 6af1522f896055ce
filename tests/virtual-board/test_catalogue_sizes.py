"""Every built image reports (INFO) the key and signature sizes its api.h compiled in; they must be
the catalogue's, which the host tool and reports rely on. Slow rows in the slow tier: HELLO runs no
scheme, but their images are built only when asked for (firmware/cmake/catalogue.cmake)."""

import pytest
from elftools.elf.elffile import ELFFile

from conftest import discovery_rows, image

ROWS = [pytest.param(row, id=f"{row['scheme']}/{row['impl']}", marks=pytest.mark.slow if row.get("slow") else ())
        for row in discovery_rows()]


@pytest.mark.parametrize("row", ROWS)
def test_image_sizes_match_the_catalogue(row, image_session):
    info = image_session(row["scheme"], row["impl"]).hello()
    assert (info.scheme, info.impl) == (row["scheme"], row["impl"])
    assert (info.pk_bytes, info.sk_bytes, info.sig_bytes) == (row["pk_bytes"], row["sk_bytes"], row["sig_bytes"])
    assert info.stack_budget_bytes >= row["stack_bytes"]


SRAM1_END, SRAM_END = 0x2001C000, 0x20020000  # STM32F407: SRAM1 112 KiB, then SRAM2 16 KiB


def layout_symbols(elf) -> dict[str, int]:
    """The linker's global symbols (an image may also have local ones of the same name, e.g. a
    label `end` in some assembly)."""
    with elf.open("rb") as stream:
        symbols = ELFFile(stream).get_section_by_name(".symtab")
        return {name: next(s["st_value"] for s in symbols.get_symbol_by_name(name)
                           if s["st_info"]["bind"] == "STB_GLOBAL")
                for name in ("_stack", "end", "__pqscope_stack_reserve")}


@pytest.mark.parametrize("row", ROWS)
def test_stacks_stay_in_sram1_unless_the_image_needs_sram2(row):
    """As pqm4 links Discovery images (boards/stm32f4discovery/stm32f407vg.ld): SRAM2 only for an
    image whose data and stack need do not fit in SRAM1 (pqm4's case: ML-DSA-87 m4f)."""
    found = layout_symbols(image(row["scheme"], row["impl"]))
    fits_sram1 = found["end"] + found["__pqscope_stack_reserve"] <= SRAM1_END
    assert found["_stack"] == (SRAM1_END if fits_sram1 else SRAM_END)
    if (row["scheme"], row["impl"]) in (("ml-dsa-87", "m4f"), ("ml-dsa-44", "m4f")):
        assert fits_sram1 == (row["scheme"] == "ml-dsa-44")
