"""The constant-time test: capture design (classes, keys, seeds), its analysis corrections, and
`pqscope ct` end to end on a fake real board (no localisation there)."""

import csv
import json
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner

from test_cli import assert_one_line_error
from conftest import without_board
from fakedevice import KEY_SLOTS, Behaviour
from pqscope.cli import cli
from pqscope.analysis.ct_schedule import CtSample, capture_ct, schedule
from pqscope.analysis.ttests import FIXED, RANDOM
from pqscope.analysis.ct_analysis import PUBLIC_TIME, analyse, analyse_ct, join_intervals
from pqscope.project.errors import PqscopeError
from pqscope.link.protocol import Status
from pqscope.results.documents.ct import (ClassCounts, CtStatistics, FunctionLeak, LeakStatistics, Nonparametric,
                                          RankTest)
from pqscope.results.documents.profile import ProfiledInterval
from pqscope.results.documents.taint import Finding, TaintDocument

N = 2400


def synthetic(total, functions_of, n=N, seed=1):
    """Samples in random class order with `total(cls, rng)` cycles and intervals whose functions
    are `functions_of(cls, rng, total)` (name -> [cycles, calls])."""
    rng = np.random.default_rng(seed)
    samples, intervals = [], []
    for index in range(n):
        key_class = int(rng.integers(2))
        cycles = total(key_class, rng)
        samples.append(CtSample(index, key_class, 0, bytes(32), int(cycles), 100, Status.OK))
        intervals.append(ProfiledInterval.from_json({"cycles": int(cycles),
                                                     "functions": functions_of(key_class, rng, int(cycles))}))
    return samples, intervals


def test_public_input_time_is_taken_out_of_the_total():
    # The fixed key's public part (e.g. ML-DSA's matrix from rho) takes 500 cycles longer.
    def functions(key_class, rng, total):
        public = 10_000 + 500 * (key_class == FIXED)
        return {PUBLIC_TIME: [public, 0], "work": [total - public, 1]}

    samples, intervals = synthetic(lambda c, rng: 50_000 + 500 * (c == FIXED) + rng.integers(100), functions)
    assert analyse_ct(samples, intervals, None)["verdict"] == "leak"
    corrected = analyse_ct(samples, intervals, None, ("expand_matrix",))
    assert corrected["verdict"] == "no-leak"
    assert corrected["uncorrected"]["verdict"] == "leak"
    assert corrected["public_time"]["mean_cycles"]["fixed"] - corrected["public_time"]["mean_cycles"]["random"] \
        == pytest.approx(500)
    assert all(f["function"] != PUBLIC_TIME for f in corrected["top_functions"])


def test_intervals_are_joined_to_signatures_by_sample_id():
    samples, intervals = synthetic(lambda c, rng: 50_000 + 900 * (c == FIXED), lambda c, rng, total: {"work": [total, 1]},
                                   n=200)
    with_ids = [replace(line, sample_id=sample.index) for sample, line in zip(samples, intervals)]
    # Order on disk does not matter, and a signature run twice (its answer lost) keeps its last interval.
    shuffled = with_ids[::-1] + [replace(with_ids[7], cycles=-1)]
    joined = join_intervals(samples, shuffled)
    assert [line.sample_id for line in joined] == [sample.index for sample in samples]
    assert joined[7].cycles == -1
    assert analyse_ct(samples, shuffled, None)["top_functions"][0]["function"] == "work"


def test_a_signature_without_its_interval_is_an_error_that_names_it():
    samples, intervals = synthetic(lambda c, rng: 50_000, lambda c, rng, total: {"work": [total, 1]}, n=50)
    with_ids = [replace(line, sample_id=sample.index) for sample, line in zip(samples, intervals)]
    with pytest.raises(PqscopeError, match="the emulator's intervals lack signature 13 and 1 more"):
        join_intervals(samples, with_ids[:13] + with_ids[14:20] + with_ids[21:])
    # Without ids, intervals only join when their number is the signatures' (never shifted).
    with pytest.raises(PqscopeError, match="wrote 49 intervals for 50 signatures, without sample ids"):
        analyse_ct(samples, intervals[1:], None)


