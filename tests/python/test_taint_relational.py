"""The exact check's relational confirmation (issue #54), on synthetic emulator lines: a finding that
would convict is confirmed when some signature's outcomes differ from the first's, with the pair
and the first execution where they differ; unchanged (and no leak) when none does; a note or a
declassified finding is left alone, and a line without outcomes (an older emulator) confirms
nothing either way."""

from pqscope.analysis.taint_relational import Variant, confirmed, first_difference, unconfirmed
from pqscope.results.documents.profile import CheckedSignature, RawFinding
from pqscope.results.documents.relational import CONFIRMED, UNCHANGED, RelationalCheck
from pqscope.results.documents.taint import Finding, TaintDocument
from pqscope.views.taint import taint_what

ADDRESS = 0x080001ce


def raw(runs, kind="branch", digest=None, count=None) -> RawFinding:
    """A signature's finding whose executions did `runs` ((outcome, repeat), all of them unless `count`)."""
    count = sum(repeat for _, repeat in runs) if count is None else count
    return RawFinding(kind, ADDRESS, count, False, None, None, None, False,
                      digest or "".join(f"{value:x}.{repeat}" for value, repeat in runs), tuple(runs))


def variant(index: int, *findings: RawFinding) -> Variant:
    line = CheckedSignature(index, tuple(findings), 1000, ())
    return Variant(index, bytes([index]) * 32, bytes([0x80 + index]) * 32, line)


def named(kind="branch", declassified=False) -> Finding:
    return Finding(kind, ADDRESS, 48, declassified, None, "key_dependent_value", "control.c", 246)


def confirm(finding: Finding, variants: list[Variant]) -> Finding:
    merged = variants[0].line.findings[0] if variants[0].line.findings else variants[1].line.findings[0]
    (result,) = confirmed([finding], [merged], variants)
    return result


def test_a_loop_whose_bounds_cancel_is_unchanged_and_no_leak():
    loop = [(1, 23), (0, 1)]
    result = confirm(named(), [variant(0, raw(loop)), variant(1, raw(loop)), variant(2, raw(loop))])
    assert result.relational == RelationalCheck(UNCHANGED, 3)
    assert (result.convicting, result.unchanged, result.leak) == (True, True, False)
    assert unconfirmed([result]) == [result]
    assert "never changed by a secret in 3 variants" in taint_what(result)


def test_a_loop_whose_rounds_follow_the_key_is_confirmed_where_it_first_differs():
    result = confirm(named(), [variant(0, raw([(1, 36), (0, 1)])), variant(1, raw([(1, 36), (0, 1)])),
                               variant(2, raw([(1, 31), (0, 1)]))])
    pair = result.relational.pair
    assert result.relational.state == CONFIRMED and result.leak and not unconfirmed([result])
    assert (pair.signatures, pair.visit, pair.outcomes) == ((0, 2), 32, ("taken", "not taken"))
    assert pair.key_seeds == ("00" * 32, "02" * 32) and pair.sign_seeds == ("80" * 32, "82" * 32)
    assert "signatures 0 and 2 differ at execution 32: taken vs not taken" in taint_what(result)


def test_a_signature_without_the_finding_differs_where_the_other_goes_on():
    result = confirm(named("division"), [variant(0, raw([(7, 2)], "division")), variant(1)])
    assert (result.relational.pair.visit, result.relational.pair.outcomes) == (
        1, ("7 cycles", "no further execution on a secret"))


def test_a_difference_beyond_the_runs_kept_gives_both_totals():
    runs = [(value % 2, 1) for value in range(16)]  # 16 runs of one, cut: 40 executions each
    a, b = raw(runs, "address", "aaaa", count=40), raw(runs, "address", "bbbb", count=40)
    visit, outcomes = first_difference("address", a, b)
    assert visit is None and outcomes == ("40 executions, outcome digest aaaa", "40 executions, outcome digest bbbb")
    assert first_difference("address", raw([(0x20000100, 1)], "address"), raw([(0x20000104, 1)], "address")) == (
        1, ("0x20000100", "0x20000104"))


def test_notes_declassified_findings_and_lines_without_outcomes_are_left_as_they_were():
    loop = [(1, 23), (0, 1)]
    same = [variant(0, raw(loop, "address")), variant(1, raw(loop, "address"))]
    assert confirm(named("address"), same).relational is None
    assert confirm(named(declassified=True), [variant(0, raw(loop)), variant(1, raw(loop))]).relational is None
    older = RawFinding("branch", ADDRESS, 24, False)
    result = confirm(named(), [variant(0, older), variant(1, older)])
    assert result.relational is None and result.leak


def test_the_confirmation_is_kept_in_taint_json_and_absent_when_there_is_none():
    finding = confirm(named(), [variant(0, raw([(1, 2)])), variant(1, raw([(1, 1), (0, 1)]))])
    document = TaintDocument("control-cancelling-bounds", "leaky", "virtual", 2, 1000, "leak", (finding, named()))
    data = document.to_json()
    assert "relational" not in data["findings"][1]
    assert data["findings"][0]["relational"]["pair"]["visit"] == 2
    assert TaintDocument.from_json(data) == document


def test_the_emulators_outcomes_are_read_from_its_line():
    line = CheckedSignature.from_json({"sample_id": 3, "instructions": 10, "covered": [], "findings": [
        {"kind": "branch", "address": "0x080001ce", "count": 24, "declassified": False, "taken": 23,
         "outcome_digest": "fbb8a8952589d754", "outcomes": [[1, 23], [0, 1]]}]})
    assert line.findings[0].outcomes == ((1, 23), (0, 1)) and line.findings[0].outcome_digest == "fbb8a8952589d754"


def test_the_checks_count_keeps_its_confirming_variants_apart():
    from pqscope.analysis.taint import TaintCapture

    check = TaintCapture(2, b"seed", 32)
    assert check.count_text(1) == "1 of 2 signatures"
    assert check.count_text(5) == "2 of 2 signatures and 3 confirming variants"
