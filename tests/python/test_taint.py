"""pqscope taint's host side: the catalogue's declassifications become the emulator's options and
decide which findings are declassified, and why."""

import subprocess
from dataclasses import replace

import pytest

from pqscope.catalogue import Declassification
from pqscope.errors import PqscopeError
from pqscope.taint import Finding, attribute, check_decisions, emulator_options

SAMPLER = Declassification("decision", "sampler", "sampler", "acceptance is public", ("sign.c:1343",))
NORM = Declassification("decision", "chknorm", "rejection", "rejection is public")
SEED = Declassification("secret_bytes", "0:32", "rho", "rho is in the public key")
SIGNATURE = Declassification("argument", "encode:2:1024", "signature", "the signature is published")


def finding(kind="branch", function="sampler", line=1343, declassified=False):
    return Finding(kind, 0x08000100, 3, declassified, None, function, f"build/x/sources/{function}/sign.c", line)


def test_value_declassifications_become_emulator_options_and_decisions_do_not():
    assert emulator_options((SAMPLER, SEED, SIGNATURE)) == (
        "--taint-public-secret-bytes", "0:32", "--taint-public-argument", "encode:2:1024")


def test_a_decision_declassifies_branches_at_its_lines_only():
    at_line, elsewhere, a_division = attribute(
        [finding(), finding(line=602), finding(kind="division")], (SAMPLER,))
    assert (at_line.declassified, at_line.declassified_by, at_line.leak) == (True, ("sampler",), False)
    assert (elsewhere.declassified, elsewhere.leak) == (False, True)
    assert (a_division.declassified, a_division.leak) == (False, True)


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
        check_decisions((NORM, SAMPLER), elf)


def test_a_within_limited_to_call_sites_passes_their_code_and_refuses_a_line_without_it(tmp_path):
    """The emulator gets the code of each named source line (from the image's DWARF lines), so
    only the calls made there count; a line with no code would limit nothing."""
    source = tmp_path / "image.c"
    source.write_text("int twice(int x) { return 2 * x; }\n"
                      "int main(int argc, char **argv) {\n"
                      "  return twice(argc)\n"
                      "         + (argv != 0);\n"
                      "}\n")
    elf = tmp_path / "image"
    subprocess.run(["cc", "-g", "-O0", "-o", str(elf), str(source)], check=True)
    at_line_3 = Declassification("within", "twice", "masked", "masked", ("image.c:3",))
    option, argument = emulator_options((at_line_3,), elf)
    name, _, sites = argument.partition("@")
    ranges = [tuple(int(bound, 16) for bound in site.split("-")) for site in sites.split(",")]
    assert (option, name) == ("--taint-public-within", "twice") and all(lo < hi for lo, hi in ranges)
    with pytest.raises(PqscopeError, match="image.c:99, which has no code"):
        emulator_options((replace(at_line_3, lines=("image.c:99",)),), elf)
