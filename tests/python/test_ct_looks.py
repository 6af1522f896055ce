"""Where `pqscope ct` looks and what stops it there (analysis/ct_looks.py): beside the virtual
board's own exact check an early look at 20 signatures, counted among the looks, where a clean
check and classes that differ by nothing decide; the key pool made for that look first. No
emulator: a capture fed signatures, and capture_ct on a fake session."""

from dataclasses import replace

import pytest

from fakedevice import make_info
from test_ct import LEAKING_FINDING, NOTE, FakeSession, exact_check
from pqscope.analysis import sequential
from pqscope.analysis.ct_schedule import CtSample, capture_ct
from pqscope.analysis.ttests import adjusted_threshold
from pqscope.link.protocol import Status


def signatures(count: int, cycles) -> list[CtSample]:
    """Pairs of one fixed-key and one random-key signature, `cycles(index, key_class)` each."""
    return [CtSample(i, i % 2, 0, bytes(32), cycles(i, i % 2), 0, Status.OK) for i in range(count)]


def capture(samples=2000, **options):
    from pqscope.analysis.ct import CtCapture

    return CtCapture(samples, b"s", 32, **options)


def implementation():
    from pqscope.project.catalogue import Implementation

    return Implementation("s", "i", "f", 1, 1, 1, 1, "ok")


def test_beside_the_virtual_boards_exact_check_the_first_look_is_at_20_signatures_and_counts():
    from pqscope.analysis.ct_looks import looks_of
    from pqscope.results.documents.replay import ReplaySettings

    assert capture(exact_check=2).looks == [20, 100, 200, 400, 800, 1600, 2000]
    assert capture().looks == [100, 200, 400, 800, 1600, 2000]  # the statistics alone, as before
    # A board's test with its replay's exact check: that check cannot clear the board (no early look).
    assert capture(exact_check=2, replay=ReplaySettings("modelled")).looks == [100, 200, 400, 800, 1600, 2000]
    assert capture(exact_check=2, fixed_n=True).looks == [2000]
    assert capture(20, exact_check=2).looks == [20] and capture(100, exact_check=2).looks == [20, 100]
    # The early look is one more look: the leak threshold is raised for seven looks, not six.
    looks = looks_of(2000, fixed_n=False, beside_exact_check=True)
    assert len(looks) == 7 and adjusted_threshold(10.0, len(looks)) > adjusted_threshold(10.0, 6)


def test_a_clean_exact_check_and_classes_that_differ_by_nothing_decide_at_the_early_look():
    from pqscope.results.runmeta import RunMeta

    test = capture(exact_check=2)
    test.taint = exact_check(NOTE)  # clean: a note, no leak
    constant = signatures(20, lambda index, key_class: 5_000_000)
    assert test.stop_reason(implementation(), None, constant[:19], RunMeta(kind="ct"), False) is None
    reason = test.stop_reason(implementation(), None, constant, RunMeta(kind="ct"), False)
    assert reason == ("no-leak: the exact check found nothing, and no leak larger than 0.10% of the mean time "
                      "shows at 20 signatures")
    assert test.decided_at == 20


@pytest.mark.parametrize("case", ["public noise", "no exact check", "classes differ"])
def test_the_early_look_decides_nothing_the_bound_or_the_exact_check_does_not_clear(case):
    """Public noise (a rejection loop's) leaves the bound wide at 20 signatures; without its exact
    check the test has no early look; classes that differ are no no-leak (infinite |t| for constants:
    a leak)."""
    from pqscope.results.runmeta import RunMeta

    test = capture(exact_check=0 if case == "no exact check" else 2)
    test.taint = None if case == "no exact check" else exact_check(NOTE)
    cycles = {"public noise": lambda index, key_class: 5_000_000 + 40_000 * (index * 7919 % 13),
              "no exact check": lambda index, key_class: 5_000_000,
              "classes differ": lambda index, key_class: 5_000_000 + key_class}[case]
    reason = test.stop_reason(implementation(), None, signatures(20, cycles), RunMeta(kind="ct"), False)
    if case == "classes differ":
        assert reason.startswith("leak at 20 signatures")
    else:
        assert reason is None and test.decided_at is None


