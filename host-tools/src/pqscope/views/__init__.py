"""Every kind of result, shown: runs and suites, the main job's answer, constant-time tests, the
exact check, Falcon's modes compared, the model check and the matrix of builds, each rendered
from its document to the terminal, JSON, Markdown and HTML. Documents are kept and read by the
store (results.store); the reports are written here, from what is on disk, so that the command
that made a result and `pqscope report DIR` render it alike."""

import json
from pathlib import Path
from types import ModuleType

from rich.console import Console

from ..project.errors import PqscopeError
from ..results.rundir import write_atomically
from ..results.store import FILES, dumps, load
from . import atlas, bench, ct, falcon, matrix, modelcheck, runs, suite, taint
from .page import to_html, to_markdown

# Every kind's view; runs and the emulator benchmark keep no document of their own.
VIEWS: dict[str, ModuleType] = {"run": runs, "vboard-bench": bench, "ct": ct, "taint": taint, "compare-falcon": falcon,
                                "model-check": modelcheck, "matrix": matrix, "suite": suite,
                                "atlas": atlas}
FORMATS = ("table", "md", "html", "csv", "json")


def write_pages(path: Path) -> Path:
    """Writes the reports (report.md, report.html) of the result kept in `path` (a run or suite
    without a document: made from its samples anew); returns the HTML report's path."""
    kind, document, data = load(path)
    page = VIEWS[kind].page(document, data)
    write_atomically(path / "report.md", to_markdown(page))
    write_atomically(path / "report.html", to_html(page))
    for name, text in (atlas.files(document) if kind == "atlas" else {}).items():  # pqm4's shapes beside them
        write_atomically(path / name, text)
    return path / "report.html"


def show(console: Console, kind: str, document) -> None:
    """A result (its typed document) on the terminal, as the command that made it prints it."""
    VIEWS[kind].show(console, document)


def render(path: Path, fmt: str, console: Console) -> str | None:
    """The result kept in `path` in format `fmt` (None: shown on `console`, as a table)."""
    kind, document, data = load(path)
    view = VIEWS[kind]
    if fmt == "table":
        view.show(console, document)
        return None
    if fmt == "json":
        return dumps(document.to_json()) if kind in FILES else json.dumps(document.to_json(), indent=2) + "\n"
    if fmt == "csv":
        if kind == "atlas":
            return atlas.csv_text(document)
        if kind not in ("run", "suite"):
            raise PqscopeError(f"{path} holds a {kind} result: CSV is for runs (its data is in the directory)")
        return runs.csv_text(document.runs if kind == "suite" else document)
    page = view.page(document, data)
    return to_markdown(page) if fmt == "md" else to_html(page)
