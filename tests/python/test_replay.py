"""The replay's statistics and its thread (issue #31): the control variate that takes the model's
prediction out of a board's cycles, the test of an exact-check finding on the board by the
replay's labels, and the replay's hand-over to the board's test (waits, failures, the end)."""

import threading
from dataclasses import replace

import numpy as np
import pytest

from pqscope.analysis.ct import CtCapture
from pqscope.analysis.ct_schedule import CtSample
from pqscope.analysis.confirmation import confirm, disagreements
from pqscope.analysis.ct_analysis import analyse, control_variate
from pqscope.analysis.ttests import FIXED
from pqscope.project.errors import PqscopeError
from pqscope.link.messages import ProbeReading
from pqscope.link.protocol import Status
from pqscope.analysis.replay import LEAD, Replay
from pqscope.results.documents.profile import FunctionTime, ProfiledInterval
from pqscope.results.documents.replay import ReplaySettings
from pqscope.results.documents.taint import Finding

N = 2400


def board_and_model(board_leak: float = 0.0, rng_seed: int = 3):
    """Signatures whose model time varies by a public rejection count (hundreds of thousands of
    cycles), and a board that runs 1.4 times the model plus 5 cycles of noise and `board_leak`
    cycles more for the fixed key (a leak the model lacks)."""
    rng = np.random.default_rng(rng_seed)
    classes = rng.integers(2, size=N)
    model = 1_000_000 + 400_000 * rng.geometric(0.25, size=N) + rng.integers(0, 50, size=N)
    board = np.round(1.4 * model + rng.normal(0, 5, size=N) + board_leak * (classes == FIXED))
    samples = [CtSample(index, int(key_class), 0, bytes(32), int(cycles), 100, Status.OK)
               for index, (key_class, cycles) in enumerate(zip(classes, board))]
    return samples, [float(value) for value in model]


def test_the_control_variate_takes_the_public_variance_out_and_keeps_the_board_mean():
    samples, model = board_and_model()
    cycles = np.array([s.cycles for s in samples], dtype=float)
    fit, residual = control_variate(cycles, np.array(model))
    assert fit.slope == pytest.approx(1.4, rel=1e-4)
    assert fit.variance_removed > 0.999999
    assert fit.signatures_factor == pytest.approx(cycles.var() / residual.var())
    assert residual.mean() == pytest.approx(cycles.mean())
    assert residual.std() == pytest.approx(5, rel=0.1)  # the board's own noise is what is left


def test_a_leak_only_the_board_has_shows_through_the_replay_and_hides_without_it():
    samples, model = board_and_model(board_leak=5.0)
    replayed = analyse(samples, None, None, predicted=model, bootstrap_resamples=10)
    raw = analyse(samples, None, None, bootstrap_resamples=10)
    assert replayed.verdict == "leak", replayed.reason
    assert raw.verdict != "leak"
    assert replayed.uncorrected.verdict == raw.verdict
    assert replayed.evidence.raw is not None and replayed.evidence.label.endswith("less the replay's prediction")


def test_without_a_leak_the_replayed_test_bounds_it_tightly():
    samples, model = board_and_model()
    replayed = analyse(samples, None, None, predicted=model, bootstrap_resamples=10)
    raw = analyse(samples, None, None, bootstrap_resamples=10)
    assert replayed.verdict == "no-leak", replayed.reason
    assert replayed.total.bound.cycles < 2 and raw.total.bound.cycles > 1000 * replayed.total.bound.cycles


def nonce_signatures(board_shows: bool, n: int = 600, hash_pace: float = 1.2, noise: float = 2, seed: int = 5):
    """A signing whose function `work` takes 10 cycles more per call when a per-signature nonce
    bit is set (the exact check's finding), called a public number of times, beside public work
    in `sign` and in `hash`; the board runs the model's time (x 1.2, `hash` x `hash_pace`) with
    the nonce's or without it, and normal noise of `noise` cycles."""
    rng = np.random.default_rng(seed)
    board, model, intervals = [], {}, {}
    for index in range(n):
        calls, slow = int(rng.integers(1, 4)), int(rng.integers(2))
        work = calls * (100 + 10 * slow)
        rest, hashing = 50_000 + int(rng.integers(0, 20_000)), 1000 * int(rng.integers(1, 30))
        model[index] = CtSample(index, index % 2, 0, bytes(32), rest + hashing + work, 100, Status.OK)
        intervals[index] = ProfiledInterval.from_json(
            {"functions": {"work": [work, calls, work], "hash": [hashing, 1, hashing],
                           "sign": [rest, 1, rest + hashing + work]}})
        shown = work if board_shows else calls * 105
        board.append(CtSample(index, index % 2, 0, bytes(32),
                              round(1.2 * (rest + shown) + hash_pace * hashing + rng.normal(0, noise)), 100, Status.OK))
    return board, model, intervals


FINDINGS = [Finding("branch", 0x08000100, 1, False, None, "work", None, None),
            Finding("branch", 0x08000104, 1, False, None, "work", None, None),
            Finding("branch", 0x08000200, 1, True, None, "sign", None, None)]


