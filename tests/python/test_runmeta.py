"""meta.json, typed: what reading it back checks, and that rewriting it loses nothing."""

import pytest

from pqscope.results.runmeta import REPORT_NEEDS, RESUME_NEEDS, MetaProblem, RunMeta

OLD_RUN = {  # as pqscope wrote runs before "kind" and "target" were recorded
    "schema": 1, "board": "virtual", "scheme": "ml-dsa-44", "impl": "m4f", "image": {"text": 1, "data": 0, "bss": 0},
    "ops": ["sign"], "samples": 3, "msg_len": 32, "master_seed": "07", "status": "complete", "samples_completed": 3,
}


def test_a_run_from_before_kind_was_recorded_is_a_run_and_is_written_back_with_its_entries():
    meta = RunMeta.from_json(OLD_RUN | {"from_a_newer_pqscope": [1, 2]}, RESUME_NEEDS["run"])
    assert meta.kind == "run" and meta.seed == b"\x07" and meta.ops == ["sign"]
    assert meta.to_json() == {"kind": "run"} | OLD_RUN | {"from_a_newer_pqscope": [1, 2]}


@pytest.mark.parametrize(("change", "needs", "problem"), [
    ({"scheme": None}, REPORT_NEEDS, "lacks 'scheme'"),
    ({"kind": "ct"}, RESUME_NEEDS["ct"], "lacks 'key_refresh'"),
    ({"samples": "3"}, REPORT_NEEDS, "has 'samples' of the wrong type (not an integer)"),
    ({"samples": True}, REPORT_NEEDS, "has 'samples' of the wrong type (not an integer)"),
    ({"ops": "sign"}, REPORT_NEEDS, "has 'ops' of the wrong type (not a list)"),
    ({"bound": "0.1"}, REPORT_NEEDS, "has 'bound' of the wrong type (not a number)"),
    ({"fixed_n": 1}, REPORT_NEEDS, "has 'fixed_n' of the wrong type (not true or false)"),
    ({"master_seed": "xyz"}, REPORT_NEEDS, "has a master_seed that is not hex ('xyz')"),
])
def test_what_a_reader_needs_is_checked(change, needs, problem):
    with pytest.raises(MetaProblem) as raised:
        RunMeta.from_json(OLD_RUN | change, needs)
    assert str(raised.value) == problem


def test_a_document_that_is_no_object_lacks_everything():
    with pytest.raises(MetaProblem, match="lacks 'scheme'"):
        RunMeta.from_json([], REPORT_NEEDS)
