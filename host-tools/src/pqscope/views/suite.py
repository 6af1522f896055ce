"""The view of the main job (`pqscope run` of a suite, suite.suite_document's): what was found in
words, a verdict banner per implementation with the evidence that decided it, cycles and time
at both clocks, stack and code, where signing time varies, Falcon's floating-point modes side by
side, then the runs' own figures and TLS budget."""

from collections.abc import Sequence

import click
from rich.console import Console

from ..analysis.words import signature_paths
from ..results.documents.suite import FalconMode, FalconSet, ImplementationEntry, SuiteDocument
from ..results.runs import Run
from .ct import clock_verdict
from .page import Bullets, Figure, Page, Section, Table, Verdict, rich_table
from .runs import detail_tables, progress_banner
from .runs import page as runs_page
from .runs import title

OPS = ("keygen", "sign", "verify")
MEASURES_NOTE = ("Medians of the suite's samples. Time at 24 MHz (the Discovery's benchmark clock, no flash wait "
                 "states) and at 168 MHz for the same cycles (at 168 MHz the flash adds wait states the accelerator "
                 "mostly hides: a few % more cycles).")
CT_NOTE = ("The exact check follows every instruction of a few signatures on the virtual board and names each one "
           "whose time can depend on a secret (the key, the signing randomness, anything derived from them); its "
           "clean result decides no-leak there. The statistics compare signing time with a fixed key against random "
           "keys (dudect style); on a board they, and the replay of every signature on the virtual board, are the "
           "evidence.")
VARIANCE_NOTE = ("Spread of signing cycles over the constant-time test's signatures: coefficient of variation "
                 "(standard deviation / mean) and range. Sources: the functions whose time carries the most of the "
                 "variance (share of the variance each explains, callees apart). Public sources (a rejection loop, "
                 "the message) vary it by design; only time that depends on a secret is a leak.")
FALCON_NOTE = ("Native double: the compiler's calls into libgcc's soft-float (the Cortex-M4F has a single-precision "
               "FPU only), not constant time. The emulations: Falcon's integer implementation of its floating point, "
               "constant time, in C or in M4 assembly. Price: signing cycles over native double's.")


def mega(cycles: float | None) -> str:
    """Cycles as a person reads them: "4.87 M", "312 k"."""
    if cycles is None:
        return "-"
    return f"{cycles / 1e6:,.2f} M" if cycles >= 1e6 else f"{cycles / 1e3:,.0f} k" if cycles >= 1e4 else f"{cycles:,.0f}"


def milliseconds(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f} ms" if value >= 100 else f"{value:,.1f} ms" if value >= 1 else f"{value:,.2f} ms"


def kib(value: int | None) -> str:
    return "-" if value is None else f"{value / 1024:,.1f} KiB"


def verdict_detail(item: ImplementationEntry) -> str:
    """What decided an implementation's verdict, in a line."""
    ct = item.constant_time
    if ct is None:
        return "not tested"
    exact = ct.exact_check
    parts = []
    if exact:
        parts.append(f"exact check of {signature_paths(exact.signatures)}: " + (
            f"{exact.leaking_instructions} leaking instruction{'' if exact.leaking_instructions == 1 else 's'} "
            f"in {', '.join(f'`{name}`' for name in exact.leaking_functions[:4])}"
            + (", ..." if len(exact.leaking_functions) > 4 else "")
            if exact.leaking_instructions else "no instruction's time depends on a secret"))
    # A certain leak's |t| is infinite: "inf", as ct.json writes it.
    parts.append(f"statistics over {ct.signatures:,} signatures: {ct.statistics} (max |t| {ct.max_abs_t:.1f})")
    if ct.localised and ct.verdict == "leak":
        parts.append(f"the key's time in {', '.join(f'`{name}`' for name in ct.localised[:3])}")
    for item in ct.other_clocks:
        same = exact and (item.verdict, set(item.leaking_functions)) == (exact.verdict, set(exact.leaking_functions))
        parts.append(f"at {item.clock.describe()}: " + (
            ("the exact check finds the same" + (" (derived: no load from flash at a secret address)"
                                                 if item.derived else "")) if same else f"exact check {clock_verdict(item)}"))
    return "; ".join(parts)


def _verdict(item: ImplementationEntry) -> str:
    return item.verdict or "not tested"


def verdicts(document: SuiteDocument) -> list[Verdict]:
    return [Verdict(item.name, _verdict(item), verdict_detail(item)) for item in document.implementations]


def measures_table(document: SuiteDocument) -> Table:
    rows = []
    for item in document.implementations:
        sign_ms = item.ms.get("sign", {})
        rows.append([item.name, *(mega(item.cycles.get(op)) for op in OPS),
                     *(milliseconds(sign_ms.get(str(hz))) for hz in document.clocks_hz),
                     kib(item.stack_bytes), kib(item.code_bytes)])
    return Table(("implementation", "keygen cycles", "sign cycles", "verify cycles",
                  *(f"sign at {hz / 1e6:g} MHz" for hz in document.clocks_hz), "stack", "code"), rows)


