#!/usr/bin/env python3
"""The replay's gains on a stand-in board (issue #31's targets), printed, never asserted: the
stand-in (tests/virtual-board/standin.py) is the virtual board at 168 MHz with flash wait states and noise,
reached over its serial port; the replay beside it is the 24 MHz model (flash free). Each case
runs `pqscope ct` into runs/replay/<case>/ (resumed there if interrupted; a finished one is read
back) and prints what decided, at how many signatures, and what the test would need without the
replay, computed from the variance measured (the raw total's, beside the residuals'):

- ml-dsa: ML-DSA-44 m4f with --bound 1: the signatures to a no-leak with no leak above 1 % of the
  mean shown; without the replay, n x (the raw total's bound / 1 %)^2 (its bound shrinks as
  1/sqrt(n)), at least the 2,000 a no-leak needs;
- flash-table: control-flash-table leaky, a leak only the stand-in has (flash stalls): the
  signatures to a leak; without the replay, n x the variance ratio (the same t needs that many);
- nonces: each nonce control's leak, convicted on the board by the exact check's findings;
- fpnative: Falcon-512 fpnative at 2,000 signatures: each soft-float finding on the board;
- fpnative-probed: the same at 2,000 on two stand-ins serving the probed image (its row's probes:
  the square root, the division and the conversions): a finding in a probed function tested on
  the probe's cycles, its own time on the "board", where the rest of the signing's board-only
  variance does not reach;
- fpnative-attribution: where the sizes the board shows go, at 600 signatures: the same test with
  the replay at the stand-in's own timing (168 MHz, flash modelled) gives each function's time on
  the "board", which a real board never shows: per finding, the function's own difference and the
  functions whose board-only time (beyond their model time at their mean pace) differs most;
- twins: each constant-time twin at 10^5 signatures on two stand-ins (hours: resumable).

    .venv/bin/python tests/bench/replay_bench.py [CASE ...]     (default: all but the long ones)
"""

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "host-tools/src"), str(ROOT / "tests/virtual-board")]

import numpy as np  # noqa: E402
from pqscope.analysis.confirmation import outcome_label, slow_half  # noqa: E402
from pqscope.analysis.replay import REPLAY_DIRECTORY, read_intervals  # noqa: E402
from pqscope.measure.capture import shard_directories  # noqa: E402
from standin import ct_on_stand_in  # noqa: E402

OUT = ROOT / "runs" / "replay"
NO_LEAK_LEAST = 2000  # 1000 signatures per class
NONCES = ("control-derived-nonce", "control-random-nonce", "control-nonce-division")
TWINS = ("control-early-exit", "control-branch", "control-udiv", "control-flash-table", *NONCES)


def measured(case: str, scheme: str, impl: str, n: int, *options: str, boards: int = 1,
             probes: tuple[str, ...] | None = None) -> tuple[dict, float]:
    """The case's ct document on `boards` stand-ins (serving the probed image with `probes` besides
    its row's, if given) and the seconds this call took (0: read back)."""
    path = OUT / case
    if (path / "ct.json").exists():
        return json.loads((path / "ct.json").read_text()), 0.0
    started = time.monotonic()
    document, _ = ct_on_stand_in(scheme, impl, n, path, *options, boards=boards, resume=(path / "meta.json").exists(),
                                 probes=probes)
    return document, time.monotonic() - started


def signatures(document: dict) -> int:
    return document["n"]["fixed"] + document["n"]["random"]


def took(seconds: float) -> str:
    return f", {seconds:.0f} s" if seconds else ""


def ml_dsa() -> None:
    document, seconds = measured("ml-dsa-44-bound", "ml-dsa-44", "m4f", 8000, "--bound", "1")
    n, share = signatures(document), document["bound"]["share_of_mean"]
    raw_share = document["uncorrected"]["bound"]["share_of_mean"]
    without = max(NO_LEAK_LEAST, math.ceil(n * (raw_share / 0.01) ** 2))
    print(f"ml-dsa-44 m4f --bound 1: {document['verdict']} at {n} signatures, bound {share:.4%} of the mean "
          f"(variance removed {document['control_variate']['variance_removed']:.4%}); without the replay: raw bound "
          f"{raw_share:.3%} at {n}, 1 % needs about {without:,} signatures: {without / n:.0f}x{took(seconds)}")


def flash_table() -> None:
    document, seconds = measured("flash-table", "control-flash-table", "leaky", 100_000)
    n, factor = signatures(document), document["control_variate"]["signatures_factor"]
    factor = math.inf if isinstance(factor, str) else factor
    print(f"control-flash-table leaky: {document['verdict']} at {n} signatures ({document['reason']}); raw verdict "
          f"{document['uncorrected']['verdict']}; without the replay: about {n * factor:,.0f} signatures "
          f"({factor:,.0f}x){took(seconds)}")


def nonces() -> None:
    for scheme in NONCES:
        document, seconds = measured(scheme, scheme, "leaky", 2000)
        found = "; ".join(f"{item['function']}: {item['text']}" for item in document["replay"]["confirmations"])
        print(f"{scheme} leaky: {document['verdict']} at {signatures(document)} signatures; {found}{took(seconds)}")


