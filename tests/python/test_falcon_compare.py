"""compare-falcon: the document assembled from synthetic measurements and constant-time results
(no board, no emulator), its report, and the command's input errors."""

import json
import re

import pytest
from click.testing import CliRunner
from rich.console import Console

from conftest import REPO
from pqscope.jobs import falcon_compare
from pqscope.views import falcon as falcon_view
from pqscope.views.page import to_html
from pqscope.project.catalogue import load_catalogue
from pqscope.cli import cli
from pqscope.analysis.ct_schedule import CtSample
from pqscope.project.errors import PqscopeError
from pqscope.link.protocol import Status
from pqscope.results.documents.comparison import ComparisonDocument
from pqscope.results.documents.ct import CtDocument
from pqscope.results.documents.runs import RunsDocument
from test_cli import assert_one_line_error

SIGN_CYCLES = {"fpnative": 36_000_000, "fpemu-c": 60_000_000, "fpemu-m4": 39_600_000}
KEYGEN_CYCLES = {"fpnative": 190_000_000, "fpemu-c": 266_000_000, "fpemu-m4": 209_000_000}
NATIVE_TOP = [
    {"function": "__ieee754_sqrt", "t": -31.6, "p": 0.0, "test": "raw", "thresholds": {"evidence": 5.4, "definite": 10.4},
     "mean_fixed": 1451.5, "mean_random": 1.0, "difference": -1450.5, "share": 0.6, "depends_on_class": True,
     "nonparametric": None, "bound": None},
    {"function": "__aeabi_l2d", "t": -12.0, "p": 0.0, "test": "raw", "thresholds": {"evidence": 5.4, "definite": 10.4},
     "mean_fixed": 65.1, "mean_random": 1.0, "difference": -64.1, "share": 0.1, "depends_on_class": True,
     "nonparametric": None, "bound": None},
]


def run_document(mode: str) -> dict:
    def result(op: str, median: float, stack: int) -> dict:
        cycles = {"min": median - 10, "p05": median, "median": median, "mean": median, "p95": median,
                  "max": median + 10, "stdev": 1.0}
        return {"scheme": "falcon-512", "impl": mode, "op": op, "n": 3, "verified": 3, "corrupt_accepted": 0,
                "cycles": cycles, "stack_bytes": stack, "code_bytes": 90_000}

    return {"schema": 1, "board": "virtual", "clock_hz": 24_000_000, "run_dir": "x",
            "results": [result("keygen", KEYGEN_CYCLES[mode], 2500), result("sign", SIGN_CYCLES[mode], 2400),
                        result("verify", 469_225, 1200)]}


def ct_document(verdict: str, top_functions=()) -> CtDocument:
    statistics = {"n": {"fixed": 100, "random": 100}, "max_abs_t": 1.8 if verdict == "leak" else 0.5,
                  "strongest_test": "raw", "tests": {},
                  "nonparametric": {"mann_whitney": {"u": 1.0, "p": 0.5}, "kolmogorov_smirnov": {"d": 0.1, "p": 0.9}},
                  "effect_size": 0.1, "samples_needed": None, "detectable_effect": 0.5, "bootstrap": {},
                  "failed_samples": 0, "corrupt_accepted": 0}
    document = {"board": "virtual", "scheme": "falcon-512", "impl": "fpnative", "run_dir": "y", "verdict": verdict,
                "reason": "synthetic", **statistics, "localised_by": "the profiler", "top_functions": list(top_functions)}
    if top_functions:
        document["max_abs_t_function"] = {"function": top_functions[0]["function"], "t": top_functions[0]["t"]}
    return CtDocument.from_json(document)


def samples(random_cycles: list[int], fixed_cycles: int) -> list[CtSample]:
    found = [CtSample(i, 1, 1, b"", cycles, 256, Status.OK) for i, cycles in enumerate(random_cycles)]
    found.append(CtSample(len(found), 0, 0, b"", fixed_cycles, 256, Status.OK))
    found.append(CtSample(len(found), 1, 1, b"", 10**9, 256, Status.OP_FAILED))  # failed: not counted
    return found


