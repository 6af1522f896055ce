"""`pqscope taint` on the virtual board (issue #17): the exact check finds each leaky control's
secret-dependent instruction at its source line, and nothing in its constant-time twin; the
constant-time schemes' only findings are what their catalogue rows declare public (ML-DSA's
rejections, Falcon's sampler and restarts, the signature) or notes, while native-double Falcon
leaks in libgcc's soft-float routines."""

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from pqscope.results import store
from pqscope.results.records import KEYGEN_ID_BASE, derive_seed

from conftest import ROOT
from gate_status import gate_document

CONTROL = "firmware/schemes/controls/control.c"
# Each leaky control's finding: its kind and what its source line holds.
LEAKS = {"early-exit": ("branch", "if (sk[i] > KEY_LIMIT)"), "branch": ("branch", "(sk[0] & 1) ?"),
         "udiv": ("division", "n / d"), "derived-nonce": ("branch", "rest != 0; rest >>= 1"),
         "random-nonce": ("branch", "rest != 0; rest >>= 1"), "nonce-division": ("division", "n / d")}
# Leaks that are a loop on the secret: it goes round, then leaves.
LOOPS = ("early-exit", "derived-nonce", "random-nonce")


def taint(scheme: str, impl: str, tmp_path) -> dict:
    result = subprocess.run([sys.executable, "-m", "pqscope", "taint", "--scheme", scheme, "--impl", impl, "--seed", "7",
                             "--out", str(tmp_path / "taint"), "--json"],
                            capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=600)
    return gate_document(result)


@pytest.mark.parametrize("pattern", LEAKS)
def test_a_leaky_control_is_found_at_its_line(pattern, tmp_path):
    document = taint(f"control-{pattern}", "leaky", tmp_path)
    kind, code = LEAKS[pattern]
    lines = (ROOT / CONTROL).read_text().splitlines()
    leaks = [finding for finding in document["findings"] if finding["leak"]]
    assert document["verdict"] == "leak" and document["signatures"] == 2
    at_the_leak = [finding for finding in leaks if finding["kind"] == kind and finding["file"] == CONTROL
                   and code in lines[finding["line"] - 1]]
    assert at_the_leak and all(finding["function"].startswith("key_dependent_value") for finding in at_the_leak), leaks
    if pattern in LOOPS:  # the loop's own branch goes both ways: the emulator reads each direction
        assert any(0 < finding["taken"] < finding["count"] for finding in at_the_leak), at_the_leak


def test_the_check_times_a_signature_as_the_board_without_it(image_session, tmp_path):
    """The check's emulator follows each instruction, the secret division's too, and times it as the
    board does without the check: a division its code hook covers is timed by it, and only by it
    (the division's own hook is off meanwhile). Its first signature, on a board fresh from its key
    generation, is signed again on a board without the check."""
    taint("control-udiv", "leaky", tmp_path)
    meta = json.loads((tmp_path / "taint/meta.json").read_text())
    master = bytes.fromhex(meta["master_seed"])
    with open(tmp_path / "taint/taint.csv", newline="") as rows:
        first = next(row for row in csv.DictReader(rows) if row["index"] == "0")
    session = image_session("control-udiv", "leaky")
    session.hello()
    session.keygen_slot(0, derive_seed(master, "key", 0), KEYGEN_ID_BASE)
    signed = session.sign_slot(0, bytes.fromhex(first["seed"]), meta["msg_len"], 0, derive_seed(master, "message", 0))
    assert signed.cycles == int(first["cycles"])


@pytest.mark.parametrize("pattern", LEAKS)
def test_a_constant_time_twin_has_no_finding(pattern, tmp_path):
    document = taint(f"control-{pattern}", "ct", tmp_path)
    assert (document["verdict"], document["findings"]) == ("no-leak", [])
    assert document["instructions"] > 0


# Each constant-time scheme and declassifications its signatures must exercise (so that a clean
# result is not an empty one): with the signing randomness secret, Falcon's salt and SPHINCS+'s
# randomised message hash are published values the checks must meet.
FALCON = ("falcon-sampler", "falcon-salt")
CONSTANT_TIME = {("falcon-512", "fpemu-c"): FALCON, ("falcon-512", "fpemu-m4"): FALCON,
                 ("ml-dsa-44", "m4f"): ("ml-dsa-rejection",), ("ml-dsa-44", "clean"): ("ml-dsa-rejection",),
                 ("fndsa_provisional-512", "m4f"): FALCON,
                 ("sphincs-sha2-128f-simple", "clean"): ("sphincs-index", "sphincs-chain")}


