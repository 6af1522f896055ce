"""pqscope taint's host side: the catalogue's declassifications become the emulator's options and
decide which findings are declassified, and why."""

import subprocess
import threading
import time
from dataclasses import replace
from types import SimpleNamespace

import pytest

from fakedevice import make_info
from pqscope.analysis.taint import TaintCapture
from pqscope.analysis.taint_findings import (Finding, attribute, check_decisions, derives_public_code,
                                             emulator_options, merged_findings, public_code)
from pqscope.link.protocol import Status
from pqscope.project.catalogue import Declassification
from pqscope.project.errors import PqscopeError
from pqscope.results.documents.profile import CheckedSignature, RawFinding
from pqscope.results.documents.taint import BENCHMARK_CLOCK, CheckedClock, TaintDocument
from pqscope.views.taint import taint_source, taint_what

SAMPLER = Declassification("decision", "sampler", "sampler", "acceptance is public", ("sign.c:1343",))
NORM = Declassification("decision", "chknorm", "rejection", "rejection is public")
SEED = Declassification("secret_bytes", "0:32", "rho", "rho is in the public key")
SIGNATURE = Declassification("argument", "encode:2:1024", "signature", "the signature is published")


def finding(kind="branch", function="sampler", line=1343, declassified=False):
    return Finding(kind, 0x08000100, 3, declassified, None, function, f"build/x/sources/{function}/sign.c", line)


def test_value_declassifications_become_emulator_options_and_decisions_do_not():
    assert emulator_options((SAMPLER, SEED, SIGNATURE)) == (
        "--taint-public-secret-bytes", "0:32", "--taint-public-argument", "encode:2:1024")


def test_public_code_decides_on_declared_public_values_only():
    """Set apart as public: a function whose timing findings are all caused by declared-public
    values; not one with a leak, a note, a public decision, a masked call, nor a signing entry or
    a kept function (the retry function), nor one whose only finding times nothing."""
    public = replace(finding(function="expand", line=50), declassified=True)
    findings = attribute([
        public, replace(public, address=0x08000104),
        replace(public, function="mixed"), finding(function="mixed", line=7),
        replace(public, function="noted"), finding(kind="address", function="noted", line=8),
        finding(function="sampler"),  # declassified by the sampler's decision, not by a value
        replace(public, function="PQCLEAN_X_crypto_sign_signature"), replace(public, function="challenge"),
        replace(public, kind="address", function="loads")], (SAMPLER, SEED))
    masked = replace(public, function="masked", within="ladder")
    assert public_code((*findings, masked), (SAMPLER, SEED), kept=("challenge",)) == ("expand",)


def test_only_a_declassified_value_sets_code_apart_as_public():
    """What lets the exact check run beside the statistics (ct_beside): a row declassifying only
    decisions and masked calls has no public code, whatever its findings; a value (a part of the
    key, an argument) makes some."""
    masking = Declassification("within", "ladder", "masked", "the ladder runs on blinded values")
    decisions = (SAMPLER, NORM, masking)
    found = attribute([finding(kind=kind, function=function, line=line) for kind in ("branch", "address", "division")
                       for function, line in (("sampler", 1343), ("chknorm", 9), ("expand", 50))], decisions)
    assert any(item.declassified for item in found) and not derives_public_code(decisions)
    assert public_code(found, decisions) == ()
    by_value = replace(finding(function="expand", line=50), declassified=True)  # the emulator's, from SEED
    assert derives_public_code((*decisions, SEED)) and derives_public_code((SIGNATURE,))
    assert public_code(attribute([by_value], (*decisions, SEED)), (*decisions, SEED)) == ("expand",)


def test_a_decision_declassifies_branches_at_its_lines_only():
    at_line, elsewhere, a_division = attribute(
        [finding(), finding(line=602), finding(kind="division")], (SAMPLER,))
    assert (at_line.declassified, at_line.declassified_by, at_line.leak) == (True, ("sampler",), False)
    assert (elsewhere.declassified, elsewhere.leak) == (False, True)
    assert (a_division.declassified, a_division.leak) == (False, True)


def test_a_decision_at_its_lines_is_declassified_in_whatever_function_it_was_inlined_into():
    """A compiler may inline the decision's function into its caller (the symbol is the caller's,
    the source line still the decision's), or keep it apart at -O0: the line decides."""
    inlined = Finding("branch", 0x08000100, 3, False, None, "caller", "build/x/sources/sampler/sign.c", 1343)
    other_file = replace(inlined, file="build/x/sources/sampler/vrfy.c")
    (declassified, leak) = attribute([inlined, other_file], (SAMPLER,))
    assert (declassified.declassified, declassified.declassified_by) == (True, ("sampler",))
    assert leak.leak


