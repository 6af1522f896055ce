"""pqscope matrix's bookkeeping, with the builds and the measurements it takes stood in for:
which cells it checks, which share code, which it tests on timing, what a resume redoes, and how
the matrix reads."""

import json
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from pqscope.cli import cli
from pqscope.jobs import matrix, matrix_cells
from pqscope.jobs.matrix_plan import Plan, resumed_plan, start, toolchains
from pqscope.link.device import DeviceSession
from pqscope.measure.measurement import Measurement, Member
from pqscope.project.boards import get_board
from pqscope.project.catalogue import load_catalogue
from pqscope.project.errors import PqscopeError
from pqscope.project.toolchain import DEFAULT_TOOLCHAIN, Toolchain
from pqscope.results import store
from pqscope.results.documents.ct import CtDocument
from pqscope.results.documents.matrix import confirmation, leaks_by_line
from pqscope.results.documents.taint import Finding
from pqscope.targets import virtual
from pqscope.targets.vboard import CycleBudgetExhausted, VBoardError, VirtualBoard
from pqscope.views import render

# The stand-ins' world: code per (impl, compiler, level) and the exact check's verdict per code.
CODE = {("m4f", "gcc12", "catalogue"): "a", ("m4f", "gcc12", "-O3"): "a", ("m4f", "clang", "catalogue"): "b",
        ("m4f", "clang", "-O3"): "b"}
LEAKING_CODE = {"b"}
SIGNING_CYCLES = 5000  # a key and a signature, on the plain emulator
LEAK = {"kind": "branch", "address": "0x08000100", "count": 7, "declassified": False, "region": None,
        "function": "pack", "file": "_deps/pqm4-src/packing.c", "line": 232, "declassified_by": [], "within": None,
        "taken": 7, "leak": True}


@dataclass(frozen=True)
class Call:
    """A measurement the matrix took: its kind ("taint": the exact check, "ct": the test on timing),
    the build it measured, its signatures, whether it went on with an interrupted one, the exact
    checks it ran beside (a test on timing: none) and the emulators it ran on."""

    kind: str
    compiler: str
    opt: str
    signatures: int
    resumed: bool
    exact_check: int | None
    shards: int


class StandIns:
    """Builds that make `CODE`'s images (one row does not build with clang), and measurements
    answering from it, each logged."""

    def __init__(self, monkeypatch, tmp_path: Path, failing_taint: set[str] = frozenset(),
                 hanging: set[str] = frozenset()):
        self.calls: list[Call] = []
        self.trees: list[tuple[str, str]] = []  # (compiler, level) of each tree built
        self.budgets: dict[tuple[str, str], int] = {}  # the cycles each build was given to sign
        self.failing_taint, self.hanging = set(failing_taint), set(hanging)
        images = tmp_path / "images"
        images.mkdir(exist_ok=True)

        def build_images(root, board, rows, log):
            log.write_text("built\n")
            self.trees.append((board.toolchain.compiler, board.toolchain.opt))
            built = {}
            for scheme, impl in rows:
                key = (impl, board.toolchain.compiler, board.toolchain.opt)
                if key not in CODE:
                    built[(scheme, impl)] = "sign.c:1: error: clang says no"
                    continue
                image = images / f"{impl}.{board.toolchain.slug}.elf"
                image.write_text(CODE[key])
                built[(scheme, impl)] = image
            return built

        def signing_cycles(_, cell, image, budget):
            self.budgets[(cell.toolchain.compiler, cell.toolchain.opt)] = budget
            return None if image.read_text() in self.hanging else SIGNING_CYCLES

        monkeypatch.setattr(matrix, "build_images", build_images)
        monkeypatch.setattr(matrix.Matrix, "_sign_once", signing_cycles)
        monkeypatch.setattr(matrix, "code_digest", lambda image: image.read_text())
        monkeypatch.setattr(matrix_cells, "measure", self.measure)

    def measure(self, root, measurement: Measurement, link, shards: int) -> None:
        """Keeps the document of `measurement` where the runner would."""
        what, (member,), toolchain = measurement.what, measurement.members, measurement.board.toolchain
        call = Call(what.kind, toolchain.compiler, toolchain.opt, what.samples, member.resume_from is not None,
                    getattr(what, "exact_check", None), shards)
        document = self.answer(call, CODE[(member.implementation.impl, toolchain.compiler, toolchain.opt)])
        member.path.mkdir(parents=True, exist_ok=True)
        store.save(member.path, what.kind, document)

    def answer(self, call: Call, code: str) -> dict:
        self.calls.append(call)
        if call.kind == "taint":
            assert code not in self.hanging, "the exact check of a build that never signs"
            if code in self.failing_taint:
                raise PqscopeError("no record within 600 s")
            return _taint_document("leak" if code in LEAKING_CODE else "no-leak", [1000 + ord(code), 5],
                                   [LEAK, {**LEAK, "address": "0x08000104", "taken": 0}] if code in LEAKING_CODE else [])
        assert call.kind == "ct"
        return _ct_document(0.002, [100, 200, 400, 800, 1000, 2000, 4000])


