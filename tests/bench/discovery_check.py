#!/usr/bin/env python3
"""The virtual board against the STM32F4 Discovery itself, on identical code (issue #18). pqm4's
last benchmarks.md measured on the Discovery (commit DISCOVERY, 2022: "obtained at 24MHz", Arm GNU
Toolchain 11.3.Rel1) has rows whose exact sources are in pqm4's history: Dilithium2/3/5 `m4f` and
Falcon-512/1024 `m4-ct` (the catalogue's `fpemu-m4` is Round3's m4-ct, identical but for where
`randombytes` is declared), and the PQClean `clean` rows of the PQClean commit pqm4's mupq
submodule pinned then: Dilithium2/3, Falcon-512/1024 (the C floating-point emulation, our
`fpemu-c`'s kind), SPHINCS+-SHA256-128f and SPHINCS+-SHAKE256-128f (simple). The script exports
them from the pqm4 clone the build fetched into build/discovery-check/ (nothing is copied into the
repository), each with the Keccak assembly and mupq's FIPS 202 and SHA-2 code of that commit as
pqm4 built them (the pinned Keccak is newer and faster), measures them on the virtual board with
`pqscope run --impl-dir` (runs in runs/discovery-check/, reused) and prints each operation beside
the Discovery's numbers, with the compiler that built them.

    .venv/bin/python tests/bench/discovery_check.py [-n SAMPLES] [--seed SEED]

With pqm4's compiler (GCC 11.3), in a second checkout so that the usual build tree stays as it is:
    git worktree add ../pqscope-gcc11 && cd ../pqscope-gcc11 && bash host-tools/setup.sh
    cmake --preset stm32f4discovery -DPQSCOPE_COMPILER=gcc11
    .venv/bin/python tests/bench/discovery_check.py
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accuracy import FIXED_TIME_SPREAD, OPS, ROOT, finished, read_back, sample_timeout, signature_speeds  # noqa: E402
from board_pairs import DISCOVERY, PQM4, git  # noqa: E402

EXPORT = ROOT / "build" / "discovery-check" / DISCOVERY
RUNS = ROOT / "runs" / "discovery-check"
# (scheme, impl, the repository holding crypto_sign/<scheme>/<impl> at DISCOVERY); dilithium3/5 m4f
# link dilithium2's files, which the export brings along.
ROWS = (("dilithium2", "m4f", "pqm4"), ("dilithium3", "m4f", "pqm4"), ("dilithium5", "m4f", "pqm4"),
        ("falcon-512", "m4-ct", "pqm4"), ("falcon-1024", "m4-ct", "pqm4"),
        ("dilithium2", "clean", "pqclean"), ("dilithium3", "clean", "pqclean"), ("falcon-512", "clean", "pqclean"),
        ("falcon-1024", "clean", "pqclean"), ("sphincs-sha256-128f-simple", "clean", "pqclean"),
        ("sphincs-shake256-128f-simple", "clean", "pqclean"))
# The symmetric code pqm4 linked at DISCOVERY (mk/crypto.mk): its own Keccak assembly under mupq's
# fips202.c (with the header declaring the permutation's API), for every row; mupq's sha2.c with
# pqm4's assembly SHA-512 block function, for the rows that include sha2.h.
KECCAK = (("pqm4", "common/keccakf1600.S"), ("mupq", "common/fips202.c"), ("mupq", "common/fips202.h"),
          ("mupq", "common/keccakf1600.h"))
SHA2 = (("mupq", "common/sha2.c"), ("mupq", "common/sha2.h"), ("mupq", "common/crypto_hashblocks_sha512.h"),
        ("pqm4", "common/crypto_hashblocks_sha512.c"), ("pqm4", "common/crypto_hashblocks_sha512_inner32.s"))
STACK_MARGIN = 4096  # the harness's own frames above pqm4's measured stack


def export_rows() -> dict[tuple[str, str], Path]:
    """The ROWS' directories at DISCOVERY, each with the symmetric code of then."""
    mupq = git("ls-tree", DISCOVERY, "mupq").split()[2]
    pqclean = subprocess.run(["git", "-C", str(PQM4 / "mupq"), "ls-tree", mupq, "pqclean"], capture_output=True,
                             text=True, check=True).stdout.split()[2]
    commits = {"pqm4": (PQM4, DISCOVERY), "mupq": (PQM4 / "mupq", mupq), "pqclean": (PQM4 / "mupq" / "pqclean", pqclean)}
    EXPORT.mkdir(parents=True, exist_ok=True)
    for repository, (clone, commit) in commits.items():
        paths = [f"crypto_sign/{scheme}/{impl}" for scheme, impl, held_in in ROWS if held_in == repository]
        if paths:
            archive = subprocess.run(["git", "-C", str(clone), "archive", commit, *paths], capture_output=True,
                                     check=True).stdout
            with tarfile.open(fileobj=BytesIO(archive)) as tar:
                tar.extractall(EXPORT, filter="tar")

    def show(repository: str, path: str) -> str:
        clone, commit = commits[repository]
        return subprocess.run(["git", "-C", str(clone), "show", f"{commit}:{path}"], capture_output=True, text=True,
                              check=True).stdout

    dirs = {}
    for scheme, impl, _ in ROWS:
        directory = EXPORT / "crypto_sign" / scheme / impl
        uses_sha2 = any('#include "sha2.h"' in source.read_text() for source in directory.glob("*.[ch]"))
        for repository, path in KECCAK + (SHA2 if uses_sha2 else ()):
            (directory / Path(path).name).write_text(show(repository, path))
        dirs[(scheme, impl)] = directory
    return dirs