def test_a_decision_at_line_0_covers_lineless_code_of_its_own_function_only():
    """Line 0 is code a compiler gave no line (clang's merged comparisons): it says nothing of the
    source, so only the decision's own function (or a clone) anchors it."""
    lineless = replace(SAMPLER, lines=("sign.c:1343", "sign.c:0"))
    own, clone, caller = attribute([finding(line=0), finding(function="sampler.constprop.0", line=0),
                                    finding(function="caller", line=0)], (lineless,))
    assert own.declassified and clone.declassified
    assert caller.leak and caller.declassified_by == ()
    (still_by_line,) = attribute([finding(function="caller", line=1343)], (lineless,))
    assert still_by_line.declassified


def test_a_decision_without_lines_covers_its_whole_function_and_its_clones():
    (inside,) = attribute([finding(function="chknorm", line=9)], (NORM,))
    (clone,) = attribute([finding(function="chknorm.constprop.0", line=9)], (NORM,))
    assert clone.declassified
    (other,) = attribute([finding(function="caller", line=9)], (NORM,))
    assert inside.declassified and not inside.leak
    assert other.leak and other.declassified_by == ()


def test_a_value_declassified_finding_names_its_own_functions_values_or_else_all():
    own, elsewhere = attribute([finding(function="encode", declassified=True),
                                finding(function="caller", declassified=True)], (NORM, SEED, SIGNATURE))
    assert own.declassified_by == ("signature",)
    assert elsewhere.declassified_by == ("rho", "signature")
    assert not own.leak and not elsewhere.leak


MASKED = Declassification("within", "double_jac", "masked", "coordinates masked by a fresh random lambda")
OTHER_MASK = Declassification("within", "select", "table", "every table entry is read")


def test_a_finding_inside_a_masked_call_names_the_masking_not_the_values():
    """The emulator keeps a finding inside a --taint-public-within call apart (`within`: the
    function of the innermost such call) and declassifies it; the same instruction outside such a
    call stays a leak."""
    assert emulator_options((MASKED, NORM)) == ("--taint-public-within", "double_jac")
    inside, outside = attribute([Finding("branch", 0x08000100, 3, True, None, "cmp", "bignum.c", 9,
                                         within="double_jac"),
                                 Finding("branch", 0x08000100, 1, False, None, "cmp", "bignum.c", 9)],
                                (MASKED, OTHER_MASK, SEED))
    assert (inside.leak, inside.declassified_by) == (False, ("masked",))
    assert (outside.leak, outside.declassified_by) == (True, ())


def test_a_decision_of_a_function_the_image_lacks_is_refused(tmp_path):
    """A misspelt decision would declassify nothing: the check names it. The image is a real
    one, compiled here for the host (its symbol table is what counts)."""
    source = tmp_path / "image.c"
    source.write_text("int chknorm(int x) { return x > 3; }\nint main(void) { return chknorm(5); }\n")
    elf = tmp_path / "image"
    subprocess.run(["cc", "-o", str(elf), str(source)], check=True)
    check_decisions((NORM,), elf)  # present: no error
    with pytest.raises(PqscopeError, match="declassifies decisions of sampler, which .* lacks"):
        check_decisions((NORM, replace(SAMPLER, lines=())), elf)


def test_a_decision_at_lines_needs_code_at_them_not_its_function(tmp_path):
    """A decision named by its lines holds where its function was inlined away (-O2, static
    inline); a line without code (misspelt) is refused."""
    source = tmp_path / "inlined.c"
    source.write_text("static inline int chknorm(int x)\n{\n  if (x > 3)\n    return x * 7;\n  return x - 1;\n}\n"
                      "int main(int argc, char **argv) { return chknorm(argc); }\n")
    image = tmp_path / "inlined"
    subprocess.run(["cc", "-O2", "-g", "-o", str(image), str(source)], check=True)
    inlined = Declassification("decision", "chknorm", "rejection", "public", ("inlined.c:3",))
    check_decisions((inlined,), image)
    with pytest.raises(PqscopeError, match="declassifies decisions of chknorm, which .* lacks"):
        check_decisions((NORM,), image)
    with pytest.raises(PqscopeError, match="declassifies decisions at inlined.c:40, where .* has no code"):
        check_decisions((replace(inlined, lines=("inlined.c:40",)),), image)


def test_a_decision_at_line_0_needs_its_function_not_code_at_line_0(tmp_path):
    """GCC gives every instruction a line, clang does not: a line-0 place is checked by its
    function, which must be in the image."""
    source = tmp_path / "image.c"
    source.write_text("int chknorm(int x) { return x > 3; }\nint main(void) { return chknorm(5); }\n")
    elf = tmp_path / "image"
    subprocess.run(["cc", "-g", "-o", str(elf), str(source)], check=True)
    check_decisions((replace(NORM, lines=("image.c:0",)),), elf)
    with pytest.raises(PqscopeError, match="line-0 decisions of sampler, which .* lacks"):
        check_decisions((replace(SAMPLER, lines=("image.c:0",)),), elf)