def _taint_document(verdict: str, sign_cycles: list[int], findings: list[dict]) -> dict:
    """An exact check's taint.json."""
    return {"scheme": "ml-dsa-44", "impl": "m4f", "board": "virtual", "signatures": len(sign_cycles),
            "instructions": 1000, "sign_cycles": sign_cycles, "verdict": verdict, "findings": findings}


def _ct_document(share_of_mean: float | None, looks: list[int] | None) -> dict:
    """A test on timing's ct.json: no leak in 1,000 signatures of each class, bounded at
    `share_of_mean` (None: no bound), stopped at the look of 2,000 of its `looks` (None: not sequential)."""
    return {"board": "virtual", "scheme": "ml-dsa-44", "impl": "m4f", "verdict": "no-leak",
            "reason": "no leak detected", "n": {"fixed": 1000, "random": 1000}, "max_abs_t": 0.5,
            "strongest_test": "raw", "tests": {}, "nonparametric": {"mann_whitney": {"u": 1.0, "p": 0.5},
                                                                     "kolmogorov_smirnov": {"d": 0.1, "p": 0.9}},
            "effect_size": 0.0, "samples_needed": None, "detectable_effect": 0.1, "bootstrap": {},
            "bound": None if share_of_mean is None else {"cycles": 3.0, "share_of_mean": share_of_mean,
                                                           "confidence": 0.95},
            "failed_samples": 0, "corrupt_accepted": 0,
            **({} if looks is None else {"sequential": {"looks": looks, "stopped": "no-leak at 2000 signatures"}})}


def _plan(fake_repo, impls=("m4f",)) -> Plan:
    catalogue = load_catalogue(fake_repo)
    rows = [row for row in catalogue if row.impl in impls]
    return Plan("virtual", "05", 2000, rows, toolchains(("gcc12", "clang"), ("catalogue", "O3", "Os")))


def _started(fake_repo, tmp_path: Path) -> tuple[Path, Plan]:
    """A new matrix directory of the default plan."""
    path, plan = tmp_path / "matrix", _plan(fake_repo)
    start(path, plan)
    return path, plan


def _run(fake_repo, path: Path, plan: Plan) -> dict:
    return matrix.Matrix(fake_repo, path, get_board(fake_repo, "virtual"), plan, 2, lambda text: None).run().to_json()


def _cells(document: dict) -> dict:
    return {(cell["compiler"], cell["opt"]): cell for cell in document["cells"]}