def test_an_accepted_corruption_is_counted_but_its_signing_time_counts():
    # A leak carried only by the signatures whose corrupted copy was also accepted (Falcon round
    # 3 accepts flipped padding bits): they are timed; a failed signature is not.
    samples, _ = synthetic(lambda c, rng: 50_000 + rng.integers(100), lambda c, rng, total: {})
    statuses = {FIXED: Status.CORRUPT_ACCEPTED, RANDOM: Status.OK}
    leaky = [CtSample(s.index, s.key_class, s.key_id, s.seed, s.cycles + 5_000 * (s.key_class == FIXED),
                      s.stack_bytes, statuses[s.key_class]) if s.index % 2 else s for s in samples]
    failed = [CtSample(s.index, s.key_class, s.key_id, s.seed, 0, s.stack_bytes, Status.OP_FAILED)
              if s.index % 100 == 0 else s for s in leaky]
    document = analyse_ct(failed, None, None)
    assert document["verdict"] == "leak"
    assert document["failed_samples"] == sum(s.index % 100 == 0 for s in samples)
    assert document["corrupt_accepted"] == sum(s.status == Status.CORRUPT_ACCEPTED for s in failed)
    assert document["n"]["fixed"] + document["n"]["random"] == N - document["failed_samples"]


def test_rejection_attempts_are_public_randomness():
    # Each attempt costs 1000 cycles; the fixed key needs more attempts on average.
    attempts_of = {}

    def total(key_class, rng):
        attempts = 1 + rng.geometric(0.25 if key_class == FIXED else 0.5)
        cycles = 20_000 + 1000 * attempts + rng.integers(50)
        attempts_of[cycles, key_class] = attempts
        return cycles

    def functions(key_class, rng, cycles):
        attempts = attempts_of[cycles, key_class]
        return {"challenge": [100 * attempts, attempts], "loop_body": [cycles - 100 * attempts, 1]}

    samples, intervals = synthetic(total, functions)
    document = analyse_ct(samples, intervals, "challenge")
    assert document["uncorrected"]["verdict"] == "leak"
    assert document["verdict"] == "no-leak", document["reason"]
    assert document["correction"]["cycles_per_attempt"] == pytest.approx(1000, rel=0.01)
    assert document["correction"]["mean_attempts"]["fixed"] > document["correction"]["mean_attempts"]["random"]


def test_a_leak_hidden_in_noisy_totals_is_found_in_its_function():
    # Public noise of +-20,000 cycles (a sampler) hides 30 cycles of key-dependent soft-float.
    def functions(key_class, rng, total):
        soft_float = 3_000 + 30 * (key_class == FIXED) + rng.integers(3)
        return {"soft_float_dmul": [soft_float, 10], "sampler": [total - soft_float, 1]}

    samples, intervals = synthetic(lambda c, rng: 1_000_000 + rng.integers(-20_000, 20_000) + 30 * (c == FIXED),
                                   functions, n=400)
    document = analyse_ct(samples, intervals, None)
    assert document["max_abs_t"] < 4.5
    assert document["verdict"] == "leak"
    assert document["max_abs_t_function"]["function"] == "soft_float_dmul"
    assert document["top_functions"][0]["function"] == "soft_float_dmul"
    # The report plots what decided: the function's cycles, not the totals that hide it.
    result = analyse(samples, intervals, None)
    assert document["plotted"] == result.evidence.label == "soft_float_dmul cycles"
    usable = [s for s in samples if s.status.timed]
    assert list(result.evidence.values) == [line.functions["soft_float_dmul"].cycles
                                            for line in join_intervals(usable, intervals)]


