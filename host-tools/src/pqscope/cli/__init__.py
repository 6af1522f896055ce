"""The command line: one module per command (or per few related commands), each registering its
commands on the group in app.py when imported; the options several commands share (options.py);
and the entry point."""

from . import atlas, board, build, compare_falcon, ct, matrix, report, run, schemes, taint
from .app import cli, main

# The command modules are listed for what importing them does: put their commands on `cli`.
__all__ = ["cli", "main", "atlas", "board", "build", "compare_falcon", "ct", "matrix", "report", "run", "schemes", "taint"]