def fpnative(n: int = 2000, boards: int = 1, probed: bool = False) -> None:
    document, seconds = measured(f"falcon-512-fpnative-{n}" + ("-probed" if probed else ""), "falcon-512", "fpnative",
                                 n, "--fixed-n", boards=boards, probes=() if probed else None)
    print(f"falcon-512 fpnative{' (probed image)' if probed else ''}: {document['verdict']} at "
          f"{signatures(document)} signatures{took(seconds)}")
    for item in document["replay"]["confirmations"]:
        instructions = "instruction" if item["findings"] == 1 else "instructions"
        print(f"  {item['function']} ({item['findings']} {instructions}): {item['text']}; the model: "
              + ("-" if item["model_cycles"] is None else f"{item['model_cycles']:+,.0f} cycles"))


def twins() -> None:
    for scheme in TWINS:
        document, seconds = measured(f"twin-{scheme}", scheme, "ct", 100_000, "--fixed-n", boards=2)
        print(f"{scheme} ct at 10^5: {document['verdict']} (max |t| {document['max_abs_t']}){took(seconds)}")


def fpnative_probed() -> None:
    """The findings in the functions the image probes (`__floatdidf` as `__aeabi_l2d`, `__fixdfdi`
    as `__aeabi_d2lz`, `__ieee754_sqrt`) on their own time: what the totals leave short of definite
    at 2,000 (`__floatdidf`, t 3.7) shows on its probe, where only the stand-in's counter noise
    (each probed call's two reads) and the interrupts that land in it are left."""
    fpnative(2000, boards=2, probed=True)


def fpnative_attribution(n: int = 600) -> None:
    """Each finding's size on the board beside the stand-in's own time, in the function and elsewhere."""
    case = f"falcon-512-fpnative-{n}"
    document, seconds = measured(case, "falcon-512", "fpnative", n, "--fixed-n")
    _, own_seconds = measured(f"{case}-own-timing", "falcon-512", "fpnative", n, "--fixed-n",
                              "--replay-flash-timing", "modelled")
    model, own = (replayed_functions(OUT / name) for name in (case, f"{case}-own-timing"))
    indices = sorted(model.keys() & own.keys())
    print(f"falcon-512 fpnative at {len(indices)} signatures: the board's sizes and the stand-in's own time"
          f"{took(seconds + own_seconds)}")

    def column(intervals: dict, function: str, field: int) -> np.ndarray:
        return np.array([intervals[index].get(function, (0, 0, 0))[field] for index in indices], dtype=float)

    # Each function's time on the stand-in beyond its model time at its mean pace.
    board_only = {}
    for name in sorted({name for index in indices for name in own[index]}):
        fast, board = column(model, name, 0), column(own, name, 0)
        board_only[name] = board - (board.sum() / fast.sum() if fast.sum() else 0.0) * fast
    every = sum(board_only.values())
    for item in document["replay"]["confirmations"]:
        function = item["function"]
        label = outcome_label(column(model, function, 1), column(model, function, 2))
        if not label.any():
            continue
        slow = slow_half(label)
        largest = sorted(board_only, key=lambda name: -halves_t(board_only[name], slow))[:3]
        print(f"  {function}: {item['text']}\n    the stand-in's own time in it "
              f"{halves(outcome_label(column(own, function, 1), column(own, function, 2)), slow)} (the model "
              f"{halves(label, slow)}); board-only time, every function's {halves(every, slow)}, most apart: "
              + ", ".join(f"{name} {halves(board_only[name], slow)}" for name in largest))


def halves_apart(values: np.ndarray, slow: np.ndarray) -> tuple[float, float]:
    """The `slow` half's mean less the other's, and its standard error."""
    error = math.sqrt(values[slow].var(ddof=1) / slow.sum() + values[~slow].var(ddof=1) / (~slow).sum())
    return float(values[slow].mean() - values[~slow].mean()), error


def halves(values: np.ndarray, slow: np.ndarray) -> str:
    cycles, error = halves_apart(values, slow)
    return f"{cycles:+,.0f} +- {error:,.0f}"


def halves_t(values: np.ndarray, slow: np.ndarray) -> float:
    cycles, error = halves_apart(values, slow)
    return abs(cycles) / error if error else 0.0


def replayed_functions(run: Path) -> dict[int, dict]:
    """The replay's functions (exclusive, calls, inclusive) per signature of the test at `run`."""
    path = run / REPLAY_DIRECTORY
    return {index: {name: (time.cycles, time.calls, time.inclusive_cycles) for name, time in entry.functions.items()}
            for index, entry in read_intervals(path, shard_directories(path)).items()}


LONG = ("fpnative-probed", "fpnative-attribution", "twins")  # hours: run only when named
CASES = {"ml-dsa": ml_dsa, "flash-table": flash_table, "nonces": nonces, "fpnative": fpnative,
         "fpnative-probed": fpnative_probed,
         "fpnative-attribution": fpnative_attribution, "twins": twins}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*", choices=[[], *CASES], default=[], metavar="CASE")
    for case in parser.parse_args().cases or [case for case in CASES if case not in LONG]:
        CASES[case]()


if __name__ == "__main__":
    main()
