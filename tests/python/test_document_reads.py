"""Result documents are typed: outside the store (results/store.py and the typed documents beside
it) and the views, no code reads a document's field by a string key. A string key read elsewhere
is either in a module listed here, which reads data that is not a result document, or a document
read that should be an attribute."""

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
    "views": "the views render documents as they are kept",
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


def test_no_result_document_is_read_by_a_string_key_outside_the_store_and_the_views():
    found = [f"{path.relative_to(PACKAGE)}:{line}: {text}" for path in sorted(PACKAGE.rglob("*.py"))
             if not allowed(str(path.relative_to(PACKAGE))) for line, text in string_key_reads(path.read_text())]
    assert found == []


def test_the_scan_finds_reads_and_passes_over_annotations():
    source = 'def f(doc: dict["str", int]) -> list["Target"]:\n    return doc["verdict"], doc.get("taint"), doc[0]\n'
    assert string_key_reads(source) == [(2, "doc.get('taint')"), (2, "doc['verdict']")]
    assert allowed("views/ct.py") and allowed("project/elf.py") and allowed("results/documents_ct.py")
    assert not allowed("jobs/suite.py") and not allowed("results/tls.py")
