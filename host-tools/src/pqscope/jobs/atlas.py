"""`pqscope atlas`'s course: every row (the catalogue's and those discovered from pqm4's tree,
project/discovery.py) whose status on a chosen virtual board is `ok`, measured there as the
main job measures a suite member (jobs/main_job.py): its cycles and stack over -n samples
(`pqscope run`), then its signing's constant-time test sized to it (suite.ct_size), with the exact
check of one signature beside it (the key and the signing randomness secret, as `pqscope taint -n 1`);
then its answer (atlas_rows.py). A row whose status on a board is another is listed there with it
and its reason, not measured. Rows run side by side, an emulator each (-j); each row keeps its
result in row.json once done, so that a killed atlas resumes where it stopped.

An atlas directory holds atlas-plan.json (the plan and the shard, written before any row starts),
<board>/<scheme>-<impl>/ per row (its run, ct/ with the exact check in ct/taint/, row.json), and
atlas.json with its reports. --shard K/N takes the rows whose position in the plan's sorted list is
K-1 modulo N; each row's seed comes from the master seed and its name (atlas_rows.row_seed), so the
merge of every shard's atlas.json (`merge`) is the document of one run of them all."""

import threading
from collections.abc import Callable
from pathlib import Path

from ..link.protocol import Op
from ..measure.capture import SampleCapture
from ..measure.measurement import Member, board_at_clock
from ..measure.runner import Runner
from ..project.boards import Board
from ..project.build import build_images
from ..project.catalogue import Implementation, find_implementation
from ..project.errors import PqscopeError, match_name
from ..results import store
from ..results.documents.atlas import (LEAK, AtlasDocument, AtlasPlan, ListedRow, RowKey, RowResult,
                                       StartedAtlas)
from ..results.documents.ct import CtDocument
from ..results.documents.taint import TaintDocument
from ..results.rundir import make_empty_directory, member_state, write_atomically
from ..results.runs import load_run
from ..targets.kinds import open_shard_targets, target_kind
from ..targets.target import Link, reusing_images
from . import atlas_rows, main_job
from .matrix_cells import in_parallel
from .suite import CT_DIRECTORY, CT_SIGNATURES, ct_members, profile

PLAN = "atlas-plan.json"
ROW = "row.json"  # a row's result, written last: a row that has one is done
SAMPLES = 10  # pqm4's executions per operation
EXACT_SIGNATURES = 1  # the exact check of one signature per row, as `pqscope taint -n 1`
MSG_LEN = 32  # pqscope run's, ct's and taint's default
OPS = (Op.KEYGEN, Op.SIGN, Op.VERIFY)


def chosen_rows(rows: list[Implementation], boards: list[Board], families: tuple[str, ...], schemes: tuple[str, ...],
                named: tuple[tuple[str, str], ...]) -> tuple[tuple[RowKey, ...], tuple[ListedRow, ...]]:
    """The rows (the catalogue's and the discovered ones) that pass every filter given (family,
    scheme, SCHEME/IMPL; names matched in any case) on each board: those whose status there (on the
    firmware board whose images it runs) is ok, to measure, and the others, listed with their
    status and its reason; each sorted."""
    family_set = {match_name("family", name, {row.family for row in rows}) for name in families}
    scheme_set = {match_name("scheme", name, {row.scheme for row in rows}) for name in schemes}
    named_set = {(row.scheme, row.impl) for row in (find_implementation(rows, *pair) for pair in named)}
    chosen = [(row, board, row.status_on(board.emulates or board.name), row.reason_on(board.emulates or board.name))
              for row in rows for board in boards
              if (not family_set or row.family in family_set) and (not scheme_set or row.scheme in scheme_set)
              and (not named_set or (row.scheme, row.impl) in named_set)]
    if not chosen:
        raise PqscopeError("no row passes the filters given (pqscope schemes lists the rows, their families and "
                           "statuses)")
    measured = sorted(RowKey(row.scheme, row.impl, board.name) for row, board, status, _ in chosen if status == "ok")
    listed = sorted((ListedRow(RowKey(row.scheme, row.impl, board.name), row.family, status, reason)
                     for row, board, status, reason in chosen if status != "ok"), key=lambda item: item.key)
    return tuple(measured), tuple(listed)


