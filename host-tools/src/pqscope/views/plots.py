"""Figures for reports (matplotlib, rendered off-screen to PNG bytes)."""

import io
import math
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
# Laid out as they are drawn: savefig's bbox_inches="tight" would draw every figure twice.
matplotlib.rcParams["figure.constrained_layout.use"] = True
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402

from ..analysis.leakstats import class_ecdfs  # noqa: E402
from ..analysis.sequential import TPoint  # noqa: E402
from ..analysis.ttests import DEFINITE_LEAK_T, LEAK_EVIDENCE_T  # noqa: E402
from ..results.documents.comparison import ComparisonDocument  # noqa: E402
from ..results.documents.runs import OpResult  # noqa: E402
from ..results.documents.suite import FalconSet  # noqa: E402
from ..results.runs import Run  # noqa: E402
from ..results.tls import INITCWND_SEGMENTS, MSS_BYTES, TARGET_BYTES  # noqa: E402


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    plt.close(figure)
    return buffer.getvalue()


def comparison_bars(results: list[OpResult]) -> bytes:
    """Median cycles per operation, one bar per implementation (log scale: schemes differ by 1000x)."""
    ops = list(dict.fromkeys(r.op for r in results))
    labels = list(dict.fromkeys(f"{r.scheme} {r.impl}" for r in results))
    width = 0.8 / len(labels)
    figure, axes = plt.subplots(figsize=(max(6, 1.6 * len(ops) * max(1, len(labels) / 3)), 4))
    for index, label in enumerate(labels):
        medians = [next((r.cycles.median for r in results if f"{r.scheme} {r.impl}" == label
                         and r.op == op and r.cycles), np.nan) for op in ops]
        axes.bar(np.arange(len(ops)) + index * width, medians, width, label=label)
    axes.set_xticks(np.arange(len(ops)) + width * (len(labels) - 1) / 2, ops)
    axes.set_yscale("log")
    axes.set_ylabel("median cycles")
    axes.legend(fontsize="small")
    axes.grid(axis="y", which="both", alpha=0.3)
    return _png(figure)


def cycle_ecdfs(runs: list[Run]) -> bytes:
    """Empirical CDF of cycles per operation: a vertical step is a constant-time operation."""
    ops = list(dict.fromkeys(row.op for run in runs for row in run.rows))
    figure, axes = plt.subplots(1, len(ops), figsize=(4.5 * len(ops), 3.5), squeeze=False)
    for axis, op in zip(axes[0], ops):
        for run in runs:
            cycles = np.sort([row.cycles for row in run.rows if row.op == op and row.verified])
            if cycles.size:
                axis.step(cycles, np.arange(1, cycles.size + 1) / cycles.size, where="post", label=run.label)
        axis.set_title(op.label)
        axis.set_xscale("log")  # implementations differ by orders of magnitude
        axis.set_xlabel("cycles")
        axis.set_ylabel("fraction of samples")
        axis.grid(alpha=0.3)
    axes[0][0].legend(fontsize="small")
    return _png(figure)


def tls_budget(labels: list[str], rows: list[dict]) -> bytes:
    """Handshake bytes against the 9 kB target and the initial congestion windows, beside the
    client's verification time (log scale: schemes differ by 100x)."""
    positions = np.arange(len(rows))
    figure, (size_axis, time_axis) = plt.subplots(1, 2, sharey=True, figsize=(11, max(2.5, 1.2 + 0.5 * len(rows))))
    size_axis.barh(positions, [row["bytes"] for row in rows], color="tab:blue")
    limits = [(TARGET_BYTES, "9 kB target", "tab:green")]
    limits += [(n * MSS_BYTES, f"initcwnd {n}", colour) for n, colour in zip(INITCWND_SEGMENTS, ("tab:orange", "tab:red"))]
    for limit, name, colour in limits:
        size_axis.axvline(limit, color=colour, linestyle="--", label=f"{name} ({limit:,} B)")
    size_axis.set_yticks(positions, [label.replace(" ", "\n") for label in labels], fontsize="small")
    size_axis.invert_yaxis()
    size_axis.set_xlabel("signature + public-key bytes per handshake")
    size_axis.legend(fontsize="small")
    bars = time_axis.barh(positions, [np.nan if row["verify_ms"] is None else row["verify_ms"] for row in rows],
                          color="tab:purple")
    time_axis.bar_label(bars, labels=["" if row["verify_ms"] is None else f"{row['verify_ms']:,.1f}" for row in rows],
                        padding=3, fontsize="small")
    for position, row in zip(positions, rows):
        if row["verify_ms"] is None:
            time_axis.text(0.01, position, "n/a: a part has no run", transform=time_axis.get_yaxis_transform(),
                           va="center", fontsize="small")
    time_axis.set_xscale("log")
    time_axis.set_xlabel("client verification ms (6 verifications)")
    for axis in (size_axis, time_axis):
        axis.grid(axis="x", which="both", alpha=0.3)
    return _png(figure)


