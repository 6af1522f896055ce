"""Constant-time verdicts on the virtual board (issue #6's acceptance), through `pqscope ct`.

The default suite checks the detector both ways in minutes: the leaky controls, native-double
Falcon and its soft-float multiplication (falcon-fp-mul) must be flagged, the constant-time twins,
ML-DSA and Falcon's assembly multiplication must not; native-double Falcon again with on-device
probes instead of the profiler (what a real board can show). The long runs (Falcon's emulated
modes at N and 10 N, the twins at 10^5, ML-DSA through probes) are marked slow: the slow tier."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pqscope.analysis.ct_beside import BEFORE_THE_CHECK
from pqscope.targets.vboard import virtual_board_serial

from gate_status import gate_document

ROOT = Path(__file__).resolve().parents[2]
# No-leak needs 1000 signatures per class: the classes are balanced (pairs), so 2000 is enough.
NO_LEAK_N = 2000
slow = pytest.mark.slow  # the slow tier only (tests/support/pytest_session.py)


def ct(scheme: str, impl: str, n: int, tmp_path: Path, *options: str, jobs: int = 1, exact: bool = False) -> dict:
    """One shard unless asked: ctest already runs a test per core. The statistics alone unless
    `exact`: the exact check beside them has tests of its own (test_taint_virtual.py). No report:
    its views have tests of their own (tests/python)."""
    result = subprocess.run(
        [sys.executable, "-m", "pqscope", "ct", "--scheme", scheme, "--impl", impl, "-n", str(n),
         "--seed", "c7", "--out", str(tmp_path / f"{scheme}-{impl}-{n}"), "--json", "-j", str(jobs),
         "--taint" if exact else "--no-taint", "--no-report", *options],
        capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=7200)
    return gate_document(result)


@pytest.mark.parametrize("pattern", ["early-exit", "branch", "udiv"])
def test_leaky_controls_leak_within_1000_samples(pattern, tmp_path):
    document = ct(f"control-{pattern}", "leaky", 1000, tmp_path)
    assert document["verdict"] == "leak", document["reason"]


# Per-signature secrets: a nonce whose bit length sets the time, hashed from the key and the
# message or drawn from randombytes while signing, and a division of a value derived from a drawn
# nonce. Fresh in both key classes alike.
NONCES = ["derived-nonce", "random-nonce", "nonce-division"]


# The nonce twins' exact check is test_taint_virtual's; the statistics cannot see a nonce either
# way, so their test at the default size would repeat the other twins': at 10^5 they run too. One
# twin's statistics at 2,000 in the default suite, the others' in the slow tier.
@pytest.mark.parametrize("pattern, n", [
    ("udiv", NO_LEAK_N), *(pytest.param(pattern, NO_LEAK_N, marks=slow) for pattern in ("early-exit", "branch")),
    *(pytest.param(pattern, 100_000, marks=slow) for pattern in ("early-exit", "branch", "udiv", *NONCES))])
def test_constant_time_twins_do_not_leak(pattern, n, tmp_path):
    document = ct(f"control-{pattern}", "ct", n, tmp_path, exact=pattern in NONCES)
    assert document["verdict"] == "no-leak", document["reason"]
    assert pattern not in NONCES or document["taint"]["verdict"] == "no-leak"


@pytest.mark.parametrize("pattern", NONCES)
def test_a_per_signature_nonce_is_a_leak_only_the_exact_check_sees(pattern, tmp_path):
    """The exact check follows the key or the signing randomness into the nonce, and the headline
    is a leak that names the branch or the division, with the scope that covers it. The nonce is
    uniform in both key classes, so the statistics clear it: shown once, for the derived nonce,
    with all -n taken (by default they stop at 20 signatures once the exact check found a leak)."""
    fixed = pattern == "derived-nonce"
    document = ct(f"control-{pattern}", "leaky", NO_LEAK_N, tmp_path, *(["--fixed-n"] if fixed else []), exact=True)
    assert document["verdict"] == "leak", document["reason"]
    assert document["statistics"]["verdict"] == ("no-leak" if fixed else "inconclusive")
    decided = [item for item in document["evidence"] if item["by"] == "exact check"]
    assert decided and {item["kind"] for item in decided} == {"division" if pattern == "nonce-division" else "branch"}
    assert all(item["function"].startswith("key_dependent_value") for item in decided), decided
    assert "signing randomness" in document["scope"]


def test_once_the_exact_check_found_a_leak_the_statistics_stop_at_20_signatures(tmp_path):
    """The exact check runs first; its leak decides the verdict, so the default test takes only the
    20 signatures that give the cycles and the per-class picture."""
    document = ct("control-early-exit", "leaky", NO_LEAK_N, tmp_path, exact=True)
    assert document["verdict"] == "leak" and document["n"]["fixed"] + document["n"]["random"] == 20
    assert document["sequential"]["stopped"].startswith("leak: the exact check found")
    assert [item["by"] for item in document["evidence"]][-1] == "exact check"


def test_once_the_exact_check_is_clean_a_control_twin_whose_classes_differ_by_nothing_decides_at_20(tmp_path):
    """Its first look, counted among the looks, is at 20 signatures beside a clean exact check:
    classes of one constant time show no leak larger than 0.1 % of the mean there, and the key
    pool was made for those 20 signatures only (10 random keys and the fixed one)."""
    document = ct("control-udiv", "ct", NO_LEAK_N, tmp_path, "--no-other-clocks", exact=True)
    assert document["verdict"] == "no-leak" and document["n"]["fixed"] + document["n"]["random"] == 20
    assert document["sequential"] == {"looks": [20, 100, 200, 400, 800, 1600, 2000], "stopped": (
        "no-leak: the exact check found nothing, and no leak larger than 0.10% of the mean time shows at 20 signatures")}
    meta = json.loads((tmp_path / f"control-udiv-ct-{NO_LEAK_N}" / "meta.json").read_text())
    assert sorted(key["key_id"] for key in meta["keys"]) == list(range(11))


def _status(path: Path) -> str | None:
    """A measurement's status in its meta.json (None: not written yet, or being replaced)."""
    try:
        return json.loads((path / "meta.json").read_text())["status"]
    except (OSError, ValueError, KeyError):
        return None


