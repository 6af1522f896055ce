"""The typed documents of runs, of the main job and of Falcon's modes compared
(results/documents/runs.py, suite.py, comparison.py): each reads a file of today's layout and gives
it back as it was (same keys, order and values), and what it gives it reads back equal."""

import json

import pytest

from pqscope.results.documents.comparison import ComparisonDocument
from pqscope.results.documents.runs import CycleStats, OpResult, ProbeSet, RunsDocument
from pqscope.results.documents.suite import SuiteDocument

CYCLES = {"min": 1023489, "p05": 1024273.8, "median": 1036089.0, "mean": 1038783.0, "p95": 1057063.8, "max": 1059465,
          "stdev": 16173.45}
RESULT = {"scheme": "falcon-512", "impl": "fpemu-c", "op": "sign", "n": 4, "verified": 4, "corrupt_accepted": 0,
          "cycles": CYCLES, "stack_bytes": 4000, "code_bytes": 340}
PROBED = {**RESULT, "probes": [{"function": "sqrt", "mean_cycles": 10.0, "mean_calls": 2.0, "share_of_total": 0.01}],
          "probe_inflation": {"mean_cycles": 58.0, "share_of_total": 0.0001}}
UNTIMED = {**RESULT, "op": "keygen", "n": 0, "verified": 0, "cycles": None, "stack_bytes": None}
RUNS = {"schema": 1, "board": "stm32f4discovery", "clock_hz": 24000000, "flash_wait_states": 0,
        "built_with": {"compiler": "gcc12", "opt": "catalogue", "compiler_version": None, "c_flags": None},
        "run_dir": "/runs/suite", "results": [RESULT, PROBED, UNTIMED]}
PROFILE = {"fp_share": 0.42, "fp_primitives": {
    "mul": {"function": "__muldf3", "cycles_per_call": 80.5, "calls_per_signature": 1200.0}}}
IMPLEMENTATION = {
    "scheme": "falcon-512", "impl": "fpnative", "name": "Falcon-512 fpnative",
    "cycles": {"keygen": 1036089.0, "sign": 2036089.0}, "ms": {"sign": {"24000000": 84.8, "168000000": 12.1}},
    "stack_bytes": 4200, "code_bytes": 340,
    "variance": {"cv": 0.01, "min": 2000002.0, "max": 2000239.0, "sources": [{"function": "__muldf3", "share": 0.6}]},
    "constant_time": {"verdict": "leak", "reason": "the exact check found 3 instructions", "scope": "the key",
                      "signatures": 40, "max_abs_t": "inf", "statistics": "inconclusive",
                      "exact_check": {"verdict": "leak", "signatures": 2, "leaking_instructions": 3,
                                      "leaking_functions": ["__muldf3", "?"]},
                      "localised": ["__muldf3"], "run_dir": "/runs/suite/falcon-512-fpnative/ct"},
    "profile": PROFILE}
UNTESTED = {**IMPLEMENTATION, "impl": "fpemu-c", "name": "Falcon-512 fpemu-c", "variance": None,
            "constant_time": None, "profile": None}
MODE = {"impl": "fpnative", "words": "native double (libgcc soft-float)", "cycles": {"sign": 2036089.0},
        "price": {"keygen": None, "sign": 0.0, "verify": None},
        "extra_ms": {"keygen": None, "sign": 0.0, "verify": None},
        "verdict": "leak", "leaking_functions": ["__muldf3"], "profile": PROFILE}
FALCON = {"scheme": "falcon-512", "name": "Falcon-512",
          "modes": [MODE, {**MODE, "impl": "fpemu-c", "verdict": None, "leaking_functions": [], "profile": None}]}
SUITE = {**RUNS, "kind": "suite", "clocks_hz": [24000000, 168000000], "implementations": [IMPLEMENTATION, UNTESTED],
         "falcon": [FALCON], "summary": ["Falcon-512 fpnative leaks.", "Largest stack: Falcon-512 fpnative, 4.1 KiB."]}
OP = {"n": 3, "verified": 3, "median": 36000000.0, "min": 35999990, "max": 36000010, "stack_bytes": 2400}
MODE_CT = {"verdict": "leak", "reason": "synthetic", "max_abs_t": 1.8, "n": {"fixed": 100, "random": 100},
           "max_abs_t_function": {"function": "__ieee754_sqrt", "t": "-inf"}, "run_dir": "y",
           "top_functions": [{"function": "__ieee754_sqrt", "t": "-inf", "share": 0.6, "difference": -1450.5,
                              "depends_on_class": True}]}
FIGURES = {"keygen": OP, "sign": OP, "verify": None, "stack_bytes": 2500, "code_bytes": 90000, "ct": MODE_CT}
COMPARISON = {
    "scheme": "falcon-512", "board": "virtual", "clock_hz": 24000000,
    "modes": {"fpnative": FIGURES, "fpemu-c": {**FIGURES, "ct": {**MODE_CT, "max_abs_t_function": None,
                                                                 "top_functions": []}}},
    "falcon": [FALCON],
    "fp_operations": [{"op": "mul", "mode": "fpnative", "cycles_per_op": 101.0, "verdict": "leak", "max_abs_t": "inf",
                       "top_function": "__muldf3"}],
    "price_of_constant_time": {"fpemu-c/fpnative": {"keygen": 1.4, "sign": 1.67, "verify": None}}, "fp_op_reps": 64,
    "run_dir": "/runs/compare", "wall_seconds": 12.5}


@pytest.mark.parametrize(("kind", "layout"), [(RunsDocument, RUNS), (OpResult, PROBED), (OpResult, UNTIMED),
                                               (CycleStats, CYCLES), (SuiteDocument, SUITE),
                                               (ComparisonDocument, COMPARISON),
                                               (ComparisonDocument, {**COMPARISON, "clock_hz": None})])
def test_todays_layout_reads_and_is_given_back_as_it_was(kind, layout):
    document = kind.from_json(json.loads(json.dumps(layout)))
    assert json.dumps(document.to_json()) == json.dumps(layout)  # the same keys in the same order, the same values
    assert kind.from_json(document.to_json()) == document


def test_a_document_without_its_optional_parts_leaves_them_out():
    runs = {key: value for key, value in RUNS.items() if key != "built_with"}
    assert list(RunsDocument.from_json(runs).to_json()) == list(runs)
    timed = {key: value for key, value in COMPARISON.items() if key != "wall_seconds"}
    assert "wall_seconds" not in ComparisonDocument.from_json(timed).to_json()


def test_the_parts_answer_what_the_summary_asks():
    suite = SuiteDocument.from_json(SUITE)
    tested, untested = suite.implementations
    assert (tested.verdict, untested.verdict) == ("leak", None)
    assert tested.constant_time.max_abs_t == float("inf")
    assert tested.constant_time.leaking_functions == ("__muldf3", "?")  # the exact check's before the statistics'
    assert tested.profile.fp_primitives["mul"].cycles_per_call == 80.5
    assert suite.runs.results[2].cycles is None
    probes = ProbeSet(("sqrt",), 11, 29)
    assert ProbeSet.from_json(probes.to_json()) == probes