def test_constant_functions_do_not_look_key_dependent_after_the_attempt_correction():
    def total(key_class, rng):
        return 10_000 * (1 + rng.geometric(0.5)) + 7

    def functions(key_class, rng, cycles):
        return {"challenge": [0, (cycles - 7) // 10_000], "constant": [7, 1], "loop": [cycles - 7, 1]}

    samples, intervals = synthetic(total, functions)
    document = analyse_ct(samples, intervals, "challenge")
    constant = next(f for f in document["top_functions"] if f["function"] == "constant")
    assert constant["t"] in (0, 0.0)


def test_a_function_an_interrupt_returned_into_is_compared_without_those_signatures():
    # Falcon-1024 fpemu-m4's poly_LDL_fft: 1,483,732 cycles in every signature but those where the
    # SysTick wrap returned into it, 3 fewer; the random keys' generations moved the wrap there
    # more often. Without the interrupted signatures its time is the same in both classes.
    def functions(key_class, rng, cycles):
        interrupted = key_class == RANDOM and rng.random() < 0.5
        ldl = [1_483_732 - 3 * interrupted, 1023, 1_483_732 - 3 * interrupted] + [1] * interrupted
        return {"poly_LDL_fft": ldl, "sampler": [cycles - ldl[0], 1, cycles - ldl[0]]}

    samples, intervals = synthetic(lambda c, rng: 85_000_000 + rng.integers(-200_000, 200_000), functions, n=40)
    ldl = next(f for f in analyse_ct(samples, intervals, None)["top_functions"] if f["function"] == "poly_LDL_fft")
    assert not ldl["depends_on_class"] and ldl["mean_fixed"] == ldl["mean_random"] == 1_483_732
    counted = [replace(line, functions={**line.functions, "poly_LDL_fft": replace(
        line.functions["poly_LDL_fft"], interrupts=0)}) for line in intervals]
    ldl = next(f for f in analyse_ct(samples, counted, None)["top_functions"] if f["function"] == "poly_LDL_fft")
    assert ldl["depends_on_class"]  # the same times, the interrupts not counted: a second-order "leak"
    every_random = [replace(line, functions={**line.functions, "poly_LDL_fft": replace(
        line.functions["poly_LDL_fft"], interrupts=1)}) if sample.key_class == RANDOM else line
        for sample, line in zip(samples, intervals)]
    ranked = [f["function"] for f in analyse_ct(samples, every_random, None)["top_functions"]]
    assert "poly_LDL_fft" not in ranked and "sampler" in ranked  # none of its random signatures left


class FakeSession:
    """Records the session calls capture_ct makes."""

    def __init__(self):
        self.calls = []

    def keygen_slot(self, slot, seed, sample_id):
        self.calls.append(("keygen", slot, seed, sample_id))
        return type("S", (), {"status": Status.OK, "cycles": 1})()

    def sign_slot(self, slot, seed, msg_len, sample_id):
        self.calls.append(("sign", slot, seed, sample_id))
        return type("S", (), {"status": Status.OK, "cycles": 5, "stack_bytes": 0, "probes": ()})()


def test_capture_interleaves_classes_with_fresh_seeds_and_refreshes_random_keys():
    from fakedevice import make_info

    session = FakeSession()
    samples = list(capture_ct(session, make_info(), samples=200, master_seed=b"m", msg_len=32, key_refresh=5))
    keygens = [c for c in session.calls if c[0] == "keygen"]
    signs = [c for c in session.calls if c[0] == "sign"]
    assert [k[1] for k in keygens[:KEY_SLOTS]] == list(range(KEY_SLOTS))  # the pool first
    assert all(k[1] != 0 for k in keygens[KEY_SLOTS:])  # the fixed key is never replaced
    assert len({s[2] for s in signs}) == 200  # every signature has its own seed
    classes = [s.key_class for s in samples]
    assert 70 < sum(classes) < 130 and classes != sorted(classes)  # random interleaving
    assert all((sample.key_class == FIXED) == (sign[1] == 0) for sample, sign in zip(samples, signs))
    random_key_ids = {s.key_id for s in samples if s.key_class == RANDOM}
    assert len(random_key_ids) > KEY_SLOTS  # refreshed: more random keys than slots
    # Replayable: the same master seed gives the same plan.
    again = FakeSession()
    list(capture_ct(again, make_info(), samples=200, master_seed=b"m", msg_len=32, key_refresh=5))
    assert again.calls == session.calls


# A sequential test stops at its first look with a definite verdict (100 signatures for this
# leak); an inconclusive one, and one with --fixed-n, takes all of -n. The exit status is the
# verdict's: 4 a leak, 5 inconclusive (a CI job fails on either).
@pytest.mark.parametrize(("key_leak", "options", "verdict", "signatures", "status"), [
    (400, [], "leak", 100, 4), (400, ["--fixed-n"], "leak", 300, 4), (0, [], "inconclusive", 300, 5)])
def test_ct_on_a_real_board_over_serial(fake_repo, fake_toolchain, pty_device, tmp_path, key_leak, options, verdict,
                                        signatures, status):
    _device, port = pty_device(behaviour=Behaviour(key_leak=key_leak))
    out = tmp_path / "ct"
    result = CliRunner().invoke(cli, ["ct", "--board", "stm32f4discovery", "--port", port, "--no-flash",
                                      "--no-replay", "--scheme", "ml-dsa-44", "--impl", "m4f", "-n", "300", "--seed",
                                      "07", *options, "--out", str(out), "--json"])
    assert result.exit_code == status, result.stderr
    document = json.loads(result.stdout)
    assert document["verdict"] == verdict
    assert "top_functions" not in document  # no profiler on a real board
    rows = list(csv.DictReader((out / "ct.csv").open()))
    assert len(rows) == signatures and {r["key_class"] for r in rows} == {"0", "1"}
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["samples_completed"] == signatures
    assert (meta.get("stopped_early") or "").startswith("leak at 100 signatures" if signatures < 300 else "")
    assert document["sequential"]["looks"] == ([300] if options else [100, 200, 300])
    assert len(meta["keys"]) == KEY_SLOTS and meta["result"]["verdict"] == verdict
    assert "<img" in (out / "report.html").read_text()


def test_ct_without_a_report_keeps_what_renders_it_later(fake_repo, fake_toolchain, pty_device, tmp_path):
    _device, port = pty_device(behaviour=Behaviour(key_leak=400))
    out = tmp_path / "ct"
    result = CliRunner().invoke(cli, ["ct", "--board", "stm32f4discovery", "--port", port, "--no-flash",
                                      "--no-replay", "--scheme", "ml-dsa-44", "--impl", "m4f", "-n", "100", "--seed",
                                      "07", "--out", str(out), "--no-report"])
    assert result.exit_code == 4, result.stderr  # a leak
    assert (out / "ct.json").is_file() and not (out / "report.html").exists() and not (out / "report.md").exists()
    assert "report:" not in result.stderr
    rendered = CliRunner().invoke(cli, ["report", str(out), "--format", "html"])
    assert rendered.exit_code == 0 and "<img" in rendered.stdout


def sharded_ct(pty_device, out, behaviours: list[Behaviour], *options: str, status: int) -> tuple[dict, list[str]]:
    """`pqscope ct` on a fake board per behaviour (ML-DSA-44, 300 signatures), which must exit with
    `status`; its document and ports."""
    ports = [pty_device(behaviour=behaviour)[1] for behaviour in behaviours]
    result = CliRunner().invoke(cli, ["ct", "--board", "stm32f4discovery", *(a for p in ports for a in ("--port", p)),
                                      "--no-flash", "--no-replay", "--scheme", "ml-dsa-44", "--impl", "m4f", "-n",
                                      "300", "--seed", "07", "--out", str(out), "--json", *options])
    assert result.exit_code == status, result.stderr
    return {k: v for k, v in json.loads(result.stdout).items() if k != "run_dir"}, ports


def test_two_boards_give_one_boards_result(fake_repo, fake_toolchain, pty_device, tmp_path):
    """Each board takes every other pair of signatures; the verdict, ct.csv (but for the column
    naming the board of each signature) and the keys are those of one board (the test stops at its
    first look, where the second board may have taken a few signatures more), and meta.json names
    both boards."""
    documents = []
    for boards in (1, 2):
        document, ports = sharded_ct(pty_device, tmp_path / f"on-{boards}", [Behaviour(key_leak=400)] * boards,
                                     status=4)
        documents.append(document)
    per_board = documents[1].pop("boards")
    assert documents[0] == documents[1] and documents[0]["verdict"] == "leak" and "boards" not in documents[0]
    one_board, two_boards = (list(csv.DictReader((tmp_path / f"on-{boards}/ct.csv").open())) for boards in (1, 2))
    assert len(one_board) == 100 and without_board(two_boards[:len(one_board)]) == without_board(one_board)
    one, two = (json.loads((tmp_path / f"on-{boards}/meta.json").read_text()) for boards in (1, 2))
    assert sorted(one["keys"], key=lambda key: key["key_id"]) == sorted(two["keys"], key=lambda key: key["key_id"])
    assert [shard["port"] for shard in two["shards"]] == ports and "port" not in two
    serials = [shard["board_serial"] for shard in two["shards"]]
    assert len(set(serials)) == 2 and two["boards"] == {serial: {"target": "serial", "port": port}
                                                         for serial, port in zip(serials, ports)}
    # Each signature names the board of its shard: pairs dealt to the boards in turn.
    assert all(row["board"] == serials[int(row["index"]) // 2 % 2] for row in two_boards)
    assert [(board["board"], board["port"], board["stands_out"]) for board in per_board] == [
        (serial, port, False) for serial, port in sorted(zip(serials, ports))]
    assert (tmp_path / "on-2/shards/1/raw.bin").stat().st_size > 0


def test_a_board_unlike_the_others_stands_out(fake_repo, fake_toolchain, pty_device, tmp_path):
    """A board whose signatures all take longer (another clock, firmware or chip revision) is named
    in the per-board summary, the command's output and the report."""
    document, ports = sharded_ct(pty_device, tmp_path / "ct", [Behaviour(), Behaviour(), Behaviour(extra_cycles=900)],
                                 "--fixed-n", status=5)  # too few signatures for no-leak
    out_of_line = [board for board in document["boards"] if board["stands_out"]]
    assert [board["port"] for board in out_of_line] == [ports[2]]
    assert abs(float(out_of_line[0]["t_against_the_boards"])) > 4.5
    assert "stands out" in (tmp_path / "ct/report.html").read_text()


@pytest.mark.parametrize(("options", "error"), [
    (["--port", "/dev/a", "--port", "/dev/b"], "several boards to flash: name each one's debug probe with "
                                                "--adapter-serial"),
    (["--port", "/dev/a", "--port", "/dev/b", "--adapter-serial", "1"], "1 --adapter-serial for 2 --port"),
    (["--port", "/dev/a", "--no-flash", "-j", "2"], "-j 2 with 1 --port: each shard needs a board of its own"),
])
def test_shards_on_real_boards_need_a_board_each(fake_repo, fake_toolchain, options, error):
    assert_one_line_error(CliRunner().invoke(cli, ["ct", "--board", "stm32f4discovery", "--scheme", "ml-dsa-44",
                                                   "--impl", "m4f", *options]), error)


def test_classes_come_in_pairs_of_one_each_in_seeded_random_order():
    classes = [signing.key_class for signing in schedule(b"s", 1001, KEY_SLOTS, 0)]
    pairs = [tuple(classes[i:i + 2]) for i in range(0, 1000, 2)]
    assert set(pairs) == {(FIXED, RANDOM), (RANDOM, FIXED)}  # both orders occur, nothing else
    assert classes.count(FIXED) in (500, 501)  # the odd last one is the first of a pair
    assert classes == [signing.key_class for signing in schedule(b"s", 1001, KEY_SLOTS, 0)]
    assert classes != [signing.key_class for signing in schedule(b"t", 1001, KEY_SLOTS, 0)]


def test_a_ranked_function_reads_in_rounded_words():
    from pqscope.views.ct import function_line
    line = function_line(FunctionLeak("__ieee754_sqrt", 88.33532345976302, None, 0.0, 412.4, 5.056124488968192, "raw",
                                      4.5, 10.0))
    assert line == ("__ieee754_sqrt: t = 88.3, +412 cycles per signature, 506% of the total's difference")
    assert function_line(FunctionLeak("f", None, None, 3.0, 0.0, None, None, 4.5, 10.0)) == (
        "f: t: too few samples, -3 cycles per signature")


def test_a_look_stops_a_leaking_test_and_says_where_it_stands():
    from pqscope.analysis.ct import CtCapture
    from pqscope.project.catalogue import Implementation
    from pqscope.results.runmeta import RunMeta

    capture = CtCapture(1000, b"s", 32)
    implementation = Implementation("s", "i", "f", 1, 1, 1, 1, "ok")
    leaking = [CtSample(i, i % 2, 0, bytes(32), 1000 + 50 * (i % 2) + i % 7, 0, Status.OK) for i in range(200)]
    meta = RunMeta(kind="ct")
    assert capture.looks == [100, 200, 400, 800, 1000]
    assert capture.stop_reason(implementation, None, leaking[:99], meta, False) is None  # not a look
    assert capture.stop_reason(implementation, None, leaking[:100], meta, False).startswith("leak at 100 signatures")
    assert capture.progress.startswith("at 100: max |t| ")
    capture.stop_reason(implementation, None, leaking[:101], meta, False)  # between looks: the live t
    assert capture.progress.startswith("at 100: max |t| ") and "; live raw |t| " in capture.progress
    flat = [CtSample(i, i % 2, 0, bytes(32), 1000 + i % 7, 0, Status.OK) for i in range(200)]
    assert capture.stop_reason(implementation, None, flat[:200], meta, False) is None  # too few for no-leak
    assert CtCapture(1000, b"s", 32, fixed_n=True).looks == [1000]


@pytest.mark.parametrize(("percent", "shown"), [("0.05", True), ("0.00001", False)])
def test_a_requested_bound_is_shown_or_said_not_to_be(fake_repo, fake_toolchain, pty_device, tmp_path, percent, shown):
    _device, port = pty_device(behaviour=Behaviour(key_leak=0))
    result = CliRunner().invoke(cli, ["ct", "--board", "stm32f4discovery", "--port", port, "--no-flash",
                                      "--no-replay", "--scheme", "ml-dsa-44", "--impl", "m4f", "-n", "2400", "--seed",
                                      "07",
                                      "--bound", percent, "--out", str(tmp_path / "ct"), "--json"])
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["verdict"] == "no-leak", document["reason"]
    assert document["bound_requested"] == {"share_of_mean": float(percent) / 100, "shown": shown}
    assert (document["bound"]["share_of_mean"] <= float(percent) / 100) == shown
    # The public noise of the fake device is 0..255 cycles on 2,000,000: a bound of a few cycles.
    assert 0 < document["bound"]["cycles"] < 20


def statistics_of(verdict: str, reason: str = "no leak detected") -> CtStatistics:
    """The statistics part of a test whose verdict is `verdict`, max |t| 0.5 (test raw)."""
    unranked = RankTest("u", 0.0, 1.0)
    return CtStatistics(LeakStatistics(verdict, reason, ClassCounts(1000, 1000), 0.5, "raw", {},
                                       Nonparametric(unranked, unranked), 0.0, None, 0.2, {}), 0, 0)


STATISTICS_NO_LEAK = statistics_of("no-leak")
LEAKING_FINDING = Finding("division", 0x08001000, 3, False, None, "decompose", "rounding.c", 40)
NOTE = replace(LEAKING_FINDING, kind="address")


def exact_check(*findings: Finding, signatures: int = 2) -> TaintDocument:
    return TaintDocument("ml-dsa-44", "m4f", "virtual", signatures, 1000,
                         "leak" if any(f.leak for f in findings) else "no-leak", findings)


@pytest.mark.parametrize("statistics", ["no-leak", "inconclusive", "leak"])
def test_the_headline_is_a_leak_whenever_the_exact_check_finds_one(statistics):
    from pqscope.analysis.ct_verdict import EXACT_SCOPE, headline

    verdict = headline(statistics_of(statistics), exact_check(NOTE, LEAKING_FINDING))
    assert verdict.verdict == "leak"
    assert statistics == "leak" or f"(the statistics: {statistics})" in verdict.reason
    exact = [item for item in verdict.evidence if item["by"] == "exact check"]
    assert exact == [{"by": "exact check", "kind": "division", "function": "decompose", "file": "rounding.c",
                      "line": 40, "address": "0x08001000", "executions": 3}]
    assert verdict.scope == EXACT_SCOPE


@pytest.mark.parametrize("statistics", ["no-leak", "inconclusive", "leak"])
def test_the_headline_says_when_time_depends_on_the_public_key_not_on_a_secret(statistics):
    """Code the exact check shows to run on declared-public values was set apart: where its time
    differs between the classes, the verdict says the time depends on the public key, and is the
    rest's (a leak in the rest stays a leak, said as the statistics say it)."""
    from pqscope.analysis.ct_verdict import headline

    public = {"functions": ["expand_matrix", "expand"], "mean_cycles": {"fixed": 9e5, "random": 7e5},
              "from_exact_check": ["expand"], "verdict": "leak", "max_abs_t": 63.31}
    verdict = headline(replace(statistics_of(statistics), public_time=public), exact_check(NOTE))
    said = verdict.reason.startswith("time depends on the public key (expand), not on a secret")
    assert (verdict.verdict, said) == (("leak", False) if statistics == "leak" else ("no-leak", True))
    assert not said or "(|t| = 63.3); the rest: " in verdict.reason
    # Public time the classes share is not worth a word; nor is the catalogue's own (not the exact check's).
    for quiet in ({**public, "verdict": "no-leak"}, {**public, "from_exact_check": []}):
        assert "public key" not in headline(replace(statistics_of(statistics), public_time=quiet),
                                            exact_check(NOTE)).reason


def test_the_headline_is_no_leak_when_the_evidence_clears_it_and_says_what_it_covered():
    from pqscope.analysis.ct_verdict import EXACT_SCOPE, STATISTICS_SCOPE, headline

    both = headline(STATISTICS_NO_LEAK, exact_check(NOTE))
    assert (both.verdict, both.scope) == ("no-leak", EXACT_SCOPE)
    assert "the exact check found no instruction" in both.reason
    alone = headline(STATISTICS_NO_LEAK, None)
    assert (alone.verdict, alone.scope, alone.evidence[0]["by"]) == ("no-leak", STATISTICS_SCOPE, "statistics")
    # Few signatures: the virtual board's own exact check decides; a board's replayed one cannot clear the board.
    few = statistics_of("inconclusive", "too few signatures")
    exact = headline(few, exact_check(NOTE))
    assert (exact.verdict, exact.scope, few.verdict) == ("no-leak", EXACT_SCOPE, "inconclusive")
    assert [item["by"] for item in exact.evidence] == ["exact check", "statistics"]
    assert "on 2 signatures' paths" in exact.reason and "too few signatures" in exact.reason
    assert headline(few, exact_check(NOTE), exact_on_target=False).verdict == "inconclusive"
    assert headline(few, None).verdict == "inconclusive"


def test_the_exact_check_also_runs_at_the_boards_slowest_and_fastest_clocks_when_asked():
    """Beside the test's own clock: the benchmark's and a product's, each once, on the virtual
    board only (a board's exact check is its replay's), and only with the exact check."""
    from pqscope.analysis.ct_plan import constant_time_test
    from pqscope.project.boards import load_boards
    from pqscope.project.paths import repo_root

    boards = load_boards(repo_root())
    virtual, discovery = boards["virtual"], boards["stm32f4discovery"]

    def other_clocks(board, **options):
        test = constant_time_test(board, 100, b"s", 32, **options)
        return [(companion.directory, companion.clock) for companion in test.companions(board)]

    assert other_clocks(virtual, at_other_clocks=True) == [("taint", None), ("taint-fast", "fast")]
    assert other_clocks(virtual.at_clock("fast"), at_other_clocks=True) == [("taint", None),
                                                                            ("taint-benchmark", "benchmark")]
    assert other_clocks(virtual) == [("taint", None)]
    assert other_clocks(virtual, at_other_clocks=True, taint_check=False) == []
    assert other_clocks(discovery, at_other_clocks=True) == []  # its exact check runs in the replay


@pytest.mark.parametrize("found", ["nothing", "a branch", "a declassified flash load", "a flash load", "an SRAM load"])
def test_the_other_clocks_check_is_derived_unless_a_secret_indexes_flash(found):
    """A clock changes only what a load from flash at a secret address costs: without one (not
    declared public), the check at the test's clock is the check at every clock, and its verdict
    there is derived instead of run (kept in "taint", marked derived); with one, the other clock's
    check runs, each companion asked for after the one before it was taken."""
    from pqscope.analysis.ct_plan import constant_time_test
    from pqscope.measure.capture import Companion
    from pqscope.project.boards import load_boards
    from pqscope.project.paths import repo_root

    virtual = load_boards(repo_root())["virtual"]
    flash = replace(NOTE, region="flash")
    finding = {"nothing": None, "a branch": replace(LEAKING_FINDING, kind="branch"),
               "a declassified flash load": replace(flash, declassified=True), "a flash load": flash,
               "an SRAM load": replace(NOTE, region="sram", address=0x20001000)}[found]
    document = exact_check(*([finding] if finding else []))
    test = constant_time_test(virtual, 100, b"s", 32, at_other_clocks=True)
    companions = test.companions(virtual)
    first = next(companions)
    assert first.clock is None
    test.take_companion(first, document.to_json())
    rest = list(companions)
    derived = found != "a flash load"
    assert document.same_at_every_clock == derived
    assert [(companion.directory, companion.clock) for companion in rest] == ([] if derived else [("taint-fast", "fast")])
    if not derived:
        test.take_companion(Companion(rest[0].capture, "taint-fast", "fast"), replace(document, clock=None).to_json())
    (fast,) = test.at_clocks.values()
    assert fast.derived == derived and fast.directory == ("taint" if derived else "taint-fast")
    assert (fast.verdict, fast.leaking_instructions) == (document.verdict, len(document.leaks))
    if derived:
        there = virtual.at_clock("fast")
        assert (fast.clock.name, fast.clock.hz, fast.clock.flash_wait_states) == (
            "fast", there.clock_hz, there.clock.flash_wait_states) == ("fast", 168_000_000, 5)
        assert type(fast).from_json(fast.to_json()) == fast