# Falcon-512's emulations and SPHINCS+ in the slow tier only (a minute each): FN-DSA-512
# declassifies the same sampler and salt, and ctest main-job.virtual checks fpemu-m4's exact check.
@pytest.mark.parametrize("scheme,impl", [
    pytest.param(*row, marks=pytest.mark.slow if row[0] in ("falcon-512", "sphincs-sha2-128f-simple") else ())
    for row in CONSTANT_TIME])
def test_a_constant_time_scheme_has_only_declassified_findings(scheme, impl, tmp_path):
    document = taint(scheme, impl, tmp_path)
    assert document["verdict"] == "no-leak" and document["instructions"] > 0
    undeclassified = [f for f in document["findings"] if not f["declassified"]]
    assert all(f["kind"] in ("address", "select") for f in undeclassified), undeclassified
    reasons = {reason for f in document["findings"] for reason in f["declassified_by"]}
    assert set(CONSTANT_TIME[scheme, impl]) <= reasons, reasons
    first, *later = document["coverage"]["new_instructions"]
    assert len(later) == 1 and first > 0 and document["coverage"]["instructions"] == first + sum(later)


@pytest.mark.slow  # ctest main-job.virtual checks the same exact check's leaks in libgcc's routines, at both clocks
def test_native_double_falcon_leaks_in_the_soft_float_routines(tmp_path):
    """The leaks are confirmed by pairs of keys (issue #54); __divdf3's tainted branches (its special
    cases) never went another way for the keys tried: unchanged, found but not a leak."""
    document = taint("falcon-512", "fpnative", tmp_path)
    leaks = {f["function"] for f in document["findings"] if f["leak"]}
    found = {f["function"] for f in document["findings"] if f["leak"] or f.get("relational")}
    assert document["verdict"] == "leak"
    assert {"__aeabi_dadd", "__muldf3"} <= leaks and "__divdf3" in found, leaks
    assert all(function.startswith("__") for function in found), found  # libgcc's and libm's only


def test_ct_shows_the_exact_check_beside_its_localisation(tmp_path):
    """The statistics localise control-branch's leak in the hashing its secret branch calls; the
    exact check names the branch itself: the report and ct.json carry both."""
    out = tmp_path / "ct"
    result = subprocess.run([sys.executable, "-m", "pqscope", "ct", "--scheme", "control-branch", "--impl", "leaky",
                             "--seed", "c7", "--taint", "--out", str(out)],
                            capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=600)
    assert result.returncode == 4, result.stderr  # a leak
    document = store.read(out / "ct.json")
    assert document["verdict"] == "leak" and document["taint"]["verdict"] == "leak"
    inside = document["taint"]["in_top_functions"]
    leaking = {function for function, found in inside.items() if found["leaks"]}
    assert leaking == {"key_dependent_value"}, inside
    assert document["top_functions"][0]["function"] != "key_dependent_value"  # where the time goes
    assert "exact check (2 signatures): leak" in result.stdout
    report = (out / "report.html").read_text()
    assert "The exact check beside it" in report and "control.c:" in report
    assert (out / "taint" / "taint.json").is_file()


@pytest.mark.parametrize("impl,region", [("leaky", "flash"), ("ct", "sram")])
def test_a_secret_table_lookup_is_a_note_at_24_mhz_and_names_its_memory(impl, region, tmp_path):
    """control-flash-table looks its table up by key bytes in flash (leaky) or in an SRAM copy
    (ct): at 24 MHz with 0 wait states both cost the same every time, so the exact check notes the
    secret address, with the memory it hit, and finds no leak."""
    document = taint("control-flash-table", impl, tmp_path)
    lines = (ROOT / CONTROL).read_text().splitlines()
    assert document["verdict"] == "no-leak"
    lookups = [f for f in document["findings"] if f["kind"] == "address" and f["file"] == CONTROL
               and "table[sk[i]]" in lines[f["line"] - 1]]
    assert lookups and {f["region"] for f in lookups} == {region}, document["findings"]
    assert not any(f["leak"] for f in document["findings"])


def taint_command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pqscope", "taint", *args], capture_output=True, text=True,
                          env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=600)