def test_cells_with_the_same_code_are_checked_once_and_new_leaks_are_tested_on_timing(fake_repo, tmp_path,
                                                                                       monkeypatch):
    stand_ins = StandIns(monkeypatch, tmp_path)
    path, plan = _started(fake_repo, tmp_path)
    cells = _cells(_run(fake_repo, path, plan))
    checked = [(call.compiler, call.opt) for call in stand_ins.calls if call.kind == "taint"]
    assert sorted(checked) == [("clang", "catalogue"), ("gcc12", "catalogue")]  # -O3: the catalogue's code
    assert {call.signatures for call in stand_ins.calls if call.kind == "taint"} == {1}  # one signature
    # -O3 is the catalogue's flags: not even built again.
    assert stand_ins.trees == [("gcc12", "catalogue"), ("gcc12", "-Os"), ("clang", "catalogue"), ("clang", "-Os")]
    assert cells[("gcc12", "-O3")]["same_code_as"] == ["gcc12", "catalogue"]
    assert cells[("gcc12", "catalogue")]["status"] == "no-leak"
    assert cells[("gcc12", "catalogue")]["sign_cycles"] == 1000 + ord("a")  # the first signature's
    # clang's leak is not the default build's: tested on timing, on its own build; its two
    # instructions at one line are one entry.
    leaking = cells[("clang", "catalogue")]
    assert (leaking["status"], leaking["expected"]) == ("leak", False)
    assert leaking["leaks"] == [{"kind": "branch", "function": "pack", "file": "_deps/pqm4-src/packing.c", "line": 232,
                                 "instructions": 2, "count": 14, "one_way": True}]
    assert leaking["confirmation"]["outcome"] == "not-seen"
    # The sequential test stopped at a look before its last: the text says how far it could have gone.
    assert leaking["confirmation"]["text"] == ("not seen in 2,000 signatures of up to 4,000 (no key-dependent "
                                               "difference above 0.200% of the mean)")
    (ct,) = [call for call in stand_ins.calls if call.kind == "ct"]
    assert (ct.compiler, ct.opt, ct.signatures) == ("clang", "catalogue", 2000)
    assert ct.exact_check == 0  # the exact check is the cell's own
    assert ct.shards == 2  # an emulator per job
    assert (cells[("clang", "-Os")]["status"], cells[("clang", "-Os")]["error"]) == (
        "build-failed", "sign.c:1: error: clang says no")


def test_a_resume_reads_finished_cells_back_and_tries_failed_ones_again(fake_repo, tmp_path, monkeypatch):
    stand_ins = StandIns(monkeypatch, tmp_path, failing_taint={"b"})
    path, plan = _started(fake_repo, tmp_path)
    first = _cells(_run(fake_repo, path, plan))
    assert first[("clang", "catalogue")]["status"] == "failed"
    assert "no record within 600 s" in first[("clang", "catalogue")]["error"]
    assert not (path / "ml-dsa-44-m4f/clang.catalogue/cell.json").exists()  # not kept: tried again
    stand_ins.failing_taint.clear()
    stand_ins.calls.clear()
    resumed = resumed_plan(path, load_catalogue(fake_repo))
    assert resumed == plan
    again = _cells(_run(fake_repo, path, resumed))
    assert [call.kind for call in stand_ins.calls] == ["taint", "ct"]  # only the failed cell, then its test
    assert again[("clang", "catalogue")]["status"] == "leak"
    assert again[("gcc12", "catalogue")] == first[("gcc12", "catalogue")]


def test_a_matrix_goes_on_from_its_document_where_the_code_is_the_same(fake_repo, tmp_path, monkeypatch):
    """A matrix's document (kept in git while its tests on timing take days) starts a new directory:
    a cell whose build has the document's code takes its results, a cell whose code changed is
    checked again, and a cell the document left untested is tested."""
    stand_ins = StandIns(monkeypatch, tmp_path)
    path, plan = _started(fake_repo, tmp_path)
    stopped = []
    first = matrix.Matrix(fake_repo, path, get_board(fake_repo, "virtual"), plan, 2, lambda text: None).run(
        keep=stopped.append).to_json()
    for document, name in ((first, "done.json"), (stopped[0].to_json(), "stopped.json")):
        (tmp_path / name).write_text(json.dumps(document))
    for level in ("catalogue", "-O3"):  # the same flags
        monkeypatch.setitem(CODE, ("m4f", "gcc12", level), "c")
    stand_ins.calls.clear()
    assert resumed_plan(tmp_path / "done.json", load_catalogue(fake_repo)) == plan
    start(tmp_path / "again", plan, earlier=tmp_path / "done.json")
    again = _cells(_run(fake_repo, tmp_path / "again", plan))
    assert [(call.kind, call.compiler, call.opt) for call in stand_ins.calls] == [("taint", "gcc12", "catalogue")]
    assert again[("gcc12", "catalogue")]["code_sha256"] == "c"
    assert again[("clang", "catalogue")] == _cells(first)[("clang", "catalogue")]  # with its test on timing
    stand_ins.calls.clear()
    start(tmp_path / "untested", plan, earlier=tmp_path / "stopped.json")
    untested = _cells(_run(fake_repo, tmp_path / "untested", plan))
    assert [call.kind for call in stand_ins.calls] == ["taint", "ct"]  # gcc12's new code; clang's new leak's test
    assert untested[("clang", "catalogue")]["confirmation"]["outcome"] == "not-seen"


