"""Result documents are typed: outside the store (results/store.py and the typed documents beside
it), no code reads a document's field by a string key, the views included. A string key read
elsewhere is either in a module listed here, which reads data that is not a result document, one
of the listed reads of a mapping keyed by data (an operation's name, a status) or of a TLS budget
row (no result document), or a document read that should be an attribute."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "host-tools/src/pqscope"
# Modules that may read string keys, and why: the data they read is no result document.
NOT_DOCUMENTS = {
    "project": "the repository's own metadata (board.json, the catalogue, presets) and ELF/DWARF attributes",
    "targets/farm.py": "labgrid's descriptions of its places and resources",
    "targets/vboard_serve.py": "the requests of the flash socket",
    "results/runmeta.py": "meta.json's typed reader (RunMeta.from_json)",
    "results/rundir.py": "a run directory's own files and a suite's manifest as they are parsed",
    "results/store.py": "the store",
    "results/documents": "the typed documents' readers (from_json)",
    "measure/measurement.py": "a suite's manifest (suite.json): the parameters it was started with",
    "measure/capture.py": "meta.json's variant as it is parsed",
    "cli": "click's option values",
}
# Reads of a mapping keyed by data, not by a document's fields, or of a TLS budget row, each by its module and text.
PER_OP = "a figure per operation, keyed by the operation's name"
TLS_ROW = "a row of results/tls.py's budget (budget_rows, no result document), printed as it is by `pqscope tls --json`"
DATA_KEYED = {
    ("views/suite.py", "item.ms.get('sign', {})"): "milliseconds per operation, then per clock",
    ("views/suite.py", "mode.price.get('sign')"): PER_OP,
    ("views/suite.py", "mode.extra_ms.get('sign')"): PER_OP,
    ("views/suite.py", "mode.cycles.get('sign')"): PER_OP,
    ("views/plots.py", "mode.cycles.get('sign', np.nan)"): PER_OP,
    **{("views/matrix.py", f"counts['{status}']"): "the view's own count of cells per status"
       for status in ("no-leak", "leak", "hang", "build-failed")},
    **{("views/runs.py", f"row['{key}']"): TLS_ROW
       for key in ("scheme", "impl", "bytes", "extra_round_trips_initcwnd10", "verify_cycles", "verify_ms",
                   "sign_cycles", "sign_ms")},
    ("views/runs.py", "rows[0]['overhead_bytes']"): TLS_ROW,
    **{("views/plots.py", f"row['{key}']"): TLS_ROW for key in ("bytes", "verify_ms")},
}
# Subscripts that are type annotations, not reads (list["Target"]).
GENERICS = {"list", "dict", "tuple", "set", "type", "Callable", "Iterator", "Sequence"}


def string_key_reads(source: str) -> list[tuple[int, str]]:
    """Each read of a string key in `source`: `x["key"]` (not as an annotation) and `x.get("key")`."""
    reads = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)
                and not (isinstance(node.value, ast.Name) and node.value.id in GENERICS)):
            reads.append((node.lineno, ast.unparse(node)))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            reads.append((node.lineno, ast.unparse(node)))
    return sorted(reads)


def allowed(relative: str) -> bool:
    return any(relative == place or relative.startswith(place + "/") or relative.startswith(place + ".")
               or relative.startswith(place + "_") for place in NOT_DOCUMENTS)


def test_no_result_document_is_read_by_a_string_key_outside_the_store():
    found = [f"{relative}:{line}: {text}" for path in sorted(PACKAGE.rglob("*.py"))
             if not allowed(relative := str(path.relative_to(PACKAGE)))
             for line, text in string_key_reads(path.read_text()) if (relative, text) not in DATA_KEYED]
    assert found == []


def test_every_listed_read_of_a_data_keyed_mapping_is_still_made():
    made = {(str(path.relative_to(PACKAGE)), text) for path in PACKAGE.rglob("*.py")
            for _, text in string_key_reads(path.read_text())}
    assert set(DATA_KEYED) - made == set()


def test_the_scan_finds_reads_and_passes_over_annotations():
    source = 'def f(doc: dict["str", int]) -> list["Target"]:\n    return doc["verdict"], doc.get("taint"), doc[0]\n'
    assert string_key_reads(source) == [(2, "doc.get('taint')"), (2, "doc['verdict']")]
    assert allowed("project/elf.py") and allowed("results/documents_ct.py")
    assert not allowed("jobs/suite.py") and not allowed("results/tls.py") and not allowed("views/ct.py")
