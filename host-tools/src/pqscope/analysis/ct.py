"""`pqscope ct`: the constant-time test's capture (CtCapture), which stops at the first look with a
definite verdict and finishes with the verdict's document, with the exact check beside it and, for
a board's test, its replay on the virtual board (ReplayCapture)."""

import contextlib
from collections import deque
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from ..measure.capture import Capture, Companion, Finished, variant_from_json
from ..measure.key_pairs import KeyPairs
from ..measure.runner import Runner
from ..project.boards import Board
from ..project.build import PLAIN, Variant, code_digest
from ..project.catalogue import Implementation
from ..project.errors import PqscopeError
from ..project.toolchain import built_with
from ..results.documents.ct import CtDocument, Sequential
from ..results.documents.replay import ReplaySettings
from ..results.documents.runs import ProbeSet
from ..results.documents.taint import CheckedClock, Finding, TaintDocument, VerdictAtClock
from ..results.probes import check_probes, confirmation, probe_inflation
from ..results.records import INTERVAL_FUNCTION
from ..results.rundir import RunDirectory, resume_parameters, sort_by_sample
from ..targets.kinds import replay_board, replay_targets
from ..targets.target import Profiling
from . import sequential
from .confirmation import all_confirmed
from .ct_beside import BEFORE_THE_CHECK, ExactCheckBeside
from .ct_analysis import PUBLIC_TIME, CtResult, analyse, look_summary
from .ct_looks import AFTER_EXACT_LEAK, bound_shown, first_pool, looks_of, random_keys_after, stop_at_look
from .ct_schedule import (CT_FIELDS, INTERVALS_FILE, CtSample, KeyMade, capture_ct, ct_record, first_signatures,
                          keep_captured, load_intervals)
from .ct_verdict import board_summaries, headline, taint_beside
from .replay import REPLAY_DIRECTORY, Replay, quiet_console
from .taint import ONE_SIGNATURE_ABOVE, TaintCapture
from .taint_findings import derives_public_code, public_code

EXACT_CHECK_DIRECTORY = "taint"  # where `ct --taint` keeps the exact check beside the test