def test_a_build_that_gives_no_signature_is_a_definite_cell(fake_repo, tmp_path, monkeypatch):
    """The emulator is deterministic: a build that makes no key and signature within its budget of
    cycles (its row's default build's, times HANG_FACTOR) never will; the cell says so, is kept,
    and a resume does not try it again."""
    stand_ins = StandIns(monkeypatch, tmp_path, hanging={"b"})
    path, plan = _started(fake_repo, tmp_path)
    cells = _cells(_run(fake_repo, path, plan))
    assert stand_ins.budgets == {("gcc12", "catalogue"): matrix.DEFAULT_BUDGET,
                                 ("clang", "catalogue"): matrix.HANG_FACTOR * SIGNING_CYCLES}
    assert cells[("clang", "catalogue")]["status"] == "hang"
    assert cells[("clang", "-O3")]["status"] == "hang"  # the same code
    assert cells[("clang", "catalogue")]["error"] == (
        f"no key and signature within {matrix.HANG_FACTOR * SIGNING_CYCLES:,} cycles ({matrix.HANG_FACTOR} times the "
        "default build's)")
    assert not [call for call in stand_ins.calls if call.kind == "taint" and call.compiler == "clang"]
    stand_ins.calls.clear()
    stand_ins.budgets.clear()
    _run(fake_repo, path, resumed_plan(path, load_catalogue(fake_repo)))
    assert stand_ins.calls == [] and stand_ins.budgets == {}  # each build signed once (signing.json)


def joining(thread: threading.Thread) -> bool:
    """Whether `thread` waits in Thread.join."""
    frame = sys._current_frames().get(thread.ident)
    while frame is not None and not (frame.f_code.co_name == "join" and frame.f_code.co_filename == threading.__file__):
        frame = frame.f_back
    return frame is not None


def test_a_signal_a_cells_thread_takes_ends_the_matrix_at_once():
    """The kernel hands a process's signal to any of its threads, and Python handles it in the main
    thread only: one a cell's thread took (here it alone is sent Ctrl-C) ends the matrix while that
    cell still runs, not once it is done."""
    release, outlasted = threading.Event(), []

    def cell(_item) -> None:
        while not joining(threading.main_thread()):
            release.wait(0.01)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        if not release.wait(300):  # bounds only a failure: the matrix waited for the cell to end
            outlasted.append(True)

    with pytest.raises(KeyboardInterrupt):
        matrix_cells.in_parallel(cell, ["cell"], jobs=1)
    release.set()
    assert not outlasted


def test_a_line_goes_one_way_only_if_each_of_its_branches_always_went_the_same_way():
    """One way: every branch at the line went the same way in every execution (no time difference
    in these signatures); a branch that went both ways, or an emulator that did not count, is not."""
    both_ways = {**LEAK, "address": "0x08000104", "taken": 3}
    uncounted = {key: value for key, value in LEAK.items() if key != "taken"}
    def one_way(findings: list[dict]) -> list[bool]:
        return [line.one_way for line in leaks_by_line(tuple(map(Finding.from_json, findings)))]

    assert [one_way([LEAK, {**LEAK, "taken": 0}]), one_way([LEAK, both_ways]), one_way([uncounted])] == [
        [True], [False], [False]]


