"""The virtual board as a real board's oracle. The firmware is deterministic given its seeds, so the
virtual board can replay, exactly, every signature a board measures: the same image, keys,
messages and signing randomness. The replay runs beside the board's test, an emulator per core,
into the run's "replay" subdirectory (resumed with it), and gives per signature:

- the model's cycles: a control variate. Regressed out of the board's cycles, the public variance
  (rejection loops, the sampler) drops out of the board's test, which then needs far fewer
  signatures (`ct_analysis.ControlVariate`);
- the model's time in each function: the label by which each finding of the exact check (run on
  the virtual board, the replay's own) is confirmed or refuted on the board (`confirmation.confirm`).

The board measures; the replay never decides a board's timing. What the model itself says of the
secrets is the exact check's."""

import threading
from pathlib import Path

from rich.console import Console

from ..measure.capture import shard_directories
from ..project.errors import PqscopeError
from ..results.documents.profile import ProfiledInterval, identified, json_lines
from ..results.documents.replay import ReplaySettings
from ..results.documents.runs import ProbeSet
from ..results.documents.taint import Finding, TaintDocument
from ..results.probes import probes_timing
from .confirmation import Confirmation, confirm, disagreements

REPLAY_DIRECTORY = "replay"
# How far the replay may run ahead of the board, in signatures: enough for each look to find its
# signatures replayed, few enough that the emulators leave the machine to what runs the board.
LEAD = 64


class Replay:
    """The replay of one constant-time test, in a thread of its own: `start`, then `model` (waits
    for the signatures a look needs) and `exact_check`, and `close`; its intervals are read from
    `path` (`read_intervals`)."""

    def __init__(self, measure, path: Path):
        """`measure(path, feed)`: runs (or resumes) the replay's measurement into `path`, giving each
        replayed signature to `feed.arrived` and its exact check to `feed.exact_checked`; returns
        once it ends."""
        self._measure, self.path = measure, path
        self._samples: dict = {}
        self._prefix = 0  # signatures 0 .. _prefix-1 are all replayed (shards deliver out of order)
        self._condition = threading.Condition()
        self._exact: TaintDocument | None = None
        self._exact_done = False
        self._needed: int | None = None  # set by `close`: the signatures the board's test used
        self._board = 0  # signatures the board has measured
        self._abandoned = False
        self._error: BaseException | None = None
        self._ended = False
        self._thread = threading.Thread(target=self._run, daemon=True, name="replay")

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        try:
            self._measure(self.path, self)
        except BaseException as error:  # handed to the board's thread at its next wait
            self._error = error
        finally:
            with self._condition:
                self._ended = True
                self._exact_done = True
                self._condition.notify_all()

    # ---- the replay's side (its runner's thread) ----
    def arrived(self, sample) -> None:
        with self._condition:
            self._samples[sample.index] = sample
            while self._prefix in self._samples:
                self._prefix += 1
            self._condition.notify_all()

    def exact_checked(self, document: TaintDocument | None) -> None:
        with self._condition:
            self._exact, self._exact_done = document, True
            self._condition.notify_all()

    def stop_reason(self) -> str | None:
        """Whether the replay can end, once it is at most LEAD signatures ahead of the board (it
        waits until then); raises KeyboardInterrupt when the board's test was interrupted or
        failed (the replay then ends "interrupted" and resumes with it). It never waits while it
        lacks a signature the board has measured: with shards, signatures beyond a gap arrive
        before it, and the board's next look waits for the gap."""
        with self._condition:
            while (self._prefix >= self._board and len(self._samples) >= self._board + LEAD and self._needed is None
                   and not self._abandoned):
                self._condition.wait(1.0)
        if self._abandoned:
            raise KeyboardInterrupt
        if self._needed is not None and all(index in self._samples for index in range(self._needed)):
            return f"the board's test used {self._needed} signatures"
        return None

    @property
    def needed(self) -> int | None:
        return self._needed

    # ---- the board's side ----
    @property
    def replayed(self) -> int:
        return len(self._samples)

    def board_measured(self, count: int) -> None:
        """The board has measured `count` signatures: the replay may run LEAD beyond them."""
        with self._condition:
            self._board = count
            self._condition.notify_all()

    def model(self, count: int) -> dict:
        """The replayed signatures 0 .. count-1 by index, once the replay holds them all."""
        with self._condition:
            self._board = max(self._board, count)  # the board has them: the replay may go that far
            self._condition.notify_all()
            while self._prefix < count:
                self._raise_if_ended(f"it ended before signature {self._prefix}")
                self._condition.wait(1.0)
            return {index: self._samples[index] for index in range(count)}

    def exact_check(self) -> TaintDocument | None:
        """The exact check's document, once it ran (None: the test runs none)."""
        with self._condition:
            while not self._exact_done:
                self._condition.wait(1.0)
            self._raise_if_ended(None)
            return self._exact

    def _raise_if_ended(self, why: str | None) -> None:
        if self._error is not None:
            detail = str(self._error) or type(self._error).__name__
            raise PqscopeError(f"the replay on the virtual board failed: {detail} (its files: {self.path})")
        if why is not None and self._ended:
            raise PqscopeError(f"the replay on the virtual board {why} (its files: {self.path})")

    def close(self, used: int | None) -> None:
        """Ends the replay: once it holds the `used` signatures of a complete test (their replayed
        files stay in the run), or at once (None: the board's test was interrupted or failed)."""
        with self._condition:
            if used is None:
                self._abandoned = True
            else:
                self._needed = used
        self._thread.join()
        if used is not None:
            self._raise_if_ended(None)

    def confirmations(self, records: list, meta, findings: tuple[Finding, ...], looks: int) -> list[Confirmation]:
        """The exact check's `findings` tested on the board's `records` by the replay's labels (a
        function the image probes, on its probe's cycles)."""
        model = self.model(max((record.index for record in records), default=-1) + 1)
        intervals = read_intervals(self.path, shard_directories(self.path))
        timed_by = probes_timing({finding.function for finding in findings if finding.leak},
                                 ProbeSet.from_json(meta.probes).names, Path(meta.elf)) if meta.probes else {}
        return confirm(records, model, intervals, findings, looks, timed_by)

    def document(self, records: list, meta, settings: ReplaySettings, findings: tuple[Finding, ...],
                 looks: int) -> dict:
        """What the replay gave the board's test: where it is, how it priced the image (`settings`),
        the findings confirmed on the board, and the signatures whose replay went otherwise."""
        model = self.model(max((record.index for record in records), default=-1) + 1)
        differing = disagreements(records, model)
        return {"directory": REPLAY_DIRECTORY, **settings.to_json(),
                "confirmations": [item.to_json() | {"text": item.describe()}
                                  for item in self.confirmations(records, meta, findings, looks)],
                "disagreements": {"count": len(differing), "first": differing[:10]}}


def quiet_console() -> Console:
    """The replay's runner reports nothing: the board's test shows the progress."""
    return Console(quiet=True)


def read_intervals(path: Path, shard_paths: list[Path]) -> dict[int, ProfiledInterval]:
    """The replay's intervals by sample id, from its shards' files as they are being written: a
    line not yet complete is left for the next read."""
    return {interval.sample_id: interval for directory in shard_paths if (directory / "intervals.jsonl").exists()
            for _, interval in json_lines(directory / "intervals.jsonl", identified, "a replayed signature's interval")}
