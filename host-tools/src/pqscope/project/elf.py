"""Reading ELF images: the one module that opens them (with pyelftools), for their sections, their
symbols, and the function and source line of code addresses (DWARF)."""

import bisect
import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from .errors import PqscopeError


class ElfError(PqscopeError):
    """An image that cannot be read: missing, damaged, or not an ELF file."""


@dataclass(frozen=True)
class Section:
    name: str
    address: int
    size: int
    allocated: bool  # takes memory on the board (SHF_ALLOC); the others are for tools (symbols, DWARF)
    executable: bool
    writable: bool
    in_file: bool  # its bytes are in the file (not SHT_NOBITS, as .bss, which starts zeroed)


@dataclass(frozen=True)
class Symbol:
    name: str
    address: int  # a function's without the Thumb bit (bit 0 of st_value marks Thumb code, not an address)
    size: int
    function: bool  # STT_FUNC
    binding: str  # STB_GLOBAL, STB_WEAK or STB_LOCAL
    section: int | None  # its section's index; None for an absolute, common or undefined symbol

    @property
    def span(self) -> tuple[int, int]:
        """[start, end) of its bytes."""
        return self.address, self.address + self.size


def read_sections(elf: Path) -> list[Section]:
    """The image's sections, in the order of its section table."""
    with _opened(elf) as image:
        return [_section(section) for section in image.iter_sections()]


def read_code(elf: Path) -> list[tuple[Section, bytes]]:
    """The image's executable sections that have bytes in the file, with their bytes."""
    with _opened(elf) as image:
        sections = [(_section(section), section) for section in image.iter_sections()]
        return [(section, raw.data()) for section, raw in sections if section.executable and section.in_file]


def read_symbols(elf: Path) -> list[Symbol]:
    """The image's symbol table (.symtab) in its order; none without one."""
    with _opened(elf) as image:
        return _symbols(image)


@contextlib.contextmanager
def _opened(elf: Path) -> Iterator[ELFFile]:
    """The ELF file open for reading: failing to open it, or to read it (pyelftools reads as it is
    asked), is ElfError's "cannot read <file>: <why>"."""
    try:
        with elf.open("rb") as stream:
            yield ELFFile(stream)
    except (OSError, ELFError) as error:
        raise ElfError(f"cannot read {elf}: {error}") from None


def _section(section) -> Section:
    flags = section["sh_flags"]
    return Section(section.name, section["sh_addr"], section["sh_size"], bool(flags & SH_FLAGS.SHF_ALLOC),
                   bool(flags & SH_FLAGS.SHF_EXECINSTR), bool(flags & SH_FLAGS.SHF_WRITE),
                   section["sh_type"] != "SHT_NOBITS")


def _symbols(image: ELFFile) -> list[Symbol]:
    table = image.get_section_by_name(".symtab")
    symbols = []
    for symbol in table.iter_symbols() if table else ():
        function = symbol["st_info"]["type"] == "STT_FUNC"
        index = symbol["st_shndx"]  # pyelftools names the special indices (SHN_ABS, SHN_UNDEF, ...)
        symbols.append(Symbol(symbol.name, symbol["st_value"] & ~1 if function else symbol["st_value"],
                              symbol["st_size"], function, symbol["st_info"]["bind"],
                              index if isinstance(index, int) and index > 0 else None))
    return symbols


def _function_extents(image: ELFFile) -> list[tuple[int, int, str]]:
    """(address, size, name) of every function symbol, by address, size and name. Assembly
    functions declared without .size (pqm4's Keccak and NTTs) reach the next function or their
    section's end; a sizeless symbol inside a sized function or at its address keeps size 0 (the
    emulator's rule: boards/virtual/emulator/elf.c)."""
    ends = [section["sh_addr"] + section["sh_size"] for section in image.iter_sections()]
    functions = sorted((symbol.address, symbol.size, symbol.name,
                        ends[symbol.section] if symbol.section is not None and symbol.section < len(ends) else 0)
                       for symbol in _symbols(image) if symbol.function)
    extents, covered = [], 0
    for index, (address, size, name, section_end) in enumerate(functions):
        if size:
            covered = max(covered, address + size)
        elif address >= covered:
            following = next((other for other, other_size, _, _ in functions[index + 1:]
                              if other > address or other_size), None)
            if following != address:
                end = section_end if following is None else min(following, section_end)
                size = max(end - address, 0)
        extents.append((address, size, name))
    return extents