def test_a_test_on_timing_that_saw_no_cycle_of_difference_says_so():
    """A bound of 0 (the classes' times constant and equal: a balanced branch on the virtual board)
    reads as what happened, not as "0.000% of the mean"."""
    def text(share_of_mean: float | None) -> str:
        return confirmation(CtDocument.from_json(_ct_document(share_of_mean, [1000, 2000]))).text

    assert text(0.0) == "not seen in 2,000 signatures (every signature of both classes took the same cycles)"
    assert text(0.0004) == "not seen in 2,000 signatures (no key-dependent difference above 0.040% of the mean)"
    assert text(None) == "not seen in 2,000 signatures"


def test_a_test_on_timing_that_cannot_go_on_starts_anew_and_keeps_what_it_had(fake_repo, tmp_path, monkeypatch):
    stand_ins = StandIns(monkeypatch, tmp_path)
    path, plan = _started(fake_repo, tmp_path)
    ct = path / "ml-dsa-44-m4f" / "clang.catalogue" / "ct"  # the leaking cell's test, stopped mid-way
    ct.mkdir(parents=True)
    (ct / "meta.json").write_text("{}")
    answer = stand_ins.answer
    (row,) = plan.rows

    def interrupted(root, path, kind):
        """The stopped test, as meta.json would give it back."""
        board = get_board(fake_repo, "virtual").built_with(Toolchain("clang", "catalogue"))
        return Measurement(board, kind(2000, bytes.fromhex(plan.seed), 32), [Member(row, path, resume_from=object())])

    def refuse_resume(call, code):
        if call.resumed:
            stand_ins.calls.append(call)
            raise PqscopeError("cannot resume: the virtual board's emulator changed")
        return answer(call, code)

    monkeypatch.setattr(matrix_cells, "resumed", interrupted)
    monkeypatch.setattr(stand_ins, "answer", refuse_resume)
    said = []
    document = matrix.Matrix(fake_repo, path, get_board(fake_repo, "virtual"), plan, 2, said.append).run().to_json()
    assert _cells(document)[("clang", "catalogue")]["confirmation"]["outcome"] == "not-seen"
    tests = [call for call in stand_ins.calls if call.kind == "ct"]
    assert [call.resumed for call in tests] == [True, False]  # refused, then anew
    assert (ct.parent / "ct.unresumable-1" / "meta.json").read_text() == "{}"
    assert any("started anew" in line and "ct.unresumable-1" in line for line in said)


def test_neither_a_directory_without_a_plan_nor_another_document_is_resumed(fake_repo, tmp_path):
    (tmp_path / "ct.json").write_text(json.dumps({"kind": "ct"}))
    for path in (tmp_path, tmp_path / "ct.json"):
        with pytest.raises(PqscopeError, match="neither a matrix directory .* nor a matrix's document"):
            resumed_plan(path, load_catalogue(fake_repo))


def test_the_matrix_reads_per_compiler_with_the_leaks_and_their_test(fake_repo, tmp_path, monkeypatch):
    StandIns(monkeypatch, tmp_path)
    path, plan = _started(fake_repo, tmp_path)
    document = _run(fake_repo, path, plan)
    (path / "matrix.json").write_text(json.dumps(document))
    markdown = render(path, "md", None)
    assert "## Built by gcc12" in markdown and "## Built by clang" in markdown
    gcc12, clang = (markdown.split(f"## Built by {compiler}")[1] for compiler in ("gcc12", "clang"))
    assert "| ml-dsa-44/m4f | no-leak, 0.00 M | no-leak, 0.00 M (= catalogue) | does not build |" in gcc12
    assert "| ml-dsa-44/m4f | LEAK, 0.00 M | LEAK, 0.00 M (= catalogue) | does not build |" in clang
    (finding,) = [line for line in markdown.splitlines() if "packing.c" in line]
    assert finding.startswith("| ml-dsa-44/m4f | clang catalogue | branch | pack | pqm4:packing.c:232 | 2 | "
                              "14, each one way | not seen in 2,000 signatures of up to 4,000")


