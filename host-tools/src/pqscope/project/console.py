"""What the tool shows while it works: spinners and progress bars, on a terminal only."""

import contextlib

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn


def stderr() -> Console:
    return Console(stderr=True)


def working(console: Console, what: str):
    """A spinner while a slow step runs."""
    return console.status(what) if console.is_terminal else contextlib.nullcontext()


def progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=console, transient=True, disable=not console.is_terminal,
    )
