"""One measurement's lifecycle, the same for `run`, `ct`, suites and `compare-falcon`: build the
image, record what runs where (meta.json), connect to the target, check the image it runs, capture
samples to disk as they arrive, and record how it ended (complete, interrupted, failed) so that
`--resume` can go on. What is captured is a `Capture`: rows of keygen/sign/verify samples
(`SampleCapture`), or the constant-time test's signatures (`ct.CtCapture`)."""

import contextlib
import errno
import queue
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from importlib.metadata import version
from pathlib import Path

from rich.console import Console

from ..link.device import Cancelled, DeviceSession
from ..link.messages import Info
from ..project.build import build_info, check_stack, code_digest
from ..project.catalogue import UNMEASURED, Implementation
from ..project.console import progress
from ..project import waits
from ..project.errors import PqscopeError
from ..results.documents.runs import ProbeSet
from ..results.probes import probe_columns
from ..results.lock import writing
from ..results.rundir import RunDirectory, resume_parameters, write_meta
from ..results.runmeta import RunMeta, timestamp
from ..results.store import save
from ..targets.target import Connection, Image, Target
from .capture import Capture, Companion, Shard, check_info, variant_json
from .halt import Halt
from .measurement import Member


DISK_FULL = (errno.ENOSPC, errno.EDQUOT)  # a write refused for want of space: the run resumes once there is


@dataclass
class Outcome:
    """How a measurement ended: its meta.json, every record (kept and new) and its result."""

    meta: RunMeta
    records: list
    result: dict | None = None

    @property
    def interrupted(self) -> bool:
        return self.meta.interrupted


