"""Catalogue rows discovered from the fetched pqm4 tree's folder layout, as pqm4's own scripts find
them (mupq.py's PlatformSettings.get_implementations over interface.py's scheme_folders): every
<folder>/<scheme>/<impl>/ of pqm4's, mupq's and PQClean's crypto_sign, less the folders for other
processors. What the exact check needs per family comes from firmware/schemes/families.json, each
row's status on a board from pqm4's skiplist.py (does-not-fit, without building) or else from
firmware/schemes/discovered-status.json (measured by tests/bench/atlas_status.py); its host
reference (whose host build its transcripts must match) by pqm4's own rule (`host_reference`)."""

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from .boards import Board, load_boards
from .build import HOST_PRESET
from .catalogue import (CATALOGUE, IMPL_DIR_STACK_BYTES, UNMEASURED, Declassification, Implementation,
                        declassifications, find_implementation, load_catalogue)
from .errors import UnknownNameError
from .metadata import load_json, require

# interface.py's M4Settings.scheme_folders (its signature ones), in its order.
PQM4_FOLDERS = ("crypto_sign", "mupq/crypto_sign", "mupq/pqclean/crypto_sign")
# Implementations for other processors (mupq.py skips these folders) or platforms (interface.py skips "vec").
OTHER_PROCESSORS = ("avx", "avx2", "aesni", "sse", "aarch64", "vec")
FAMILIES = Path("firmware/schemes/families.json")
STATUS_FILE = Path("firmware/schemes/discovered-status.json")
DEPENDENCIES = Path("firmware/cmake/dependencies.cmake")


@dataclass(frozen=True)
class Folder:
    """One implementation folder of the pqm4 tree: <folder>/<scheme>/<impl>, relative to the tree."""

    scheme: str
    impl: str
    path: str


def discover_folders(pqm4: Path) -> list[Folder]:
    """Every signature implementation folder of the pqm4 tree, as pqm4's scripts list them."""
    found = []
    for base in PQM4_FOLDERS:
        for scheme in sorted(path for path in (pqm4 / base).iterdir() if path.is_dir()):
            found += [Folder(scheme.name, impl.name, f"{base}/{scheme.name}/{impl.name}")
                      for impl in sorted(scheme.iterdir()) if impl.is_dir() and impl.name not in OTHER_PROCESSORS]
    return found


def estimated_memory(pqm4: Path) -> dict[tuple[str, str], int]:
    """skiplist.py's estimate of each implementation's memory (stack, data and bss, in bytes), read as
    data: the file is one assignment of a literal list."""
    path = pqm4 / "skiplist.py"
    for statement in ast.parse(path.read_text()).body:
        if isinstance(statement, ast.Assign) and any(getattr(t, "id", "") == "skip_list" for t in statement.targets):
            return {(entry["scheme"], entry["implementation"]): entry["estmemory"]
                    for entry in ast.literal_eval(statement.value)}
    raise ValueError(f"{path} assigns no skip_list")


# skiplist.py's estimate for an implementation pqm4 runs nowhere (PQClean's Falcon: 999,999,999,999).
SKIPPED_EVERYWHERE = 1 << 32


def fit_reason(estimate: int | None, board: Board) -> str | None:
    """Why the implementation does not fit `board` by skiplist.py's estimate (as interface.py's
    M4Settings compares it with the platform's memory), or None if it fits or has no estimate."""
    if estimate is None or estimate <= board.ram_bytes:
        return None
    if estimate >= SKIPPED_EVERYWHERE:
        return f"pqm4's skiplist.py skips it on every platform (its estimate: {estimate:,} bytes)"
    return f"skiplist.py estimates {estimate:,} bytes of memory, more than the {board.ram_bytes:,} of {board.name}"


def pinned_pqm4(root: Path) -> str:
    """The pqm4 commit the build fetches (firmware/cmake/dependencies.cmake)."""
    text = (root / DEPENDENCIES).read_text()
    match = re.search(r"pqscope_declare_dependency\(pqm4\s[^)]*?GIT_TAG\s+(\S+)", text)
    if match is None:
        raise ValueError(f"{root / DEPENDENCIES} declares no pqm4 GIT_TAG")
    return match.group(1)


# What CMake's FetchContent leaves once it has fetched pqm4 with its submodules (its populate step's
# stamp, relative to the tree's _deps).
PQM4_FETCHED = Path("pqm4-subbuild/pqm4-populate-prefix/src/pqm4-populate-stamp/pqm4-populate-done")


def pqm4_tree(root: Path) -> Path | None:
    """The pqm4 sources a board's build tree, or the host's (its transcripts), fetched at the pin with
    its submodules, if one has: a fetch that ended, since a tree being fetched beside (another
    board's first configure) has pqm4's own files before its submodules' folders."""
    presets = [board.cmake_preset for board in load_boards(root).values()] + [HOST_PRESET]
    return next((deps / "pqm4-src" for deps in (root / "build" / preset / "_deps" for preset in presets)
                 if (deps / PQM4_FETCHED).is_file() and (deps / "pqm4-src/skiplist.py").is_file()), None)


