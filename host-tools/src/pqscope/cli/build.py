"""pqscope build and boards: an image built and sized, and the boards to build it for."""

from dataclasses import asdict

import click
from rich.console import Console
from rich.table import Column, Table

from ..project.boards import load_boards
from ..project.console import stderr
from ..project.paths import repo_root
from ..project.toolchain import Toolchain
from ..targets.kinds import open_target, target_kind
from .app import cli, print_json
from .options import (CLOCK_OPTION, JSON_OPTION, TOOLCHAIN_OPTIONS, implementation_options, probe_options, select,
                      variant)


@cli.command()
@implementation_options(board_default=None)
@CLOCK_OPTION
@TOOLCHAIN_OPTIONS
@probe_options
@JSON_OPTION
def build(board_name, scheme, impl, impl_dir, stack_bytes, clock_name, compiler, opt_level, probed, probe_names,
          as_json) -> None:
    """Build one image and check that it fits the board."""
    root = repo_root()
    board, implementation = select(root, board_name, scheme, impl, impl_dir, stack_bytes, clock_name,
                                   Toolchain.parse(compiler, opt_level))
    image = open_target(root, board).image(implementation, stderr(), variant(probed, probe_names))
    if as_json:
        print_json({"images": [{
            "board": board.name, "scheme": implementation.scheme, "impl": implementation.impl,
            "toolchain": board.toolchain.to_json(), "elf": str(image.elf),
            **asdict(image.size), "stack_bytes": implementation.stack_bytes,
        }]})
    else:
        size = image.size
        click.echo(f"{image.elf}: text {size.text}, data {size.data}, bss {size.bss} bytes; fits {board.name}")


@cli.command()
@JSON_OPTION
def boards(as_json: bool) -> None:
    """List the boards."""
    found = load_boards(repo_root()).values()
    if as_json:
        print_json({"boards": [board.describe() for board in found]})
        return
    table = Table(Column("board", no_wrap=True), "runs on", "clock", "flash", "ram", "description")
    for board in found:
        table.add_row(board.name, target_kind(board).runs_on(board), f"{board.clock_hz / 1e6:g} MHz",
                      f"{board.flash_bytes // 1024} KiB", f"{board.ram_bytes // 1024} KiB", board.description)
    Console().print(table)