def test_the_key_pool_is_made_key_by_key_for_the_early_look_and_whole_after_it():
    """With first_pool, each of the shard's first 20 signatures has the key it signs with made just
    before it (none it does not use), the rest of the pool before its first signature from the 20th;
    every key still before the signature that uses it, and the signatures, seeds and keys are those
    of the whole pool first. `before_signing` runs before each signature's keys."""
    info = replace(make_info(), key_slots=40)

    def calls(first_pool=None, owns=lambda index: True, done=()):
        session = FakeSession()
        samples = list(capture_ct(session, info, samples=60, master_seed=b"m", msg_len=32, first_pool=first_pool,
                                  owns=owns, done=done,
                                  before_signing=lambda index: session.calls.append(("before", index))))
        return session.calls, samples

    def made_before_each_signature(calls_made):
        """Per signing, the keys made before it (the "before" marks left out)."""
        made, before = set(), []
        for call in calls_made:
            if call[0] == "keygen":
                made.add(call[1])
            elif call[0] == "sign":
                before.append(set(made))
        return before

    whole, whole_samples = calls()
    staged, staged_samples = calls(first_pool=sequential.EARLY_LOOK)
    assert staged_samples == whole_samples
    assert [c for c in staged if c[0] == "sign"] == [c for c in whole if c[0] == "sign"]
    assert sorted(c for c in staged if c[0] == "keygen") == sorted(c for c in whole if c[0] == "keygen")
    before = made_before_each_signature(staged)
    for position, sample in enumerate(staged_samples[:20]):
        assert before[position] == {s.key_id for s in staged_samples[:position + 1]}
    assert before[20] == set(range(info.key_slots)) and len({s.key_id for s in staged_samples[:20]}) == 11
    # Every key is made before any signature that uses it.
    for sample, made in zip(staged_samples, before):
        assert sample.key_id in made
    # Each signing's mark comes before its keys and its signing, in the schedule's order.
    marks = [index for index, call in enumerate(staged) if call[0] == "before"]
    assert [staged[index][1] for index in marks] == [s.index for s in staged_samples]
    assert all(staged[index + 1][0] in ("keygen", "sign") for index in marks)
    # A shard makes, for the early look, only the keys of its own signatures, each just before it.
    even, even_samples = calls(first_pool=sequential.EARLY_LOOK, owns=lambda index: index % 2 == 0)
    early = [s for s in even_samples if s.index < 20]
    assert made_before_each_signature(even)[:len(early)] == [
        {s.key_id for s in early[:position + 1]} for position in range(len(early))]
    # Resumed past the early look: the whole pool before its next signature, the same signatures after.
    resumed, resumed_samples = calls(first_pool=sequential.EARLY_LOOK, done=set(range(30)))
    assert resumed_samples == whole_samples[30:]
    assert len([c for c in resumed if c[0] == "keygen"]) == info.key_slots


@pytest.mark.parametrize("public", ["none", "class-independent noise", "differs between the classes"])
def test_a_clean_exact_check_stops_early_unless_the_public_time_shows_a_difference(public):
    """Time set apart as public (code the exact check shows runs on public values: Falcon's
    hash_to_point_vartime) need not reach its own no-leak, 1,000 signatures per class, before a clean
    check and a total bound stop the test from 100 signatures on; evidence that it differs between
    the classes (time that depends on the public key, which the verdict's reason would say) keeps the
    test going."""
    import numpy as np

    from pqscope.analysis import leakstats
    from pqscope.analysis.ct_analysis import CtResult, PublicTime
    from pqscope.analysis.ct_looks import public_time_settled, stop_at_look

    classes = np.arange(100) % 2
    total = leakstats.analyse(classes, np.full(100, 5_000_000.0), bootstrap_resamples=10)
    noise = 40_000.0 * (np.arange(100) * 7919 % 13)
    spent = {"class-independent noise": noise, "differs between the classes": noise + 40_000.0 * 5 * classes}
    tested = leakstats.analyse(classes, spent[public], bootstrap_resamples=10) if public in spent else None
    result = CtResult(total, total.verdict, total.reason, 0, 0,
                      public_time=tested and PublicTime(("hash_to_point_vartime",), 1.0, 1.0, ("hash_to_point_vartime",),
                                                        tested))
    # 50 per class: never no-leak; the difference is evidence (|t| about 6.5), not yet a definite leak.
    assert tested is None or tested.verdict == leakstats.Verdict.INCONCLUSIVE
    reason = stop_at_look(result, 100, [20, 100, 200], bound=None, exact_clean=True)
    assert public_time_settled(result, 100) == (public != "differs between the classes")
    assert (reason is not None) == public_time_settled(result, 100)
    assert stop_at_look(result, 100, [20, 100, 200], bound=None, exact_clean=False) is None
    # Before the first look of the sequential test (100), no evidence yet is not enough.
    assert public_time_settled(result, 20) == (public == "none")


