#!/usr/bin/env python3
"""The virtual NUCLEO-L4R5ZI against pqm4's own table (issue #56): pqm4's benchmarks.md at the
pinned commit is that board's, measured at 20 MHz with 0 wait states by GCC 11.3 at -O3. This
script measures the catalogue's pqm4 signature rows that fit the board (pqm4's skiplist.py is the
reference for memory: a row whose estimate exceeds the board's 640 KiB is left out, as pqm4's own
scripts leave it out) on `nucleo-l4r5zi-virtual`, built by pqm4's compiler (`--compiler gcc11`)
at pqm4's flags (the catalogue's: -O3 and the defines of the implementation's config.mk), and
prints one Markdown table of all rows (docs/pages/results/pqm4-l4r5zi.md keeps it, with the
outliers explained):

- cycles: per operation the ratio of our minimum to pqm4's published minimum. The minimum is
  what compares for an operation without a rejection loop (pqm4's own spread under 1 %); for one
  with a loop (ML-DSA and Falcon signing) both minima are one round, if enough samples were taken;
- stack: our largest stack use per operation against pqm4's (its "Memory Evaluation"); ours is the
  same code's plus the harness's frames above it;
- code: the .text of the implementation's own objects (`size -t`, as pqm4's SizeBenchmark sizes
  the implementation's library) against pqm4's.

    .venv/bin/python tests/bench/pqm4_l4r5zi.py               # rows that are not slow, 10 samples each
    .venv/bin/python tests/bench/pqm4_l4r5zi.py --all         # the slow SPHINCS+ rows too (hours)
    .venv/bin/python tests/bench/pqm4_l4r5zi.py --scheme mayo1 -n 2
    .venv/bin/python tests/bench/pqm4_l4r5zi.py --pqm4-folders --scheme haetae2   # rows outside the catalogue

With --pqm4-folders it also measures pqm4's signature implementations that are not catalogue rows,
each from its folder as pqm4 lays it out (`pqscope run --impl-dir`, which takes the folder's
config.mk defines), with pqm4's largest measured stack plus STACK_MARGIN reserved; a row that does
not build or run is listed with pqscope's one-line error, and the others go on.

Runs go to runs/pqm4-l4r5zi/<scheme>-<impl>-n<N>-<seed>/ and are reused (resumed if cut short)."""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accuracy import FIXED_TIME_SPREAD, OPS, ROOT, finished, sample_timeout, signature_speeds  # noqa: E402
from pqscope.project.discovery import PQM4_FOLDERS, estimated_memory  # noqa: E402

BOARD = "nucleo-l4r5zi-virtual"
FIRMWARE_BOARD = "nucleo-l4r5zi"
COMPILER = "gcc11"
PQM4 = ROOT / "build" / FIRMWARE_BOARD / "_deps" / "pqm4-src"
TREE = ROOT / "build" / f"{FIRMWARE_BOARD}.{COMPILER}.catalogue"
RUNS = ROOT / "runs" / "pqm4-l4r5zi"
# The harness's own frames above pqm4's measured stack, reserved for --impl-dir rows: they add at most
# 208 bytes to it in every row measured (FN-DSA-512); the rows pqm4 runs with a stack near the
# board's 640 KiB fit beside the harness's data by less than 4 KiB (AIMer-256f ref by 4,004 bytes).
STACK_MARGIN = 1024
# Published cycles per sample (all three operations at their maximum) above which a pqm4 folder's row
# counts as slow (--all): SPHINCS+-SHA2-128f's 0.4 G is not, its s variants' 8 G are.
SLOW_CYCLES = 3e9
CODE_BYTES = "code-bytes.txt"  # the implementation's code size, written beside its run
MSG_LEN = 59  # pqm4's speed.c signs 59 bytes
WITHIN = 0.02  # the target for fixed-time operations
EXPLAINED_BEYOND = 0.05  # every operation further off is explained in the document


def pqm4_file(name: str) -> Path:
    path = PQM4 / name
    if not path.is_file():
        raise SystemExit(f"{path} is missing: configure the board tree first (cmake --preset {FIRMWARE_BOARD}), "
                         "which fetches the pinned pqm4")
    return path


def table_section(benchmarks_md: str, evaluation: str) -> str:
    """The signature part of one of benchmarks.md's evaluations ("Memory", "Size")."""
    part = benchmarks_md[benchmarks_md.index(f"# {evaluation} Evaluation"):]
    part = part[part.index("## Signature Schemes"):]
    return part[:part.index("\n#", 1)] if "\n#" in part[1:] else part


def figures(section: str) -> dict[tuple[str, str], list[int]]:
    """(scheme, impl) -> the row's numbers, from a table of benchmarks.md."""
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and re.fullmatch(r"[\d,]+", cells[2]):
            rows[(cells[0], cells[1])] = [int(cell.replace(",", "")) for cell in cells[2:]]
    return rows