def test_a_long_matrix_can_be_read_before_its_tests_on_timing_end(fake_repo, tmp_path, monkeypatch):
    """The tests on timing take hours: before each, the document as it stands is kept (here: before
    the only one), with the exact checks' verdicts and the untested cell saying so."""
    StandIns(monkeypatch, tmp_path)
    path, plan = _started(fake_repo, tmp_path)
    kept = []
    final = matrix.Matrix(fake_repo, path, get_board(fake_repo, "virtual"), plan, 2, lambda text: None).run(
        keep=lambda document: kept.append(document.to_json())).to_json()
    (so_far,) = kept
    assert (so_far["complete"], final["complete"]) == (False, True)
    assert "confirmation" not in _cells(so_far)[("clang", "catalogue")]
    assert _cells(final)[("clang", "catalogue")]["confirmation"]["outcome"] == "not-seen"
    assert [cell["status"] for cell in so_far["cells"]] == [cell["status"] for cell in final["cells"]]
    (path / "matrix.json").write_text(json.dumps(so_far))
    markdown = render(path, "md", None)
    assert "0 of 1 tests on timing done" in markdown
    (finding,) = [line for line in markdown.splitlines() if "packing.c" in line]
    assert finding.endswith("| not tested yet |")


def test_without_tests_on_timing_a_new_leak_says_so(fake_repo, tmp_path, monkeypatch):
    stand_ins = StandIns(monkeypatch, tmp_path)
    path, plan = tmp_path / "matrix", replace(_plan(fake_repo), ct_signatures=0)
    start(path, plan)
    document = _run(fake_repo, path, plan)
    assert [call.kind for call in stand_ins.calls] == ["taint", "taint"]  # no ct
    (path / "matrix.json").write_text(json.dumps(document))
    markdown = render(path, "md", None)
    (finding,) = [line for line in markdown.splitlines() if "packing.c" in line]
    assert finding.endswith("| not tested (--ct-n 0) |")
    assert "2 that the compiler refuses to build, 0 undecided" in markdown
    assert "verdict over one signature" in markdown


# The matrix as a CI gate: 4 if any build leaks, its row's default build too or not; 5 if none
# leaks but one that compiled has no verdict (no signature within its budget); 0 otherwise. The
# stand-ins' clang -Os build fails in every case: a build the compiler refuses does not count.
@pytest.mark.parametrize(("code", "hanging", "status"), [
    ({}, set(), 4),  # clang's build leaks, gcc12's does not
    ({("m4f", "gcc12", "catalogue"): "b", ("m4f", "gcc12", "-O3"): "b"}, set(), 4),  # the default build leaks too
    ({("m4f", "clang", "catalogue"): "a", ("m4f", "clang", "-O3"): "a"}, set(), 0),  # no build leaks
    ({}, {"b"}, 5),  # clang's build gives no signature
], ids=["new-leak", "leak-as-default", "no-leak", "no-signature"])
def test_the_matrix_exits_with_its_verdict_as_a_gate(fake_repo, tmp_path, monkeypatch, code, hanging, status):
    StandIns(monkeypatch, tmp_path, hanging=hanging)
    for cell, text in code.items():
        monkeypatch.setitem(CODE, cell, text)
    out = tmp_path / "matrix"
    result = CliRunner().invoke(cli, ["matrix", "--row", "ml-dsa-44/m4f", "--compiler", "gcc12", "--compiler", "clang",
                                      *(arg for level in ("catalogue", "O3", "Os") for arg in ("--opt", level)),
                                      "-j", "2", "--out", str(out), "--no-report", "--json"])
    assert result.exit_code == status, result.stderr
    assert json.loads(result.stdout) == store.read(out / "matrix.json")  # the document, whatever the status


