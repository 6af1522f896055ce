"""A matrix cell's measurements, in this process: its exact check and its statistical test, as
`pqscope taint` and `pqscope ct --no-taint` take them (resumed where an interrupted one stopped,
read back once done), their progress kept off the matrix's lines; a build's key and signature on
the plain emulator within a budget of cycles, whose end at that budget is the virtual board's
typed outcome (CycleBudgetExhausted); and the cells' work, an emulator each, several at a time."""

import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..analysis.replay import quiet_console
from ..link.protocol import Op, Status
from ..measure.measurement import Measurement, Member, resumed
from ..measure.runner import Runner
from ..project.boards import Board
from ..project.catalogue import Implementation
from ..project import waits
from ..project.errors import PqscopeError
from ..results import store
from ..results.documents.ct import CtDocument
from ..results.documents.matrix import emulated_cycles
from ..results.documents.taint import TaintDocument
from ..results.records import sample_seed
from ..targets.kinds import open_shard_targets, open_target
from ..targets.target import Link
from ..targets.vboard import CycleBudgetExhausted

MSG_LEN = 32  # pqscope taint's and pqscope ct's default


def measure(root: Path, measurement: Measurement, link: Link, shards: int) -> None:
    """Measures `measurement` on `shards` emulators reached as `link` says, reporting nothing (the
    matrix says what it does). Interrupted, it stops the matrix (KeyboardInterrupt), everything
    captured kept for the matrix's resume."""
    runner = Runner(open_shard_targets(root, measurement.board, [link], shards), quiet_console(), measurement.what)
    if runner.measure_members(measurement.members, measurement.what):
        raise KeyboardInterrupt


def exact_check(root: Path, board: Board, row: Implementation, path: Path, signatures: int,
                seed: bytes) -> TaintDocument:
    """The exact check's document of `row` built for `board` (pqscope taint into `path`): read
    back if done, else resumed where it stopped, or checked anew."""
    from ..analysis.taint import TaintCapture

    if store.stored_kind(path) is None:
        if (path / "meta.json").is_file():
            measurement = resumed(root, path, TaintCapture)
        else:
            shutil.rmtree(path, ignore_errors=True)
            measurement = Measurement(board, TaintCapture(signatures, seed, MSG_LEN), [Member(row, path)])
        measure(root, measurement, Link(), 1)
    return TaintDocument.from_json(_kept(path))


def timing_test(root: Path, board: Board, row: Implementation, path: Path, signatures: int, seed: bytes,
                shards: int, say: Callable[[str], None]) -> CtDocument:
    """The statistical test's document of `row` built for `board` (pqscope ct --no-taint into
    `path`, fixed against random keys, on `shards` emulators): read back if done, else resumed
    where it stopped; a test that cannot go on (the emulator or the build changed since, say) is
    set aside and starts anew."""
    # numpy/scipy statistics: loaded only for a matrix that tests on timing.
    from ..analysis.ct import CtCapture
    from ..analysis.ct_plan import constant_time_test

    if store.stored_kind(path) is None and (path / "meta.json").is_file():
        try:
            measure(root, resumed(root, path, CtCapture), Link(), shards)
        except PqscopeError as error:
            say(f"its test could not go on ({error}): started anew, the signatures so far kept in "
                f"{_set_aside(path)}")
    if store.stored_kind(path) is None:
        shutil.rmtree(path, ignore_errors=True)
        test = constant_time_test(board, signatures, seed, MSG_LEN, taint_check=False)
        measure(root, Measurement(board, test, [Member(row, path)]), Link(), shards)
    return CtDocument.from_json(_kept(path))


def cycles_to_sign(root: Path, board: Board, image: Path, seed: bytes, directory: Path, budget: int) -> int | None:
    """The emulator's cycles from its start to a key and a signature of `seed`'s first sample (the
    harness's own work at the build's level included), or None when it stopped at its `budget`
    before; its statistics kept in `directory`."""
    target = open_target(root, board, Link(max_cycles=budget))
    try:
        with target.connect(image, quiet_console(), stats_dir=directory) as connection:
            connection.session.hello()
            result = connection.session.run_sample(sample_seed(seed, 0), MSG_LEN, (Op.KEYGEN, Op.SIGN), 0)
    except CycleBudgetExhausted:
        return None
    if any(sample.status != Status.OK for sample in result.samples):
        raise PqscopeError(f"the build answered {[sample.status.name for sample in result.samples]}")
    return emulated_cycles(connection.stats)


Item = TypeVar("Item")
Result = TypeVar("Result")


def in_parallel(work: Callable[[Item], Result], items: list[Item], jobs: int) -> list[Result]:
    """`work` of each item (in their order), `jobs` at a time, each in a thread of its own. The
    threads are daemons: Ctrl-C ends the matrix at once, as it ended the commands a matrix once
    started, and the emulators end with it (they end with the thread that started them); a
    pool's threads would keep the matrix alive until every cell under way was done. A failure
    starts no more items and is raised here."""
    results: dict[int, Result] = {}
    failures: list[BaseException] = []
    pending = iter(enumerate(items))
    taking = threading.Lock()

    def worker() -> None:
        while not failures:
            with taking:
                index, item = next(pending, (None, None))
            if index is None:
                return
            try:
                results[index] = work(item)
            except BaseException as error:  # raised in the matrix's thread
                failures.append(error)

    threads = [threading.Thread(target=worker, daemon=True, name=f"matrix cell {number}")
               for number in range(min(jobs, len(items)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        waits.join(thread)  # Ctrl-C ends the matrix even if a cell's thread took it
    if failures:
        raise failures[0]
    return [results[index] for index in range(len(items))]


def _kept(path: Path) -> dict:
    """The document kept in the run directory `path` (a test's evidence left unread)."""
    return store.read(path / store.file_name(store.stored_kind(path)))


def _set_aside(run: Path) -> Path:
    """Moves the run directory `run` to the first free `<name>.unresumable-N` beside it; the new path."""
    number = 1
    while (kept := run.with_name(f"{run.name}.unresumable-{number}")).exists():
        number += 1
    run.rename(kept)
    return kept
