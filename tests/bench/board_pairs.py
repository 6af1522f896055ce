#!/usr/bin/env python3
"""The same code measured on both of pqm4's boards, from pqm4's own history (issue #18: how much
of the accuracy table's deviation is the board). pqm4's benchmarks.md at DISCOVERY is the last
one measured on the STM32F4 Discovery (24 MHz, 0 wait states), at L4R5ZI the first on the
Nucleo-L4R5ZI (20 MHz, 0 wait states); both READMEs name the same compiler (Arm GNU Toolchain
11.3.Rel1). For every signature implementation whose directory is identical at both commits, it
prints each operation's published cycles on both boards, their ratio and the share of the time
pqm4's profile puts in hashing: the shared code that changed in between (listed below the
table; pqm4 rewrote its Keccak assembly) moves an operation that hashes a lot, so only those
that hash little compare the boards. Everything is read from the pqm4 clone the build fetched
(cmake --preset stm32f4discovery); nothing is copied.

    .venv/bin/python tests/bench/board_pairs.py
"""

import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accuracy import DEPS, OPS, signature_speeds  # noqa: E402

PQM4 = DEPS / "pqm4-src"
# pqm4 commits (https://github.com/mupq/pqm4): "Remove schemes that are no longer under
# consideration by NIST (#238)", 2022-11-07, the last benchmarks.md from the Discovery (README:
# "obtained at 24MHz"), and "Update benchmarks", 2024-03-17, which re-measured every row on the
# Nucleo-L4R5ZI, its default board since.
DISCOVERY = "918f379"
L4R5ZI = "527e9d6"
COMPARABLE_HASHING = 0.02  # hashing share below which a changed Keccak cannot move a row by much


def git(*args: str) -> str:
    result = subprocess.run(["git", "-C", str(PQM4), *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} in {PQM4}: {result.stderr.strip()} (configure the board tree "
                         "first: cmake --preset stm32f4discovery fetches pqm4 with its history)")
    return result.stdout


def hashing_shares(benchmarks_md: str) -> dict[tuple[str, str], dict[str, float]]:
    """The signature rows of the "Hashing Evaluation" section: (scheme, impl) -> op -> share."""
    shares, section, subsection = {}, "", ""
    for line in benchmarks_md.splitlines():
        if line.startswith("# "):
            section = line
        elif line.startswith("## "):
            subsection = line.strip()
        elif section.startswith("# Hashing") and subsection == "## Signature Schemes" and line.startswith("| "):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            figures = [re.fullmatch(r"([\d.]+)%", cell) for cell in cells[2:5]]
            if all(figures):
                shares[(cells[0], cells[1])] = {op: float(f[1]) / 100 for op, f in zip(OPS, figures)}
    return shares


def implementation_tree(commit: str, scheme: str, impl: str) -> str | None:
    listing = git("ls-tree", commit, f"crypto_sign/{scheme}/{impl}").split()
    return listing[2] if listing else None


def main() -> None:
    documents = {commit: git("show", f"{commit}:benchmarks.md") for commit in (DISCOVERY, L4R5ZI)}
    speeds = {commit: signature_speeds(text) for commit, text in documents.items()}
    shares = {commit: hashing_shares(text) for commit, text in documents.items()}
    print(f"| scheme | impl | op | Discovery ({DISCOVERY}; avg (runs); min-max) | Nucleo-L4R5ZI ({L4R5ZI}) | "
          "L4R5ZI vs Discovery | hashing share (Discovery / L4R5ZI) | compares the boards |")
    print("|---|---|---|---|---|---|---|---|")
    for scheme, impl in sorted(set(speeds[DISCOVERY]) & set(speeds[L4R5ZI])):
        tree = implementation_tree(DISCOVERY, scheme, impl)
        if tree is None or tree != implementation_tree(L4R5ZI, scheme, impl):
            continue
        for op in OPS:
            old, new = speeds[DISCOVERY][(scheme, impl)][op], speeds[L4R5ZI][(scheme, impl)][op]
            share = [shares[commit].get((scheme, impl), {}).get(op) for commit in (DISCOVERY, L4R5ZI)]
            known = all(s is not None for s in share)
            print(f"| {scheme} | {impl} | {op} | {old.mean:,} ({old.executions}); {old.low:,}-{old.high:,} | "
                  f"{new.mean:,} ({new.executions}); {new.low:,}-{new.high:,} | {new.mean / old.mean - 1:+.1%} | "
                  + (" / ".join(f"{s:.1%}" for s in share) if known else "-") + " | "
                  + ("yes" if known and max(share) < COMPARABLE_HASHING else "no") + " |")
    changed = git("diff", "--name-only", DISCOVERY, L4R5ZI, "--", "common", "mupq").split()
    print(f"\nshared code changed between {DISCOVERY} and {L4R5ZI} (common/, the mupq submodule): {', '.join(changed)}")


if __name__ == "__main__":
    main()