def test_a_finding_is_placed_by_dependency_row_or_repository_file():
    """Build trees differ by toolchain; the place should not: a dependency's file by its name, a
    row's configured copy of its sources by the row, the repository's own files as they are."""
    assert [taint_source(Finding("branch", 0x08000100, 1, False, None, None, file, 144)) for file in (
        "build/stm32f4discovery.gcc11.O2/_deps/pqm4-src/crypto_sign/x/m4f/sign.c",
        "build/stm32f4discovery.gcc12.O0/sources/falcon-512/fpemu-c/fpr.h",
        "firmware/schemes/controls/control.c", None)] == [
        "pqm4:crypto_sign/x/m4f/sign.c:144", "falcon-512/fpemu-c/fpr.h:144",
        "firmware/schemes/controls/control.c:144", "0x08000100"]


# A key-indexed load from a table in flash, as the emulator reports it at 24 MHz and at 168 MHz.
FLASH_LOAD = {"kind": "address", "address": "0x08000208", "count": 32, "declassified": False, "region": "flash"}
TIMED_FLASH_LOAD = {**FLASH_LOAD, "timed": True}
FAST = CheckedClock("fast", 168_000_000, 5)


def test_a_flash_address_is_a_leak_where_the_emulator_timed_it_and_a_note_where_it_did_not():
    """Behind flash wait states the ART's data cache makes a load wait unless its line is held: the
    emulator marks such a load `timed`, a leak unless declared public. At 0 wait states (no mark) a
    flash address costs the same as any other, a note; an SRAM address is a note at any clock."""
    untimed, timed = (RawFinding.from_json(line) for line in (FLASH_LOAD, TIMED_FLASH_LOAD))
    assert (untimed.timed, timed.timed) == (False, True)
    note, leak = (Finding("address", raw.address, raw.count, raw.declassified, raw.region, "lookup", "control.c", 219,
                          timed=raw.timed) for raw in (untimed, timed))
    assert not note.leak and leak.leak
    assert not replace(leak, declassified=True).leak
    assert not Finding("address", 0x08000208, 32, False, "sram", "lookup", "control.c", 219).leak


def test_a_timed_finding_is_written_with_its_mark_and_an_untimed_one_as_before():
    """taint.json at 0 wait states stays as it was (no `timed` key); a timed finding keeps its mark
    through the file."""
    note = Finding("address", 0x08000208, 32, False, "flash", "lookup", "control.c", 219)
    leak = replace(note, timed=True)
    assert "timed" not in note.to_json() and not note.to_json()["leak"]
    assert leak.to_json()["timed"] and leak.to_json()["leak"]
    assert [Finding.from_json(finding.to_json()) for finding in (note, leak)] == [note, leak]


def test_the_signatures_keep_a_timed_and_an_untimed_flash_finding_of_one_instruction_apart():
    """An instruction whose loads were timed in one signature and not in another (the firmware
    changed its flash wait states in between) is two findings: the leak is not diluted into the note."""
    lines = [CheckedSignature(index, (RawFinding.from_json(line),), 100, ())
             for index, line in enumerate((FLASH_LOAD, TIMED_FLASH_LOAD, TIMED_FLASH_LOAD))]
    untimed, timed = merged_findings(lines)
    assert (untimed.timed, untimed.count) == (False, 32) and (timed.timed, timed.count) == (True, 64)


def test_the_check_says_its_clock_and_an_older_one_ran_at_the_benchmark_clock():
    document = TaintDocument("control-flash-table", "leaky", "virtual", 2, 1000, "leak",
                             (replace(Finding.from_json({**TIMED_FLASH_LOAD, "function": "lookup", "file": "control.c",
                                                         "line": 219}), count=64),), clock=FAST)
    assert TaintDocument.from_json(document.to_json()) == document
    assert document.to_json()["clock"] == {"name": "fast", "hz": 168_000_000, "flash_wait_states": 5}
    assert document.checked_at.describe() == "168 MHz, 5 wait states behind the ART"
    older = {key: value for key, value in document.to_json().items() if key != "clock"}
    assert TaintDocument.from_json(older).checked_at == BENCHMARK_CLOCK
    assert BENCHMARK_CLOCK.describe() == "24 MHz, 0 wait states"


def test_the_view_gives_a_timed_flash_leak_its_reason():
    finding = Finding("address", 0x08000208, 32, False, "flash", "lookup", "control.c", 219)
    assert taint_what(finding) == "note"
    assert "the ART's data cache" in taint_what(replace(finding, timed=True))