def test_report_renders_a_taint_run_as_the_command_wrote_it(tmp_path):
    out = tmp_path / "taint"
    # A leak: exit status 4.
    assert taint_command("--scheme", "control-udiv", "--impl", "leaky", "--seed", "7", "--out", str(out)).returncode == 4
    for fmt, written in (("md", "report.md"), ("html", "report.html"), ("json", "taint.json")):
        result = subprocess.run([sys.executable, "-m", "pqscope", "report", str(out), "--format", fmt],
                                capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})
        assert result.returncode == 0, result.stderr
        assert result.stdout == (out / written).read_text()


SIGNATURES = 6


def killed_copy(whole, out, kept: int, lines: int, cut: bool) -> None:
    """The uninterrupted check `whole` as a kill leaves it: `kept` signatures in taint.csv, `lines`
    of the emulator's per-signature lines (one more when it was killed between the emulator's line
    and the host's row), and with `cut`, each file ending in half a line."""
    shutil.copytree(whole, out)
    rows = (whole / "taint.csv").read_text().splitlines(keepends=True)
    calls = (whole / "taint-calls.jsonl").read_text().splitlines(keepends=True)
    half = lambda text: text[:len(text) // 2] if cut else ""  # noqa: E731
    (out / "taint.csv").write_text("".join(rows[:1 + kept]) + half(rows[1 + kept] if kept + 1 < len(rows) else ""))
    (out / "taint-calls.jsonl").write_text("".join(calls[:lines]) + half(calls[lines] if lines < len(calls) else ""))
    meta = json.loads((out / "meta.json").read_text())
    meta.update(status="running", samples_completed=0)
    meta.pop("result")
    (out / "meta.json").write_text(json.dumps(meta))
    for name in ("taint.json", "report.md", "report.html"):
        (out / name).unlink()


def test_a_killed_taint_run_resumes_to_the_uninterrupted_one(tmp_path):
    """Killed for real after some signatures, and as a kill leaves the files at other points (before
    any, between the emulator's line and the host's row, in the middle of a line): --resume checks
    the rest, and the findings, counts and coverage are the uninterrupted check's."""
    args = ("--scheme", "control-udiv", "--impl", "leaky", "--seed", "7", "-n", str(SIGNATURES))
    whole = tmp_path / "whole"
    assert taint_command(*args, "--out", str(whole)).returncode == 4  # a leak
    expected = store.read(whole / "taint.json")

    killed = tmp_path / "killed"
    process = subprocess.Popen([sys.executable, "-m", "pqscope", "taint", *args, "--out", str(killed)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "PQSCOPE_ROOT": str(ROOT)})
    deadline = time.monotonic() + 300  # bounds only a failure
    while process.poll() is None and time.monotonic() < deadline:
        csv_path = killed / "taint.csv"
        if csv_path.exists() and len(csv_path.read_text().splitlines()) >= 3:
            break
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    cases = [killed]
    for kept, lines, cut in ((0, 0, False), (0, 1, True), (2, 3, False), (4, 4, True), (SIGNATURES - 1, 6, False)):
        cases.append(tmp_path / f"kept-{kept}-{lines}-{cut}")
        killed_copy(whole, cases[-1], kept, lines, cut)
    for out in cases:
        result = taint_command("--resume", str(out), "--json")
        assert result.returncode == 4, (out, result.stderr)  # the leak, as uninterrupted
        assert json.loads(result.stdout) == expected, out
        meta = json.loads((out / "meta.json").read_text())
        assert (meta["status"], meta["samples_completed"]) == ("complete", SIGNATURES)


def test_ecdsa_leaks_only_outside_its_masked_scalar_multiplication(tmp_path):
    """mbedtls masks the scalar multiplication's coordinates with a fresh random lambda: what its
    field arithmetic decides on is declassified as masked, by the function it ran in, and so is
    the reduction of the published r (one call site of mbedtls_mpi_mod_mpi); the leaks left are
    the computation of s modulo n, outside any ecp_ function."""
    document = taint("ecdsa-p256", "mbedtls", tmp_path)
    assert document["verdict"] == "leak"
    masked = [f for f in document["findings"] if f["within"]]
    assert {f["within"] for f in masked} >= {"ecp_double_jac", "ecp_add_mixed", "ecp_modp", "mbedtls_mpi_mod_mpi"}
    assert {r for f in masked if f["within"] == "mbedtls_mpi_mod_mpi" for r in f["declassified_by"]} == {"ecdsa-r"}
    assert all(not f["leak"] and f["declassified_by"] for f in masked)
    leaks = [f for f in document["findings"] if f["leak"]]
    assert leaks and not [f for f in leaks if (f["function"] or "").startswith("ecp_")], leaks
    assert any(f["function"] == "mbedtls_mpi_div_mpi" for f in leaks)
