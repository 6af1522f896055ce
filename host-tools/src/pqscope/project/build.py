"""Building images and the emulator with the project's CMake presets, and sizing images."""

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .boards import Board
from .catalogue import Implementation, load_catalogue
from .elf import ElfError, read_code, read_sections, read_symbols
from .errors import PqscopeError

HOST_PRESET = "host"
EMULATOR_TARGET = "pqscope-vboard"
EMULATOR_PATH = Path("boards/virtual/emulator") / EMULATOR_TARGET
CROSS_COMPILER = "arm-none-eabi-gcc"
SETUP_HINT = "run host-tools/setup.sh (README.md, 'Set up and run')"


class BuildError(PqscopeError):
    pass


# The longest message an image signs: its message buffer (PQS_MAX_MSG_BYTES, firmware/include/pqscope/scheme.h).
MAX_MSG_BYTES = 1024

# The harness's bulk data (firmware/include/pqscope/hal.h): boards place it in a second RAM.
BULK_SECTION = ".pqscope_bulk"


@dataclass(frozen=True)
class ImageSize:
    """Section sizes as GNU `size` (Berkeley format) reports them, except that the harness's bulk
    section (in a second RAM on boards that have one) is counted apart from bss."""

    text: int
    data: int
    bss: int
    bulk: int = 0

    @property
    def flash_bytes(self) -> int:
        return self.text + self.data  # .data's initial values live in flash

    def ram_bytes(self, stack_bytes: int) -> int:
        return self.data + self.bss + stack_bytes


def build_dir(root: Path, tree: str) -> Path:
    return root / _tree_dir(tree)


def _tree_dir(tree: str) -> Path:
    """A tree's directory relative to the repository, where CMake runs (a failed command reads as typed)."""
    return Path("build") / tree


# The CMake cache entry naming functions every probed image probes besides its row's (--probe).
EXTRA_PROBES = "PQSCOPE_EXTRA_PROBES"


@dataclass(frozen=True)
class Variant:
    """Which image of an implementation: the plain one, or the probed one (its functions timed on
    the device; firmware/PROTOCOL.md) with `extra_probes` besides those its catalogue row names."""

    probed: bool = False
    extra_probes: tuple[str, ...] = ()

    def target(self, scheme: str, impl: str) -> str:
        return f"image.{scheme}.{impl}" + (".probed" if self.probed else "")

    def file_name(self, impl: str) -> str:
        return f"{impl}.probed.elf" if self.probed else f"{impl}.elf"


PLAIN = Variant()


@dataclass(frozen=True)
class _Tree:
    """A build tree: its CMake preset, its directory's name under build/ and the options that
    configure it beyond the preset's."""

    preset: str
    name: str
    options: tuple[str, ...] = ()


HOST_TREE = _Tree(HOST_PRESET, HOST_PRESET)


def _board_tree(root: Path, board: Board) -> _Tree:
    """The tree of the board's images at its clock and toolchain. Another toolchain's tree takes
    the dependencies' sources the default tree fetched (see `_fetched_sources`)."""
    options = board.toolchain.cmake_options()
    if not board.toolchain.is_default:
        options += _fetched_sources(root, board)
    return _Tree(board.cmake_preset, board.build_tree, tuple(options))


# Bring-your-own images build in a tree of their own beside the board's (build/<tree>.impl-dir):
# the directory is part of that tree's configuration, which a killed build leaves behind; the
# board's tree, which every catalogue image builds in, never names it.
IMPL_DIR_TREE_SUFFIX = ".impl-dir"


def _impl_dir_tree(root: Path, board: Board) -> _Tree:
    return _Tree(board.cmake_preset, board.build_tree + IMPL_DIR_TREE_SUFFIX,
                 (*board.toolchain.cmake_options(), *_fetched_sources(root, board)))


def _fetched_sources(root: Path, board: Board) -> list[str]:
    """Options that point a new tree at the dependencies' sources the board's default tree fetched,
    where it has them: they do not depend on the compiler, and fetching pqm4 with its submodules
    again (and building libopencm3 in it) would take minutes per tree."""
    fetched = build_dir(root, board.cmake_preset) / "_deps"
    return [f"-DFETCHCONTENT_SOURCE_DIR_{source.name.removesuffix('-src').upper()}={source}"
            for source in sorted(fetched.glob("*-src")) if source.is_dir()]


