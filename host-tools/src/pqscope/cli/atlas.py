"""pqscope atlas: every row (the catalogue's and those discovered from pqm4's tree) whose status on
a chosen virtual board is ok measured, checked and its findings sorted, every other listed with its
status and reason (jobs/atlas.py), resumable, an emulator per core and splittable into shards;
`--merge` makes the shards' documents one."""

import os
from pathlib import Path

import click

from .. import views
from ..jobs import atlas
from ..jobs.suite import CT_LEAST_SIGNATURES, CT_SIGNATURES
from ..analysis.replay import quiet_console
from ..measure.measurement import board_at_clock
from ..project.boards import load_boards
from ..project.console import stderr
from ..project.discovery import load_rows
from ..project.errors import PqscopeError, match_name
from ..project.paths import repo_root
from ..results import store
from ..results.documents.atlas import AtlasDocument, ShardPart, StartedAtlas
from ..results.lock import writing
from ..results.rundir import make_empty_directory
from .app import cli, show
from .options import (JSON_OPTION, REPORT_OPTION, SEED_OPTION, VIRTUAL_BOARD, parse_member, parse_seed,
                      refuse_fixed_options, run_directory)
from .signals import interrupted_status


def parse_shard(text: str | None) -> ShardPart | None:
    """--shard K/N: shard K (from 1) of N."""
    if text is None:
        return None
    index, slash, count = text.partition("/")
    try:
        shard = ShardPart(int(index), int(count)) if slash else None
    except ValueError:
        shard = None
    if shard is None or not 1 <= shard.index <= shard.count:
        raise PqscopeError(f"--shard {text}: give K/N with 1 <= K <= N, e.g. 1/2")
    return shard


@cli.command("atlas")
@click.option("--board", "board_names", multiple=True, metavar="BOARD",
              help=f"A virtual board (repeatable; default: {VIRTUAL_BOARD}, the virtual Discovery; "
                   "nucleo-l4r5zi-virtual is the virtual Nucleo-L4R5ZI).")
@click.option("--family", "families", multiple=True, metavar="FAMILY", help="Only rows of this family (repeatable).")
@click.option("--scheme", "schemes", multiple=True, metavar="SCHEME", help="Only rows of this scheme (repeatable).")
@click.option("--row", "rows", multiple=True, metavar="SCHEME/IMPL", help="Only this row (repeatable).")
@click.option("-n", "samples", default=atlas.SAMPLES, show_default=True, type=click.IntRange(1),
              help="Samples of key generation, signing and verification per row.")
@SEED_OPTION
@click.option("--ct-n", "ct_signatures", default=CT_SIGNATURES, show_default=True,
              type=click.IntRange(CT_LEAST_SIGNATURES),
              help="The most signatures of each row's constant-time test (fewer for a slow signing, as the main job).")
@click.option("-j", "--jobs", type=click.IntRange(1), help="Emulators at a time (default: one per core).")
@click.option("--shard", "shard_text", metavar="K/N",
              help="Only the rows whose position in the sorted row list is K-1 modulo N (merge the shards' atlases "
                   "with --merge).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Directory (default: runs/<timestamp>-<board>-atlas, or -atlas-merged).")
@click.option("--resume", "resume_path", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Go on with the atlas in this directory (its plan and shard; finished rows are read back).")
@click.option("--merge", "merged", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              metavar="DIR", help="Merge the atlases of these directories (every shard of one atlas) into --out; "
                                  "measures nothing.")
@REPORT_OPTION
@JSON_OPTION
@click.pass_context
def atlas_command(ctx: click.Context, board_names, families, schemes, rows, samples, seed, ct_signatures, jobs,
                  shard_text, out, resume_path, merged, with_report, as_json) -> None:
    """The signature atlas: for every row (the catalogue's and those discovered from pqm4's tree) whose status on
    the board is ok, cycles of key generation, signing and verification (min, median, max over -n), stack, code
    size, the share of signing in hashing, the exact check of one signature (the key and the signing randomness
    secret) and the statistical test sized to the row; every finding of the exact check sorted (declassified by the
    catalogue with its reason, or a reported leak); every other row listed with its status (does-not-fit,
    build-fails, fails, unmeasured) and why. Writes atlas.json, benchmarks.md and benchmarks.csv (pqm4's shape,
    with the verdict) and report.html. Exit status 0 whatever the verdicts (leaks are the atlas's findings); 1 on
    an error."""
    root = repo_root()
    if merged:
        given = [name for name, value in (("--resume", resume_path), ("--shard", shard_text)) if value is not None]
        if given:
            raise PqscopeError(f"--merge measures nothing: drop {', '.join(given)}")
        _merge(root, list(merged), out, with_report, as_json)
        return
    catalogue = load_rows(root)
    if resume_path is not None:
        refuse_fixed_options(ctx)
        for option, value in (("--board", board_names), ("--family", families), ("--scheme", schemes),
                              ("--shard", shard_text)):
            if value:
                raise PqscopeError(f"--resume takes the atlas's plan from its {atlas.PLAN}; drop {option}")
        path, started = resume_path, atlas.resumed(resume_path)
    else:
        known = load_boards(root)
        boards = [board_at_clock(root, match_name("board", name, known), None)
                  for name in dict.fromkeys(board_names or (VIRTUAL_BOARD,))]
        atlas.check_boards(boards)
        named = tuple(parse_member(text) for text in rows)
        chosen, listed = atlas.chosen_rows(catalogue, boards, families, schemes, named)
        started = StartedAtlas(atlas.plan_for(boards, chosen, listed, families, schemes, named, samples,
                                              parse_seed(seed), ct_signatures), parse_shard(shard_text))
        path = run_directory(root, out, boards[0], "atlas" if started.shard is None else
                             f"atlas-{started.shard.index}of{started.shard.count}")
    with writing(path):
        if resume_path is None:
            atlas.start(path, started)
        try:
            document = atlas.Atlas(root, path, started, catalogue, jobs or os.cpu_count() or 1,
                                   lambda text: click.echo(text, err=True),
                                   quiet_console()).run()
        except KeyboardInterrupt:
            click.echo(f"interrupted; the rows done are kept: resume with `pqscope atlas --resume {path}`", err=True)
            ctx.exit(interrupted_status())
        _keep(path, document, with_report, as_json)


def _merge(root: Path, paths: list[Path], out: Path | None, with_report: bool, as_json: bool) -> None:
    documents = []
    for path in paths:
        kind, document, _ = store.load(path)
        if kind != "atlas":
            raise PqscopeError(f"{path} holds no atlas (atlas.json): give the directories of the atlas's shards")
        documents.append((path, document))
    document = atlas.merge(documents)
    path = out or run_directory(root, None, board_at_clock(root, document.plan.boards[0], None), "atlas-merged")
    with writing(path):
        make_empty_directory(path, "atlas")
        stderr().print(f"merged {len(paths)} atlases into {path}", markup=False, highlight=False)
        _keep(path, document, with_report, as_json)


def _keep(path: Path, document: AtlasDocument, with_report: bool, as_json: bool) -> None:
    store.save(path, "atlas", document.to_json())
    report = views.write_pages(path) if with_report else None
    show("atlas", document, as_json)
    if report and not as_json:
        stderr().print(f"report: {report}", markup=False, highlight=False)
