"""What the gates (taint, ct, matrix, a suite's run) tell a CI system (issue #58): --sarif and
--junit files, and inside GitHub Actions (GITHUB_ACTIONS=true) an annotation per leaking line and
the job summary ($GITHUB_STEP_SUMMARY). docs/pages/ci.md."""

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from ..project.errors import PqscopeError
from ..results.rundir import write_atomically
from ..views.ci import CheckedCode
from ..views.ci_notes import annotations, summary
from ..views.junit import junit_text
from ..views.sarif import sarif_text

_FILES = "pqscope.ci_files"  # the click context's meta key of a command's CiFiles


@dataclass(frozen=True)
class CiFiles:
    sarif: Path | None
    junit: Path | None


def ci_output_options(command):
    """--sarif FILE and --junit FILE on a gate's command, kept for `report_to_ci` (the command's
    function does not take them)."""
    @click.option("--sarif", type=click.Path(dir_okay=False, path_type=Path),
                  help="Write the exact check's findings as SARIF 2.1.0 (GitHub code scanning, GitLab) to this file.")
    @click.option("--junit", type=click.Path(dir_okay=False, path_type=Path),
                  help="Write a JUnit XML test case per implementation (per matrix cell) to this file: a leak fails.")
    @functools.wraps(command)
    def with_ci_files(*args, sarif: Path | None, junit: Path | None, **kwargs):
        click.get_current_context().meta[_FILES] = CiFiles(sarif, junit)
        return command(*args, **kwargs)
    return with_ci_files


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, text)
    except OSError as error:
        raise PqscopeError(f"cannot write {path}: {error.strerror or error}") from None


def refuse_ci_files(ctx: click.Context, why: str) -> None:
    """Refuses --sarif and --junit on a command that has no verdict to give them (`why`)."""
    files = ctx.meta.get(_FILES)
    if files and (files.sarif or files.junit):
        raise PqscopeError(f"--sarif and --junit take a verdict: {why}")


def report_to_ci(ctx: click.Context, command: str, checked: Sequence[CheckedCode]) -> None:
    """Writes the files the command was asked for and, inside GitHub Actions, its annotations and
    job summary. The annotations go to stderr (the runner reads workflow commands from either
    stream), so that stdout stays the command's output, its --json too."""
    files = ctx.meta.get(_FILES, CiFiles(None, None))
    cwd = Path.cwd()
    if files.sarif:
        _write(files.sarif, sarif_text(checked, cwd))
    if files.junit:
        _write(files.junit, junit_text(checked, command))
    if os.environ.get("GITHUB_ACTIONS") == "true":
        for line in annotations(checked, cwd):
            click.echo(line, err=True)
        step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if step_summary:
            try:
                with open(step_summary, "a") as file:
                    file.write(summary(checked, command))
            except OSError as error:
                raise PqscopeError(f"cannot append to $GITHUB_STEP_SUMMARY ({step_summary}): "
                                   f"{error.strerror or error}") from None