class _Signing:
    """A device session whose signature `tolerant` also had its corrupted copy accepted, and whose
    signature `failing` failed; each signature takes `seconds[index]` (default none)."""

    def __init__(self, tolerant: int, failing: int | None = None, seconds: dict | None = None):
        self.tolerant, self.failing, self.seconds = tolerant, failing, seconds or {}
        self.cancelled = False

    def keygen_slot(self, slot, seed, key_id):
        return SimpleNamespace(status=Status.OK, cycles=1)

    def sign_slot(self, slot, seed, msg_len, index, message_seed):
        time.sleep(self.seconds.get(index, 0))
        status = (Status.OP_FAILED if index == self.failing else
                  Status.CORRUPT_ACCEPTED if index == self.tolerant else Status.OK)
        return SimpleNamespace(status=status, cycles=1000 + index)


def _no_finding_to_confirm(lines, cycles, end):
    return 0  # the -n signatures only


def _signatures(session, capture=None, kept=(), shard=SimpleNamespace(index=0, count=1),
                variants_end=_no_finding_to_confirm) -> list:
    capture = capture or TaintCapture(2, b"seed", 32)
    capture.variants_end = variants_end
    return list(capture.records(session, make_info(serial="VIRTUAL"), list(kept), shard))


def _confirmed_by(last: int):
    """A check's variants end (`variants_end`) once variant `last` has signed: before, each one
    signed leaves a finding unconfirmed, as does each missing."""
    def variants_end(lines, cycles, end):
        for made in range(end - 2 + 1):
            if made > 0 and 2 + made - 1 == last and last in cycles:
                return made
        return None
    return variants_end


@pytest.mark.parametrize("last", [2, 3, 6])
def test_shards_sign_the_variants_side_by_side_and_the_check_keeps_those_one_would(last):
    """Two shards sign one -n signature each, then take the next variant in turn, the first signing
    while the second's may still decide the end (each of the second's signatures slow): the
    signatures one shard would sign are all among theirs, and one more at most, taken before the
    end was known."""
    alone = [s.index for s in _signatures(_Signing(tolerant=-1), variants_end=_confirmed_by(last))]
    assert alone == list(range(last + 1))
    two = TaintCapture(2, b"seed", 32)
    session = _Signing(tolerant=-1, seconds={index: 0.05 * (index % 2) for index in range(40)})
    signed: list[list[int]] = [[], []]

    def shard(number):
        signed[number] = [s.index for s in _signatures(session, two, shard=SimpleNamespace(index=number, count=2),
                                                       variants_end=_confirmed_by(last))]

    threads = [threading.Thread(target=shard, args=(number,)) for number in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert signed[0][0] == 0 and signed[1][0] == 1
    both = sorted(signed[0] + signed[1])
    assert both[:len(alone)] == alone and len(both) <= len(alone) + 1, signed
    end = two.variants_end({}, {s: 0 for s in both}, max(both) + 1)
    assert [index for index in both if index < 2 + end] == alone


@pytest.mark.parametrize("above, signed", [(None, [0, 1]), (999, [0]), (1000, [0, 1])])
def test_beside_a_test_the_check_stops_at_a_first_signature_that_took_long(above, signed):
    """`one_signature_above` (pqscope ct's, for the hash-based s sets' 7 G-cycle signatures): the
    first signature alone where its signing took more cycles; kept in meta.json, so that a resumed
    check stops where an uninterrupted one does, its first signature kept."""
    from pqscope.results.runmeta import RunMeta

    capture = TaintCapture(2, b"seed", 32, one_signature_above=above)
    assert [s.index for s in _signatures(_Signing(tolerant=-1), capture)] == signed  # signature 0: 1000 cycles
    meta = RunMeta(kind="taint", samples=2, master_seed=b"seed".hex(), msg_len=32, **capture.parameters())
    resumed = TaintCapture.from_meta(RunMeta.from_json(meta.to_json(), ()))
    assert resumed.one_signature_above == above
    (first,) = _signatures(_Signing(tolerant=-1), capture, kept=[])[:1]
    assert [s.index for s in _signatures(_Signing(tolerant=-1), resumed, kept=[first])] == signed[1:]


def test_a_signature_whose_corrupted_copy_was_accepted_is_checked_as_signed():
    """Falcon round 3 accepts a corrupted copy now and then (its padding bits): the signature's path
    is still the one to check, and taint.csv keeps its status."""
    signatures = _signatures(_Signing(tolerant=1))
    assert [(s.index, s.status) for s in signatures] == [(0, Status.OK), (1, Status.CORRUPT_ACCEPTED)]
    with pytest.raises(PqscopeError, match="signature 1 failed on the device [(]op_failed[)]"):
        _signatures(_Signing(tolerant=0, failing=1))