class CtCapture(Capture):
    """The constant-time test's signatures (`pqscope ct`): ct.csv, one row per signature, the keys
    the device made in meta.json; finished by the verdict (ct.json, report.html)."""

    kind, unit, samples_name, fields = "ct", "signatures", "ct.csv", CT_FIELDS
    view, keys_held = "ct", 2  # a fixed key and random ones
    # Beside the statistics the exact check's first signature is alone above this (before them, never).
    exact_check_alone_above: float | None = None

    def __init__(self, samples: int, master_seed: bytes, msg_len: int, key_refresh: int = 0, *,
                 variant: Variant = PLAIN, fixed_n: bool = False, bound: float | None = None, exact_check: int = 0,
                 replay: ReplaySettings | None = None, random_keys: int | None = None,
                 other_clocks: tuple[str, ...] = ()):
        super().__init__(samples, master_seed, msg_len, variant=variant)
        self.key_refresh = key_refresh
        # The pool's random keys the test signs with (None: every slot): fewer, less key generation.
        self.random_keys = random_keys
        # A board's test replayed on the virtual board (None: not replayed), and the replay once running.
        self.replay = replay
        self._replay: Replay | None = None
        self._beside: ExactCheckBeside | None = None  # the exact check, where it runs beside the statistics
        self._used: int | None = None  # the signatures the finished verdict used
        # The exact check's signatures (0: none) and its result, shown next to the localisation.
        self.exact_check = exact_check
        self.taint: TaintDocument | None = None
        # The board's other clocks the exact check runs at (or derives its verdict at), its verdicts there.
        self.other_clocks = other_clocks
        self.at_clocks: dict[str, VerdictAtClock] = {}
        # A no-leak must also show that no leak is larger than this share of the mean time.
        self.bound = bound
        self._live: sequential.OnlineT | None = None  # the raw total's running t
        self._last_look = ""
        self._arrived: set[int] = set()  # signatures captured, kept or new, by index
        self._prefix = 0  # signatures 0 .. _prefix-1 are all captured: shards deliver out of order
        self._looked = 0  # looks taken so far
        self.decided_at: int | None = None  # the look whose verdict stopped the test
        self._keys_made: deque[KeyMade] = deque()  # by the shards' threads, for `update`
        self.key_pairs = KeyPairs()  # the exact check's keys, when it runs before the statistics
        # Sequential: `samples` is the most it takes; it stops at the first look with a definite verdict.
        self.fixed_n = fixed_n
        self.looks = self._looks()

    def _looks(self, sign_cycles: tuple[int | None, ...] | None = None) -> list[int]:
        """The test's looks (ct_looks.looks_of), the early one sized to the exact check's `sign_cycles`."""
        return looks_of(self.samples, fixed_n=self.fixed_n, beside_exact_check=bool(self.exact_check)
                        and self.replay is None, sign_cycles=sign_cycles)

    @classmethod
    def from_meta(cls, meta) -> "CtCapture":
        return cls(meta.samples, meta.seed, meta.msg_len, meta.key_refresh, variant=variant_from_json(meta.variant),
                   fixed_n=bool(meta.fixed_n), bound=meta.bound, exact_check=meta.exact_check or 0,
                   replay=ReplaySettings.from_json(meta.replay), random_keys=meta.random_keys,
                   other_clocks=tuple(meta.other_clocks or ()))

    def parameters(self) -> dict:
        return {"key_refresh": self.key_refresh, "keys": [], "fixed_n": self.fixed_n, "bound": self.bound,
                "exact_check": self.exact_check or None, "replay": self.replay.to_json() if self.replay else None,
                "random_keys": self.random_keys, "other_clocks": list(self.other_clocks) or None}

    def companions(self, board: Board) -> Iterator[Companion]:
        """The exact check beside the test, into its "taint" subdirectory, and at each of the board's other
        clocks into "taint-<clock>", unless the first is the same at every clock: its verdict there is then
        derived (a replayed test's run in the replay; one beside the statistics runs from `alongside`)."""
        if not self.exact_check or self.replay is not None or self._beside is not None:
            return
        yield Companion(self._exact_check_capture(), EXACT_CHECK_DIRECTORY)
        for clock in self.other_clocks:
            if self.taint is not None and self.taint.same_at_every_clock:
                there = board.at_clock(clock)
                self.at_clocks[clock] = VerdictAtClock.of(self.taint, EXACT_CHECK_DIRECTORY, CheckedClock(
                    clock, there.clock_hz, there.clock.flash_wait_states))
            else:
                yield Companion(self._exact_check_capture(), f"{EXACT_CHECK_DIRECTORY}-{clock}", clock)

    def _exact_check_capture(self) -> TaintCapture:
        return TaintCapture(self.exact_check, self.master_seed, self.msg_len,
                            one_signature_above=self.exact_check_alone_above, key_pairs=self.key_pairs)

    @contextlib.contextmanager
    def alongside(self, runner: Runner, implementation: Implementation, elf: Path, path: Path):
        """A board's replay on the virtual board, into the "replay" subdirectory, for as long as the
        test runs; it ends with the test, and resumes with it. The virtual board's exact check
        beside its statistics where it can (ct_beside), until the test takes its result."""
        if self.replay is None:
            if not self.exact_check or derives_public_code(implementation.declassify):
                yield
                return
            checks = CtCapture(self.samples, self.master_seed, self.msg_len, exact_check=self.exact_check,
                               other_clocks=self.other_clocks)  # the checks alone, their results its own
            checks.exact_check_alone_above = ONE_SIGNATURE_ABOVE
            with ExactCheckBeside(checks, lambda halt: runner.beside([runner.target], quiet_console(), halt)
                                  .measure_companions(implementation, path, checks,
                                                      checks.companions(runner.target.board))) as self._beside:
                yield
            return
        replay = Replay(lambda where, feed: self._measure_replay(runner, implementation, elf, where, feed),
                        path / REPLAY_DIRECTORY)
        if not self.exact_check:
            replay.exact_checked(None)
        self._replay = replay
        replay.start()
        try:
            yield
        finally:
            replay.close(self._used)

    def _measure_replay(self, runner: Runner, implementation: Implementation, elf: Path, path: Path,
                        feed: Replay) -> None:
        """The replay's measurement: the same schedule and image, on the virtual boards replaying `target`."""
        what = ReplayCapture(self, feed, code_digest(elf))
        resumed = resume_parameters(path, kind=self.kind) if (path / "meta.json").is_file() else None
        if resumed is not None and resumed.status == "complete":
            what.take_kept(path)
            return
        targets = replay_targets(runner.target, self.replay.emulator_args())
        runner.beside(targets, quiet_console()).measure(implementation, path, what, resumed)

    def take_companion(self, companion: Companion | None, document: dict | None) -> None:
        taint = None if document is None else TaintDocument.from_json(document)
        if companion is None or companion.clock is None:
            self.taint = taint
            if taint is not None:  # the early look sized to its signing; a leak found leaves fewer keys to make
                self.looks = self._looks(taint.sign_cycles)
                self.random_keys = random_keys_after(bool(taint.leaks) and not self.fixed_n, self.random_keys)
        elif taint is not None:
            self.at_clocks[companion.clock] = VerdictAtClock.of(taint, companion.directory)

    def stop_reason(self, implementation, path, records, meta, profiled) -> str | None:
        """At a look before the last, why the test can stop: its verdict is leak or no-leak. A
        look is taken on the schedule's first signatures, once every one of them is captured
        (shards deliver them out of order), so that its verdict does not depend on the shards.
        Between looks, the progress line shows the raw total's live |t|."""
        if self._live is None:
            self._live = sequential.OnlineT()
            for record in records[:-1]:  # a resumed test's kept signatures
                self._arrive(record)
        self._arrive(records[-1])
        if self._prefix >= BEFORE_THE_CHECK:
            self._take_check_beside()
        if self._replay is not None:
            self._replay.board_measured(len(self._arrived))
            if self.taint is None:
                self.taint = self._replay.exact_check()
        leaks = self._exact_leaks()
        if leaks and not self.fixed_n and self._prefix >= AFTER_EXACT_LEAK and self._replay is None:
            self.decided_at = AFTER_EXACT_LEAK
            result = self._analyse(implementation, path, first_signatures(records, AFTER_EXACT_LEAK), meta, profiled,
                                   bootstrap_resamples=10)
            return (f"leak: the exact check found {leaks} leaking instruction{'' if leaks == 1 else 's'} (the "
                    f"statistics at {AFTER_EXACT_LEAK} signatures: {result.verdict})")
        while self._looked < len(self.looks) - 1 and self._prefix >= self.looks[self._looked]:
            look = self.looks[self._looked]
            self._looked += 1
            # The verdict needs no bootstrap intervals: a few resamples keep each look quick.
            result = self._analyse(implementation, path, first_signatures(records, look), meta, profiled,
                                   bootstrap_resamples=10)
            self.progress = self._last_look = look_summary(result, look)
            if leaks and self._replay is not None:
                # The verdict is the exact check's leak: the board's test goes on to confirm every finding it can label.
                confirmations = self._replay.confirmations(first_signatures(records, look), meta, self._findings(),
                                                           len(self.looks))
                if all_confirmed(confirmations):
                    self.decided_at = look
                    return (f"leak: the exact check's findings in {len(confirmations)} function"
                            f"{'' if len(confirmations) == 1 else 's'} confirmed on the board at {look} signatures")
                continue
            reason = stop_at_look(result, look, self.looks, bound=self.bound, exact_clean=self._exact_clean())
            if reason is not None:
                self.decided_at = look
                return reason
        live = self._live.t
        self.progress = ("exact check beside; " if self._beside and not self._beside.taken else "") + (
            self._last_look + "; " if self._last_look else "") + (
            "" if live is None else f"live raw |t| {abs(live):.1f}") + (
            f"; replayed {self._replay.replayed}" if self._replay is not None else "")
        return None

    def _take_check_beside(self) -> None:
        """The exact check's results, once it ended beside the statistics (waits until then)."""
        if self._beside is None or self._beside.taken:
            return
        self._beside.wait()
        self.taint, self.at_clocks = self._beside.checks.taint, self._beside.checks.at_clocks
        if self.taint is not None:
            self.looks = self._looks(self.taint.sign_cycles)

    def _exact_leaks(self) -> int:
        """The exact check's leaks: one decides the verdict, whatever the statistics say."""
        return len(self.taint.leaks) if self.taint else 0

    def _arrive(self, record: CtSample) -> None:
        self._arrived.add(record.index)
        while self._prefix in self._arrived:
            self._prefix += 1
        if record.status.timed:
            self._live.add(record.key_class, record.cycles)

    def _findings(self) -> tuple[Finding, ...]:
        return self.taint.findings if self.taint else ()

    def _exact_clean(self) -> bool:
        """The virtual board's own exact check ran and found nothing (a board's replayed one cannot clear it)."""
        return self.taint is not None and not self.taint.leaks and self._replay is None and not self.fixed_n

    def _analyse(self, implementation, path, records, meta, profiled, **options) -> CtResult:
        """The analysis of `records` as the test's verdict is decided (at a look, or at the end)."""
        intervals = load_intervals(path) if profiled else None
        probes = ProbeSet.from_json(meta.probes) if meta.probes else None
        if probes is not None:
            # The corrections need their functions' time: without it the verdict would be the uncorrected one.
            check_probes(probes.names, [*filter(None, [implementation.retry_function]), *implementation.public_functions],
                         Path(meta.elf or "the image").name)
        predicted = None
        if self._replay is not None:
            model = self._replay.model(max((record.index for record in records), default=-1) + 1)
            predicted = [model[record.index].cycles for record in records]
        derived = self._public_code(implementation)
        return analyse(records, intervals, implementation.retry_function or None,
                       tuple(dict.fromkeys([*implementation.public_functions, *derived])), probes=probes,
                       looks=len(self.looks), predicted=predicted, public_by_exact_check=derived, **options)

    def _public_code(self, implementation: Implementation) -> tuple[str, ...]:
        """What the virtual board's own exact check shows to run on declared-public values only (a board's test: none)."""
        found = () if self.taint is None or self.replay is not None else public_code(
            self.taint.findings, implementation.declassify, (implementation.retry_function, INTERVAL_FUNCTION))
        return tuple(name for name in found if name not in implementation.public_functions)

    def label(self, implementation: Implementation) -> str:
        return f"ct {super().label(implementation)}"

    def instrumented(self, target) -> bool:
        if self.exact_check and not target.taints and self.replay is None:
            raise PqscopeError(f"--taint runs on the virtual board: on {target.board.name}, in the replay (drop "
                               "--no-replay)")
        if self.replay is not None and target.taints:
            raise PqscopeError(f"board {target.board.name} is the virtual board: there is nothing to replay (drop --replay)")
        if self.replay is not None:
            replay_board(target)  # a board without a virtual twin is refused before anything is built
        # The probed image's probes replace the virtual board's profiler: it measures as a board would.
        return target.profiles and not self.variant.probed

    def profiling(self, implementation: Implementation, directory: Path) -> Profiling:
        # Every signature profiled: the localisation, the attempt counts, what the exact check says is public.
        return Profiling(directory / INTERVALS_FILE, INTERVAL_FUNCTION,
                         (*implementation.public_functions, *self._public_code(implementation)))

    def keep(self, path: Path, profiled: bool) -> list[CtSample]:
        return keep_captured(path, self.master_seed, self.samples, with_intervals=profiled)

    def records(self, session, info, kept, shard) -> Iterator[CtSample]:
        return capture_ct(session, info, samples=self.samples, master_seed=self.master_seed, msg_len=self.msg_len,
                          key_refresh=self.key_refresh, random_keys=self.random_keys, key_pairs=self.key_pairs,
                          done={record.index for record in kept}, owns=shard.owns,
                          on_key=self._keys_made.append, first_pool=first_pool(self.looks),
                          before_signing=lambda index: self._beside is None or self._beside.hold(
                              index, lambda: session.cancelled))

    def update(self, meta) -> None:
        """The keys the shards made, each once (a resumed test and every shard make their pool again)."""
        meta.random_keys = self.random_keys
        if not self._keys_made:
            return
        known = meta.key_ids
        while self._keys_made:
            key = self._keys_made.popleft()
            if key.key_id not in known:
                known.add(key.key_id)
                meta.keys.append(asdict(key))

    def write(self, run_dir: RunDirectory, record: CtSample) -> None:
        run_dir.write_record(ct_record(record))

    def finish(self, implementation, path, records, meta, profiled) -> Finished:
        self._take_check_beside()
        # A test stopped at a look has that look's verdict; other shards' signatures stay in ct.csv, outside it.
        records = first_signatures(records, self.decided_at or self.samples)
        self._used = len(records)
        result = self._analyse(implementation, path, records, meta, profiled)
        statistics = result.statistics()
        top_functions = statistics.top_functions or ()
        leaking = [f.name for f in top_functions if f.depends_on_class and f.name != PUBLIC_TIME]
        selection = (["--scheme", implementation.scheme, "--impl", implementation.impl]
                     if implementation.impl_dir is None else ["--impl-dir", str(implementation.impl_dir)])
        boards = board_summaries(records, meta.boards or {})
        timed = [s for s in records if s.status.timed]
        verdict = headline(statistics, self.taint, exact_on_target=self._replay is None)
        document = CtDocument(
            meta.board, implementation.scheme, implementation.impl,
            {"name": meta.clock, "hz": meta.clock_hz, "flash_wait_states": meta.flash_wait_states},
            built_with(meta.toolchain, meta.build), str(path), verdict.verdict, verdict.reason, statistics,
            Sequential(tuple(self.looks), meta.stopped_early),
            bound_requested=None if self.bound is None else {"share_of_mean": self.bound,
                                                             "shown": bound_shown(result, self.bound)},
            boards=tuple(boards) if len(boards) > 1 else None,
            probe_inflation=probe_inflation(ProbeSet.from_json(meta.probes), [s.probes for s in timed],
                                            [s.cycles for s in timed]) if meta.probes else None,
            confirm_on_board=confirmation(leaking, implementation.probed_functions, Path(meta.elf), meta.device_board,
                                          selection) if profiled and leaking else None,
            taint=None if self.taint is None else taint_beside(self.taint, top_functions),
            replay=None if self._replay is None else self._replay.document(records, meta, self.replay,
                                                                          self._findings(), len(self.looks)),
            evidence=verdict.evidence, scope=verdict.scope,
            other_clocks=tuple(self.at_clocks[clock] for clock in self.other_clocks if clock in self.at_clocks))
        sort_by_sample(path / self.samples_name)
        evidence = result.evidence
        return Finished(document.to_json(), (evidence.classes.tolist(), evidence.values.tolist(),
                                             *(() if evidence.raw is None else (evidence.raw.tolist(),))))