def stack_bytes(benchmarks_md: str, scheme: str, impl: str) -> int:
    """pqm4's largest measured stack of the row (its "Memory Evaluation"), plus the harness's."""
    memory = benchmarks_md[benchmarks_md.index("# Memory Evaluation"):benchmarks_md.index("# Hashing Evaluation")]
    found = re.search(rf"^\| {re.escape(scheme)} \| {re.escape(impl)} \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \|", memory,
                      re.MULTILINE)
    if found is None:
        raise SystemExit(f"{DISCOVERY}'s benchmarks.md has no stack figures for {scheme}/{impl}")
    return max(int(g.replace(",", "")) for g in found.groups()) + STACK_MARGIN


def measure_directory(directory: Path, scheme: str, impl: str, samples: int, seed: str, stack: int,
                      timeout: float) -> dict:
    out = RUNS / f"{scheme}-{impl}-n{samples}-{seed}"
    if finished(out):
        return read_back(out)
    command = [sys.executable, "-m", "pqscope", "run", "--json", "--no-report", "--timeout", f"{timeout:.0f}"]
    command += ["--resume", str(out)] if (out / "meta.json").is_file() else [
        "--impl-dir", str(directory), "--scheme", scheme, "--impl", impl, "--stack-bytes", str(stack),
        "-n", str(samples), "--seed", seed, "--out", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})
    if result.returncode != 0:
        raise SystemExit(f"{scheme}/{impl} at {DISCOVERY}: {result.stderr.strip()}")
    return read_back(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--samples", type=int, default=10, help="samples per row (default 10)")
    parser.add_argument("--seed", default="acc", help="master seed in hex (default acc)")
    args = parser.parse_args()
    benchmarks_md = git("show", f"{DISCOVERY}:benchmarks.md")
    published = signature_speeds(benchmarks_md)
    compiler = json.loads((ROOT / "build" / "stm32f4discovery" / "build-info.json").read_text())["compiler"]
    print(f"| scheme | impl | op | Discovery ({DISCOVERY}; avg (runs); min-max) | spread | virtual board, {compiler} "
          "(mean (n); min-max) | deviation |")
    print("|---|---|---|---|---|---|---|")
    targets: dict[str, list[bool]] = {"published spread under 1 %: ±2 %": [], "verification: ±3 %": []}
    for (scheme, impl), directory in export_rows().items():
        theirs = published[(scheme, impl)]
        ours = measure_directory(directory, scheme, impl, args.samples, args.seed,
                                 stack_bytes(benchmarks_md, scheme, impl), sample_timeout(theirs))
        for op in OPS:
            p, m = theirs[op], ours[op]
            deviation = m["mean"] / p.mean - 1
            if p.spread < FIXED_TIME_SPREAD:
                targets["published spread under 1 %: ±2 %"].append(abs(deviation) <= 0.02)
            if op == "verify":
                targets["verification: ±3 %"].append(abs(deviation) <= 0.03)
            print(f"| {scheme} | {impl} | {op} | {p.mean:,} ({p.executions}); {p.low:,}-{p.high:,} | {p.spread:.1%} | "
                  f"{m['mean']:,.0f} ({args.samples}); {m['min']:,.0f}-{m['max']:,.0f} | {deviation:+.1%} |", flush=True)
    print()
    for name, within in targets.items():
        print(f"{name}: {sum(within)} of {len(within)} within")


if __name__ == "__main__":
    main()