class Runner:
    """Measures implementations on `targets`, one shard of each measurement per target (the same
    target may be given several times: the virtual board starts an emulator per connection),
    reporting progress on `console`."""

    def __init__(self, targets: Target | list[Target], console: Console, capture: "Capture | None" = None, *,
                 report: Callable[[Path], object] | None = None, halt: Halt | None = None):
        """`capture`: what the runner will measure, if known now: a target that cannot take it is
        refused before any other check. `report`: writes the reports of a finished result kept in
        a directory (the command that asks for reports gives it; measuring writes none itself).
        `halt`: ends its measurements from another thread (it runs in one of its own)."""
        self.report, self.halt = report, halt
        self.targets = targets if isinstance(targets, list) else [targets]
        if capture is not None:
            capture.instrumented(self.targets[0])
        for target in self.targets:
            target.check()
        self.target, self.console = self.targets[0], console

    def beside(self, targets: list[Target], console: Console, halt: Halt | None = None) -> "Runner":
        """A runner on other targets that reports as this one does (a board's replay on virtual boards),
        ended by `halt` (or by this one's)."""
        return Runner(targets, console, report=self.report, halt=halt or self.halt)

    def measure(self, implementation: Implementation, path: Path, what: Capture,
                resumed: RunMeta | None = None) -> Outcome:
        """Captures `what` of `implementation` into the run directory `path`; or, given the
        meta.json of an interrupted measurement there, its missing records. It holds the
        directory's writer lock throughout (another writer there is refused). Ctrl-C (or SIGTERM,
        SIGHUP: see cli.signals) and a full disk end it as "interrupted", keeping everything
        captured."""
        with writing(path):
            if resumed is not None and _progress(resume_parameters(path, kind=what.kind)) != _progress(resumed):
                raise PqscopeError(f"cannot resume {path}: another process measured into it after this one read it; "
                                   f"give the command again")
            try:
                return self._measure(implementation, path, what, resumed)
            except OSError as error:
                if error.errno not in DISK_FULL:
                    raise
                raise PqscopeError(f"{disk_full(error, path)}; free some space and resume with "
                                   f"`pqscope {what.kind} --resume {path}`") from None

    def _measure(self, implementation: Implementation, path: Path, what: Capture, resumed: RunMeta | None) -> Outcome:
        target, console = self.target, self.console
        profiled = what.instrumented(target)  # before the build: a capture the target cannot take fails at once
        if implementation.status_on(target.board.emulates or target.board.name) == UNMEASURED:
            console.print(f"warning: {implementation.scheme}/{implementation.impl} has not been measured on "
                          f"{target.board.name} yet (tests/bench/atlas_status.py): it may not build or sign")
        image = target.image(implementation, console, what.variant, what.keys_held)
        code = code_digest(image.elf)
        if resumed and resumed.code_sha256 not in (None, code):
            # Runs from before the digest was recorded take it from here on.
            raise PqscopeError(f"cannot resume {path}: the code of {image.elf.name} changed since the run started, "
                               f"and its samples would mix two builds; start a new run (or rebuild the code it "
                               f"began with)")
        targets = self.targets[:what.most_shards()]
        for each in targets:
            each.prepare(console)
        model = target.timing_model()
        if resumed and resumed.timing_model not in (None, model):
            raise PqscopeError(f"cannot resume {path}: the virtual board's emulator changed since the run started, "
                               f"and its samples would mix two timing models; start a new run (or rebuild the "
                               f"emulator it began with)")
        what.check_image(implementation, image.elf)
        kept = what.keep(path, profiled) if resumed else []
        records = list(kept)
        shards = [Shard(index, len(targets)) for index in range(len(targets))]
        with RunDirectory(path, what.samples_name, resuming=bool(resumed)) as run_dir, \
                what.alongside(self, implementation, image.elf, path):
            meta = resumed or self._new_meta(implementation, image, what)
            meta.code_sha256, meta.timing_model = code, model
            if resumed:
                meta.resumed_at = [*(meta.resumed_at or []), timestamp()]
            meta.status, meta.samples_completed = "running", len(records)
            write_meta(path, meta)
            connections: list[Connection] = []
            try:
                # First, so that what it finds can decide when the capture stops.
                self.measure_companions(implementation, path, what, what.companions(self.target.board))
                with contextlib.ExitStack() as stack:
                    for shard, shard_target in zip(shards, targets):
                        directory = shard.directory(path)
                        directory.mkdir(parents=True, exist_ok=True)
                        # Each board's bound on a record that never comes (the virtual board's in model
                        # cycles): the whole capture's samples, more than any shard measures.
                        connections.append(stack.enter_context(shard_target.for_samples(what.samples).connect(
                            image.elf, console, stats_dir=directory, on_receive=run_dir.raw_writer(directory),
                            profiling=what.profiling(implementation, directory) if profiled else None)))
                        if self.halt is not None:
                            self.halt.watch(connections[-1].session)
                    infos = self._start(connections, implementation, what)
                    info, probe_names = infos[0], connections[0].session.probe_names
                    meta.clock_hz, meta.info = info.clock_hz, asdict(info)
                    # Each board's own probe costs, as it measured them at this boot (the confirmation
                    # on probes takes each board's cost per call apart).
                    meta.boards = {**(meta.boards or {}), **{
                        shard_info.board_serial: {**shard_target.describe(), "port": connection.port,
                                                  **({"probe_self_cycles": shard_info.probe_self_cycles,
                                                      "probe_call_cycles": shard_info.probe_call_cycles}
                                                     if probe_names else {})}
                        for shard_info, shard_target, connection in zip(infos, targets, connections)}}
                    if len(shards) == 1:
                        meta.port = connections[0].port
                    else:  # each board's target and port, in the order of the shards
                        meta.port, meta.place = None, None
                        meta.shards = [{**shard_target.describe(), "port": connection.port,
                                        "board_serial": shard_info.board_serial}
                                       for shard_target, connection, shard_info in zip(targets, connections, infos)]
                    meta.probes = ProbeSet.of(info, probe_names).to_json() if probe_names else None
                    run_dir.start_samples(what.fields + probe_columns(probe_names))
                    write_meta(path, meta)
                    with progress(console) as bar:
                        task = bar.add_task(what.label(implementation), total=what.samples, completed=len(records))
                        for record in _gathered(what, infos, kept, shards, connections,
                                                [shard_target.where() for shard_target in targets]):
                            what.write(run_dir, record)
                            records.append(record)
                            what.update(meta)
                            meta.samples_completed = len(records)
                            bar.advance(task)
                            meta.stopped_early = what.stop_reason(implementation, path, records, meta, profiled)
                            if what.progress:
                                bar.update(task, description=f"{what.label(implementation)} ({what.progress})")
                            if meta.stopped_early:
                                console.print(f"stopped early: {meta.stopped_early}")
                                break
                        if self.halt is not None:
                            self.halt.check()
                self._check_stack(implementation, image, records)
                # Complete once its result is kept too: a failure before leaves it to resume.
                finished = what.finish(implementation, path, records, meta, profiled)
                if finished is not None:
                    meta.result = finished.document
                    if what.view:
                        save(path, what.view, finished.document, finished.evidence)
                meta.status = "complete"
            except KeyboardInterrupt:
                meta.status = "interrupted"
            except Cancelled:  # halted while it waited for a board's answer outside the capture (its INFO)
                if self.halt is None or not self.halt.halted:
                    raise
                meta.status = "interrupted"
            except OSError as error:
                meta.status = "interrupted" if error.errno in DISK_FULL else f"failed: {error}"
                raise
            except PqscopeError as error:
                meta.status = f"failed: {error}"
                raise
            finally:
                meta.finished_at = timestamp()
                self._keep_stats(meta, connections)
                # A full disk may refuse this too: meta.json then says "running" without a live
                # writer, which readers take for interrupted.
                with contextlib.suppress(OSError) if meta.status == "interrupted" else contextlib.nullcontext():
                    write_meta(path, meta)
            outcome = Outcome(meta, records, meta.result)
            if outcome.interrupted:
                console.print(f"interrupted after {what.count_text(len(records))}; data kept in {path}, "
                              f"resume with `pqscope {what.kind} --resume {path}`")
            elif what.view and meta.result is not None and what.reports and self.report is not None:
                self.report(path)
        return outcome

    def measure_companions(self, implementation: Implementation, path: Path, what: Capture,
                           companions: Iterator[Companion]) -> None:
        """The capture's `companions` (each resumed where an earlier attempt left it; one at another
        clock on this target at that clock), each result taken by `what`; an interruption
        interrupts the capture too."""
        for companion in companions:
            sub = path / companion.directory
            resumed = resume_parameters(sub, kind=companion.capture.kind) if (sub / "meta.json").is_file() else None
            if resumed is not None and resumed.status == "complete":
                what.take_companion(companion, resumed.result)
                continue
            runner = self if companion.clock is None else self.beside([self.target.at_clock(companion.clock)],
                                                                      self.console)
            outcome = runner.measure(implementation, sub, companion.capture, resumed)
            if outcome.interrupted:
                raise KeyboardInterrupt
            what.take_companion(companion, outcome.result)

    def _start(self, connections: list[Connection], implementation: Implementation, what: Capture) -> list[Info]:
        """Each board's INFO, checked to be the image meant (the same on every shard but for the
        board's serial number and what it measures of itself)."""
        infos = []
        for connection in connections:
            info = connection.session.hello()
            if info.clock_fallback:
                board = f" (board {info.board_serial})" if len(connections) > 1 else ""
                self.console.print(f"{info.clock_fallback}{board}")
            check_info(info, self.target.board, implementation, what.msg_len)
            infos.append(info)
        # The probes' costs are measured at boot: a board with timing noise measures its own; a
        # clock's source changes no cycle count.
        images = [(replace(info, board_serial="", probe_self_cycles=0, probe_call_cycles=0, clock_source="",
                           clock_fallback_reason=""),
                   connection.session.probe_names) for info, connection in zip(infos, connections)]
        if any(other != images[0] for other in images[1:]):
            raise PqscopeError("the boards of the shards run different images (their INFO or probes differ): "
                               "flash the same image onto each")
        serials = [info.board_serial for info in infos]
        if len(set(serials)) < len(serials):
            raise PqscopeError(f"two shards reach the same board (serial number {max(serials, key=serials.count)}): "
                               "give each shard a board of its own")
        return infos

    def _check_stack(self, implementation: Implementation, image: Image, records: list) -> None:
        """Warns of (or refuses) a stack deeper than the image was checked to fit with (check_stack).
        The records that report one: a sample's rows (a list) and the constant-time test's signatures."""
        items = [item for record in records for item in (record if isinstance(record, list) else (record,))]
        deepest = max((item.stack_bytes for item in items if getattr(item, "stack_bytes", None)), default=0)
        warning = check_stack(self.target.board, image.elf, image.size, implementation, deepest)
        if warning:
            self.console.print(f"warning: {warning}")

    @staticmethod
    def _keep_stats(meta: RunMeta, connections: list[Connection]) -> None:
        """What the targets measured of themselves (the emulator's statistics): a shard's each."""
        if len(connections) == 1 and connections[0].stats:
            meta.emulator_stats = connections[0].stats
        elif meta.shards and len(meta.shards) == len(connections):
            for entry, connection in zip(meta.shards, connections):
                if connection.stats:
                    entry["emulator_stats"] = connection.stats

    def measure_members(self, members: list["Member"], what: Capture,
                        announce: "Callable[[Member], object]" = lambda member: None) -> bool:
        """Measures the members of a run or suite in turn (complete ones stay as they are; each
        other one `announce`d first), stopping at an interruption, which it returns."""
        for member in members:
            if member.complete:
                continue
            announce(member)
            if self.measure(member.implementation, member.path, what, member.resume_from).interrupted:
                return True
        return False

    def _new_meta(self, implementation: Implementation, image, what: Capture) -> RunMeta:
        board = self.target.board
        return RunMeta(
            kind=what.kind, board=board.name, scheme=implementation.scheme, impl=implementation.impl,
            samples=what.samples, msg_len=what.msg_len, master_seed=what.master_seed.hex(),
            tool_version=version("pqscope"), command_line=sys.argv, build=build_info(self.target.root, board),
            started_at=timestamp(), **self.target.describe(), elf=str(image.elf), image=asdict(image.size),
            clock=board.clock.name, clock_hz=board.clock_hz, flash_wait_states=board.clock.flash_wait_states,
            toolchain=board.toolchain.to_json(), **what.parameters(), variant=variant_json(what.variant),
            impl_dir=str(implementation.impl_dir.resolve()) if implementation.impl_dir is not None else None,
            impl_stack_bytes=implementation.stack_bytes if implementation.impl_dir is not None else None,
        )


