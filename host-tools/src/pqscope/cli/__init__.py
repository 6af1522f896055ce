"""The command line: one module per command, the options several commands share, and the entry point."""

from .commands import main

__all__ = ["main"]
