#!/usr/bin/env python3
"""The status of every row discovered from pqm4's folders on each board (issue #57), measured: each
row that fits the board by pqm4's skiplist.py is built from its folder as it is (`pqscope build
--impl-dir`) and signs and verifies one signature on the board (`pqscope run -n 1`: the device
verifies it and must reject a corrupted copy). The statuses go to firmware/schemes/discovered-status.json
(with the pins they were measured at), which `pqscope schemes` and `pqscope run --scheme --impl` read:

- ok: built, signed, verified, the corrupted signature rejected;
- build-fails: the compiler's (or CMake's) first error line;
- does-not-fit: though skiplist.py's estimate fits, the image does not beside the stack pqm4
  measures (benchmarks.md), or its data and bss alone do not (the linker's or pqscope's words);
- fails: what happened on the board (an operation failed, a signature did not verify, a corrupted
  one was accepted, the emulator stopped);
- unmeasured: not measured yet (a run cut short). A slow row is measured however long it takes on
  this machine: the virtual board awaits each record while its emulator runs, within a budget of
  model cycles, never a number of seconds (how busy the machine is decides no status).

    nice .venv/bin/python tests/bench/atlas_status.py --board virtual --resume
    nice .venv/bin/python tests/bench/atlas_status.py --board nucleo-l4r5zi-virtual --resume --scheme 'hawk*'

Each row's outcome goes to runs/atlas-status/<board>/<scheme>-<impl>/status.json; with --resume a
row that has one is read back, never measured again (remove that directory to measure it again).
Rows are measured one at a time (the machine is shared), the quickest first by pqm4's benchmarks.md."""

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "host-tools/src"))
from pqscope.project.boards import load_boards  # noqa: E402
from pqscope.project.catalogue import load_catalogue  # noqa: E402
from pqscope.project.discovery import (STATUS_FILE, discover_folders, discovered_rows, estimated_memory,  # noqa: E402
                                       fit_reason, pinned_pqm4, pqm4_tree)
from pqscope.project.elf import read_symbols  # noqa: E402
from pqscope.results.rundir import write_atomically  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent))
from accuracy import signature_speeds  # noqa: E402
from pqm4_l4r5zi import figures, table_section  # noqa: E402

RUNS = ROOT / "runs" / "atlas-status"
OUTCOME = "status.json"
# The linker's and pqscope's words for an image that does not fit (project/build.py's FIT_DIAGNOSES, check_fits).
TOO_BIG = ("image too big for", "bytes of RAM (data+bss", "bytes of flash (text+data)")
STACK_TOO_BIG = "its static data plus the stack it needs"
MIN_STACK = 1024  # the least --stack-bytes takes


def stack_room(board: str, elf: Path) -> int:
    """The stack the board's RAM holds above the image's static data (its linker script's stack
    limit; the harness's bulk data is there too on a board without a second RAM), in whole KiB less one."""
    firmware = load_boards(ROOT)[board]
    ram = json.loads((ROOT / "boards" / (firmware.emulates or board) / "board.json").read_text())["memory"]["ram"]
    limit = next(symbol.address for symbol in read_symbols(elf) if symbol.name == "__pqscope_stack_limit")
    return (int(ram["origin"], 16) + ram["bytes"] - limit) // 1024 * 1024 - 1024


def pqscope(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pqscope", *arguments], capture_output=True, text=True,
                          env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})


