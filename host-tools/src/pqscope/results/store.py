"""The one store of result documents: each kind in a file of its own in its run directory, with
the version of its layout (`schema`) beside the data, written atomically; read back with a clear
error for a file that is damaged or of a layout this pqscope does not know. Every writer of a
result goes through `save`, every reader through `load` (views, `pqscope report`, resumes)."""

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path

from ..project.errors import PqscopeError
from .documents.atlas import AtlasDocument
from .documents.comparison import ComparisonDocument
from .documents.ct import CtDocument
from .documents.matrix import MatrixDocument
from .documents.model_check import ModelCheck
from .documents.runs import RunsDocument
from .documents.suite import SuiteDocument
from .documents.taint import TaintDocument
from .rundir import write_atomically
from .runs import Run, find_runs, load_run, runs_document

# The file each kind of document is kept in.
FILES = {
    "ct": "ct.json",
    "taint": "taint.json",
    "compare-falcon": "compare.json",
    "model-check": "model-check.json",
    "matrix": "matrix.json",
    "suite": "suite-report.json",  # the main job's answer; a suite without it is shown as runs
    "atlas": "atlas.json",
}
# The typed document of each kind ("run": the runs of a directory that keeps no document).
DOCUMENTS = {"run": RunsDocument, "ct": CtDocument, "taint": TaintDocument, "compare-falcon": ComparisonDocument,
             "model-check": ModelCheck, "matrix": MatrixDocument, "suite": SuiteDocument,
             "atlas": AtlasDocument}
# The layout version of every kind's document. Files written before documents carried one are of
# version 1 (the layout they have); raise a kind's number when its fields change meaning.
SCHEMA = 1
# The values that decided a constant-time verdict, per signature in test order: the plots' data.
EVIDENCE_FILE = "evidence.csv"
EVIDENCE_COLUMNS = ("key_class", "value", "raw")


def save(path: Path, kind: str, document: dict, evidence: tuple[Sequence, ...] | None = None) -> None:
    """Keeps `document` (of `kind`) in `path` and, for a constant-time test, its `evidence` (key
    classes, values and, for a replayed board, its raw cycles)."""
    write_atomically(path / FILES[kind], dumps(document))
    if evidence is not None:
        buffer = io.StringIO()
        csv.writer(buffer).writerows([EVIDENCE_COLUMNS[:len(evidence)], *zip(*evidence)])
        write_atomically(path / EVIDENCE_FILE, buffer.getvalue())


def dumps(document: dict) -> str:
    """A document's text as the store keeps it, its schema first."""
    return json.dumps({"schema": SCHEMA, **document}, indent=2) + "\n"


def file_name(kind: str) -> str:
    """The name of the file a document of `kind` is kept in."""
    return FILES[kind]


def stored_kind(path: Path) -> str | None:
    """The kind of document kept in `path`, if any (a run or suite without one has none)."""
    return next((kind for kind, name in FILES.items() if (path / name).is_file()), None)


def read(file: Path) -> dict:
    """The document kept in `file`, without its schema field."""
    try:
        document = json.loads(file.read_text())
    except (OSError, ValueError) as error:
        raise PqscopeError(f"{file} is damaged: {error}") from None
    if not isinstance(document, dict):
        raise PqscopeError(f"{file} is damaged: it holds no JSON object")
    schema = document.pop("schema", 1)
    if not isinstance(schema, int) or isinstance(schema, bool) or schema < 1:
        raise PqscopeError(f"{file} is damaged: its schema is {schema!r}, not a version number")
    if schema > SCHEMA:
        raise PqscopeError(f"{file} has schema {schema}, written by a newer pqscope; this one reads schema "
                           f"{SCHEMA} and older: update pqscope to read it")
    return document


def load(path: Path) -> tuple[str, object, object]:
    """The kind, typed document and plot data of the result kept in `path` (runs: their samples)."""
    kind = stored_kind(path)
    if kind is None:
        loaded = _runs(path)
        return "run", runs_document(path, loaded), loaded
    document = DOCUMENTS[kind].from_json(read(path / FILES[kind]))
    return kind, document, _evidence(path) if kind == "ct" else _runs(path) if kind == "suite" else None


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
