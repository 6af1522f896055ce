"""The typed result documents (results/documents): each reads a file of today's layout and gives
it back as it was (same keys, order and values), and refuses a damaged one with a clear error; the
emulator's records likewise, a damaged line refused naming its file and line."""

import json
import math

import pytest

from pqscope.project.errors import PqscopeError
from pqscope.results.documents.ct import CtDocument
from pqscope.results.documents.profile import CheckedSignature, FunctionTime, ProfiledInterval, identified, json_lines
from pqscope.results.documents.taint import Finding, TaintDocument

BUILT_WITH = {"compiler": "gcc12", "opt": "catalogue", "compiler_version": "GNU 12.2.1", "c_flags": "-O3"}
LEAKING = {"kind": "branch", "address": "0x08000a1c", "count": 4, "declassified": False, "region": None,
           "function": "decompose", "file": "rounding.c", "line": 40, "declassified_by": [], "within": None,
           "taken": 2, "leak": True}
DECLASSIFIED = {"kind": "address", "address": "0x08000b00", "count": 9, "declassified": True, "region": "sram",
                "function": "sample", "file": "sampler.c", "line": 7, "declassified_by": ["the sampler is public"],
                "within": "sample", "taken": None, "leak": False}
TAINT = {"scheme": "ml-dsa-44", "impl": "m4f", "board": "virtual", "built_with": BUILT_WITH, "signatures": 2,
         "instructions": 73246, "sign_cycles": [46475, 46480], "verdict": "leak",
         "declassifications": [{"kind": "decision", "function": "sample", "reason": "the sampler is public"}],
         "coverage": {"instructions": 584, "new_instructions": [584, 3]}, "findings": [LEAKING, DECLASSIFIED]}

LEAK_STATISTICS = {
    "verdict": "inconclusive", "reason": "max |t| = 5.00 (test raw) is between 4.5 and 10",
    "n": {"fixed": 50, "random": 50}, "max_abs_t": 5.0, "strongest_test": "raw",
    "tests": {"raw": {"t": 5.0, "p": 1e-6, "n_fixed": 50, "n_random": 50},
              "crop-00": {"t": None, "p": None, "n_fixed": 0, "n_random": 0, "below": 91764.0}},
    "nonparametric": {"mann_whitney": {"u": 1250.0, "p": 0.5}, "kolmogorov_smirnov": {"d": 0.1, "p": 0.9}},
    "effect_size": "inf", "samples_needed": None, "detectable_effect": 0.9,
    "bootstrap": {"confidence": 0.95, "seed": 0, "mean_difference": {"estimate": 1.0, "low": 0.5, "high": 1.5},
                  "median_difference": {"estimate": 1.0, "low": 0.0, "high": 2.0}},
    "bound": {"cycles": 3.0, "share_of_mean": 0.001, "confidence": 0.95}}
FUNCTION = {"function": "decompose", "t": "-inf", "p": 0.0, "test": "raw",
            "thresholds": {"evidence": 5.4, "definite": 10.4}, "mean_fixed": 10.0, "mean_random": 12.5,
            "difference": 2.5, "share": 1.0, "depends_on_class": True,
            "nonparametric": {"mann_whitney": {"u": 0.0, "p": 0.01, "p_holm": 0.02},
                              "kolmogorov_smirnov": {"d": 1.0, "p": 0.01, "p_holm": 0.02}},
            "bound": {"cycles": 2.5, "share_of_mean": 0.2, "confidence": 0.95}}
CONSTANT = {**FUNCTION, "function": "hash", "t": 0.0, "difference": 0.0, "mean_random": 10.0, "share": 0.0,
            "depends_on_class": False, "nonparametric": None, "bound": None}