def check_boards(boards: list[Board]) -> None:
    """The atlas's exact check needs the virtual board: a board on a serial port is refused."""
    real = [board.name for board in boards if not target_kind(board).taints]
    if real:
        raise PqscopeError(f"the atlas runs on virtual boards (its exact check follows every instruction there): "
                           f"{', '.join(real)} is a board on a serial port; give its virtual twin")


def start(path: Path, started: StartedAtlas) -> None:
    """A new atlas directory holding its plan and shard, written before any row starts."""
    make_empty_directory(path, "atlas")
    write_atomically(path / PLAN, store.dumps(started.to_json()))


def resumed(path: Path) -> StartedAtlas:
    """The plan and shard of the atlas directory `path`."""
    if not (path / PLAN).is_file():
        raise PqscopeError(f"cannot resume {path}: it is not an atlas directory (no {PLAN})")
    return StartedAtlas.from_json(store.read(path / PLAN))


def owned(started: StartedAtlas) -> list[RowKey]:
    shard = started.shard
    return [row for position, row in enumerate(started.plan.rows) if shard is None or shard.owns(position)]


class Atlas:
    """Measures the rows of the atlas directory `path` that are not done, `jobs` emulators at a
    time, telling `say` what it does; `catalogue` holds the rows (the catalogue's and the discovered ones)."""

    def __init__(self, root: Path, path: Path, started: StartedAtlas, catalogue: list[Implementation], jobs: int,
                 say: Callable[[str], None], console):
        self.root, self.path, self.started, self.jobs, self.say, self.console = root, path, started, jobs, say, console
        self.catalogue = catalogue
        self.rows = owned(started)
        self._counting = threading.Lock()
        self._done = sum((self.path / row.directory / ROW).is_file() for row in self.rows)

    def run(self) -> AtlasDocument:
        """The document of the directory's rows, each measured first if it is not done (an
        interruption stops the atlas: KeyboardInterrupt, everything captured kept)."""
        pending = [row for row in self.rows if not (self.path / row.directory / ROW).is_file()]
        if pending:
            self.say(f"atlas: {len(pending)} of {len(self.rows)} rows to measure, {min(self.jobs, len(pending))} "
                     f"at a time, in {self.path}")
        # Emulators left over when fewer rows than jobs remain shard each row's samples and statistics
        # (whose results do not depend on it); the exact check of one signature runs on one.
        shards = max(1, self.jobs // max(1, len(pending)))
        with reusing_images(self._build(pending)):
            in_parallel(lambda row: self._measure(row, shards), pending, self.jobs)
        return document(self.started, [row_result(self.path, row) for row in self.rows])

    def _build(self, rows: list[RowKey]) -> list[tuple[Board, str, str]]:
        """The catalogue rows' images, each board's in one build of its tree (a row's samples, test
        and exact check then take its image as it is); those that did not build are built again by
        their measurement, which says why. A discovered row's image is its measurement's to build
        (from its pqm4 folder, as `pqscope run` builds it)."""
        built = []
        catalogued = [row for row in rows if find_implementation(self.catalogue, row.scheme, row.impl).directory is None]
        for name in dict.fromkeys(row.board for row in catalogued):
            board = board_at_clock(self.root, name, None)
            (self.path / "builds").mkdir(exist_ok=True)
            images = build_images(self.root, board, [(row.scheme, row.impl) for row in catalogued if row.board == name],
                                  self.path / "builds" / f"{board.build_tree}.log")
            built += [(board, scheme, impl) for (scheme, impl), image in images.items() if isinstance(image, Path)]
        return built

    def _measure(self, key: RowKey, shards: int) -> None:
        plan = self.started.plan
        board = board_at_clock(self.root, key.board, None)
        row = find_implementation(self.catalogue, key.scheme, key.impl)
        directory = self.path / key.directory
        directory.parent.mkdir(parents=True, exist_ok=True)
        seed = atlas_rows.row_seed(bytes.fromhex(plan.master_seed), key)
        link = Link()  # a virtual board: each record awaited as long as its emulator runs within its budget
        samples = SampleCapture(OPS, plan.samples, seed, plan.msg_len)
        meta = member_state(directory)
        if meta is None or meta.status != "complete" or meta.samples_completed != meta.samples:
            self.say(f"{key.name} on {key.board}: cycles and stack, {plan.samples} samples of each operation")
            runner = Runner(open_shard_targets(self.root, board, [link], shards), self.console, samples)
            if runner.measure(row, directory, SampleCapture.from_meta(meta) if meta else samples, meta).interrupted:
                raise KeyboardInterrupt
        run = load_run(directory)
        (test,) = ct_members([Member(row, directory)])
        if not test.complete:
            what = main_job.ct_capture(board, run, test, plan.ct_signatures, seed, plan.msg_len, replay=False,
                                       exact_signatures=plan.exact_signatures, at_other_clocks=False)
            self.say(f"{key.name} on {key.board}: constant-time test, up to {what.samples} signatures, and the exact "
                     f"check of {what.exact_check}")
            runner = Runner(open_shard_targets(self.root, board, [link], shards), self.console, what)
            if runner.measure(row, test.path, what, test.resume_from).interrupted:
                raise KeyboardInterrupt
        result = answer(key, row, seed, directory)
        write_atomically(directory / ROW, store.dumps(result.to_json()))
        with self._counting:
            self._done += 1
            self.say(f"[{self._done}/{len(self.rows)}] {key.name} on {key.board}: {result.entry.verdict}, "
                     f"{sum(finding.sort == LEAK for finding in result.findings)} leaking instructions")


def answer(key: RowKey, row: Implementation, seed: bytes, directory: Path) -> RowResult:
    """A measured row's result, from its directory: its run, its test and the exact check beside it."""
    from ..analysis.ct import EXACT_CHECK_DIRECTORY  # the statistics' modules: loaded only for an atlas

    ct_path = directory / CT_DIRECTORY
    ct = CtDocument.from_json(store.read(ct_path / store.file_name("ct")))
    taint_file = ct_path / EXACT_CHECK_DIRECTORY / store.file_name("taint")
    taint = TaintDocument.from_json(store.read(taint_file)) if taint_file.is_file() else None
    intervals = atlas_rows.used_intervals(profile(ct_path), ct)
    return RowResult(atlas_rows.entry(key, row, seed, load_run(directory), ct, taint, intervals),
                     atlas_rows.sorted_findings(key, taint, ct, intervals))


def row_result(path: Path, key: RowKey) -> RowResult:
    return RowResult.from_json(store.read(path / key.directory / ROW))


def document(started: StartedAtlas, results: list[RowResult]) -> AtlasDocument:
    """The atlas's document of `results` (in the plan's order)."""
    order = {key: position for position, key in enumerate(started.plan.rows)}
    results = sorted(results, key=lambda result: order[result.entry.key])
    return AtlasDocument(started.plan, started.shard, tuple(result.entry for result in results),
                         tuple(finding for result in results for finding in result.findings))


def merge(documents: list[tuple[Path, AtlasDocument]]) -> AtlasDocument:
    """The shards' documents as one: the same plan, every row of it once; the document one run of
    the whole atlas gives."""
    (first_path, first), *others = documents
    for path, other in others:
        if other.plan != first.plan:
            raise PqscopeError(f"{path} is an atlas of another plan than {first_path} (boards, filters, seed or sizes "
                               "differ): only the shards of one atlas merge")
    entries = {entry.key: entry for _, document in documents for entry in document.entries}
    missing = [key for key in first.plan.rows if key not in entries]
    if missing:
        raise PqscopeError(f"the atlases given lack {len(missing)} of the plan's {len(first.plan.rows)} rows (the first: "
                           f"{missing[0].name} on {missing[0].board}): give every shard's, each complete")
    findings = {}
    for _, document in documents:
        for key in {entry.key for entry in document.entries}:
            findings.setdefault(key, document.findings_of(key))
    return AtlasDocument(first.plan, None, tuple(entries[key] for key in first.plan.rows),
                         tuple(finding for key in first.plan.rows for finding in findings[key]))


def plan_for(boards: list[Board], rows: tuple[RowKey, ...], listed: tuple[ListedRow, ...], families, schemes, named,
             samples: int, seed: bytes, ct_signatures: int = CT_SIGNATURES) -> AtlasPlan:
    return AtlasPlan(tuple(board.name for board in boards), tuple(families), tuple(schemes),
                     tuple(f"{scheme}/{impl}" for scheme, impl in named), samples, seed.hex(), MSG_LEN, ct_signatures,
                     EXACT_SIGNATURES, rows, listed)