def class_ecdfs_png(classes, cycles, label: str = "signing cycles") -> bytes:
    """The ECDFs of the fixed-key and the random-key signatures' `label` on one axis."""
    figure, axis = plt.subplots(figsize=(7, 4))
    for key_class, (values, probabilities) in class_ecdfs(classes, cycles).items():
        axis.step(values, probabilities, where="post", label=f"{key_class} key")
    axis.set_xlabel(label)
    axis.set_ylabel("fraction of signatures")
    axis.grid(alpha=0.3)
    axis.legend()
    return _png(figure)


def falcon_modes_png(document: ComparisonDocument, all_modes: Sequence[str], ops: Sequence[str]) -> bytes:
    """compare-falcon's figure: median cycles per operation (`ops`) and mode (log scale), and
    cycles per FP primitive and mode, hatched where the fixed-vs-random-operand test found a leak."""
    modes = [mode for mode in all_modes if mode in document.modes]
    operations = list(dict.fromkeys(entry.op for entry in document.fp_operations))
    width = 0.8 / len(modes)
    figure, (op_axis, fp_axis) = plt.subplots(1, 2, figsize=(13, 4.5))
    for index, mode in enumerate(modes):
        figures = document.modes[mode]
        medians = [figures.ops[op].median if figures.ops[op] else np.nan for op in ops]
        op_axis.bar(np.arange(len(ops)) + index * width, medians, width, label=mode)
        fp = {e.op: e for e in document.fp_operations if e.mode == mode}
        cycles = [fp[op].cycles_per_op if op in fp and fp[op].cycles_per_op is not None else np.nan
                  for op in operations]
        bars = fp_axis.bar(np.arange(len(operations)) + index * width, cycles, width, label=mode)
        for bar, op in zip(bars, operations):
            if op in fp and fp[op].verdict == "leak":
                bar.set_hatch("///")
    op_axis.set_xticks(np.arange(len(ops)) + width * (len(modes) - 1) / 2, ops)
    op_axis.set_yscale("log")
    op_axis.set_ylabel("median cycles")
    op_axis.set_title(document.scheme)
    fp_axis.set_xticks(np.arange(len(operations)) + width * (len(modes) - 1) / 2, operations)
    fp_axis.set_ylabel("cycles per operation")
    fp_axis.set_title("FP primitives (hatched: timing leak)")
    for axis in (op_axis, fp_axis):
        axis.legend(fontsize="small")
        axis.grid(axis="y", which="both", alpha=0.3)
    return _png(figure)


def falcon_split(falcon: FalconSet) -> bytes:
    """The main job's Falcon figure: each mode's median signing cycles as one bar, its FP
    arithmetic (soft-float or emulation) apart from the rest, labelled with the mode's verdict:
    what constant time costs and where, at a glance."""
    modes = falcon.modes
    labels = [mode.impl for mode in modes]
    totals = np.array([mode.cycles.get("sign", np.nan) for mode in modes], dtype=float) / 1e6
    shares = np.array([mode.profile.fp_share if mode.profile else np.nan for mode in modes], dtype=float)
    figure, axis = plt.subplots(figsize=(9, 0.8 + 0.7 * len(modes)))
    positions = np.arange(len(modes))
    fp = totals * np.nan_to_num(shares)
    axis.barh(positions, fp, color="#e57373", label="FP arithmetic (soft-float or emulation)")
    axis.barh(positions, totals - fp, left=fp, color="#90a4ae", label="everything else")
    for position, total, mode in zip(positions, totals, modes):
        axis.text(total, position, f"  {total:,.1f} M: {str(mode.verdict).upper()}", va="center")
    axis.set_yticks(positions, labels)
    axis.invert_yaxis()
    axis.set_xlabel("median signing cycles (millions)")
    axis.set_xlim(0, np.nanmax(totals) * 1.35)
    axis.set_title(f"{falcon.name}: what constant time costs, and where the time goes")
    axis.legend(fontsize="small", loc="lower right")
    axis.grid(axis="x", alpha=0.3)
    return _png(figure)


