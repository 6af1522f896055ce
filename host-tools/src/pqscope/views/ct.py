"""The view of a constant-time test (`pqscope ct`): the verdict and the evidence that decided it,
the localisation, the exact check beside it, the boards that measured, and the plots of the
values that decided (|t| against N, both classes' distributions)."""

from collections.abc import Sequence

import click
from rich.console import Console

from ..analysis.words import signature_paths
from ..project.toolchain import built_with_text
from ..results.documents.ct import CtDocument, FunctionLeak
from ..results.documents.ct_parts import BoardAgreement, ExactClear, ExactFinding, ReplayPart
from ..results.documents.taint import VerdictAtClock
from .page import Code, Facts, Figure, Page, Section, Table
from .runs import clock_text
from .taint import findings_section, source_text, taint_executions, taint_source

T_CAPTION = ("|t| of the key-class test as the signatures accumulate: a leak climbs past the threshold lines, a "
             "constant-time signing stays under them.")
CLASSES_CAPTION = ("The fixed key's and the random keys' cycles, cumulative: curves apart mean the time depends on the "
                   "key.")
RAW_CAPTION = ("The board's own cycles per class before the replay's prediction is taken out: public variance that "
               "hides what the residuals show.")
SHARE_NOTE = ("The share is a function's mean difference between the classes (random keys minus the fixed key) over "
              "the total's; functions can differ in opposite directions, so shares may exceed 100% or be negative.")
BOARDS_NOTE = ("Each board signed the same keys and messages in the same proportions: its cycles should not differ "
               "from the other boards'. t: per key class, the board's mean cycles less the median of the boards' means, "
               "over the standard error of its mean; the larger of the two. A board past |t| = 4.5 stands out (another "
               "clock, firmware or chip revision) and its signatures deserve a look before the verdict is trusted; "
               "with two boards, both stand out alike.")
BOARDS_HEADINGS = ("serial number", "place or port", "signatures", "median cycles (fixed key)",
                   "median cycles (random keys)", "t against the boards", "consensus")


def bound_text(document: CtDocument) -> str:
    """The ct document's TOST bound in words, with its scope: the statistics bound the time that
    depends on the long-term key; a clear exact check adds that none depends on any secret on the
    paths it followed."""
    bound = document.statistics.total.bound
    exact = document.taint
    clear = exact is not None and exact.verdict == "no-leak"
    return (f"no leak larger than {bound.cycles:,.1f} cycles" + (f" ({bound.share:.3%} of the mean)"
                                                                  if bound.share is not None else "")
            + " at 95% confidence in time that depends on the long-term key"
            + (f"; the exact check found no time that depends on any secret, the signing randomness included, on "
               f"{signature_paths(exact.signatures)}" if clear else ""))


def _rounded(value) -> str:
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def function_line(function: FunctionLeak) -> str:
    """A ranked function in words, e.g. "__ieee754_sqrt: t = 88.3, +412 cycles per signature (random
    keys minus the fixed key), 63% of the total's difference"."""
    t_text = "t: too few samples" if function.t is None else f"t = {function.t:.1f}"
    text = f"{function.name}: {t_text}, {function.difference:+,.0f} cycles per signature"
    if function.share is not None:
        text += f", {function.share:.0%} of the total's difference"
    return text


def clock_verdict(item: VerdictAtClock) -> str:
    """The exact check's verdict at another of the board's clocks, its leaks' functions, and
    whether it was derived from the check at the test's clock."""
    return item.verdict + (f", {item.leaking_instructions} leaking instruction"
                           f"{'' if item.leaking_instructions == 1 else 's'} in {', '.join(item.leaking_functions[:4])}"
                           + (", ..." if len(item.leaking_functions) > 4 else "") if item.leaking_instructions else "") + (
        " (derived: the check at the test's clock found no load from flash at a secret address, the only finding "
        "a clock changes)" if item.derived else "")


def _decided(document: CtDocument) -> list[str]:
    """What decided the verdict, in words: the statistics' result, and the exact check's findings
    a source line at a time (an unrolled loop puts several instructions on one line); at most
    five lines. Results from before the evidence was kept have none."""
    lines, exact = [], {}
    for item in document.deciding_evidence:
        if isinstance(item, ExactClear):
            lines.append(f"exact check: no instruction whose time depends on a secret on "
                         f"{signature_paths(item.signatures)}")
        elif isinstance(item, ExactFinding):
            found = exact.setdefault((item.kind, item.function or "?", source_text(item.file, item.line, item.address)),
                                     [0, 0])
            found[0] += 1
            found[1] += item.executions
        elif item.strongest_test is None:  # fewer signatures per class than a t-test needs
            lines.append("statistics: too few signatures per class for a t-test")
        else:
            lines.append(f"statistics: max |t| = {_rounded(item.max_abs_t)} ({item.strongest_test})"
                         + (f"; {item.function}: t = {_rounded(item.function_t)}" if item.function else ""))
    lines += [f"exact check: {kind} on a secret in {function} at {source} ({count} instruction"
              f"{'' if count == 1 else 's'}, {executions:,} executions)"
              for (kind, function, source), (count, executions) in exact.items()]
    return lines[:5] + ([f"and {len(lines) - 5} more places"] if len(lines) > 5 else [])


