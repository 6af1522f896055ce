"""The view of Falcon's floating-point modes side by side (`pqscope compare-falcon`): the main
job's section of the modes (views.suite), then each mode's cycles, stack and constant-time
verdict, the price of constant time, every FP primitive's cost and verdict, where the time depends
on the key, and one figure of it all."""

from rich.console import Console

from ..link.protocol import Op
from ..results.documents.comparison import ComparisonDocument, ModeTest
from .page import Figure, Page, Section, Table, rich_table
from .suite import falcon_sections

OPS = tuple(op.label for op in Op)

def _cycles(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _t(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"  # a certain leak's infinite |t|: "inf"


MODE_HEADINGS = ("mode", "keygen median", "sign median", "verify median", "stack B", "ct verdict", "ct max |t| total",
                 "ct max |t| function")
PRICE_HEADINGS = ("ratio", *OPS)
LOCALISATION_HEADINGS = ("mode", "function", "t", "share of the difference", "mean difference (cycles)")


def mode_rows(document: ComparisonDocument) -> list[list[str]]:
    rows = []
    for mode, figures in document.modes.items():
        rows.append([mode, *(_cycles(figures.ops[op].median if figures.ops[op] else None) for op in OPS),
                     "-" if figures.stack_bytes is None else f"{figures.stack_bytes:,}",
                     figures.ct.verdict, _t(figures.ct.max_abs_t), _worst_function(figures.ct)])
    return rows


def _worst_function(ct: ModeTest) -> str:
    worst = ct.max_abs_t_function
    return "-" if worst is None else f"{_t(worst.t)} ({worst.function})"


def price_rows(document: ComparisonDocument) -> list[list[str]]:
    return [[name, *(_ratio(ratios[op]) for op in OPS)] for name, ratios in document.price_of_constant_time.items()]


def _fp_headings(document: ComparisonDocument) -> tuple[str, ...]:
    modes = list(document.modes)
    return ("operation", *(f"{mode} cycles/op" for mode in modes), *(f"{mode} verdict" for mode in modes))


def fp_rows(document: ComparisonDocument) -> list[list[str]]:
    by_key = {(entry.op, entry.mode): entry for entry in document.fp_operations}
    rows = []
    for op in dict.fromkeys(entry.op for entry in document.fp_operations):
        entries = [by_key.get((op, mode)) for mode in document.modes]
        cycles = ["-" if e is None or e.cycles_per_op is None else f"{e.cycles_per_op:,.1f}" for e in entries]
        verdicts = ["-" if e is None else e.verdict + (f" ({e.top_function})" if e.top_function else "")
                    for e in entries]
        rows.append([op, *cycles, *verdicts])
    return rows


def localisation_rows(document: ComparisonDocument) -> list[list[str]]:
    rows = []
    for mode, figures in document.modes.items():
        for function in figures.ct.top_functions:
            share = function.share
            rows.append([mode, function.function, _t(function.t), "-" if share is None else f"{100 * share:.0f}%",
                         f"{function.difference:+,.1f}"])
    return rows


def _tables(document: ComparisonDocument) -> list[tuple[str, Table]]:
    """The comparison's tables, each under the title the terminal gives it."""
    return [
        (f"{document.scheme}: floating-point modes on {document.board}", Table(MODE_HEADINGS, mode_rows(document))),
        ("Price of constant time (median cycles, emulated / native)", Table(PRICE_HEADINGS, price_rows(document))),
        (f"Falcon FP primitives ({document.fp_op_reps} per signature)",
         Table(_fp_headings(document), fp_rows(document))),
        ("Where the time depends on the key (constant-time test profile)",
         Table(LOCALISATION_HEADINGS, localisation_rows(document), left=2)),
    ]


def show(console: Console, document: ComparisonDocument) -> None:
    for title, table in _tables(document):
        console.print(rich_table(table, title))
    console.print(f"comparison saved in {document.run_dir}")


def page(document: ComparisonDocument, _data=None) -> Page:
    from . import plots  # matplotlib is slow to import: only when the figure is drawn

    modes, price, primitives, localisation = (table for _, table in _tables(document))
    reps = document.fp_op_reps
    intro = [f"Run directory: `{document.run_dir}`. `fpnative`: C doubles (libgcc/libm soft-float on the "
             "single-precision FPU); `fpemu-c`, `fpemu-m4`: Falcon's constant-time integer emulation in C and in "
             "Cortex-M4 assembly."]
    # The main job's section of Falcon's modes first, then what only this comparison measures.
    return Page(f"pqscope compare-falcon: {document.scheme} on {document.board}", intro, [
        *falcon_sections(document.falcon),
        Section("Modes", [modes]),
        Section("Price of constant time", ["Median cycles of an emulated mode divided by native doubles'.", price]),
        Section("Falcon's FP primitives", [
            f"Each primitive {reps} times per signature on a key of operands (catalogue rows `falcon-fp-*`): cycles "
            f"per operation are median signing cycles with random operands / {reps} (including the loop's few cycles "
            "per call); the verdict is the fixed-vs-random-operand test's.", primitives]),
        Section("Localisation", ["The functions whose time depends most on the key in each mode's constant-time "
                                 "test (virtual board profile).", localisation]),
        Section("Figures", [Figure(lambda: plots.falcon_modes_png(document, list(document.modes), OPS),
                                   "median cycles per operation and mode, and each FP primitive's cycles per operation (hatched: a "
                                   "timing leak): what each mode's arithmetic costs and which leaks")]),
    ])
