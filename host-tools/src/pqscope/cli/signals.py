"""SIGTERM and SIGHUP (what `timeout`, a cancelled CI job and a closed terminal send) end a command
as Ctrl-C does: a measurement stops as interrupted with everything captured kept, a build stops,
and the command exits with 128 plus the signal's number (130, 143, 129), as a shell reports a
process that signal ended."""

import contextlib
import signal
import threading
from collections.abc import Iterator

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_received: list[int] = []  # the signals received while commands ran, the last one last


class Interrupted(KeyboardInterrupt):
    """A signal that ends the command as Ctrl-C does."""


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP raise Interrupted during the block (a KeyboardInterrupt, which
    the runner takes for an interruption); a signal ignored when pqscope started (`nohup`: SIGHUP)
    stays ignored."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread handles signals
        yield
        return
    previous = {number: signal.getsignal(number) for number in HANDLED}
    _received.clear()
    for number, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(number, _interrupt)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_DFL if handler is None else handler)  # None: not set from Python


def _interrupt(number: int, _frame) -> None:
    _received.append(number)
    raise Interrupted(signal.Signals(number).name)


def interrupted_status() -> int:
    """The exit status of a command interrupted by the last signal received (Ctrl-C if none:
    an interruption a measurement passed on as KeyboardInterrupt)."""
    return 128 + (_received[-1] if _received else signal.SIGINT)
