"""pqscope run: one implementation, or a suite (the main job, jobs/main_job.py), measured and
reported."""

from pathlib import Path

import click

from .. import views
from ..jobs import main_job
from ..jobs.suite import CT_LEAST_SIGNATURES, CT_SIGNATURES, ct_members
from ..link.protocol import Status
from ..measure.capture import SampleCapture
from ..measure.measurement import Measurement, Member, board_at_clock, new_suite, resumed
from ..project.catalogue import find_implementation, load_catalogue
from ..project.console import stderr
from ..project.discovery import find_row
from ..project.errors import PqscopeError
from ..project.paths import repo_root
from ..project.toolchain import Toolchain
from ..results import store
from ..results.lock import writing
from ..results.rundir import is_suite, suite_parameters
from ..results.runs import Run, find_runs, load_run
from ..views.ci import of_suite
from .app import Unverified, cli, say_if_complete, show
from .baseline import baseline_options, gate_on_baseline
from .ci_outputs import ci_output_options, refuse_ci_files, report_to_ci
from .signals import interrupted_status
from .options import (CLOCK_OPTION, JSON_OPTION, MSG_LEN_OPTION, REPORT_OPTION, SEED_OPTION, TOOLCHAIN_OPTIONS,
                      connection_options, implementation_options, own_implementation, parse_member, parse_ops,
                      parse_seed, probe_options, refuse_fixed_options, resume_option, run_directory, shard_runner,
                      variant)