def first_error(output: str) -> str:
    """The compiler's first error line, else CMake's, else pqscope's last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    compiler = next((line for line in lines if ": error:" in line or ": fatal error:" in line), None)
    if compiler:
        return compiler.replace(str(ROOT) + "/", "")
    cmake = next((i for i, line in enumerate(lines) if line.startswith("CMake Error")), None)
    if cmake is not None:
        return " ".join(lines[cmake:cmake + 3])
    return lines[-1] if lines else "no output"


def build_image(row, board: str, stack: int) -> subprocess.CompletedProcess:
    return pqscope("build", "--board", board, "--impl-dir", str(row.directory), "--stack-bytes", str(stack),
                   "--scheme", row.scheme, "--impl", row.impl, "--json")


def build(row, board: str, stacks: dict[tuple[str, str], list[int]]) -> tuple[dict | None, int]:
    """The stack the row's image reserves, and its outcome if it does not build or fit. skiplist.py's
    estimate counts pqm4's data and bss besides its stack: an image that does not fit with that much
    stack reserved is built again with the RAM its own data and bss leave, unless pqm4's benchmarks.md
    (`stacks`) measures more stack than that."""
    result = build_image(row, board, row.stack_bytes)
    if result.returncode == 0:
        return None, row.stack_bytes
    error = first_error(result.stderr + result.stdout)
    if STACK_TOO_BIG in error:
        sized = build_image(row, board, MIN_STACK)
        if sized.returncode == 0:
            (image,) = json.loads(sized.stdout)["images"]
            room = stack_room(board, Path(image["elf"]))
            needed = max(stacks.get((row.scheme, row.impl), [0]))
            if needed > room:
                return {"status": "does-not-fit", "reason": f"pqm4 measures {needed:,} bytes of stack (benchmarks.md); "
                        f"the image's data and bss leave {room:,} of the board's RAM"}, room
            if room >= MIN_STACK and build_image(row, board, room).returncode == 0:
                return None, room
    return {"status": "does-not-fit" if any(words in error for words in TOO_BIG) else "build-fails",
            "reason": error}, row.stack_bytes


def sign_and_verify(row, board: str, stack: int, out: Path) -> dict:
    """One signature on the board, verified by the device, a corrupted copy of it rejected."""
    shutil.rmtree(out, ignore_errors=True)
    result = pqscope("run", "--board", board, "--impl-dir", str(row.directory), "--stack-bytes",
                     str(stack), "--scheme", row.scheme, "--impl", row.impl, "-n", "1", "--seed", "57",
                     "--no-report", "--json", "--out", str(out), "-j", "1")
    if result.returncode != 0:
        error = first_error(result.stderr)
        if stack < row.stack_bytes:
            error = f"with the {stack:,} bytes of stack its data and bss leave of the board's RAM: {error}"
        return {"status": "fails", "reason": error}
    results = json.loads(result.stdout)["results"]
    verify = next(entry for entry in results if entry["op"] == "verify")
    # `verified` counts the samples whose signature verified and whose corrupted copy was rejected.
    rejected = verify["n"] - verify["verified"] - verify["corrupt_accepted"]
    failures = [*(["the device rejected its own signature"] if rejected else []),
                *(["accepted a corrupted copy of it"] if verify["corrupt_accepted"] else [])]
    if failures:
        return {"status": "fails", "reason": " and ".join(failures)}
    return {"status": "ok", "reason": "", "stack_bytes": stack,
            "cycles": {entry["op"]: entry["cycles"]["min"] for entry in results},
            "stack_used": {entry["op"]: entry["stack_bytes"] for entry in results}}


def measure(row, board: str, stacks: dict[tuple[str, str], list[int]]) -> dict:
    failed, stack = build(row, board, stacks)
    return failed or sign_and_verify(row, board, stack, RUNS / board / f"{row.scheme}-{row.impl}" / "run")


def write_statuses(pqm4: Path, outcomes: dict[str, dict[str, dict]]) -> None:
    """discovered-status.json: a row per discovered folder (whatever is measured of it so far), with
    what its outcome is on each firmware board measured, and the pins."""
    catalogued = {row.pqm4_folder for row in load_catalogue(ROOT)}
    mupq = subprocess.run(["git", "-C", str(pqm4), "ls-tree", "HEAD", "mupq"], capture_output=True,
                          text=True).stdout.split()
    previous = json.loads((ROOT / STATUS_FILE).read_text())["rows"] if (ROOT / STATUS_FILE).is_file() else {}
    rows = {}
    for folder in discover_folders(pqm4):
        if folder.path in catalogued:
            continue
        known = previous.get(folder.path, {}) | outcomes.get(folder.path, {})
        rows[folder.path] = {board: {key: entry[key] for key in ("status", "reason", "stack_bytes") if key in entry}
                             for board, entry in sorted(known.items())}
    document = {"schema": 1, "measured_by": "tests/bench/atlas_status.py",
                "pins": {"pqm4": pinned_pqm4(ROOT), "mupq": mupq[2] if len(mupq) > 2 else "unknown"},
                "rows": rows}
    write_atomically(ROOT / STATUS_FILE, json.dumps(document, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--board", action="append", default=[], help="virtual board(s) to measure on "
                        "(default: virtual, then nucleo-l4r5zi-virtual)")
    parser.add_argument("--scheme", action="append", default=[], metavar="GLOB",
                        help="only rows whose scheme matches (repeatable), e.g. 'hawk*'")
    parser.add_argument("--resume", action="store_true", help="read back the rows measured before")
    args = parser.parse_args()
    pqm4 = pqm4_tree(ROOT)
    if pqm4 is None:
        raise SystemExit("no pqm4 tree fetched: configure a board's build tree first (cmake --preset stm32f4discovery)")
    boards = load_boards(ROOT)
    memory = estimated_memory(pqm4)
    benchmarks_md = (pqm4 / "benchmarks.md").read_text()
    stacks = figures(table_section(benchmarks_md, "Memory"))
    speeds = signature_speeds(benchmarks_md)
    rows = [row for row in discovered_rows(ROOT, load_catalogue(ROOT), pqm4)
            if not args.scheme or any(fnmatch.fnmatch(row.scheme, glob) for glob in args.scheme)]
    outcomes: dict[str, dict[str, dict]] = {}
    for name in args.board or ["virtual", "nucleo-l4r5zi-virtual"]:
        firmware = boards[name].emulates or name
        # The quickest first by pqm4's cycles (benchmarks.md), those it does not publish last: a run
        # cut short has measured as many rows as it could.
        fitting = sorted(
            (row for row in rows if fit_reason(memory.get((row.scheme, row.impl)), boards[firmware]) is None),
            key=lambda row: sum(p.high for p in speeds.get((row.scheme, row.impl), {}).values()) or float("inf"))
        if not args.resume and (RUNS / name).is_dir() and any((RUNS / name).iterdir()):
            raise SystemExit(f"{RUNS / name} holds earlier rows: give --resume to go on, or remove it")
        for number, row in enumerate(fitting, 1):
            outcome_file = RUNS / name / f"{row.scheme}-{row.impl}" / OUTCOME
            if outcome_file.is_file():
                outcome = json.loads(outcome_file.read_text())
            else:
                outcome = measure(row, name, stacks)
                outcome_file.parent.mkdir(parents=True, exist_ok=True)
                write_atomically(outcome_file, json.dumps(outcome, indent=1) + "\n")
            outcomes.setdefault(row.pqm4_folder, {})[firmware] = outcome
            write_statuses(pqm4, outcomes)
            print(f"[{number}/{len(fitting)}] {name} {row.scheme}/{row.impl}: {outcome['status']} "
                  f"{outcome['reason']}".rstrip(), flush=True)
    write_statuses(pqm4, outcomes)


if __name__ == "__main__":
    main()