def ram_bytes() -> int:
    return json.loads((ROOT / "boards" / FIRMWARE_BOARD / "board.json").read_text())["memory"]["ram"]["bytes"]


def pqm4_defines(directory: str) -> set[str]:
    """The defines pqm4's config.mk gives the implementation's images (e.g. MAYO_M4)."""
    config = PQM4 / directory / "config.mk"
    return set(re.findall(r"-D(\w+)", config.read_text())) if config.is_file() else set()


def pqm4_folder_rows(catalogued: set[tuple[str, str]], published: dict, memory: dict[tuple[str, str], int],
                     everything: bool, scheme: str | None) -> tuple[list[dict], list[str]]:
    """pqm4's published signature implementations that are not catalogue rows, from their folders."""
    chosen, left_out = [], []
    for name, speeds in published.items():
        if name in catalogued or (scheme and name[0] != scheme):
            continue
        folder = next((PQM4 / base / name[0] / name[1] for base in PQM4_FOLDERS
                       if (PQM4 / base / name[0] / name[1] / "api.h").exists()), None)
        why = ("no folder in pqm4" if folder is None
               else f"does not fit: skiplist.py estimates {memory[name]:,} bytes" if memory.get(name, 0) > ram_bytes()
               else "slow (--all)" if sum(p.high for p in speeds.values()) > SLOW_CYCLES and not everything else None)
        if why:
            left_out.append(f"{name[0]}/{name[1]}: {why}")
        else:
            chosen.append({"scheme": name[0], "impl": name[1], "published_as": name, "folder": folder})
    return chosen, left_out


def rows(catalogue: dict, published: dict, memory: dict[tuple[str, str], int], everything: bool,
         scheme: str | None) -> tuple[list[dict], list[str]]:
    """The catalogue rows to measure, and why others that pqm4 publishes are left out."""
    chosen, left_out = [], []
    for row in catalogue["implementations"]:
        source = row["source"]
        if source["dependency"] != "pqm4" or (scheme and row["scheme"] != scheme):
            continue
        name = tuple(Path(source["path"]).parts[-2:])
        if name not in published:
            continue
        status = row.get("boards", {}).get(FIRMWARE_BOARD, row["status"])
        why = (f"does not fit: skiplist.py estimates {memory[name]:,} bytes" if memory.get(name, 0) > ram_bytes()
               else f"not built for {FIRMWARE_BOARD} ({status})" if status != "ok"
               else "built with defines pqm4 does not give it" if not set(row.get("defines", ())) <= pqm4_defines(
                   source["path"])
               else "slow (--all)" if row.get("slow") and not everything else None)
        if why:
            left_out.append(f"{row['scheme']}/{row['impl']}: {why}")
        else:
            chosen.append({**row, "published_as": name})
    return chosen, left_out


def run_dir(row: dict, samples: int, seed: str) -> Path:
    return RUNS / f"{row['scheme']}-{row['impl']}-n{samples}-{seed}"


def measure(row: dict, out: Path, samples: int, seed: str, timeout: float, stack: int) -> dict[str, dict] | str:
    """Our results per op (cycles, stack_bytes), from a run directory reused when it holds them; for
    a pqm4 folder's row, pqscope's error if it fails (a catalogue row's failure stops the script)."""
    if finished(out):
        return read_report(out)
    command = [sys.executable, "-m", "pqscope", "run", "--json", "--no-report", "--timeout", f"{timeout:.0f}"]
    what = ["--impl-dir", str(row["folder"]), "--stack-bytes", str(stack)] if "folder" in row else []
    command += ["--resume", str(out)] if (out / "meta.json").is_file() else [
        "--board", BOARD, "--compiler", COMPILER, *what, "--scheme", row["scheme"], "--impl", row["impl"],
        "-n", str(samples), "--seed", seed, "--msg-len", str(MSG_LEN), "--out", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})
    if result.returncode != 0:
        error = failure(result)
        if "folder" in row:
            return error
        raise SystemExit(f"{row['scheme']}/{row['impl']}: {error}")
    return {entry["op"]: entry for entry in json.loads(result.stdout)["results"]}


def failure(result: subprocess.CompletedProcess) -> str:
    """pqscope's one-line error, or the CMake error its build log shows above it."""
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    cmake = next((i for i, line in enumerate(lines) if line.startswith("CMake Error")), None)
    if cmake is not None:
        return " ".join(lines[cmake + 1:cmake + 3])
    return lines[-1] if lines else f"exit status {result.returncode}"


def read_report(out: Path) -> dict[str, dict]:
    result = subprocess.run([sys.executable, "-m", "pqscope", "report", str(out), "--format", "json"],
                            capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})
    if result.returncode != 0:
        raise SystemExit(f"{out}: {result.stderr.strip()}")
    return {entry["op"]: entry for entry in json.loads(result.stdout)["results"]}


