"""The virtual board's exact check beside its statistics (`pqscope ct`). Run first, the check leaves
one core idle for as long as it takes (half a minute for SPHINCS+-128s's signature); beside the
statistics, it takes that core while their emulators sign. It may run there only where its result
cannot change what the statistics record: the profiler books apart as public only the catalogue's
functions and those the check derives (`taint_findings.public_code`), fixed when its emulators
start, and a row whose declassifications are all decisions has none derived (`derives_public_code`).
The statistics take their first FEWEST_EARLY signatures meanwhile, the fewest any look uses, then
wait for the check, whose result sizes the looks; a test decides as it would have after the check."""

import threading
from collections.abc import Callable

from ..link.device import Cancelled
from ..measure.capture import Capture
from ..measure.halt import Halt
from .ct_looks import FEWEST_EARLY

# The statistics' signatures taken before the check's result (its index and beyond wait for it).
BEFORE_THE_CHECK = FEWEST_EARLY


class ExactCheckBeside:
    """The exact check's measurement, `measure(halt)`, in a thread of its own while the context is
    entered: its results are taken by `checks` (a capture of the checks alone), which the test reads
    once `wait` (the test's thread) returns; `hold` (a shard's) waits for it to end too."""

    def __init__(self, checks: Capture, measure: Callable[[Halt], None]):
        self.checks, self._measure = checks, measure
        self._halt = Halt()
        self._ended = threading.Event()
        self._error: BaseException | None = None
        self.taken = False  # the test has taken its result (`wait` returned)
        self._thread = threading.Thread(target=self._run, daemon=True, name="exact check")

    def __enter__(self) -> "ExactCheckBeside":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        """Ends the check at once if it still runs (the test stopped, failed or was interrupted):
        it ends "interrupted" and resumes with the test."""
        self._halt()
        self._thread.join()

    def _run(self) -> None:
        try:
            self._measure(self._halt)
        except BaseException as error:  # handed to the test's thread by `wait`
            self._error = error
        finally:
            self._ended.set()

    def wait(self) -> None:
        """Until the check has ended; raises what ended it if it did not complete: its failure, or
        KeyboardInterrupt if it was interrupted. Ctrl-C here halts it at once (its signature would
        otherwise go on while the test's emulators close)."""
        try:
            while not self._ended.wait(1.0):
                pass
        except BaseException:
            self._halt()
            raise
        self.taken = True
        if self._error is not None:
            raise self._error

    def hold(self, index: int, cancelled: Callable[[], bool]) -> None:
        """Before the statistics' signature `index` (a shard's thread): from BEFORE_THE_CHECK on,
        waits until the check has ended, or until the shard's session is `cancelled`."""
        while index >= BEFORE_THE_CHECK and not self._ended.wait(0.5):
            if cancelled():
                raise Cancelled