CT = {"board": "stm32f4discovery", "scheme": "ml-dsa-44", "impl": "m4f",
      "clock": {"name": "benchmark", "hz": 24000000, "flash_wait_states": 0}, "built_with": BUILT_WITH,
      "run_dir": "/runs/ct", "verdict": "leak", "reason": "the exact check found 1 instruction whose time depends "
      "on a secret (the statistics: inconclusive)",
      **{key: value for key, value in LEAK_STATISTICS.items() if key not in ("verdict", "reason")},
      "control_variate": {"slope": 1.0, "variance_removed": 0.5, "signatures_factor": 2.0, "replay_mean_cycles": 9.0},
      "uncorrected": LEAK_STATISTICS, "failed_samples": 0, "corrupt_accepted": 0,
      "plotted": "signing cycles less the replay's prediction", "localised_by": "on-device probes (inclusive cycles)",
      "top_functions": [FUNCTION, CONSTANT], "max_abs_t_function": {"function": "decompose", "t": "-inf"},
      "sequential": {"looks": [100, 200], "stopped": None},
      "taint": {"verdict": "leak", "signatures": 2, "findings": [LEAKING, DECLASSIFIED],
                "in_top_functions": {"decompose": {"leaks": 1, "declassified": 0}}},
      "replay": {"directory": "replay", "flash_timing": "modelled", "confirmations": [],
                 "disagreements": {"count": 0, "first": []}},
      "evidence": [{"by": "exact check", "kind": "branch", "function": "decompose", "file": "rounding.c", "line": 40,
                    "address": "0x08000a1c", "executions": 4}],
      "scope": "the key, the signing randomness and everything derived from them",
      "statistics": {"verdict": "inconclusive", "reason": LEAK_STATISTICS["reason"]}}


def same(document: dict, original: dict) -> bool:
    """Same keys in the same order, same values (json.dumps keeps the order)."""
    return json.dumps(document) == json.dumps(original)


def test_an_exact_checks_document_of_todays_layout_is_read_and_given_back_as_it_was():
    document = TaintDocument.from_json(TAINT)
    assert same(document.to_json(), TAINT) and TaintDocument.from_json(document.to_json()) == document
    leaking, declassified = document.findings
    assert (leaking.address, leaking.leak, leaking.one_way, declassified.declassified_by) == (
        0x08000A1C, True, False, ("the sampler is public",))
    assert document.leaks == (leaking,) and document.coverage.new_instructions == (584, 3)


def test_an_older_exact_check_lacking_parts_stays_without_them():
    older = {key: value for key, value in TAINT.items() if key not in ("sign_cycles", "coverage")}
    document = TaintDocument.from_json(older)
    assert document.sign_cycles is None and same(document.to_json(), older)


def test_a_finding_keeps_its_fields():
    finding = Finding("division", 0x08000100, 3, False, None, "reduce", "poly.c", 12)
    assert Finding.from_json(finding.to_json()) == finding and finding.to_json()["address"] == "0x08000100"


def test_a_constant_time_tests_document_of_todays_layout_is_read_and_given_back_as_it_was():
    document = CtDocument.from_json(CT)
    assert same(document.to_json(), CT) and CtDocument.from_json(document.to_json()) == document
    statistics = document.statistics
    assert (document.verdict, statistics.verdict, statistics.total.max_abs_t) == ("leak", "inconclusive", 5.0)
    assert math.isinf(statistics.total.effect_size) and statistics.total.n.fixed == 50
    assert statistics.total.bound.share == 0.001 and statistics.uncorrected.verdict == "inconclusive"
    decompose, constant = statistics.top_functions
    assert decompose.t == -math.inf and decompose.depends_on_class and not constant.depends_on_class
    assert decompose.nonparametric.kolmogorov_smirnov.p_holm == 0.02 and constant.nonparametric is None
    assert statistics.max_abs_t_function.function == "decompose" and document.sequential.looks == (100, 200)
    assert document.taint.findings[0].leak and document.taint.findings[0].function == "decompose"


def test_a_test_without_a_profile_an_exact_check_or_a_replay_stays_without_them():
    plain = {key: value for key, value in CT.items()
             if key not in ("localised_by", "top_functions", "max_abs_t_function", "taint", "replay",
                            "control_variate", "uncorrected")}
    document = CtDocument.from_json(plain)
    assert document.taint is None and document.statistics.top_functions is None and same(document.to_json(), plain)