def code_bytes(scheme: str, impl: str, tree: Path, out: Path) -> int | None:
    """`size -t`'s text of the implementation's own objects (not the harness's nor the shared
    symmetric code), as pqm4 sizes an implementation's library. Kept beside the run, since a pqm4
    folder's tree holds only the last folder built in it; None if neither has it."""
    kept = out / CODE_BYTES
    if kept.is_file():
        return int(kept.read_text())
    objects = tree / "firmware" / "CMakeFiles" / f"image.{scheme}.{impl}.objects.dir"
    own = [path for path in objects.rglob("*.obj")
           if f"crypto_sign/{scheme}/{impl}/" in path.as_posix() or f"sources/{scheme}/{impl}/" in path.as_posix()]
    if not own:
        return None
    totals = subprocess.run(["arm-none-eabi-size", "-t", *map(str, own)], capture_output=True, text=True,
                            check=True).stdout.splitlines()[-1]
    kept.write_text(totals.split()[0])
    return int(totals.split()[0])


def number(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def ratio(ours: float | None, theirs: float | None) -> str:
    return "-" if not ours or not theirs else f"{ours / theirs:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--samples", type=int, default=10, help="samples per row (default 10)")
    parser.add_argument("--seed", default="acc", help="master seed in hex (default acc)")
    parser.add_argument("--all", action="store_true", help="also the slow rows (SPHINCS+ s variants: hours)")
    parser.add_argument("--scheme", help="only this scheme's rows")
    parser.add_argument("--pqm4-folders", action="store_true",
                        help="also pqm4's implementations that are not catalogue rows, from their folders")
    args = parser.parse_args()
    benchmarks_md = pqm4_file("benchmarks.md").read_text()
    published = signature_speeds(benchmarks_md)
    stacks = figures(table_section(benchmarks_md, "Memory"))
    sizes = figures(table_section(benchmarks_md, "Size"))
    catalogue = json.loads((ROOT / "firmware/schemes/catalogue.json").read_text())
    memory = estimated_memory(pqm4_file("skiplist.py").parent)
    chosen, left_out = rows(catalogue, published, memory, args.all, args.scheme)
    if args.pqm4_folders:
        catalogued = {tuple(Path(row["source"]["path"]).parts[-2:]) for row in catalogue["implementations"]
                      if row["source"]["dependency"] == "pqm4"}
        folder_rows, folders_left_out = pqm4_folder_rows(catalogued, published, memory, args.all, args.scheme)
        chosen += folder_rows
        left_out += folders_left_out
    print("| scheme | impl | op | pqm4 spread | pqm4 min | ours min | ratio | pqm4 stack | ours | ratio | pqm4 code | ours "
          "| ratio |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    fixed_time: dict[str, float] = {}  # "scheme/impl op" -> our minimum against pqm4's, less 1
    for row in chosen:
        theirs = published[row["published_as"]]
        their_stacks = stacks.get(row["published_as"], [None] * 3)
        out = run_dir(row, args.samples, args.seed)
        ours = measure(row, out, args.samples, args.seed, sample_timeout(theirs),
                       max(filter(None, their_stacks), default=0) + STACK_MARGIN)
        if isinstance(ours, str):
            left_out.append(f"{row['scheme']}/{row['impl']}: failed: {ours}")
            continue
        their_code = sizes.get(row["published_as"], [None])[0]
        our_code = code_bytes(row["scheme"], row["impl"], TREE.with_name(TREE.name + ".impl-dir") if "folder" in row
                              else TREE, out)
        for op, their_stack in zip(OPS, their_stacks):
            mine = ours[op]
            if theirs[op].spread < FIXED_TIME_SPREAD:
                fixed_time[f"{row['scheme']}/{row['impl']} {op}"] = mine["cycles"]["min"] / theirs[op].low - 1
            print(f"| {row['scheme']} | {row['impl']} | {op} | {theirs[op].spread:.1%} | {theirs[op].low:,} | "
                  f"{mine['cycles']['min']:,} | {ratio(mine['cycles']['min'], theirs[op].low)} | {number(their_stack)} | "
                  f"{number(mine['stack_bytes'])} | {ratio(mine['stack_bytes'], their_stack)} | "
                  f"{number(their_code)} | {number(our_code)} | {ratio(our_code, their_code)} |", flush=True)
    print()
    if fixed_time:
        print(f"fixed-time operations (pqm4's spread under {FIXED_TIME_SPREAD:.0%}): "
              f"{sum(abs(d) <= WITHIN for d in fixed_time.values())} of {len(fixed_time)} within ±{WITHIN:.0%}, "
              f"{sum(abs(d) > EXPLAINED_BEYOND for d in fixed_time.values())} beyond ±{EXPLAINED_BEYOND:.0%}")
    for operation, off in fixed_time.items():
        if abs(off) > EXPLAINED_BEYOND:
            print(f"beyond ±{EXPLAINED_BEYOND:.0%}: {operation} {1 + off:.3f}")
    for line in left_out:
        print(f"left out: {line}")


if __name__ == "__main__":
    main()