def _check_signing(path: Path) -> bool:
    """Whether the exact check in `path` runs and has not yet taken all its signatures (taint.csv)."""
    try:
        meta = json.loads((path / "meta.json").read_text())
        signed = len((path / "taint.csv").read_text().splitlines()) - 1
    except (OSError, ValueError):
        return False
    return meta.get("status") == "running" and signed < meta["samples"]


def _run_apart(document: dict) -> dict:
    """A ct document but for where its run was kept and its boards were reached (a pty's name)."""
    return {**document, "run_dir": None, "boards": [{**board, "port": None} for board in document.get("boards") or []]}


def test_the_exact_check_beside_the_statistics_resumes_with_them_to_the_uninterrupted_document(tmp_path):
    """A row whose declassifications are all decisions has no code the check could set apart as
    public: its check runs beside the statistics, which sign meanwhile (ct.csv has the signatures
    they take before waiting for it while it still signs). Interrupted (SIGINT) then, both end
    interrupted, the check in its signing, and resume together to the uninterrupted test's document."""
    args = ["--scheme", "slh-dsa-sha2-128f", "--impl", "slhdsa-c", "--seed", "c7", "--taint", "--no-report"]
    environment = {**os.environ, "PQSCOPE_ROOT": str(ROOT)}
    command = [sys.executable, "-m", "pqscope", "ct"]
    whole = gate_document(subprocess.run([*command, *args, "--out", str(tmp_path / "whole"), "--json"],
                                         capture_output=True, text=True, env=environment, timeout=1800))
    killed = tmp_path / "killed"
    process = subprocess.Popen([*command, *args, "--out", str(killed)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=environment)
    deadline = time.monotonic() + 600  # bounds only a failure
    beside = False
    while process.poll() is None and time.monotonic() < deadline and _status(killed / "taint") != "complete":
        # The statistics wait for the check from their BEFORE_THE_CHECK-th signature on.
        signed = (killed / "ct.csv").is_file() and len((killed / "ct.csv").read_text().splitlines()) > BEFORE_THE_CHECK
        if signed and _check_signing(killed / "taint"):
            beside = True
            break
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    process.wait(timeout=300)
    assert beside, "the statistics took no signature while the exact check ran"
    assert (_status(killed), _status(killed / "taint")) == ("interrupted", "interrupted")
    check = json.loads((killed / "taint" / "meta.json").read_text())
    assert check["samples_completed"] < check["samples"]  # halted while it signed, not after
    resumed = gate_document(subprocess.run([*command, "--resume", str(killed), "--json"], capture_output=True,
                                           text=True, env=environment, timeout=1800))
    assert _run_apart(resumed) == _run_apart(whole)
    assert _status(killed / "taint") == "complete"


# At 168 MHz in the slow tier only (minutes: the flash model is slow to emulate); the
# replay's stand-in board (test_replay_virtual.py) convicts the same leak at 168 MHz.
@pytest.mark.parametrize("clock, hz, wait_states, impl, verdict",
                         [("benchmark", 24_000_000, 0, "leaky", "no-leak"),
                          pytest.param("fast", 168_000_000, 5, "leaky", "leak", marks=slow),
                          pytest.param("fast", 168_000_000, 5, "ct", "no-leak", marks=slow)])
def test_control_flash_table_leaks_only_behind_the_flash_accelerator(clock, hz, wait_states, impl, verdict, tmp_path):
    """A key-indexed table in flash costs the same for every key at 0 wait states; at 168 MHz a
    read waits 5 cycles unless the ART's 8-line data cache holds its line, so the time follows the
    key. The twin's lookups in an SRAM copy cost the same at both clocks: at 24 MHz its test would
    only repeat the leaky one's (its exact check there: test_taint_virtual.py)."""
    document = ct("control-flash-table", impl, NO_LEAK_N, tmp_path, "--clock", clock)
    assert document["clock"] == {"name": clock, "hz": hz, "flash_wait_states": wait_states}
    assert document["verdict"] == verdict, document["reason"]
    if verdict == "leak":
        assert document["top_functions"][0]["function"].startswith("key_dependent_value"), document["top_functions"][0]


@slow  # the soft-float leak by the statistics: falcon-fp-mul's below; Falcon-512's exact check: main-job
def test_native_double_falcon_leaks_through_soft_float(tmp_path):
    document = ct("falcon-512", "fpnative", 200, tmp_path)
    assert document["verdict"] == "leak", document["reason"]
    leaking = [f["function"] for f in document["top_functions"] if f["depends_on_class"]]
    assert any(name.startswith("__") for name in leaking), leaking  # libgcc/libm soft-float


@slow  # the profiler's localisation in soft-float: test_native_double_falcon_leaks_through_soft_float's point
def test_native_double_multiplication_leaks_its_operands(tmp_path):
    document = ct("falcon-fp-mul", "fpnative", 1000, tmp_path)
    assert document["verdict"] == "leak", document["reason"]
    leaking = [f["function"] for f in document["top_functions"] if f["depends_on_class"]]
    assert "__muldf3" in leaking, leaking  # libgcc's soft-float multiplication (__aeabi_dmul)


def test_emulated_multiplication_in_assembly_does_not_leak_its_operands(tmp_path):
    document = ct("falcon-fp-mul", "fpemu-m4", NO_LEAK_N, tmp_path)
    assert document["verdict"] == "no-leak", document["reason"]


@pytest.mark.parametrize("n", [200, pytest.param(NO_LEAK_N, marks=slow)])
def test_ml_dsa_rejections_and_public_matrix_are_not_a_leak(n, tmp_path):
    """Rejections are public: corrected for, they never convict. At 200 signatures the exact check
    decides no-leak; at 2,000 the statistics alone do."""
    document = ct("ml-dsa-44", "m4f", n, tmp_path, exact=n < NO_LEAK_N)
    assert document["verdict"] == "no-leak", document["reason"]
    assert document["statistics"]["verdict"] in ({"no-leak", "inconclusive"} if n < NO_LEAK_N else {"no-leak"})
    assert document["correction"]["retry_function"] == "pqcrystals_dilithium_poly_challenge"


SHARDED = 60


def test_shards_measure_each_signature_as_one_board_does(tmp_path):
    """-j 1 and -j 2 give the same ct.csv and the same per-function cycles of every signature:
    ML-DSA's signatures (millions of cycles, a varying number of rejections) often straddle the
    board's counter interrupt, which falls at the same point of each whatever ran before."""
    runs = {jobs: tmp_path / f"j{jobs}" for jobs in (1, 2)}
    documents = {}
    for jobs, out in runs.items():
        documents[jobs] = ct("ml-dsa-44", "m4f", SHARDED, out, "--fixed-n", jobs=jobs)
        documents[jobs].pop("run_dir")
    # Two virtual boards agree: each took half the signatures, and neither stands out.
    boards = documents[2].pop("boards")
    assert [(board["signatures"], board["stands_out"]) for board in boards] == [(SHARDED // 2, False)] * 2
    assert documents[1] == documents[2]
    one, two = ((runs[jobs] / f"ml-dsa-44-m4f-{SHARDED}") for jobs in (1, 2))
    rows = {jobs: list(csv.DictReader((path / "ct.csv").open())) for jobs, path in ((1, one), (2, two))}
    # The same rows but for the board that measured each: a virtual board per shard, in turn by pairs.
    assert [{**row, "board": None} for row in rows[1]] == [{**row, "board": None} for row in rows[2]]
    assert all(row["board"] == virtual_board_serial(int(row["index"]) // 2 % 2) for row in rows[2])
    assert sorted((two / "shards").iterdir()) == [two / "shards/0", two / "shards/1"]
    assert _intervals_by_id([one]) == _intervals_by_id(sorted((two / "shards").iterdir()))


def _intervals_by_id(directories: list[Path]) -> dict:
    """Each signature's interval but where it fell in its emulator's run (its number and start)."""
    return {line["sample_id"]: {key: value for key, value in line.items() if key not in ("interval", "start_cycle")}
            for directory in directories
            for line in map(json.loads, (directory / "intervals.jsonl").read_text().splitlines())}


@slow
@pytest.mark.parametrize("impl", ["fpemu-c", "fpemu-m4"])
@pytest.mark.parametrize("n", [NO_LEAK_N, 10 * NO_LEAK_N])
def test_emulated_falcon_does_not_leak(impl, n, tmp_path):
    document = ct("falcon-512", impl, n, tmp_path)
    assert document["verdict"] == "no-leak", document["reason"]


@slow
def test_sphincs_does_not_leak(tmp_path):
    document = ct("sphincs-sha2-128f-simple", "clean", NO_LEAK_N, tmp_path)
    assert document["verdict"] == "no-leak", document["reason"]


# Probes only (the probed image, profiler off): what a real board can show.
def test_native_double_multiplication_leaks_through_a_probe_as_a_board_would_see_it(tmp_path):
    document = ct("falcon-fp-mul", "fpnative", 1000, tmp_path, "--probe", "__aeabi_dmul")
    assert document["verdict"] == "leak", document["reason"]
    assert document["localised_by"].startswith("on-device probes")
    leaking = [f["function"] for f in document["top_functions"] if f["depends_on_class"]]
    assert "__aeabi_dmul" in leaking, document["top_functions"]


@slow  # Falcon-512's probes: minutes (each probed call stops the emulator twice)
def test_native_double_falcon_leaks_through_a_probe_as_a_board_would_see_it(tmp_path):
    document = ct("falcon-512", "fpnative", 400, tmp_path, "--probes")
    assert document["verdict"] == "leak", document["reason"]
    assert document["localised_by"].startswith("on-device probes")
    leaking = [f["function"] for f in document["top_functions"] if f["depends_on_class"]]
    assert leaking, document["top_functions"]
    assert document["probe_inflation"]["share_of_total"] > 0


@slow  # the probes' attempt correction, as the profiler's in test_ml_dsa_rejections_...: 2000 signatures more
def test_ml_dsa_is_not_a_leak_through_probes_either(tmp_path):
    document = ct("ml-dsa-44", "m4f", NO_LEAK_N, tmp_path, "--probes")
    assert document["verdict"] == "no-leak", document["reason"]
    assert document["localised_by"].startswith("on-device probes")
    assert document["correction"]["retry_function"] == "pqcrystals_dilithium_poly_challenge"


@slow
def test_emulated_falcon_in_assembly_is_not_a_leak_through_probes(tmp_path):
    document = ct("falcon-512", "fpemu-m4", NO_LEAK_N, tmp_path, "--probes")
    assert document["verdict"] == "no-leak", document["reason"]