class FakeSteps:
    """Records what the comparison asks for and answers with synthetic documents."""

    def __init__(self):
        self.calls = []

    def measure(self, implementation, path):
        self.calls.append(("measure", implementation.scheme, implementation.impl, path))
        return RunsDocument.from_json(run_document(implementation.impl))

    def constant_time(self, implementation, n, path):
        self.calls.append(("ct", implementation.scheme, implementation.impl, n, path))
        native = implementation.impl == "fpnative"
        if implementation.scheme.startswith("falcon-fp-"):
            return (ct_document("leak" if native else "no-leak", NATIVE_TOP[:1] if native else ()),
                    samples([6400, 6464, 7040], fixed_cycles=1))
        return ct_document("leak" if native else "inconclusive", NATIVE_TOP if native else ()), []


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    steps = FakeSteps()
    path = tmp_path_factory.mktemp("compare")
    document = falcon_compare.run_comparison(load_catalogue(REPO), "falcon-512", "virtual", path,
                                             steps, ct_samples=200, fp_ct_samples=2400)
    return document.to_json(), steps, path


def test_every_mode_is_measured_and_tested_and_every_primitive_in_every_mode(compared):
    document, steps, path = compared
    assert [c[1:3] for c in steps.calls if c[0] == "measure"] == [("falcon-512", m) for m in falcon_compare.MODES]
    falcon_ct = [c for c in steps.calls if c[0] == "ct" and c[1] == "falcon-512"]
    assert [(c[2], c[3]) for c in falcon_ct] == [(m, 200) for m in falcon_compare.MODES]
    fp_ct = {(c[1], c[2]): (c[3], c[4]) for c in steps.calls if c[0] == "ct" and c[1] != "falcon-512"}
    assert len(fp_ct) == 18
    assert fp_ct[("falcon-fp-sqrt", "fpemu-m4")] == (2400, path / "fp-ops" / "sqrt-fpemu-m4")
    assert set(document["modes"]) == set(falcon_compare.MODES)
    assert document["run_dir"] == str(path)


def test_modes_carry_cycles_stack_and_the_verdict_with_its_localisation(compared):
    document, _steps, _path = compared
    native = document["modes"]["fpnative"]
    assert native["sign"]["median"] == SIGN_CYCLES["fpnative"]
    assert native["stack_bytes"] == 2500  # the largest over the three operations
    assert native["ct"]["verdict"] == "leak"
    assert [f["function"] for f in native["ct"]["top_functions"]] == ["__ieee754_sqrt", "__aeabi_l2d"]
    emulated = document["modes"]["fpemu-m4"]["ct"]
    assert (emulated["verdict"], emulated["top_functions"]) == ("inconclusive", [])
    json.dumps(document, allow_nan=False)  # strict JSON, as --json prints it


def test_price_of_constant_time_is_the_emulated_over_native_median(compared):
    document, _steps, _path = compared
    price = document["price_of_constant_time"]
    assert price["fpemu-c/fpnative"]["sign"] == pytest.approx(60 / 36)
    assert price["fpemu-m4/fpnative"]["sign"] == pytest.approx(1.1)
    assert price["fpemu-m4/fpnative"]["keygen"] == pytest.approx(1.1)
    assert price["fpemu-c/fpnative"]["verify"] == 1.0


def test_fp_operations_cost_the_random_operand_median_per_operation(compared):
    document, _steps, _path = compared
    entries = {(e["op"], e["mode"]): e for e in document["fp_operations"]}
    assert len(entries) == 18
    mul = entries[("mul", "fpnative")]
    # Median of the verified random-operand signatures (6464) over 64 operations each.
    assert mul["cycles_per_op"] == 6464 / falcon_compare.FP_OP_REPS
    assert (mul["verdict"], mul["top_function"]) == ("leak", "__ieee754_sqrt")
    assert (entries[("mul", "fpemu-m4")]["verdict"], entries[("mul", "fpemu-m4")]["top_function"]) == ("no-leak", None)