class Symbolizer:
    """Function and source line of code addresses in an ELF (its symbol table and DWARF lines):
    of every address, or only of `addresses` (the line tables of their compilation units alone,
    found through .debug_aranges: decoding them all costs a second of Python per image)."""

    def __init__(self, elf: Path, addresses: Iterable[int] | None = None):
        with _opened(elf) as image:
            functions = [function for function in _function_extents(image) if function[1]]
            self._lines = self._line_table(image, addresses) if image.has_dwarf_info() else []
        self._starts = [start for start, _, _ in functions]
        self._functions = functions
        self._line_starts = [address for address, _, _ in self._lines]

    @staticmethod
    def _units(dwarf, addresses: Iterable[int] | None) -> Iterator:
        """The compilation units that may hold `addresses`: those .debug_aranges places them in,
        and any it does not list (all of them without `addresses` or .debug_aranges). An address
        in none of them has no line (libgcc's code)."""
        ranges = dwarf.get_aranges() if addresses is not None else None
        if not ranges:
            yield from dwarf.iter_CUs()
            return
        holding = {ranges.cu_offset_at_addr(address) for address in addresses}
        listed = {entry.info_offset for entry in ranges.entries}
        for unit in dwarf.iter_CUs():
            if unit.cu_offset in holding or unit.cu_offset not in listed:
                yield unit

    @classmethod
    def _line_table(cls, image: ELFFile, addresses: Iterable[int] | None) -> list[tuple[int, str | None, int | None]]:
        rows = []
        dwarf = image.get_dwarf_info()
        for unit in cls._units(dwarf, addresses):
            program = dwarf.line_program_for_CU(unit)
            if program is None:
                continue
            files = program["file_entry"]
            directories = program["include_directory"]
            version = program["version"]
            for entry in program.get_entries():
                state = entry.state
                if state is None:
                    continue
                if state.end_sequence:  # the code after a sequence (assembly, libgcc) has no line
                    rows.append((state.address, None, None))
                    continue
                index = state.file if version >= 5 else state.file - 1
                if not 0 <= index < len(files):
                    continue
                name = files[index].name.decode(errors="replace")
                directory = files[index].dir_index if version >= 5 else files[index].dir_index - 1
                if 0 <= directory < len(directories) and not name.startswith("/"):
                    name = f"{directories[directory].decode(errors='replace')}/{name}"
                rows.append((state.address, name, state.line))
        # Where a sequence ends at the address the next one starts, the next one's row counts.
        return sorted(rows, key=lambda row: (row[0], row[1] is not None))

    def function(self, address: int) -> str | None:
        at = bisect.bisect_right(self._starts, address) - 1
        if at >= 0:
            start, size, name = self._functions[at]
            if address < start + size:
                return name
        return None

    def code_of(self, place: str) -> list[tuple[int, int]]:
        """The code ranges [lo, hi) of a source line, "file.c:N" (the file by its basename)."""
        file, _, line = place.rpartition(":")
        ranges: list[tuple[int, int]] = []
        for (address, name, number), (following, _, _) in zip(self._lines, self._lines[1:]):
            if number == int(line) and name and Path(name).name == file and following > address:
                if ranges and ranges[-1][1] == address:
                    ranges[-1] = (ranges[-1][0], following)
                else:
                    ranges.append((address, following))
        return ranges

    def line(self, address: int) -> tuple[str | None, int | None]:
        at = bisect.bisect_right(self._line_starts, address) - 1
        if at < 0:
            return None, None
        _, name, line = self._lines[at]
        return name, line