@cli.command()
@implementation_options()
@click.option("--ops", "ops_text", default="keygen,sign,verify", show_default=True, help="Operations to report.")
@click.option("-n", "samples", default=10, show_default=True, type=click.IntRange(1, 2**32 - 1), help="Samples.")
@SEED_OPTION
@MSG_LEN_OPTION
@CLOCK_OPTION
@TOOLCHAIN_OPTIONS
@probe_options
@connection_options(timeout=60.0, shards=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Run directory (default: runs/<timestamp>-<board>-<scheme>-<impl>, or -suite).")
@resume_option
@REPORT_OPTION
@click.option("--member", "members", multiple=True, metavar="SCHEME/IMPL",
              help="A suite of these catalogue rows instead of the default suite's (repeatable).")
@click.option("--ct-n", "ct_signatures", default=CT_SIGNATURES, show_default=True, type=click.IntRange(0),
              help="A suite: the most signatures of each member's constant-time test of signing (fewer for a slow "
                   "signing), beside the exact check on the virtual board (0: no test).")
@click.option("--replay/--no-replay", "replay", default=True, show_default=True,
              help="A suite on a real board: replay each constant-time test on the virtual board beside it (see ct).")
@JSON_OPTION
@ci_output_options
@baseline_options
@click.pass_context
def run(ctx: click.Context, board_name, scheme, impl, impl_dir, stack_bytes, ops_text, samples, seed, msg_len,
        clock_name, compiler, opt_level, probed, probe_names, out, resume_path, with_report, members, ct_signatures,
        replay, as_json, **connection) -> None:
    """Measure an implementation, or the default suite: build, run samples on the board (or boards:
    the samples are dealt to them), save and report. The default suite then tests each member's
    signing for constant time and writes one report of it all: cycles, stack, variance, verdicts
    and Falcon's floating-point modes compared."""
    root = repo_root()
    if 0 < ct_signatures < CT_LEAST_SIGNATURES:
        raise PqscopeError(f"--ct-n is 0 (no constant-time test) or at least {CT_LEAST_SIGNATURES}")
    if resume_path is not None:
        refuse_fixed_options(ctx)
        with writing(resume_path):  # before reading what it holds: another writer may be changing it
            _measure(ctx, root, resume_path, resumed(root, resume_path, SampleCapture), connection, with_report,
                     as_json)
        return
    what = SampleCapture(parse_ops(ops_text), samples, parse_seed(seed), msg_len, variant=variant(probed, probe_names))
    path, measurement = _new_measurement(root, board_name, clock_name, Toolchain.parse(compiler, opt_level), scheme,
                                         impl, impl_dir, stack_bytes, out, what, members, ct_signatures, replay)
    with writing(path):
        _measure(ctx, root, path, measurement, connection, with_report, as_json)


def _measure(ctx: click.Context, root: Path, path: Path, measurement: Measurement, connection: dict,
             with_report: bool, as_json: bool) -> None:
    """Measures what `path` lacks (a resumed one complete: nothing), then shows it (and writes its
    reports, interrupted too); signatures that did not verify fail the command."""
    manifest = suite_parameters(path) if is_suite(path) else {}
    suite = main_job.SuitePlan(manifest.get("ct_signatures", 0), manifest.get("ct_replay", True)) if manifest else None
    if not (suite and suite.ct_signatures):
        refuse_ci_files(ctx, "a run gives one when it is a suite's with its constant-time tests (--ct-n above 0)")
    if connection["jobs"] is None and not connection["ports"] and not connection["places"] and not manifest:
        connection["jobs"] = 1  # one board unless asked: a run of a few samples is not worth an emulator per core
    interrupted = not _complete(measurement, suite) and main_job.measure(
        measurement, suite, shard_runner(root, measurement.board, capture=measurement.what, **connection),
        lambda: shard_runner(root, measurement.board, **connection))
    kind, document = main_job.answer(path, suite)
    report = None
    if with_report:  # interrupted: what it has
        if kind == "suite":
            store.save(path, "suite", document.to_json())
        report = views.write_pages(path)
    if interrupted:
        if manifest:
            stderr().print(f"resume the whole suite with `pqscope run --resume {path}`")
        ctx.exit(interrupted_status())
    show(kind, document, as_json)
    if report and not as_json:
        stderr().print(f"report: {report}")
    if kind == "suite":
        report_to_ci(ctx, "run", of_suite(document))
    unverified = [text for run_path in find_runs(path) if (text := _unverified(load_run(run_path)))]
    if unverified:
        raise Unverified(f"signatures did not verify: {'; '.join(unverified)}")
    gate_on_baseline(ctx, document.runs if kind == "suite" else document)


def _complete(measurement: Measurement, suite: main_job.SuitePlan | None) -> bool:
    """A resumed measurement complete already (its members' samples and, a suite, their
    constant-time tests), said if so."""
    if suite is not None and suite.ct_signatures and not all(
            member.complete for member in ct_members(measurement.members)):
        return False
    return say_if_complete(measurement)


def _unverified(run: Run) -> str | None:
    """Which samples of `run` did not verify (an operation failed, or a valid signature was
    rejected), if any did. A forgery accepted beside a valid signature is no failure of it: the
    verifier tolerates that bit (Falcon's padding), and the view counts those apart."""
    samples: dict[int, list] = {}
    for row in run.rows:
        samples.setdefault(row.sample_id, []).append(row)
    failed = [rows for rows in samples.values()
              if not any(row.verified or row.status == Status.CORRUPT_ACCEPTED for row in rows)]
    if not failed:
        return None
    first = failed[0]
    failing = next((row for row in first if not row.status.timed), first[-1])
    return (f"{run.label}: {len(failed)} of {len(samples)} samples (the first, sample {failing.sample_id}: "
            f"{failing.op.label} {failing.status.label.replace('_', ' ')})")


def _new_measurement(root: Path, board_name, clock_name, built_with, scheme, impl, impl_dir, stack_bytes, out,
                     what: SampleCapture, members: tuple[str, ...], ct_signatures: int,
                     replay: bool) -> tuple[Path, Measurement]:
    """A new run of one implementation, or of a suite without --scheme and --impl-dir (the
    `members`, SCHEME/IMPL, or the default suite's), its signing then tested for constant time on
    `ct_signatures` (0: not), on a board with its `replay` or not."""
    board = board_at_clock(root, board_name, clock_name, built_with)
    catalogue = load_catalogue(root)
    own = own_implementation(impl_dir, scheme, impl, stack_bytes)
    if own is None and (scheme is None) != (impl is None):
        raise PqscopeError("give both --scheme and --impl, or neither for the default suite")
    if members and (own is not None or scheme is not None):
        raise PqscopeError("--member names the rows of a suite: give it without --scheme, --impl and --impl-dir")
    if own is None and scheme is None:
        path = run_directory(root, out, board, "suite")
        suite = ([find_implementation(catalogue, *parse_member(text)) for text in members] if members
                 else main_job.default_suite(catalogue))
        return path, Measurement(board, what, new_suite(path, board, suite, what, ct_signatures=ct_signatures,
                                                        ct_replay=replay))
    only = own or find_row(root, scheme, impl)
    path = run_directory(root, out, board, f"{only.scheme}-{only.impl}")
    return path, Measurement(board, what, [Member(only, path)])
