"""pqscope matrix's bookkeeping, with the builds and the pqscope commands it runs stood in for:
which cells it checks, which share code, which it tests on timing, what a resume redoes, and how
the matrix reads."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from pqscope.jobs import matrix
from pqscope.project.boards import get_board
from pqscope.project.catalogue import load_catalogue
from pqscope.views import render

# The stand-ins' world: code per (impl, compiler, level) and the exact check's verdict per code.
CODE = {("m4f", "gcc12", "catalogue"): "a", ("m4f", "gcc12", "-O3"): "a", ("m4f", "clang", "catalogue"): "b",
        ("m4f", "clang", "-O3"): "b"}
LEAKING_CODE = {"b"}
SIGNING_CYCLES = 5000  # a key and a signature, on the plain emulator
LEAK = {"kind": "branch", "address": "0x08000100", "count": 7, "declassified": False, "region": None,
        "function": "pack", "file": "_deps/pqm4-src/packing.c", "line": 232, "declassified_by": [], "within": None,
        "taken": 7, "leak": True}


class StandIns:
    """Builds that make `CODE`'s images (one row does not build with clang), and pqscope commands
    answering from it, each call logged."""

    def __init__(self, monkeypatch, tmp_path: Path, failing_taint: set[str] = frozenset(),
                 hanging: set[str] = frozenset()):
        self.calls: list[list[str]] = []
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
        monkeypatch.setattr(matrix.Matrix, "_pqscope", lambda _, arguments: self.answer(arguments))

    def answer(self, arguments: list[str]) -> dict:
        self.calls.append(arguments)
        option = dict(zip(arguments, arguments[1:]))
        code = CODE[(option["--impl"], option["--compiler"], option["--opt"])]
        if arguments[0] == "taint":
            assert code not in self.hanging, "the exact check of a build that never signs"
            if code in self.failing_taint:
                raise matrix.PqscopeError("pqscope taint: no record within 600 s")
            return {"verdict": "leak" if code in LEAKING_CODE else "no-leak", "sign_cycles": [1000 + ord(code), 5],
                    "findings": [LEAK, {**LEAK, "address": "0x08000104", "taken": 0}] if code in LEAKING_CODE else []}
        assert arguments[0] == "ct"
        return {"verdict": "no-leak", "reason": "no leak detected", "n": {"fixed": 1000, "random": 1000},
                "bound": {"cycles": 3.0, "share_of_mean": 0.002},
                "sequential": {"looks": [100, 200, 400, 800, 1000, 2000, 4000],
                               "stopped": "no-leak at 2000 signatures"}}


def _plan(fake_repo, impls=("m4f",)) -> matrix.Plan:
    catalogue = load_catalogue(fake_repo)
    rows = [row for row in catalogue if row.impl in impls]
    return matrix.Plan("virtual", "05", 2000, rows, matrix.toolchains(("gcc12", "clang"), ("catalogue", "O3", "Os")))


def _started(fake_repo, tmp_path: Path) -> tuple[Path, matrix.Plan]:
    """A new matrix directory of the default plan."""
    path, plan = tmp_path / "matrix", _plan(fake_repo)
    matrix.start(path, plan)
    return path, plan


def _run(fake_repo, path: Path, plan: matrix.Plan) -> dict:
    return matrix.Matrix(fake_repo, path, get_board(fake_repo, "virtual"), plan, 2, lambda text: None).run()


def _cells(document: dict) -> dict:
    return {(cell["compiler"], cell["opt"]): cell for cell in document["cells"]}


def test_cells_with_the_same_code_are_checked_once_and_new_leaks_are_tested_on_timing(fake_repo, tmp_path,
                                                                                       monkeypatch):
    stand_ins = StandIns(monkeypatch, tmp_path)
    path, plan = _started(fake_repo, tmp_path)
    cells = _cells(_run(fake_repo, path, plan))
    checked = [(call[call.index("--compiler") + 1], call[call.index("--opt") + 1]) for call in stand_ins.calls
               if call[0] == "taint"]
    assert sorted(checked) == [("clang", "catalogue"), ("gcc12", "catalogue")]  # -O3: the catalogue's code
    assert {call[call.index("-n") + 1] for call in stand_ins.calls if call[0] == "taint"} == {"1"}  # one signature
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
    (ct,) = [call for call in stand_ins.calls if call[0] == "ct"]
    assert ct[ct.index("--compiler") + 1:ct.index("--compiler") + 4] == ["clang", "--opt", "catalogue"]
    assert "--no-taint" in ct
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
    resumed = matrix.resumed_plan(path, load_catalogue(fake_repo))
    assert resumed == plan
    again = _cells(_run(fake_repo, path, resumed))
    assert [call[0] for call in stand_ins.calls] == ["taint", "ct"]  # only the failed cell, then its test
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
        keep=stopped.append)
    for document, name in ((first, "done.json"), (stopped[0], "stopped.json")):
        (tmp_path / name).write_text(json.dumps(document))
    for level in ("catalogue", "-O3"):  # the same flags
        monkeypatch.setitem(CODE, ("m4f", "gcc12", level), "c")
    stand_ins.calls.clear()
    assert matrix.resumed_plan(tmp_path / "done.json", load_catalogue(fake_repo)) == plan
    matrix.start(tmp_path / "again", plan, earlier=tmp_path / "done.json")
    again = _cells(_run(fake_repo, tmp_path / "again", plan))
    assert [(call[0], call[call.index("--compiler") + 1], call[call.index("--opt") + 1])
            for call in stand_ins.calls] == [("taint", "gcc12", "catalogue")]
    assert again[("gcc12", "catalogue")]["code_sha256"] == "c"
    assert again[("clang", "catalogue")] == _cells(first)[("clang", "catalogue")]  # with its test on timing
    stand_ins.calls.clear()
    matrix.start(tmp_path / "untested", plan, earlier=tmp_path / "stopped.json")
    untested = _cells(_run(fake_repo, tmp_path / "untested", plan))
    assert [call[0] for call in stand_ins.calls] == ["taint", "ct"]  # gcc12's new code; clang's new leak's test
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
    assert not [call for call in stand_ins.calls if call[0] == "taint" and "clang" in call]
    stand_ins.calls.clear()
    stand_ins.budgets.clear()
    _run(fake_repo, path, matrix.resumed_plan(path, load_catalogue(fake_repo)))
    assert stand_ins.calls == [] and stand_ins.budgets == {}  # each build signed once (signing.json)


def test_a_line_goes_one_way_only_if_each_of_its_branches_always_went_the_same_way():
    """One way: every branch at the line went the same way in every execution (no time difference
    in these signatures); a branch that went both ways, or an emulator that did not count, is not."""
    both_ways = {**LEAK, "address": "0x08000104", "taken": 3}
    uncounted = {key: value for key, value in LEAK.items() if key != "taken"}
    assert [[line["one_way"] for line in lines] for lines in (matrix._leaks_by_line([LEAK, {**LEAK, "taken": 0}]),
                                                              matrix._leaks_by_line([LEAK, both_ways]),
                                                              matrix._leaks_by_line([uncounted]))] == [
        [True], [False], [False]]


def test_a_test_on_timing_that_saw_no_cycle_of_difference_says_so():
    """A bound of 0 (the classes' times constant and equal: a balanced branch on the virtual board)
    reads as what happened, not as "0.000% of the mean"."""
    document = {"verdict": "no-leak", "n": {"fixed": 1000, "random": 1000}, "bound": {"share_of_mean": 0.0},
                "sequential": {"looks": [1000, 2000]}}
    assert matrix._confirmation(document)["text"] == (
        "not seen in 2,000 signatures (every signature of both classes took the same cycles)")
    assert matrix._confirmation({**document, "bound": {"share_of_mean": 0.0004}})["text"] == (
        "not seen in 2,000 signatures (no key-dependent difference above 0.040% of the mean)")
    assert matrix._confirmation({**document, "bound": None})["text"] == "not seen in 2,000 signatures"


def test_a_test_on_timing_that_cannot_go_on_starts_anew_and_keeps_what_it_had(fake_repo, tmp_path, monkeypatch):
    stand_ins = StandIns(monkeypatch, tmp_path)
    path, plan = _started(fake_repo, tmp_path)
    ct = path / "ml-dsa-44-m4f" / "clang.catalogue" / "ct"  # the leaking cell's test, stopped mid-way
    ct.mkdir(parents=True)
    (ct / "meta.json").write_text("{}")
    answer = stand_ins.answer

    def refuse_resume(arguments):
        if "--resume" in arguments:
            stand_ins.calls.append(arguments)
            raise matrix.PqscopeError("pqscope ct: cannot resume: the virtual board's emulator changed")
        return answer(arguments)

    monkeypatch.setattr(stand_ins, "answer", refuse_resume)
    said = []
    document = matrix.Matrix(fake_repo, path, get_board(fake_repo, "virtual"), plan, 2, said.append).run()
    assert _cells(document)[("clang", "catalogue")]["confirmation"]["outcome"] == "not-seen"
    tests = [call for call in stand_ins.calls if call[0] == "ct"]
    assert ["--resume" in call for call in tests] == [True, False]  # refused, then anew
    assert (ct.parent / "ct.unresumable-1" / "meta.json").read_text() == "{}"
    assert any("started anew" in line and "ct.unresumable-1" in line for line in said)


def test_neither_a_directory_without_a_plan_nor_another_document_is_resumed(fake_repo, tmp_path):
    (tmp_path / "ct.json").write_text(json.dumps({"kind": "ct"}))
    for path in (tmp_path, tmp_path / "ct.json"):
        with pytest.raises(matrix.PqscopeError, match="neither a matrix directory .* nor a matrix's document"):
            matrix.resumed_plan(path, load_catalogue(fake_repo))


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
        keep=kept.append)
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
    matrix.start(path, plan)
    document = _run(fake_repo, path, plan)
    assert [call[0] for call in stand_ins.calls] == ["taint", "taint"]  # no ct
    (path / "matrix.json").write_text(json.dumps(document))
    markdown = render(path, "md", None)
    (finding,) = [line for line in markdown.splitlines() if "packing.c" in line]
    assert finding.endswith("| not tested (--ct-n 0) |")
    assert "2 that the compiler refuses to build, 0 undecided" in markdown
    assert "verdict over one signature" in markdown