def variance_table(document: SuiteDocument) -> Table:
    rows = []
    for item in document.implementations:
        spread = item.variance
        if spread is None:
            rows.append([item.name, "-", "-", "-"])
            continue
        sources = ", ".join(f"`{source.function}` {source.share:.0%}" for source in spread.sources) or "-"
        rows.append([item.name, f"{spread.cv:.1%}", f"{mega(spread.min)} to {mega(spread.max)}",
                     sources + ("" if item.verdict != "no-leak" else " (public: no secret moves it)")])
    return Table(("implementation", "variation", "range", "where it varies"), rows)


def falcon_sections(falcon_sets: Sequence[FalconSet]) -> list[Section]:
    from . import plots  # matplotlib is slow to import: only when the figure is drawn

    sections = []
    for falcon in falcon_sets:
        rows = []
        for mode in falcon.modes:
            price = mode.price.get("sign")
            extra = mode.extra_ms.get("sign")
            rows.append([mode.impl, mode.words, mega(mode.cycles.get("sign")),
                         "-" if price is None or mode.impl == "fpnative" else f"{price:+.0%} ({extra:+,.1f} ms)",
                         "-" if not mode.profile else f"{mode.profile.fp_share:.0%}", mode.verdict or "-",
                         ", ".join(f"`{name}`" for name in mode.leaking_functions[:4]) or "-"])
        modes = Table(("mode", "floating point", "sign cycles", "price of constant time", "FP arithmetic's share",
                       "verdict", "leaking functions"), rows, left=2)
        primitives = sorted({name for mode in falcon.modes if mode.profile for name in mode.profile.fp_primitives},
                            key=("add", "mul", "div", "sqrt").index)
        primitive_rows = [[primitive, *(_per_call(mode, primitive) for mode in falcon.modes)] for primitive in primitives]
        blocks = [FALCON_NOTE, modes]
        if primitive_rows:
            blocks += ["Each FP primitive's cycles per call inside signing (callees included), from the virtual "
                       "board's profile of the constant-time test's signatures.",
                       Table(("primitive", *(f"{mode.impl} cycles per call" for mode in falcon.modes)),
                             primitive_rows)]
        blocks.append(Figure(lambda falcon=falcon: plots.falcon_split(falcon),
                             f"{falcon.name} signing cycles per mode, FP arithmetic apart, with each mode's verdict"))
        sections.append(Section(f"{falcon.name}: floating-point modes", blocks))
    return sections


def _per_call(mode: FalconMode, primitive: str) -> str:
    entry = mode.profile.fp_primitives.get(primitive) if mode.profile else None
    return "-" if entry is None else f"{entry.cycles_per_call:,.0f} (`{entry.function}`)"


def page(document: SuiteDocument, runs: Sequence[Run]) -> Page:
    intro = [*progress_banner(document.runs.run_dir), Bullets(list(document.summary))]
    sections = [
        Section("Constant-time verdicts", [*verdicts(document), CT_NOTE]),
        Section("Cycles, time and memory", [MEASURES_NOTE, measures_table(document)]),
        Section("Timing variance", [VARIANCE_NOTE, variance_table(document)]),
        *falcon_sections(document.falcon),
        *runs_page(document.runs, runs).sections,
        Section("Every operation's cycles", [f"Run directory: `{document.runs.run_dir}`",
                                             *detail_tables(document.runs)]),
    ]
    return Page(title(document.runs), intro, sections)


def show(console: Console, document: SuiteDocument) -> None:
    """The compact table, each verdict, Falcon's modes, then the summary: the answer last, where a
    terminal leaves it in view."""
    console.print(rich_table(measures_table(document), title(document.runs)))
    click.echo(f"suite saved in {document.runs.run_dir}; every operation's statistics in its report")
    for item in document.implementations:
        others = item.constant_time.other_clocks if item.constant_time else ()
        click.echo(f"{_verdict(item).upper():>12}  {item.name}"
                   + "".join(f" ({other.clock.hz / 1e6:g} MHz: {other.verdict.upper()})" for other in others)
                   + ": " + verdict_detail(item).replace("`", ""))
    for falcon in document.falcon:
        for mode in falcon.modes:
            price = mode.price.get("sign")
            click.echo(f"{falcon.name} {mode.impl}: sign {mega(mode.cycles.get('sign'))} cycles"
                       + ("" if price is None or mode.impl == "fpnative" else f" ({price:+.0%})")
                       + f", {mode.verdict}")
    click.echo("")
    for sentence in document.summary:
        click.echo(sentence.replace("`", ""))
