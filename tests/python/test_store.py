"""The one store of result documents: every kind kept with its schema, read back without it; a
file from before documents had a schema loads as it is; one of a newer or unknown layout is refused
with the file and the versions named."""

import json

import pytest
from test_falcon_compare import ct_document

from pqscope.project.errors import PqscopeError
from pqscope.results import store
from pqscope.results.documents.taint import TaintDocument

DOCUMENT = {"kind": "taint", "verdict": "no-leak", "findings": []}
TAINT_DOCUMENT = {"scheme": "ml-dsa-44", "impl": "m4f", "board": "virtual", "signatures": 2, "instructions": 10,
                  "verdict": "no-leak", "findings": []}


@pytest.mark.parametrize("kind", sorted(store.FILES))
def test_every_kind_is_kept_with_its_schema_and_read_back_as_saved(tmp_path, kind):
    store.save(tmp_path, kind, DOCUMENT)
    kept = json.loads((tmp_path / store.FILES[kind]).read_text())
    assert kept == {"schema": store.SCHEMA, **DOCUMENT} and list(kept)[0] == "schema"
    assert store.read(tmp_path / store.FILES[kind]) == DOCUMENT
    assert store.stored_kind(tmp_path) == kind


def test_a_document_from_before_schemas_loads_as_it_is(tmp_path):
    # The layout every document had before it carried a schema: schema 1.
    (tmp_path / "taint.json").write_text(json.dumps(TAINT_DOCUMENT, indent=2) + "\n")
    assert store.load(tmp_path)[:2] == ("taint", TaintDocument.from_json(TAINT_DOCUMENT))


def test_a_newer_schema_is_refused_naming_the_file_and_both_versions(tmp_path):
    (tmp_path / "taint.json").write_text(json.dumps({"schema": store.SCHEMA + 1, **DOCUMENT}))
    with pytest.raises(PqscopeError, match=rf"taint\.json has schema {store.SCHEMA + 1}, written by a newer pqscope; "
                                           rf"this one reads schema {store.SCHEMA} and older"):
        store.read(tmp_path / "taint.json")


@pytest.mark.parametrize("text, why", [('{"schema": "1"}', "its schema is '1', not a version number"),
                                       ('{"schema": true}', "its schema is True, not a version number"),
                                       ("[1, 2]", "it holds no JSON object"),
                                       ('{"schema": 1', "Expecting")])
def test_a_damaged_document_is_refused_naming_what_is_wrong(tmp_path, text, why):
    (tmp_path / "ct.json").write_text(text)
    with pytest.raises(PqscopeError, match=rf"ct\.json is damaged: {why}"):
        store.read(tmp_path / "ct.json")


def test_a_constant_time_tests_evidence_is_kept_beside_its_document(tmp_path):
    document = ct_document("no-leak")
    store.save(tmp_path, "ct", document.to_json(), ([0, 1, 0], [10.0, 12.5, 9.0]))
    assert store.load(tmp_path) == ("ct", document, ([0, 1, 0], [10.0, 12.5, 9.0]))