def _progress(meta: RunMeta) -> tuple:
    """How far a measurement's meta.json says it went: changed by every writer that held its lock."""
    return meta.status, meta.samples_completed, meta.resumed_at, meta.finished_at


def disk_full(error: OSError, path: Path) -> str:
    """"no space left on the device: <file> (<n> MB free)", `path` standing for a file not named."""
    where = Path(error.filename) if error.filename else path
    try:
        free = f"{shutil.disk_usage(where if where.is_dir() else where.parent).free / 1e6:,.1f} MB free"
    except OSError:
        free = "free space unknown"
    return f"{error.strerror.lower()}: {where} ({free})"


def _gathered(what: Capture, infos: list[Info], kept: list, shards: list[Shard], connections: list[Connection],
              boards: list[str]) -> Iterator:
    """The shards' records as they come, each shard capturing in a thread of its own that asks
    its board for the next record only once the runner has taken (and written) the last one; a
    shard's failure names its board (`boards`) when there are several. Leaving (the capture
    stopped early, failed or was interrupted) cancels every shard's session and waits for its
    thread: the boards are closed only once no thread talks to them."""
    # SimpleQueue: its get() waits in C, so that Ctrl-C or a signal there is a clean KeyboardInterrupt
    # (Queue's Python-level condition wait could be left half-released: "release unlocked lock"),
    # taken in slices (waits) for a signal a shard's thread takes.
    arrivals: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()

    def capture_shard(shard: Shard, session: DeviceSession, taken: threading.Semaphore) -> None:
        try:
            for record in what.records(session, infos[shard.index], kept, shard):
                arrivals.put((taken, record))
                taken.acquire()
                if stop.is_set():
                    break
        except Cancelled:
            pass
        except PqscopeError as error:
            arrivals.put(_Failed(PqscopeError(f"shard {shard.index} ({boards[shard.index]}): {error}", error.details)
                                 if len(shards) > 1 else error))
        except BaseException as error:  # handed to the runner's thread, which raises it
            arrivals.put(_Failed(error))
        finally:
            arrivals.put(_FINISHED)

    takens = [threading.Semaphore(0) for _ in shards]
    threads = [threading.Thread(target=capture_shard, args=(shard, connection.session, taken), daemon=True,
                                name=f"shard {shard.index}")
               for shard, connection, taken in zip(shards, connections, takens)]
    for thread in threads:
        thread.start()
    try:
        finished = 0
        while finished < len(threads):
            arrival = waits.take(arrivals)
            if arrival is _FINISHED:
                finished += 1
            elif isinstance(arrival, _Failed):
                raise arrival.error
            else:
                taken, record = arrival
                yield record
                taken.release()
    finally:
        stop.set()
        for connection, taken in zip(connections, takens):
            connection.session.cancel()
            taken.release()
        for thread in threads:
            thread.join()


@dataclass(frozen=True)
class _Failed:
    error: BaseException


_FINISHED = object()