def _facts(document: CtDocument) -> Facts:
    statistics, clock = document.statistics, document.test_clock
    total = statistics.total
    facts = [("clock", clock_text(clock.hz, clock.flash_wait_states) if clock and clock.hz else "not recorded"),
             ("built with", built_with_text(document.built_with)),
             ("verdict", document.verdict), ("why", document.reason),
             *([("decided by", "; ".join(_decided(document)))] if document.deciding_evidence else []),
             *([("secrets covered", document.scope)] if document.scope else []),
             # The statistics' own verdict is kept apart only beside a verdict of all the evidence (a scope).
             *([("statistics alone", statistics.verdict)] if document.scope is not None else []),
             *((f"exact check at {item.clock.describe()}", clock_verdict(item)) for item in document.other_clocks),
             ("samples", f"{total.n.fixed:,} fixed-key, {total.n.random:,} random-key"),
             ("max |t|", _rounded(total.max_abs_t)), ("strongest test", str(total.strongest_test))]
    if statistics.corrupt_accepted:
        facts.append(("corrupted signatures accepted", f"{statistics.corrupt_accepted:,}: still valid with one bit "
                      "of the signature's first byte flipped, which verification must check (their signing time "
                      "is counted)"))
    public = statistics.public_part
    if public:
        found = [name for name in public.functions if name in public.from_exact_check]
        facts.append(("public time", f"{', '.join(public.functions)}: {public.mean_fixed:,.0f} cycles fixed-key, "
                      f"{public.mean_random:,.0f} random-key, set apart before testing"
                      + (f"; {', '.join(found)} by the exact check, which shows that code runs on declared-public "
                         f"values only (that time alone: {public.verdict})" if found else "")))
    correction = statistics.retry_correction
    if correction:
        facts.append(("rejection attempts", f"{correction.retry_function}: "
                      f"{correction.cycles_per_attempt:,.0f} cycles each, removed before testing "
                      f"(mean attempts fixed {correction.mean_attempts_fixed:.2f}, "
                      f"random {correction.mean_attempts_random:.2f}); "
                      f"uncorrected verdict: {statistics.uncorrected.verdict}"))
    if statistics.replay_fit:
        facts.append(("replay", replay_text(document)))
    if total.bound:
        requested = document.requested_bound
        facts.append(("bound", bound_text(document) + ("" if not requested else
                      f"; asked for {requested.share_of_mean:.3%}: {'shown' if requested.shown else 'not shown'}")))
    inflation = document.probes_added
    if inflation:
        share = inflation.share_of_total
        facts.append(("probe inflation", f"{inflation.mean_cycles:,.0f} cycles per signature"
                      + (f" ({share:.2%} of the total)" if share is not None else "")))
    return Facts(facts)


def replay_text(document: CtDocument) -> str:
    """What the replay on the virtual board did for a board's test, in words."""
    fit = document.statistics.replay_fit
    factor = fit.signatures_factor
    factor_text = f"{factor:,.0f}" if factor < 1e6 else "more than a million"
    return (f"the virtual board replayed every signature (flash {document.replayed.flash_timing}); its model "
            f"cycles explain {fit.variance_removed:.2%} of the board's variance and were regressed out (slope "
            f"{fit.slope:.4f}): the raw total would need {factor_text} times the signatures for the same power "
            f"(raw verdict: {document.statistics.uncorrected.verdict})")


def _confirmations(replay: ReplayPart) -> Section | None:
    """The exact check's findings tested on the board, by the replay's labels."""
    rows = [[item.function, str(item.findings), item.text,
             "-" if item.model_cycles is None else f"{item.model_cycles:+,.0f}"]
            for item in replay.confirmations]
    if not rows:
        return None
    return Section("The exact check's findings on the board", [
        Table(("function", "leaking instructions", "on the board", "the model's difference (cycles)"), rows, left=3),
        "Each replayed signature is labelled by the function's model time beyond its calls at their mean cost: the "
        "cycles the secret-dependent outcomes its findings name add or take away. The board's cycles are regressed "
        "on the label and on the rest of the model's time; the sizes are the difference between the signatures "
        "whose label is above the median and the others."])


def _localisation(document: CtDocument) -> Section | None:
    functions = document.statistics.top_functions
    if not functions:
        return None
    taint = document.taint

    def inside(function: str) -> list[str]:
        if taint is None:
            return []
        found = taint.finding_counts(function)
        return [f"{found.leaks} leak, {found.declassified} declassified"
                if found and (found.leaks or found.declassified) else "none"]

    headings = ("function", "share of the difference", "t", "mean difference (cycles)",
                *(("exact check's findings inside",) if taint else ()))
    rows = [[f.name, _number(f.share, ".0%"), _number(f.t, ".1f"), _number(f.difference, "+,.0f"), *inside(f.name)]
            for f in functions]
    return Section(f"Where the time differs ({document.statistics.localised_by})", [Table(headings, rows), SHARE_NOTE])


