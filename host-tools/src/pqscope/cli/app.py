"""The command group every command module registers on, the entry point, and how commands end:
an expected failure as one line, a result shown as a table or JSON."""

import json

import click

from .. import views
from ..measure.measurement import Measurement
from ..project.errors import PqscopeError
from ..project.paths import repo_root
from .options import runner, shard_runner, wide_console


class _OneLineErrors(click.Group):
    """Reports expected failures and usage mistakes as one line on stderr, without a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except PqscopeError as error:
            if error.details:
                click.echo(error.details.rstrip(), err=True)
            raise click.ClickException(str(error)) from None
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


def measure(ctx: click.Context, measurement: Measurement, connection: dict) -> None:
    """Measures every member not complete yet, on the boards the connection options name; an
    interruption ends the command with status 130, everything captured kept."""
    open_runner = runner if "port" in connection else shard_runner
    if open_runner(repo_root(), measurement.board, capture=measurement.what, **connection).measure_members(
            measurement.members, measurement.what):
        ctx.exit(130)