def test_the_reports_show_every_section(compared):
    document, _steps, _path = compared
    page = to_html(falcon_view.page(ComparisonDocument.from_json(document)))
    for text in ("Price of constant time", "fpemu-c/fpnative", "1.67x", "__ieee754_sqrt", "sqrt", "101.0",
                 "<img"):
        assert text in page
    console = Console(record=True, width=200)
    falcon_view.show(console, ComparisonDocument.from_json(document))
    printed = console.export_text()
    assert "__aeabi_l2d" in printed and "1.10x" in printed and "no-leak" in printed
    assert "-31.6 (__ieee754_sqrt)" in printed  # the function that decided the verdict beside the total's 1.8


def test_the_figure_renders(compared):
    from pqscope.views.plots import falcon_modes_png

    assert falcon_modes_png(ComparisonDocument.from_json(compared[0]), falcon_compare.MODES, falcon_compare.OPS).startswith(b"\x89PNG")


def test_the_operations_per_signature_match_the_firmware():
    source = (REPO / "firmware/schemes/falcon-fpops/fpops.c").read_text()
    assert int(re.search(r"#define FPOPS_REPS (\d+)", source).group(1)) == falcon_compare.FP_OP_REPS


def test_a_catalogue_without_the_primitive_rows_fails_before_any_work():
    steps = FakeSteps()
    catalogue = [row for row in load_catalogue(REPO) if row.scheme != "falcon-fp-floor"]
    with pytest.raises(PqscopeError, match="unknown scheme 'falcon-fp-floor'"):
        falcon_compare.run_comparison(catalogue, "falcon-512", "virtual", REPO, steps, ct_samples=20,
                                      fp_ct_samples=20)
    assert steps.calls == []


def test_help_names_the_options():
    result = CliRunner().invoke(cli, ["compare-falcon", "--help"])
    assert result.exit_code == 0
    for option in ("--scheme", "--ct-n", "--fp-ct-n", "--json", "--out"):
        assert option in result.output


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--scheme", "ml-dsa-44"), "Invalid value for '--scheme'"),
        (("--ct-n", "5"), "Invalid value for '--ct-n'"),
        (("--board", "nucleo"), "unknown board 'nucleo'"),
        (("--board", "stm32f4discovery"), "board stm32f4discovery is reached over a serial port: pass --port"),
        (("--seed", "xyz"), "--seed must be hex digits (an odd count is read with a leading 0: 7 is 07), not 'xyz'"),
    ],
)
def test_bad_input_is_one_line_without_traceback(fake_repo, args, expected):
    assert_one_line_error(CliRunner().invoke(cli, ["compare-falcon", *args]), expected)


def test_the_comparison_carries_the_main_jobs_section_of_the_modes(compared):
    document, _steps, _path = compared
    (falcon,) = document["falcon"]
    modes = {mode["impl"]: mode for mode in falcon["modes"]}
    assert list(modes) == list(falcon_compare.MODES)
    assert modes["fpemu-c"]["price"]["sign"] == pytest.approx(SIGN_CYCLES["fpemu-c"] / SIGN_CYCLES["fpnative"] - 1)
    assert modes["fpemu-c"]["extra_ms"]["sign"] == pytest.approx((60_000_000 - 36_000_000) / 24e3)
    assert (modes["fpnative"]["verdict"], modes["fpemu-m4"]["verdict"]) == ("leak", "inconclusive")
    page = to_html(falcon_view.page(ComparisonDocument.from_json(document)))
    assert page.index("Falcon-512: floating-point modes") < page.index("<h2>Modes</h2>")