def test_a_finding_the_board_shows_is_confirmed_with_its_size():
    (confirmation,) = confirm(*nonce_signatures(board_shows=True), FINDINGS)
    assert confirmation.function == "work" and confirmation.findings == 2
    assert confirmation.state == "confirmed", confirmation
    # The slow half's calls take 10 model cycles more each, 12 on the board (x 1.2), two calls on average.
    assert confirmation.board_cycles == pytest.approx(1.2 * confirmation.model_cycles, rel=0.15)
    assert "confirmed on the board" in confirmation.describe()


def test_a_finding_the_board_does_not_show_is_bounded():
    (confirmation,) = confirm(*nonce_signatures(board_shows=False), FINDINGS)
    assert confirmation.state == "not-seen", confirmation
    assert confirmation.bound_cycles < confirmation.model_cycles
    assert "not seen on the board" in confirmation.describe()


def test_a_finding_too_small_for_its_signatures_says_how_many_would_show_it():
    def tested(n: int, seed: int):
        (confirmation,) = confirm(*nonce_signatures(board_shows=True, n=n, noise=100, seed=seed), FINDINGS)
        return confirmation
    small = tested(100, seed=1)
    assert small.state == "not-seen", small
    assert small.signatures_needed > 100
    assert f"would need some {float(f'{small.signatures_needed:.2g}'):,.0f} signatures" in small.describe()
    # The board shows the finding (at its pace, 1.2 per model cycle): its t grows as the square root
    # of the count, below the definite one at a quarter of the estimate, past it at twice the estimate
    # (which 100 signatures made). Other signatures (seeds) than the estimate's own.
    assert {tested(small.signatures_needed // 4, seed).state for seed in (2, 3, 4)} <= {"not-seen", "evidence"}
    assert [tested(2 * small.signatures_needed, seed).state for seed in (2, 3, 4)] == ["confirmed"] * 3


def test_a_probed_function_is_tested_on_its_own_time_where_the_totals_hide_it():
    # Board-only variance of a few thousand cycles in the rest of the signing hides the outcome's
    # +24 board cycles from the totals; the probe of `work` (its own time on the board, x 1.2 as
    # the totals', and a few cycles of noise) shows them.
    board, model, intervals = nonce_signatures(board_shows=True, noise=3000)
    rng = np.random.default_rng(8)
    probed = []
    for sample in board:
        work, calls = intervals[sample.index].functions["work"].cycles, intervals[sample.index].functions["work"].calls
        probed.append(replace(sample, probes=(ProbeReading(round(1.2 * work + rng.normal(0, 3)), calls),)))
    (on_totals,) = confirm(probed, model, intervals, FINDINGS)
    (on_probe,) = confirm(probed, model, intervals, FINDINGS, timed_by={"work": ("__wrapped_work", 0)})
    assert on_totals.state == "not-seen" and on_totals.probe is None, on_totals
    assert on_probe.state == "confirmed" and on_probe.probe == "__wrapped_work", on_probe
    assert on_probe.board_cycles == pytest.approx(1.2 * on_probe.model_cycles, rel=0.05)
    assert abs(on_probe.t) > 10 * abs(on_totals.t)
    assert "in its own time: probe __wrapped_work" in on_probe.describe()


def test_a_board_whose_time_goes_against_the_label_confirms_it_the_other_way_round():
    board, model, intervals = nonce_signatures(board_shows=True)
    board = [replace(sample, cycles=sample.cycles - 30 * (intervals[sample.index].functions["work"].cycles -
                                                          105 * intervals[sample.index].functions["work"].calls))
             for sample in board]
    (confirmation,) = confirm(board, model, intervals, FINDINGS)
    # The board's time still depends on the outcome: a leak on the board, its slow path the model's fast one.
    assert confirmation.state == "confirmed" and confirmation.board_cycles < 0 < confirmation.model_cycles
    assert "the other way round" in confirmation.describe()


def test_a_public_function_the_board_runs_at_its_own_pace_leaves_the_finding_its_size():
    board, model, intervals = nonce_signatures(board_shows=True, hash_pace=2.5)
    (confirmation,) = confirm(board, model, intervals, FINDINGS)
    assert confirmation.state == "confirmed" and "hash" in confirmation.priced_apart
    assert confirmation.board_cycles == pytest.approx(1.2 * confirmation.model_cycles, rel=0.15)


@pytest.mark.parametrize("varying", [0, 5])
def test_a_function_whose_model_time_varies_in_too_few_signatures_is_not_labelled(varying):
    # `work`'s calls (one to three a signature) cost 100 cycles each, but in `varying` signatures
    # one of them costs 2 more.
    board, model, intervals = nonce_signatures(board_shows=True)
    for index, entry in intervals.items():
        calls = entry.functions["work"].calls
        cycles = 100 * calls + (2 if index < varying else 0)
        intervals[index] = replace(entry, functions=entry.functions | {"work": FunctionTime(cycles, calls, cycles)})
    (confirmation,) = confirm(board, model, intervals, FINDINGS)
    assert confirmation.state == "unlabelled" and confirmation.t is None
    assert "same for all but fewer than 10 of the 600 signatures" in confirmation.describe()


def test_signatures_whose_replay_went_otherwise_are_named():
    board, model, _ = nonce_signatures(board_shows=True, n=30)
    model[4] = CtSample(4, 0, 0, bytes(32), 1, 96, Status.OK)
    model[9] = CtSample(9, 1, 0, bytes(32), 1, 100, Status.OP_FAILED)
    assert disagreements(board, model) == [4, 9]


def sample(index: int) -> CtSample:
    return CtSample(index, index % 2, 0, bytes(32), 1000 + index, 100, Status.OK)


def test_the_board_waits_for_its_signatures_and_the_replay_for_the_board():
    started = threading.Event()

    def measure(path, feed):
        feed.exact_checked({"findings": []})
        started.set()
        index = 0
        while True:
            feed.arrived(sample(index))
            index += 1
            if feed.stop_reason():  # waits while LEAD ahead of the board
                return

    replay = Replay(measure, None)
    replay.start()
    assert replay.exact_check() == {"findings": []}
    assert sorted(replay.model(10)) == list(range(10))
    started.wait()
    threading.Event().wait(0.2)
    assert replay.replayed == 10 + LEAD  # held back: the board has measured the 10 it asked for
    replay.board_measured(100)
    assert sorted(replay.model(150)) == list(range(150))
    replay.close(150)
    assert replay.replayed >= 150


def test_a_replay_whose_shards_run_out_of_order_never_waits_on_a_gap_the_board_needs():
    """Two shards: the odd signatures arrive far ahead of the even ones. Held back by the count of
    what it holds, the replay would wait for the board while the board waits for an even one."""

    def measure(path, feed):
        feed.exact_checked(None)
        order = [index for index in range(1, 400, 2)] + [index for index in range(0, 400, 2)]
        for index in order:
            feed.arrived(sample(index))
            if feed.stop_reason():
                return

    replay = Replay(measure, None)
    replay.start()
    done = threading.Event()
    threading.Thread(target=lambda: (replay.model(100), done.set()), daemon=True).start()
    assert done.wait(10), "the board's look waited for ever on a signature the replay held back"
    replay.close(100)


def test_a_failed_replay_is_one_error_at_the_boards_next_wait():
    def measure(path, feed):
        feed.arrived(sample(0))
        raise PqscopeError("virtual board: error: no such image")

    replay = Replay(measure, "runs/x/replay")
    replay.exact_checked(None)
    replay.start()
    with pytest.raises(PqscopeError, match="the replay on the virtual board failed: virtual board: error: no such "
                                           r"image \(its files: runs/x/replay\)"):
        replay.model(2)


def test_an_interrupted_board_test_interrupts_its_replay():
    ended = []

    def measure(path, feed):
        index = 0
        try:
            while True:
                feed.arrived(sample(index))
                index += 1
                feed.stop_reason()
        except KeyboardInterrupt:
            ended.append("interrupted")

    replay = Replay(measure, None)
    replay.exact_checked(None)
    replay.start()
    replay.model(5)
    replay.close(None)
    assert ended == ["interrupted"]


class VirtualLike:
    taints = True

    class board:
        name = "virtual"


def test_the_virtual_board_is_not_replayed():
    with pytest.raises(PqscopeError, match="is the virtual board: there is nothing to replay"):
        CtCapture(100, bytes(32), 32, replay=ReplaySettings()).instrumented(VirtualLike())


def test_replay_settings_round_trip_and_refuse_damage():
    assert ReplaySettings.from_json(ReplaySettings("free").to_json()) == ReplaySettings("free")
    assert ReplaySettings.from_json(None) is None
    with pytest.raises(PqscopeError, match="meta.json's 'replay' is damaged"):
        ReplaySettings.from_json({"flash_timing": "fast"})


def test_each_board_has_its_own_probe_calibration():
    # Two boards whose probes' calibration differs (the probe's own cost each measured with its
    # counter's noise): one reads 30 cycles more for every probed call. Its own cost per call keeps
    # that out of the test: the outcome is as clear as on one board, with its size.
    board, model, intervals = nonce_signatures(board_shows=True, noise=3000)
    rng = np.random.default_rng(8)

    def probed(offset_per_call: float) -> list:
        readings = []
        for sample in board:
            work, calls = intervals[sample.index].functions["work"].cycles, intervals[sample.index].functions["work"].calls
            second = sample.index % 2 == 1
            cycles = 1.2 * work + second * offset_per_call * calls + rng.normal(0, 3)
            readings.append(replace(sample, board="B" if second else "A",
                                    probes=(ProbeReading(round(cycles), calls),)))
        return readings

    timed_by = {"work": ("__wrapped_work", 0)}
    (alike,) = confirm(probed(0), model, intervals, FINDINGS, timed_by=timed_by)
    (apart,) = confirm(probed(30), model, intervals, FINDINGS, timed_by=timed_by)
    assert apart.state == "confirmed", apart
    assert apart.board_cycles == pytest.approx(1.2 * apart.model_cycles, rel=0.05)
    assert abs(apart.t) == pytest.approx(abs(alike.t), rel=0.2)
