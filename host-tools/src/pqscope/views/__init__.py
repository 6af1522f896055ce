"""Every kind of result, shown: runs and suites, the main job's answer, constant-time tests, the
exact check, Falcon's modes compared, the model check and the matrix of builds, each rendered
from its document to the terminal, JSON, Markdown and HTML. This is the one place result files
are written (each atomically); the command that made a result and `pqscope report DIR` render it
alike, from what is on disk."""

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from rich.console import Console

from ..errors import PqscopeError
from ..rundir import write_atomically
from ..runs import Run, find_runs, load_run, runs_document
from . import bench, ct, falcon, matrix, modelcheck, runs, suite, taint
from .page import to_html, to_markdown

# The document each kind keeps, by the file it is kept in.
KINDS: dict[str, tuple[ModuleType, str]] = {
    "ct": (ct, "ct.json"),
    "taint": (taint, "taint.json"),
    "compare-falcon": (falcon, "compare.json"),
    "model-check": (modelcheck, "model-check.json"),
    "matrix": (matrix, "matrix.json"),
    "suite": (suite, "suite-report.json"),  # the main job's answer; a suite without it is shown as runs
}
# The values that decided a constant-time verdict, per signature in test order: the plots' data.
EVIDENCE_FILE = "evidence.csv"
EVIDENCE_COLUMNS = ("key_class", "value", "raw")
# Every kind's view; runs and the emulator benchmark keep no document of their own.
VIEWS: dict[str, ModuleType] = {"run": runs, "vboard-bench": bench, **{kind: view for kind, (view, _) in KINDS.items()}}
FORMATS = ("table", "md", "html", "csv", "json")


def write(path: Path, kind: str, document: dict, evidence: tuple[Sequence, ...] | None = None, *,
          pages: bool = True) -> Path:
    """Keeps `document` (of `kind`) and, for a constant-time test, its `evidence` in `path` (key
    classes, values and, for a replayed board, its raw cycles), then, with `pages`, writes the
    reports from them; returns the HTML report's path."""
    write_atomically(path / KINDS[kind][1], json.dumps(document, indent=2) + "\n")
    if evidence is not None:
        buffer = io.StringIO()
        csv.writer(buffer).writerows([EVIDENCE_COLUMNS[:len(evidence)], *zip(*evidence)])
        write_atomically(path / EVIDENCE_FILE, buffer.getvalue())
    if not pages:
        return path / "report.html"
    kind, document, data = load(path)
    return _write_pages(path, VIEWS[kind].page(document, data))


def write_runs(path: Path, document: dict, loaded: list[Run]) -> Path:
    """The reports of the run or suite at `path` (its document is made from the samples anew)."""
    return _write_pages(path, runs.page(document, loaded))


def _write_pages(path: Path, page) -> Path:
    write_atomically(path / "report.md", to_markdown(page))
    write_atomically(path / "report.html", to_html(page))
    return path / "report.html"


def load(path: Path) -> tuple[str, dict, object]:
    """The kind, document and plot data of the result kept in `path` (runs: their samples)."""
    for kind, (_, name) in KINDS.items():
        if (path / name).is_file():
            try:
                document = json.loads((path / name).read_text())
            except (OSError, ValueError) as error:
                raise PqscopeError(f"{path / name} is damaged: {error}") from None
            return kind, document, _evidence(path) if kind == "ct" else _runs(path) if kind == "suite" else None
    loaded = _runs(path)
    return "run", runs_document(path, loaded), loaded


def _runs(path: Path) -> list[Run]:
    return [load_run(run_path) for run_path in find_runs(path)]


def _evidence(path: Path) -> tuple[list, ...]:
    try:
        header, *rows = list(csv.reader((path / EVIDENCE_FILE).read_text().splitlines()))
        columns = [[int(row[0]) for row in rows], *([float(row[column]) for row in rows]
                                                    for column in range(1, len(header)))]
        if tuple(header) != EVIDENCE_COLUMNS[:len(header)] or len(columns) < 2:
            raise ValueError(f"its columns are {', '.join(header)}")
        return tuple(columns)
    except (OSError, ValueError, IndexError) as error:
        raise PqscopeError(f"{path / EVIDENCE_FILE} is damaged or missing: {error}") from None


def show(console: Console, kind: str, document: dict) -> None:
    """A result on the terminal, as the command that made it prints it."""
    VIEWS[kind].show(console, document)


def render(path: Path, fmt: str, console: Console) -> str | None:
    """The result kept in `path` in format `fmt` (None: shown on `console`, as a table)."""
    kind, document, data = load(path)
    view = VIEWS[kind]
    if fmt == "table":
        view.show(console, document)
        return None
    if fmt == "json":
        return json.dumps(document, indent=2) + "\n"
    if fmt == "csv":
        if kind not in ("run", "suite"):
            raise PqscopeError(f"{path} holds a {kind} result: CSV is for runs (its data is in the directory)")
        return runs.csv_text(document)
    page = view.page(document, data)
    return to_markdown(page) if fmt == "md" else to_html(page)