def plot_t_vs_n(series: Sequence[TPoint]) -> bytes:
    """|t| against samples as a PNG, with both thresholds; infinite |t| drawn as triangles on top."""
    counted = [point for point in series if point.max_abs_t is not None]
    finite = [point for point in counted if math.isfinite(point.max_abs_t)]
    infinite = [point for point in counted if not math.isfinite(point.max_abs_t)]
    figure, axes = plt.subplots(figsize=(6, 4))
    axes.plot([p.n for p in finite], [p.max_abs_t for p in finite], marker="o", label="max |t|")
    top = 1.5 * max([DEFINITE_LEAK_T] + [p.max_abs_t for p in finite])
    if infinite:
        axes.plot([p.n for p in infinite], [top] * len(infinite), "^", color="red",
                  label="infinite (constant classes differ)")
    axes.axhline(LEAK_EVIDENCE_T, color="orange", linestyle="--", label=f"evidence |t| = {LEAK_EVIDENCE_T:g}")
    axes.axhline(DEFINITE_LEAK_T, color="red", linestyle="--", label=f"leak |t| = {DEFINITE_LEAK_T:g}")
    if counted:
        axes.set_xscale("log")
    else:  # a test decided before a class had the signatures a t-test needs
        axes.text(0.5, 0.5, "too few signatures per class for a t-test", transform=axes.transAxes, ha="center")
    # Linear up to the thresholds, logarithmic above: a definite leak can reach |t| in the thousands.
    axes.set_yscale("symlog", linthresh=DEFINITE_LEAK_T)
    axes.set_xlabel("samples (both classes)")
    axes.set_ylabel("max |t|")
    axes.legend(fontsize="small")
    axes.grid(alpha=0.3)
    return _png(figure)


def signature_map(points: Sequence[tuple[str, str, float, int, bool]]) -> bytes:
    """The atlas's figure: each row's signature bytes against its median signing cycles, both on
    log scales, a colour and marker per family (`points`: family, label, cycles, bytes, leaks),
    each row labelled and a leaking one circled in red and named LEAK: the price of a signature in
    bytes and in time at a glance, as the comparisons of post-quantum signatures draw it."""
    families = list(dict.fromkeys(point[0] for point in points))
    markers = "osD^vP*Xhp<>"
    colours = plt.get_cmap("tab10" if len(families) <= 10 else "tab20")
    figure, axis = plt.subplots(figsize=(10, 6.5))
    for index, family in enumerate(families):
        own = [point for point in points if point[0] == family]
        axis.scatter([point[2] for point in own], [point[3] for point in own], s=45, label=family,
                     marker=markers[index % len(markers)], color=colours(index % colours.N), zorder=3)
    leaking = [point for point in points if point[4]]
    if leaking:
        axis.scatter([point[2] for point in leaking], [point[3] for point in leaking], s=260, facecolors="none",
                     edgecolors="#c62828", linewidths=2, label="leak (exact check)", zorder=4)
    places: dict[tuple[float, int], list[tuple[str, bool]]] = {}  # rows at one point share one label
    for family, label, cycles, size, leaks in points:
        places.setdefault((cycles, size), []).append((label + (": LEAK" if leaks else ""), leaks))
    for index, ((cycles, size), labels) in enumerate(sorted(places.items())):
        axis.annotate("\n".join(text for text, _ in labels), (cycles, size), textcoords="offset points",
                      xytext=(7, 5 if index % 2 == 0 else -9 * len(labels)), fontsize="x-small",
                      color="#c62828" if any(leaks for _, leaks in labels) else "#333333")
    axis.margins(0.12)
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("median signing cycles (log)")
    axis.set_ylabel("signature bytes (log)")
    axis.set_title("Signature size against signing time, per family")
    axis.grid(which="both", alpha=0.3)
    axis.legend(fontsize="small", loc="best")
    return _png(figure)