# The virtual board as fake_vboard.py stands in for it, but for a key and a signature that take
# NEEDED cycles: given fewer (--max-cycles), it stops as the emulator stops at its budget (its
# error line, exit status 3; boards/virtual/emulator/machine.h), after announcing its uart.
NEEDED = 5000
BUDGETED_EMULATOR = """#!{python}
import os, sys, tty
arguments = sys.argv[1:]
if "--max-cycles" in arguments and int(arguments[arguments.index("--max-cycles") + 1]) < {needed}:
    budget = int(arguments[arguments.index("--max-cycles") + 1])
    master, slave = os.openpty()
    tty.setraw(slave)
    print(f"vboard: uart {{os.ttyname(slave)}}", file=sys.stderr, flush=True)
    print(f"vboard: error: cycle limit {{budget}} exceeded at address 0x08000420 (pc=0x08000420)", file=sys.stderr)
    sys.exit({status})
os.execv(sys.executable, [sys.executable, {fake!r}, *arguments])
"""


def emulator_exiting(tmp_path, status: int) -> Path:
    emulator = tmp_path / "pqscope-vboard"
    emulator.write_text(BUDGETED_EMULATOR.format(python=sys.executable, needed=NEEDED, status=status,
                                                 fake=str(Path(__file__).with_name("fake_vboard.py"))))
    emulator.chmod(0o755)
    return emulator


@pytest.fixture
def budgeted_emulator(tmp_path) -> Path:
    return emulator_exiting(tmp_path, 3)


def test_an_emulator_stopped_at_its_budget_of_cycles_is_a_typed_outcome(budgeted_emulator, tiny_elf, tmp_path):
    with pytest.raises(CycleBudgetExhausted, match="^virtual board: cycle limit 1000 exceeded") as stopped:
        with VirtualBoard(budgeted_emulator, tiny_elf[0], tmp_path / "stats.json",
                          extra_args=("--max-cycles", "1000")) as board, board.open_uart() as port:
            DeviceSession(port, answer_timeout=60).hello()
    assert (stopped.value.budget, stopped.value.address) == (1000, 0x08000420)


def test_the_budget_is_told_by_the_emulators_exit_status_not_by_its_words(tiny_elf, tmp_path):
    with pytest.raises(VBoardError, match="cycle limit 1000 exceeded") as stopped:
        with VirtualBoard(emulator_exiting(tmp_path, 1), tiny_elf[0], tmp_path / "stats.json",
                          extra_args=("--max-cycles", "1000")) as board, board.open_uart() as port:
            DeviceSession(port, answer_timeout=60).hello()
    assert not isinstance(stopped.value, CycleBudgetExhausted)


def test_a_cell_whose_emulator_runs_out_of_its_budget_is_a_hang_measured_in_this_process(
        fake_repo, budgeted_emulator, tiny_elf, tmp_path, monkeypatch):
    """The budget's end reaches the matrix as the virtual board's typed outcome (not as words in a
    message), and the matrix measures in its own process: it starts no command, only emulators."""
    monkeypatch.setattr(virtual, "build_emulator", lambda root: budgeted_emulator)
    monkeypatch.setattr(matrix, "build_images", lambda root, board, rows, log: {row: tiny_elf[0] for row in rows})
    monkeypatch.setattr(matrix, "DEFAULT_BUDGET", 1000)  # a tiny budget: the default build never signs in it
    started = subprocess.Popen

    def only_emulators(command, *arguments, **options):
        assert command[0] == str(budgeted_emulator), f"the matrix started {command}"
        return started(command, *arguments, **options)

    monkeypatch.setattr(subprocess, "Popen", only_emulators)
    monkeypatch.setattr(subprocess, "run", lambda command, *_, **__: pytest.fail(f"the matrix ran {command}"))
    path, plan = tmp_path / "matrix", Plan("virtual", "05", 2000, load_catalogue(fake_repo), [DEFAULT_TOOLCHAIN])
    start(path, plan)
    (cell,) = _run(fake_repo, path, plan)["cells"]
    assert (cell["status"], cell["error"]) == ("hang", "no key and signature within 1,000 cycles")
    assert store.read(path / "ml-dsa-44-m4f/gcc12.catalogue/signing.json") == {"budget": 1000, "cycles": None}
    # Within its budget, the same build signs: its cycles are the emulator's.
    cycles = matrix.Matrix(fake_repo, tmp_path / "again", get_board(fake_repo, "virtual"), plan, 1,
                           lambda text: None)._sign_once(plan.cells[0], tiny_elf[0], NEEDED)
    assert cycles > 0
