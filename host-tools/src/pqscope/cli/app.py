"""The command group every command module registers on, the entry point, and how commands end:
an expected failure as one line, a result shown as a table or JSON, and the exit status of each
outcome (docs/pages/host-tool.md, "Exit status")."""

import json

import click

from .. import views
from ..measure.measurement import Measurement
from ..project.errors import PqscopeError
from ..project.console import stderr
from ..project.paths import repo_root
from .options import runner, shard_runner, wide_console
from .signals import interrupted_status, interruptible

# Exit statuses besides 0 (done; for a gate, no leak): an expected failure (one line), signatures
# that did not verify, and a gate's (ct, taint, matrix) leak or undecided verdict, so that a CI job
# fails on them; click's usage mistakes exit 2, a regression past a baseline 6 (cli.baseline), an
# interrupted command 128 + its signal (cli.signals).
EXIT_ERROR = 1
EXIT_UNVERIFIED = 3
EXIT_LEAK = 4
EXIT_INCONCLUSIVE = 5
VERDICT_STATUS = {"no-leak": 0, "leak": EXIT_LEAK, "inconclusive": EXIT_INCONCLUSIVE}


class Unverified(PqscopeError):
    """Signatures that did not verify: what was measured is kept and shown, the command fails."""


class _OneLineErrors(click.Group):
    """Reports expected failures and usage mistakes as one line on stderr, without a traceback, and
    ends a command interrupted outside a measurement (a build, say) with its signal's status."""

    def invoke(self, ctx: click.Context):
        try:
            with interruptible():
                return super().invoke(ctx)
        except KeyboardInterrupt as interruption:
            click.echo(f"interrupted ({interruption})" if str(interruption) else "interrupted", err=True)
            ctx.exit(interrupted_status())
        except PqscopeError as error:
            if error.details:
                click.echo(error.details.rstrip(), err=True)
            failure = click.ClickException(str(error))
            failure.exit_code = EXIT_UNVERIFIED if isinstance(error, Unverified) else EXIT_ERROR
            raise failure from None
        except click.UsageError as error:
            if error.ctx is None:
                raise
            # A new error without a context: click prints no usage block for it.
            raise click.UsageError(f"{error.format_message()} (see: {error.ctx.command_path} --help)") from None


@click.group(cls=_OneLineErrors)
@click.version_option(package_name="pqscope")
def cli() -> None:
    """Build, run and measure post-quantum signature firmware on a board or the virtual board."""


def main() -> None:
    cli(prog_name="pqscope")


def print_json(document: dict) -> None:
    click.echo(json.dumps(document, indent=2))


def show(kind: str, document, as_json: bool) -> None:
    """A result's typed document: its JSON, or its view on the terminal."""
    if as_json:
        print_json(document.to_json())
    else:
        views.show(wide_console(), kind, document)


def end_with_verdict(ctx: click.Context, verdict: str) -> None:
    """Ends a gate's command, its output shown, with its verdict's status."""
    ctx.exit(VERDICT_STATUS[verdict])


def measure(ctx: click.Context, measurement: Measurement, connection: dict) -> None:
    """Measures every member not complete yet, on the boards the connection options name (a
    measurement resumed complete: says so, and measures nothing); an interruption ends the command
    with its signal's status, everything captured kept."""
    if say_if_complete(measurement):
        return
    open_runner = runner if "port" in connection else shard_runner
    if open_runner(repo_root(), measurement.board, capture=measurement.what, **connection).measure_members(
            measurement.members, measurement.what):
        ctx.exit(interrupted_status())


def say_if_complete(measurement: Measurement) -> bool:
    """Whether every member of a resumed measurement is complete already, said if so."""
    if not measurement.members or not all(member.complete for member in measurement.members):
        return False
    if len(measurement.members) == 1:
        (member,) = measurement.members
        text = (f"{member.path} is complete ({member.resume_from.samples_completed} {measurement.what.unit}): "
                "nothing to resume")
    else:
        text = f"{measurement.members[0].path.parent}: every member is complete: nothing to resume"
    stderr().print(text, markup=False, highlight=False)
    return True