def _boards(boards: Sequence[BoardAgreement]) -> Section:
    def median(value) -> str:
        return "-" if value is None else f"{value:,.0f}"

    rows = [[board.serial, board.place or board.port or board.target or "-", f"{board.signatures:,}",
             median(board.median_fixed), median(board.median_random),
             "-" if board.t_against_the_boards is None else _rounded(board.t_against_the_boards),
             "stands out" if board.stands_out else "agrees"] for board in boards]
    return Section("Boards", [Table(BOARDS_HEADINGS, rows, left=2), BOARDS_NOTE])


def page(document: CtDocument, evidence: tuple[Sequence, ...]) -> Page:
    from ..analysis import sequential
    from . import plots  # numpy/matplotlib: loaded only when a figure is drawn

    sections = [section for section in (_localisation(document),) if section]
    if document.taint is not None:
        sections.append(findings_section(document.taint, "The exact check beside it (pqscope taint)"))
    confirm = document.probe_suggestion
    if confirm:
        sections.append(Section("Confirm on a board", [
            f"Probes of {', '.join(confirm.probes)} time these functions on the board itself:",
            Code(confirm.command), *[f"{f.function}: {f.why}" for f in confirm.not_probeable]]))
    confirmed = _confirmations(document.replayed)
    if confirmed:
        sections.append(confirmed)
    if document.farm_boards:
        sections.append(_boards(document.farm_boards))
    plotted = document.statistics.plotted or "signing cycles"
    classes, values, *raw = evidence
    sections += [
        Section(f"|t| against the number of samples: {plotted}", [Figure(
            lambda: plots.plot_t_vs_n(sequential.t_against_n(classes, values)), T_CAPTION)]),
        Section(f"{plotted} per key class", [Figure(
            lambda: plots.class_ecdfs_png(classes, values, plotted), CLASSES_CAPTION)])]
    if raw:
        sections.append(Section("the board's raw signing cycles per key class (before the replay's prediction)", [
            Figure(lambda: plots.class_ecdfs_png(classes, raw[0], "raw signing cycles"), RAW_CAPTION)]))
    return Page(f"pqscope ct: {document.scheme} {document.impl} on {document.board}", [_facts(document)], sections)


def show(console: Console, document: CtDocument) -> None:
    """The test's verdict, its evidence and where it points, as the `ct` command prints it."""
    clock, statistics = document.test_clock, document.statistics
    echo = click.echo
    echo(f"{document.scheme} {document.impl} on {document.board}"
         + (f" at {clock_text(clock.hz, clock.flash_wait_states)}" if clock and clock.hz else "")
         + f": {document.verdict} ({document.reason})")
    for line in _decided(document):
        echo(f"  decided by {line}")
    if document.scope:
        echo(f"  secrets covered: {document.scope}")
    if document.verdict == "no-leak" and statistics.total.bound:
        requested = document.requested_bound
        echo(f"  {bound_text(document)}"
             + ("" if not requested else " (the bound asked for is shown)"
                if requested.shown else " (NOT the bound asked for: raise -n)"))
    if statistics.corrupt_accepted:
        echo(f"  {statistics.corrupt_accepted} of {statistics.total.n.fixed + statistics.total.n.random} signatures "
             f"stayed valid with one bit flipped: verification ignores a bit of the signature's first byte (see "
             f"ct.csv, corrupt_accepted)")
    for function in (statistics.top_functions or ())[:5]:
        echo(f"  {function_line(function)}")
    taint = document.taint
    if taint:
        leaks = [finding for finding in taint.findings if finding.leak]
        declassified = sum(finding.declassified for finding in taint.findings)
        echo(f"exact check ({taint.signatures} signatures): {taint.verdict}, {len(leaks)} leaking "
             f"instruction{'' if len(leaks) == 1 else 's'}, {declassified} declassified")
        for finding in leaks[:5]:
            echo(f"  {finding.kind} in {finding.function} at {taint_source(finding)} "
                 f"(executions: {taint_executions(finding)})")
    for item in document.other_clocks:
        echo(f"exact check at {item.clock.name} ({item.clock.describe()}): {clock_verdict(item)}")
    if statistics.replay_fit:
        echo(f"  {replay_text(document)}")
    for item in document.replayed.confirmations:
        echo(f"  {item.function}: {item.text}")
    for board in document.farm_boards:
        if board.stands_out:
            echo(f"  board {board.serial} ({board.place or board.port}) stands out: its cycles differ "
                 f"from the boards' consensus (|t| {abs(board.t_against_the_boards):.1f}); see the report")
    confirm = document.probe_suggestion
    if confirm:
        echo(f"confirm on a board with probes of {', '.join(confirm.probes) or 'none of them'}:\n"
             f"  {confirm.command}")
        for function in confirm.not_probeable:
            echo(f"  {function.function}: {function.why}")