class ReplayCapture(CtCapture):
    """A board's test as the virtual board replays it: the same schedule, keys and seeds, every
    signature profiled, handed to the board's test (`Replay`) as it comes; it takes every
    signature until the board's test says how many it used."""

    def __init__(self, board_test: CtCapture, feed: Replay, code: str):
        super().__init__(board_test.samples, board_test.master_seed, board_test.msg_len, board_test.key_refresh,
                         variant=board_test.variant, fixed_n=True, exact_check=board_test.exact_check,
                         random_keys=board_test.random_keys)
        self.feed, self.code = feed, code

    def label(self, implementation: Implementation) -> str:
        return f"replay of {super().label(implementation)}"

    def instrumented(self, target) -> bool:
        # Profiled even on a probed image: the profile labels the findings the board's probes time.
        return target.profiles

    def alongside(self, runner, implementation, elf, path):
        return contextlib.nullcontext()  # its exact check runs first: the board's test waits for it

    def check_image(self, implementation: Implementation, elf: Path) -> None:
        if code_digest(elf) != self.code:
            raise PqscopeError(f"the virtual board's image {elf} is not the board's: the replay needs the same code "
                               "(rebuild both from this tree)")

    def keep(self, path: Path, profiled: bool) -> list[CtSample]:
        kept = super().keep(path, profiled)
        for record in kept:
            self.feed.arrived(record)
        return kept

    def take_kept(self, path: Path) -> None:
        """A replay that ended complete: its signatures and exact check, as it kept them."""
        self.keep(path, profiled=True)
        exact = path / EXACT_CHECK_DIRECTORY
        self.take_companion(None, resume_parameters(exact, kind=TaintCapture.kind).result
                            if self.exact_check and (exact / "meta.json").is_file() else None)

    def take_companion(self, companion: Companion | None, document: dict | None) -> None:
        super().take_companion(companion, document)
        self.feed.exact_checked(self.taint)

    def stop_reason(self, implementation, path, records, meta, profiled) -> str | None:
        self.feed.arrived(records[-1])
        reason = self.feed.stop_reason()
        if reason is not None:
            self.decided_at = self.feed.needed
        return reason