def test_an_older_test_without_the_headline_reads_its_statistics_verdict_from_the_top():
    older = {key: value for key, value in CT.items() if key not in ("evidence", "scope", "statistics")}
    document = CtDocument.from_json(older)
    assert document.statistics.verdict == document.verdict == "leak" and same(document.to_json(), older)


@pytest.mark.parametrize("read, damaged, why", [
    (CtDocument.from_json, {**CT, "n": {"fixed": 1}}, r"ct\.json\) is damaged: it lacks 'random'"),
    (CtDocument.from_json, {key: value for key, value in CT.items() if key != "verdict"}, "it lacks 'verdict'"),
    (TaintDocument.from_json, {**TAINT, "findings": [{**LEAKING, "address": "here"}]},
     r"taint\.json\) is damaged: invalid literal"),
    (TaintDocument.from_json, {**TAINT, "findings": None}, r"taint\.json\) is damaged"),
])
def test_a_damaged_document_is_refused_saying_what_is_wrong(read, damaged, why):
    with pytest.raises(PqscopeError, match=why):
        read(damaged)


INTERVAL = {"interval": 0, "sample_id": 3, "start_cycle": 48988208, "cycles": 6649, "blocks": 590,
            "trace_hash": "0xefc1b7dbefab11ed", "functions": {"sign": [3, 1, 6607], "__muldf3": [3760, 64, 3760]}}
CHECKED = {"call": 0, "sample_id": 1, "instructions": 71578, "covered": [134218800, 134218802],
           "findings": [{"kind": "division", "address": "0x080001fe", "count": 1, "declassified": False},
                        {"kind": "branch", "address": "0x08000200", "count": 4, "declassified": True,
                         "within": "0x08000300", "taken": 1}]}


def test_an_emulators_interval_is_read_with_each_functions_time(tmp_path):
    file = tmp_path / "intervals.jsonl"
    file.write_text(json.dumps(INTERVAL) + "\n" + json.dumps({**INTERVAL, "sample_id": 4})[:40])
    # A line cut short by a kill is left out.
    ((text, interval),) = json_lines(file, identified, "a signature's interval")
    assert json.loads(text) == INTERVAL and (interval.sample_id, interval.cycles) == (3, 6649)
    assert interval.functions["__muldf3"] == FunctionTime(3760, 64, 3760)
    assert interval.function("absent") == FunctionTime(0, 0, 0)
    probed = ProfiledInterval.from_json({"functions": {"sign": (120, 1)}})
    assert probed.sample_id is None and probed.function("sign") == FunctionTime(120, 1)


def test_an_exact_check_line_is_read_with_its_findings(tmp_path):
    file = tmp_path / "taint-calls.jsonl"
    file.write_text(json.dumps(CHECKED) + "\n")
    ((_, line),) = json_lines(file, CheckedSignature.from_json, "a signature's findings")
    division, branch = line.findings
    assert (line.sample_id, line.instructions, line.covered) == (1, 71578, (134218800, 134218802))
    assert (division.address, division.within, division.taken) == (0x080001FE, None, None)
    assert (branch.within, branch.taken, branch.declassified) == (0x08000300, 1, True)


@pytest.mark.parametrize("parse, damaged, why", [
    (identified, {**INTERVAL, "sample_id": None}, "it has no sample id"),
    (identified, {**INTERVAL, "functions": {"sign": [3]}}, "missing 1 required positional argument"),
    (CheckedSignature.from_json, {**CHECKED, "findings": [{"kind": "branch"}]}, "'address'"),
    (CheckedSignature.from_json, [], "no JSON object"),
])
def test_a_damaged_record_is_refused_naming_its_file_and_line(tmp_path, parse, damaged, why):
    file = tmp_path / "records.jsonl"
    file.write_text(json.dumps(INTERVAL if parse is identified else CHECKED) + "\n" + json.dumps(damaged) + "\n")
    with pytest.raises(PqscopeError, match=rf"records\.jsonl is damaged at line 2: it is not a record \(.*{why}"):
        list(json_lines(file, parse, "a record"))
