import json
from dataclasses import replace

import pytest

from conftest import REPO
from fakedevice import make_info
from pqscope.project.boards import get_board
from pqscope.measure.capture import check_info
from pqscope.project.catalogue import find_implementation, load_catalogue
from pqscope.project.errors import PqscopeError


def _write_catalogue(root, rows):
    path = root / "firmware/schemes/catalogue.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema": 1, "implementations": rows}))


ROW = {"scheme": "s", "impl": "i", "family": "F", "pk_bytes": 1, "sk_bytes": 2, "sig_bytes": 3,
       "stack_bytes": 4, "status": "ok"}


def test_optional_fields_default_and_are_read(tmp_path):
    unfit = {**ROW, "impl": "big", "status": "does-not-fit", "reason": "too much stack"}
    _write_catalogue(tmp_path, [ROW, {**ROW, "impl": "slow", "slow": True}, unfit])
    plain, slow, big = load_catalogue(tmp_path)
    assert (plain.slow, plain.reason) == (False, "")
    assert slow.slow is True
    assert (big.status, big.reason) == ("does-not-fit", "too much stack")


def test_a_missing_required_field_is_named(tmp_path):
    _write_catalogue(tmp_path, [{key: value for key, value in ROW.items() if key != "sig_bytes"}])
    with pytest.raises(PqscopeError, match="lacks 'sig_bytes'"):
        load_catalogue(tmp_path)


def test_the_real_catalogue_explains_every_row_it_does_not_build():
    for row in load_catalogue(REPO):
        assert row.stack_bytes > 0
        built_everywhere = {row.status, *dict(row.boards).values()} == {"ok"}
        assert built_everywhere == (row.reason == ""), (row.scheme, row.impl)


def test_info_sizes_must_match_the_catalogue(fake_repo):
    virtual = get_board(fake_repo, "virtual")
    ml_dsa = find_implementation(load_catalogue(REPO), "ml-dsa-44", "m4f")
    check_info(make_info(), virtual, ml_dsa, msg_len=32)
    with pytest.raises(PqscopeError, match=r"api.h sizes \(pk, sk, sig\) \(1312, 2560, 2420\) differ .* \(1312, 2560, 2421\)"):
        check_info(make_info(), virtual, replace(ml_dsa, sig_bytes=2421), msg_len=32)


def _write_declassified(root, declassify, reasons):
    path = root / "firmware/schemes/catalogue.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema": 1, "declassification_reasons": reasons,
                                "implementations": [{**ROW, "declassify": declassify}]}))


def test_declassifications_are_read_with_their_reasons(tmp_path):
    _write_declassified(tmp_path, [{"secret_bytes": "0:32", "why": "seed"},
                                   {"decision": "check", "lines": ["a.c:7"], "why": "rejection"}],
                        {"seed": "the seed is public", "rejection": "rejections are public"})
    (row,) = load_catalogue(tmp_path)
    seed, check = row.declassify
    assert (seed.kind, seed.what, seed.reason, seed.why, seed.function) == (
        "secret_bytes", "0:32", "seed", "the seed is public", None)
    assert (check.kind, check.function, check.lines) == ("decision", "check", ("a.c:7",))


@pytest.mark.parametrize("entry", [
    {"secret_bytes": "0:32"},                                      # no reason
    {"secret_bytes": "0:32", "why": "unknown"},                     # a reason the catalogue lacks
    {"secret_bytes": "0:32", "decision": "f", "why": "seed"},       # two kinds at once
    {"argument": "f:1:32", "lines": ["a.c:1"], "why": "seed"},      # lines outside a decision
])
def test_a_bad_declassification_is_one_clear_error(tmp_path, entry):
    _write_declassified(tmp_path, [entry], {"seed": "the seed is public"})
    with pytest.raises(PqscopeError, match="s i: a declassify entry needs exactly one of"):
        load_catalogue(tmp_path)


def test_every_declassification_of_the_real_catalogue_names_a_reason():
    rows = [row for row in load_catalogue(REPO) if row.declassify]
    assert {row.family for row in rows} >= {"ML-DSA", "Falcon"}
    assert all(item.why for row in rows for item in row.declassify)