def test_the_early_look_is_sized_to_the_signing_the_exact_check_measured():
    """20 signatures where they cost at most EARLY_LOOK_CYCLES of signing, fewer (even, two per class
    at least) for a slow one: SLH-DSA-SHA2-128s's 6.8 G cycles a signature look first at 4. Taken
    with the exact check's document, before any signature of the test; its key pool made for them."""
    from pqscope.analysis.ct_looks import EARLY_LOOK_CYCLES, early_look, first_pool
    from pqscope.measure.capture import Companion

    assert early_look(None) == early_look(()) == early_look((None,)) == 20
    assert early_look((int(EARLY_LOOK_CYCLES / 20),) * 2) == 20
    assert early_look((int(EARLY_LOOK_CYCLES / 12), 1)) == 12  # the slower signature decides
    assert early_look((int(EARLY_LOOK_CYCLES / 7),)) == 6 and early_look((6_810_312_121,) * 2) == 4
    assert early_look((int(EARLY_LOOK_CYCLES * 10),)) == 4
    test = capture(exact_check=2)
    assert test.looks == [20, 100, 200, 400, 800, 1600, 2000]
    first = next(test.companions(None))
    test.take_companion(first, replace(exact_check(NOTE), sign_cycles=(6_810_312_121, 6_810_313_944)).to_json())
    assert test.looks == [4, 100, 200, 400, 800, 1600, 2000] and first_pool(test.looks) == 4
    fixed = capture(exact_check=2, fixed_n=True)
    fixed.take_companion(Companion(first.capture, "taint"), replace(exact_check(NOTE), sign_cycles=(7e9,)).to_json())
    assert fixed.looks == [2000] and first_pool(fixed.looks) is None



@pytest.mark.parametrize("secret_latency", [0, 10_000])
def test_beside_a_clean_check_a_rejection_loops_paths_are_regressed_out_but_not_a_secret_latency(secret_latency):
    """A rejection loop repeats its attempts and rejects each at one of two checks (ML-DSA's z and
    hint checks), so the total's bound stays wide for thousands of signatures; with each
    signature's calls regressed out, 20 show no leak larger than 0.1 % of the mean time — unless
    the fixed key's signatures take `secret_latency` cycles (0.3 %) more in the same calls."""
    import numpy as np

    from pqscope.analysis.ct_analysis import analyse
    from pqscope.analysis.ct_looks import stop_at_look
    from pqscope.analysis.ttests import FIXED
    from pqscope.results.documents.profile import ProfiledInterval

    rng = np.random.default_rng(5)
    samples, intervals = [], []
    for index in range(20):
        key_class, attempts = index % 2, int(rng.integers(1, 6))
        late = int(rng.integers(0, attempts))  # the rejected attempts that reached the hint check
        cycles = (2_000_000 + 500_000 * attempts + 90_000 * late + secret_latency * (key_class == FIXED)
                  + int(rng.integers(3)))
        samples.append(CtSample(index, key_class, 0, bytes(32), cycles, 100, Status.OK))
        calls = {"challenge": [1_000 * attempts, attempts], "make_hint": [3_000 * (late + 1), late + 1]}
        intervals.append(ProfiledInterval.from_json({"cycles": cycles, "functions": {
            **calls, "work": [cycles - sum(spent for spent, _ in calls.values()), 1]}}))
    result = analyse(samples, intervals, "challenge")
    assert result.total.bound.share > 0.01  # the paths' noise: the total alone decides nothing
    reason = stop_at_look(result, 20, [20, 100], bound=None, exact_clean=True)
    if secret_latency:
        assert result.paths.bound.cycles > secret_latency and reason is None
    else:
        assert result.paths.bound.share <= 0.001
        assert reason.startswith("no-leak: the exact check found nothing, and no leak larger than 0.10% of the mean "
                                 "time shows at 20 signatures with the signing paths regressed out")
    assert stop_at_look(result, 20, [20, 100], bound=None, exact_clean=False) is None


@pytest.mark.parametrize("finding, options, random_keys", [
    (LEAKING_FINDING, {}, 2), (NOTE, {}, None), (LEAKING_FINDING, {"random_keys": 1}, 1),
    (LEAKING_FINDING, {"random_keys": 9}, 2), (LEAKING_FINDING, {"fixed_n": True}, None)])
def test_a_leak_the_check_found_before_the_statistics_leaves_them_two_random_keys(finding, options, random_keys):
    """Run before the statistics (a row whose check derives public code: RSA-2048, whose keys take
    2-5 G cycles each), a check that found a leak leaves the 20 signatures that picture the classes
    two random keys, recorded in meta.json for a resume; a clean one, a -n test's or the fewer keys
    asked for, as they were."""
    from pqscope.measure.capture import Companion
    from pqscope.results.runmeta import RunMeta

    test = capture(exact_check=2, **options)
    first = next(test.companions(None))
    test.take_companion(Companion(first.capture, "taint"), exact_check(finding).to_json())
    assert test.random_keys == random_keys
    meta = RunMeta(kind="ct", samples=2000, master_seed=b"s".hex(), msg_len=32)
    test.update(meta)
    assert meta.random_keys == random_keys
