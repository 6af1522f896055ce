"""pqscope schemes: the catalogue's rows and those discovered from pqm4's folders, by family, board and status."""

from dataclasses import asdict

import click
from rich.console import Console

from ..project.boards import load_boards
from ..project.discovery import load_rows
from ..project.errors import match_name
from ..project.paths import repo_root
from ..views.schemes import print_schemes
from .app import cli, print_json
from .options import JSON_OPTION


@cli.command()
@click.option("--family", "family_names", multiple=True, metavar="FAMILY",
              help="Only the rows of this family, e.g. ML-DSA (repeat for several).")
@click.option("--board", "board_names", multiple=True, metavar="BOARD",
              help="Show the rows' status on this board (repeat for several; default: each board that has images of "
                   "its own, not the virtual ones, which run those).")
@click.option("--status", "status_names", multiple=True, metavar="STATUS",
              help="Only the rows with this status (ok, does-not-fit, ...) on a board shown (repeat for several).")
@JSON_OPTION
def schemes(family_names, board_names, status_names, as_json: bool) -> None:
    """List the scheme implementations of the catalogue and of the fetched pqm4 tree."""
    root = repo_root()
    catalogue = load_rows(root)
    known_boards = load_boards(root)
    chosen = [known_boards[match_name("board", name, known_boards)] for name in board_names]
    # Each board shown, by name, and the firmware board whose images it runs, which statuses are given for.
    boards = ({board.name: board.emulates or board.name for board in chosen} if chosen else
              {name: name for name, board in known_boards.items() if not board.emulates})
    families = {match_name("family", name, {row.family for row in catalogue}) for name in family_names}
    present = {row.status_on(firmware) for row in catalogue for firmware in boards.values()}
    statuses = {match_name("status", name, present, f" (no row has it on {', '.join(boards)})")
                for name in status_names}
    rows = [row for row in catalogue if (not families or row.family in families)
            and (not statuses or any(row.status_on(firmware) in statuses for firmware in boards.values()))]
    if as_json:
        print_json({"schemes": [asdict(row) | {"directory": row.directory and str(row.directory)} for row in rows]})
    elif not rows:
        click.echo(f"no row of the catalogue is of family {' or '.join(families)} with status "
                   f"{' or '.join(statuses)} on {' or '.join(boards)}", err=True)
    else:
        print_schemes(Console(), rows, boards)