@dataclass(frozen=True)
class Family:
    """What the rows whose scheme name starts with `prefix` share: the family's name and what the
    exact check needs of it."""

    prefix: str
    family: str
    retry_function: str = ""
    public_functions: tuple[str, ...] = ()
    declassify: tuple[Declassification, ...] = ()


def load_families(root: Path) -> list[Family]:
    """The family table, longest prefix first: a longer prefix is a more particular family."""
    path = root / FAMILIES
    reasons = load_json(root / CATALOGUE).get("declassification_reasons", {})
    families = [Family(require(entry, "prefix", path), require(entry, "family", path),
                       entry.get("retry_function", ""), tuple(entry.get("public_functions", ())),
                       declassifications(entry, reasons, path))
                for entry in require(load_json(path), "families", path)]
    return sorted(families, key=lambda family: -len(family.prefix))


def family_of(families: list[Family], scheme: str) -> Family:
    return next((family for family in families if scheme.startswith(family.prefix)),
                Family("", scheme.rstrip("0123456789_-")))


def load_statuses(root: Path) -> dict:
    """discovered-status.json: its pins and, per folder, the measured status on each firmware board."""
    path = root / STATUS_FILE
    document = load_json(path)
    require(document, "pins", path)
    return require(document, "rows", path)


def discovered_rows(root: Path, catalogue: list[Implementation], pqm4: Path | None = None) -> list[Implementation]:
    """A row per folder of the pqm4 tree that no catalogue row builds from (none if no tree is fetched)."""
    pqm4 = pqm4 or pqm4_tree(root)
    if pqm4 is None:
        return []
    catalogued = {row.pqm4_folder for row in catalogue}
    memory = estimated_memory(pqm4)
    families = load_families(root)
    measured = load_statuses(root)
    boards = [board for board in load_boards(root).values() if not board.emulates]
    folders = discover_folders(pqm4)
    references = host_references(folders, require(load_json(root / FAMILIES), "host_reference_impls", root / FAMILIES))
    rows = []
    for folder in folders:
        if folder.path in catalogued:
            continue
        estimate = memory.get((folder.scheme, folder.impl))
        entries = measured.get(folder.path, {})
        on_board = {}
        for board in boards:
            entry = entries.get(board.name, {})
            too_big = fit_reason(estimate, board)
            on_board[board.name] = (("does-not-fit", too_big) if too_big else
                                    (entry["status"], entry.get("reason", "")) if entry else
                                    (UNMEASURED, "not measured yet (tests/bench/atlas_status.py)"))
        family = family_of(families, folder.scheme)
        rows.append(Implementation(
            folder.scheme, folder.impl, family.family, 0, 0, 0, stack_bytes(estimate, entries), UNMEASURED,
            boards=tuple((name, status) for name, (status, _) in on_board.items()),
            board_reasons=tuple((name, reason) for name, (_, reason) in on_board.items()),
            retry_function=family.retry_function, public_functions=family.public_functions,
            declassify=family.declassify, directory=pqm4 / folder.path, pqm4_folder=folder.path,
            host_reference=references.get(folder.scheme, "")))
    return rows


def host_references(folders: list[Folder], names: list[str]) -> dict[str, str]:
    """Each scheme's host reference by pqm4's rule (mupq.py's TestVectors._prepare_testvectors):
    its first folder whose implementation pqm4 builds for the host as test vectors (`names`,
    families.json's host_reference_impls), where it has one."""
    references: dict[str, str] = {}
    for folder in folders:
        if folder.impl in names:
            references.setdefault(folder.scheme, folder.impl)
    return references


def stack_bytes(estimate: int | None, measured: dict[str, dict]) -> int:
    """The stack a discovered row's image reserves: the least with which it signed and verified on a
    board (atlas_status.py reserves what the image's data and bss leave of the RAM where skiplist.py's
    estimate does not fit beside them), else that estimate of all the memory pqm4's own stack test
    used (its stack, data and bss), an upper bound of the stack it needs; --impl-dir's default without one."""
    return min((entry["stack_bytes"] for entry in measured.values() if entry.get("status") == "ok"
                and "stack_bytes" in entry), default=estimate or IMPL_DIR_STACK_BYTES)


def load_rows(root: Path) -> list[Implementation]:
    """The catalogue's rows and the discovered ones."""
    catalogue = load_catalogue(root)
    return catalogue + discovered_rows(root, catalogue)


def find_row(root: Path, scheme: str, impl: str) -> Implementation:
    """The catalogue's or a discovered row of `scheme` and `impl`, named in any case: the pqm4 tree is
    searched only for a row the catalogue does not have."""
    try:
        return find_implementation(load_catalogue(root), scheme, impl)
    except UnknownNameError:
        return find_implementation(load_rows(root), scheme, impl)