def image_path(root: Path, board: Board, scheme: str, impl: str, variant: Variant = PLAIN) -> Path:
    return _image_in(root, board.build_tree, scheme, impl, variant)


def _image_in(root: Path, tree_name: str, scheme: str, impl: str, variant: Variant) -> Path:
    return build_dir(root, tree_name) / "images" / scheme / variant.file_name(impl)


def build_image(root: Path, board: Board, scheme: str, impl: str, variant: Variant = PLAIN) -> Path:
    _build(root, _board_tree(root, board), variant.target(scheme, impl), _probe_options(root, board, variant))
    return _built(image_path(root, board, scheme, impl, variant))


def build_images(root: Path, board: Board, rows: list[tuple[str, str]], log: Path) -> dict[tuple[str, str], Path | str]:
    """Every (scheme, impl) row's plain image in one build of the board's tree, which goes on past a
    row that does not compile (ninja -k 0); the build's output is kept in `log`. Returns each row's
    image, or the first error its build printed."""
    tree = _board_tree(root, board)
    _check_tools(tree)
    targets = [PLAIN.target(scheme, impl) for scheme, impl in rows]
    with _tree_lock(root, tree):
        _configure_if_needed(root, tree, _stale_impl_dir_options(root, tree))
        result = subprocess.run(["cmake", "--build", str(_tree_dir(tree.name)), "--target", *targets, "--", "-k", "0"],
                                cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write_text(result.stdout)
    failed = result.stdout.split("FAILED: ")[1:]
    built: dict[tuple[str, str], Path | str] = {}
    for (scheme, impl), target in zip(rows, targets):
        own = [block for block in failed if f"/{target}.objects.dir/" in block.splitlines()[0]
               or block.startswith(f"images/{scheme}/{impl}.elf")]
        if own:
            errors = [line for block in own for line in block.splitlines() if "error" in line]
            built[(scheme, impl)] = (errors or own[0].splitlines()[:1])[0].strip()
        elif result.returncode != 0 and not image_path(root, board, scheme, impl).is_file():
            built[(scheme, impl)] = f"not built (the tree's build failed; {log})"
        else:
            built[(scheme, impl)] = image_path(root, board, scheme, impl)
    return built


def build_test_image(root: Path, board: Board, name: str) -> Path:
    """An image of the board's on-target tests (tests/vboard, e.g. vboard-trm), which sets up
    its own clock."""
    _build(root, _board_tree(root, board), name)
    return _built(build_dir(root, board.build_tree) / "tests" / "vboard" / f"{name}.elf")


def _probe_options(root: Path, board: Board, variant: Variant) -> list[str]:
    """The configure options that set the tree's extra probes to the variant's, if they differ."""
    if not variant.probed:
        return []
    wanted = ";".join(variant.extra_probes)
    current = _cache_entry(root, board.build_tree, EXTRA_PROBES)
    return [] if current == wanted else [f"-D{EXTRA_PROBES}={wanted}"]


def _cache_entry(root: Path, tree_name: str, name: str) -> str | None:
    """The value of a tree's CMake cache entry: "" if the tree has no such entry, None if it has no cache."""
    cache = build_dir(root, tree_name) / "CMakeCache.txt"
    if not cache.exists():
        return None
    return next((line.split("=", 1)[1] for line in cache.read_text().splitlines() if line.startswith(f"{name}:")), "")


IMPL_DIR = "PQSCOPE_IMPL_DIR"


def _stale_impl_dir_options(root: Path, tree: _Tree) -> list[str]:
    """The option that configures out of a board's tree a bring-your-own directory an earlier
    pqscope, killed while it built there, left configured in it and that is gone since (every
    build of the tree would fail on it)."""
    left = _cache_entry(root, tree.name, IMPL_DIR)
    return [f"-D{IMPL_DIR}="] if left and not (Path(left) / "api.h").is_file() else []


def build_impl_dir(root: Path, board: Board, impl_dir: Path, scheme: str, impl: str, stack_bytes: int,
                   variant: Variant = PLAIN, key_slots: int | None = None) -> Path:
    """Builds an image of a directory implementing the pqm4/NIST signature API (not in the
    catalogue), through CMake's PQSCOPE_IMPL_DIR, in the board's bring-your-own tree: each build
    configures that tree whole, whatever an earlier one (killed, or of another directory) left.
    `key_slots`: the key pairs its key pool holds (None: as many as fit the pool, at least two)."""
    api = impl_dir / "api.h"
    if not (api.is_file() or api.is_symlink()):
        raise BuildError(f"{impl_dir} has no api.h: not a pqm4/NIST signature implementation")
    _check_links(impl_dir)
    if any((row.scheme, row.impl) == (scheme, impl) for row in load_catalogue(root)):
        # Its tree builds the catalogue's images too, whose targets and files bear these names.
        raise BuildError(f"{impl_dir} is named {scheme}/{impl}, as a catalogue row is: name it apart with --scheme "
                         f"or --impl (or measure the row with --scheme {scheme} --impl {impl}, without --impl-dir)")
    tree = _impl_dir_tree(root, board)
    _check_tools(tree)
    options = [f"-D{IMPL_DIR}={impl_dir.resolve()}", f"-DPQSCOPE_IMPL_SCHEME={scheme}",
               f"-DPQSCOPE_IMPL_NAME={impl}", f"-DPQSCOPE_IMPL_STACK_BYTES={stack_bytes}",
               f"-D{EXTRA_PROBES}={';'.join(variant.extra_probes)}", f"-DPQSCOPE_IMPL_KEY_SLOTS={key_slots or ''}"]
    with _tree_lock(root, tree):
        _configure(root, tree, options)
        _run(root, ["cmake", "--build", str(_tree_dir(tree.name)), "--target", variant.target(scheme, impl)])
    return _built(_image_in(root, tree.name, scheme, impl, variant))


# The files of a directory that its image compiles, as catalogue.cmake's pqscope_add_scheme_objects globs them.
COMPILED_SUFFIXES = (".c", ".S", ".s")


def _check_links(impl_dir: Path) -> None:
    """pqm4 shares files between parameter sets by relative links (mayo2/m4f/mayo.c ->
    ../../mayo1/m4f/mayo.c), which the build follows where the directory is; a directory taken out
    of its pqm4 tree keeps links that lead nowhere, refused here when the build needs their files."""
    broken = [path for path in sorted(impl_dir.iterdir()) if path.is_symlink() and not path.exists()
              and (path.name == "api.h" or path.suffix in COMPILED_SUFFIXES)]
    if broken:
        more = f" (and {len(broken) - 1} more such links)" if len(broken) > 1 else ""
        raise BuildError(f"{broken[0]} links to {os.readlink(broken[0])}, which is missing{more}: pqm4 shares files "
                         "between parameter sets by relative links, so give the folder inside its whole pqm4 checkout "
                         "(with its mupq submodule)")


def build_info(root: Path, board: Board) -> dict | None:
    """The compiler, flags and dependency pins of the board's build tree (CMake's build-info.json)."""
    path = build_dir(root, board.build_tree) / "build-info.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def build_emulator(root: Path) -> Path:
    _build(root, HOST_TREE, EMULATOR_TARGET)
    return _built(build_dir(root, HOST_PRESET) / EMULATOR_PATH)


def _check_tools(tree: _Tree) -> None:
    for tool in ["cmake"] + ([] if tree.preset == HOST_PRESET else [CROSS_COMPILER]):
        if shutil.which(tool) is None:
            raise BuildError(f"{tool} not found on PATH; {SETUP_HINT}")


def _build(root: Path, tree: _Tree, target: str, configure_options: list[str] | None = None) -> None:
    _check_tools(tree)
    with _tree_lock(root, tree):
        _configure_if_needed(root, tree, [*(configure_options or []), *_stale_impl_dir_options(root, tree)])
        _run(root, ["cmake", "--build", str(_tree_dir(tree.name)), "--target", target])


def _configure_if_needed(root: Path, tree: _Tree, options: list[str]) -> None:
    """Configures the tree if an option changes or its configure step never ended (one that failed, a
    package missing, leaves a cache without build.ninja, on which every build fails); else CMake does."""
    tree_dir = build_dir(root, tree.name)
    if options or not ((tree_dir / "CMakeCache.txt").exists() and (tree_dir / "build.ninja").exists()):
        _configure(root, tree, options)


def _configure(root: Path, tree: _Tree, options: list[str]) -> None:
    _run(root, ["cmake", "--preset", tree.preset, "-B", str(_tree_dir(tree.name)), *tree.options, *options])


@contextlib.contextmanager
def _tree_lock(root: Path, tree: _Tree):
    """One pqscope at a time configures or builds a tree: two ninjas in one build directory
    (two commands at once, or tests in parallel) can trip over each other's files."""
    lock_path = build_dir(root, tree.name).parent / f".{tree.name}.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


# Link failures that mean "does not fit", explained in one line instead of a linker log.
FIT_DIAGNOSES = (
    ("image too big for RAM", "image too big for RAM: its static data plus the stack it needs (the catalogue's "
                              "stack_bytes, or --stack-bytes) exceed the board's RAM"),
    ("region `rom' overflowed", "image too big for flash: its code and constants exceed the board's flash"),
    ("region `ram' overflowed", "image too big for RAM: its static data alone exceed the board's RAM"),
)


def _run(root: Path, command: list[str]) -> None:
    result = subprocess.run(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        for needle, diagnosis in FIT_DIAGNOSES:
            if needle in result.stdout:
                raise BuildError(f"{command[-1]}: {diagnosis}")
        raise BuildError(
            f"`{' '.join(command)}` failed with exit code {result.returncode} (log above)",
            details=result.stdout,
        )


def _built(path: Path) -> Path:
    if not path.is_file():
        raise BuildError(f"the build succeeded but did not produce {path}")
    return path


def read_size(elf: Path) -> ImageSize:
    text = data = bss = bulk = 0
    with _unreadable_is_build_error():
        sections = read_sections(elf)
    for section in sections:
        if not section.allocated:
            continue
        if section.name == BULK_SECTION:
            bulk += section.size
            continue
        if section.executable or not section.writable:
            text += section.size
        elif section.in_file:
            data += section.size
        else:
            bss += section.size
    return ImageSize(text, data, bss, bulk)


# The firmware's build id (pqscope/harness.h): fixed-size bytes that change with every commit.
BUILD_ID_SYMBOL = "pqs_build_id"


def code_digest(elf: Path) -> str:
    """SHA-256 over the image's executable sections (names, addresses and bytes) with the build id's
    bytes blanked: equal digests mean the same code at the same addresses, whatever commit it was
    built at (the linker puts constants, the build id among them, in .text)."""
    digest = hashlib.sha256()
    with _unreadable_is_build_error():
        code = read_code(elf)
        build_id = next((symbol.span for symbol in read_symbols(elf) if symbol.name == BUILD_ID_SYMBOL), None)
    for section, contents in code:
        data = bytearray(contents)
        if build_id:
            start = max(build_id[0] - section.address, 0)
            end = min(build_id[1] - section.address, len(data))
            if start < end:
                data[start:end] = bytes(end - start)
        digest.update(f"{section.name}@{section.address:#x}:".encode() + data)
    return digest.hexdigest()


@contextlib.contextmanager
def _unreadable_is_build_error():
    """An image the build made that cannot be read (sized, digested) fails as the build."""
    try:
        yield
    except ElfError as error:
        raise BuildError(str(error)) from None


def check_fits(board: Board, elf: Path, size: ImageSize, stack_bytes: int) -> None:
    if size.flash_bytes > board.flash_bytes:
        raise BuildError(f"{elf.name} needs {size.flash_bytes} bytes of flash (text+data), "
                         f"board {board.name} has {board.flash_bytes}")
    ram = size.ram_bytes(stack_bytes)
    if ram > board.ram_bytes:
        raise BuildError(f"{elf.name} needs {ram} bytes of RAM (data+bss+{stack_bytes} bytes of stack), "
                         f"board {board.name} has {board.ram_bytes}")


def check_stack(board: Board, elf: Path, size: ImageSize, implementation: Implementation, measured: int) -> str | None:
    """What to say of the deepest stack a measurement of the image saw, against the stack reserved
    for it, which check_fits took for the image's need: nothing within it; a warning (returned)
    above it; an error where, with that stack, the image does not fit the board's RAM, so that it
    passed the check only because of the reservation."""
    reserved = implementation.stack_bytes
    if measured <= reserved:
        return None
    where = (f"--stack-bytes (now {reserved:,})" if implementation.directory is not None else
             f"the catalogue's stack_bytes of {implementation.scheme}/{implementation.impl} (now {reserved:,})")
    ram = size.ram_bytes(measured)
    if ram > board.ram_bytes:
        raise BuildError(f"{elf.name} used {measured:,} bytes of stack: with its data and bss that is {ram:,} bytes of "
                         f"RAM, board {board.name} has {board.ram_bytes:,}; it fit only by {where}, which is too low")
    return (f"{elf.name} used {measured:,} bytes of stack, more than the {reserved:,} reserved for it when it was "
            f"checked to fit {board.name}: raise {where}")
