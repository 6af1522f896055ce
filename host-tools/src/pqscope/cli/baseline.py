"""`pqscope run`'s baseline gate (issue #58): --baseline OLD compares each operation's median
cycles, stack and code size with a previous run's or suite's and ends the command with
EXIT_REGRESSION past --max-cycles, --max-stack or --max-code; --benchmark-json FILE writes the
figures for github-action-benchmark. docs/pages/ci.md."""

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import click

from ..jobs.baseline import Limit, Limits, benchmark_entries, compare, load_baseline
from ..project.errors import PqscopeError
from ..results.documents.runs import RunsDocument
from ..results.rundir import write_atomically
from ..views.baseline import baseline_text

EXIT_REGRESSION = 6  # docs/pages/host-tool.md, "Exit status"
_GATE = "pqscope.baseline_gate"  # the click context's meta key of the command's BaselineGate


@dataclass(frozen=True)
class BaselineGate:
    baseline: Path | None
    limits: Limits
    benchmark_json: Path | None


def baseline_options(command):
    """--baseline, its limits and --benchmark-json on `pqscope run`, kept for `gate_on_baseline`."""
    @click.option("--baseline", type=click.Path(exists=True, path_type=Path), metavar="OLD",
                  help="A previous run's or suite's directory (or a document in it): print each operation's change "
                       "in median cycles, stack and code size, and fail (exit 6) past the --max-* limits.")
    @click.option("--max-cycles", default="+2%", show_default=True, metavar="+N[%]",
                  help="With --baseline: the growth of an operation's median cycles allowed (cycles, or percent).")
    @click.option("--max-stack", default="+0", show_default=True, metavar="+N[%]",
                  help="With --baseline: the growth of an operation's deepest stack allowed (bytes, or percent).")
    @click.option("--max-code", metavar="+N[%]",
                  help="With --baseline: the growth of the image's code size allowed (bytes, or percent; default: "
                       "any, shown only).")
    @click.option("--benchmark-json", type=click.Path(dir_okay=False, path_type=Path),
                  help="Write each operation's median cycles, stack and code size to this file as "
                       "github-action-benchmark's customSmallerIsBetter reads them.")
    @functools.wraps(command)
    def with_gate(*args, baseline, max_cycles, max_stack, max_code, benchmark_json, **kwargs):
        limits = Limits(Limit.parse(max_cycles, "--max-cycles"), Limit.parse(max_stack, "--max-stack"),
                        None if max_code is None else Limit.parse(max_code, "--max-code"))
        click.get_current_context().meta[_GATE] = BaselineGate(baseline, limits, benchmark_json)
        return command(*args, **kwargs)
    return with_gate


def gate_on_baseline(ctx: click.Context, runs: RunsDocument) -> None:
    """Writes the benchmark file if asked for; compares `runs` with the baseline if one was given,
    prints the changes and ends the command with EXIT_REGRESSION past a limit."""
    gate: BaselineGate | None = ctx.meta.get(_GATE)
    if gate is None:
        return
    if gate.benchmark_json:
        try:
            gate.benchmark_json.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(gate.benchmark_json, json.dumps(benchmark_entries(runs), indent=2) + "\n")
        except OSError as error:
            raise PqscopeError(f"cannot write {gate.benchmark_json}: {error.strerror or error}") from None
    if gate.baseline is None:
        return
    comparison = compare(load_baseline(gate.baseline), runs, gate.limits, str(gate.baseline))
    click.echo(baseline_text(comparison))
    if comparison.regressed:
        ctx.exit(EXIT_REGRESSION)
