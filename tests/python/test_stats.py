import math

import pytest

from conftest import REPO
from fakedevice import make_info
from pqscope.project.boards import get_board
from pqscope.measure.capture import check_info
from pqscope.results.records import Row, sample_seed
from pqscope.project.catalogue import find_implementation, load_catalogue
from pqscope.project.errors import PqscopeError
from pqscope.link.protocol import Op, Status
from pqscope.results.documents.runs import RunsDocument
from pqscope.views.page import to_markdown
from pqscope.views.runs import page
from pqscope.results.stats import cycle_stats, summarize

ML_DSA = find_implementation(load_catalogue(REPO), "ml-dsa-44", "m4f")


def test_cycle_statistics():
    stats = cycle_stats(list(range(1, 101)))
    assert stats.min == 1 and stats.max == 100
    assert stats.median == 50.5 and stats.mean == 50.5
    assert stats.p05 == pytest.approx(5.95) and stats.p95 == pytest.approx(95.05)
    assert stats.stdev == pytest.approx(math.sqrt(sum((x - 50.5) ** 2 for x in range(1, 101)) / 99))


@pytest.mark.parametrize("cycles", [[123_456_789] * 50, [7]])
def test_zero_variance_and_single_samples_are_fine(cycles):
    stats = cycle_stats(cycles)
    assert stats.stdev == 0.0
    assert {stats.min, stats.p05, stats.median, stats.mean, stats.p95, stats.max} == {cycles[0]}


def test_cycle_counts_beyond_float_precision_keep_exact_extremes():
    huge = 2**60 + 1
    assert cycle_stats([huge, huge]).max == huge


def test_summary_counts_failures_and_excludes_their_cycles():
    seed = bytes(32)
    rows = [
        Row(0, Op.SIGN, seed, 100, 50, Status.OK, True),
        Row(0, Op.VERIFY, seed, 10, 20, Status.OK, True),
        Row(1, Op.SIGN, seed, 300, 70, Status.OK, False),
        Row(1, Op.VERIFY, seed, 99_999, 30, Status.VALID_REJECTED, False),
        # The valid signature verified in 12 cycles; the corrupted copy was accepted too.
        Row(2, Op.SIGN, seed, 200, 60, Status.OK, False),
        Row(2, Op.VERIFY, seed, 12, 20, Status.CORRUPT_ACCEPTED, False),
    ]
    sign, verify = summarize(rows, (Op.SIGN, Op.VERIFY), "ml-dsa-44", "m4f", code_bytes=4242)
    assert (sign.op, sign.n, sign.verified, sign.stack_bytes) == ("sign", 3, 1, 70)
    assert sign.cycles.median == 200
    assert (verify.n, verify.verified, verify.corrupt_accepted) == (3, 1, 1)
    assert (verify.cycles.min, verify.cycles.max) == (10, 12)
    assert sign.code_bytes == verify.code_bytes == 4242
    report = to_markdown(page(RunsDocument("virtual", 24_000_000, "runs/x", (sign, verify)), []))
    assert report.count("stayed valid with one bit flipped") == 1
    assert "ml-dsa-44 m4f: 1 of 3 signatures stayed valid" in report
    (keygen,) = summarize(rows, (Op.KEYGEN,), "ml-dsa-44", "m4f", code_bytes=1)
    assert keygen.n == 0 and keygen.cycles is None and keygen.stack_bytes is None


def test_sample_seeds_are_distinct_and_reproducible():
    seeds = [sample_seed(b"master", i) for i in range(100)]
    assert len(set(seeds)) == 100 and all(len(seed) == 32 for seed in seeds)
    assert seeds == [sample_seed(b"master", i) for i in range(100)]
    assert sample_seed(b"other", 0) != seeds[0]


def test_info_must_match_the_requested_image(fake_repo):
    virtual = get_board(fake_repo, "virtual")
    check_info(make_info(), virtual, ML_DSA, msg_len=1024)
    with pytest.raises(PqscopeError, match="runs stm32f4discovery/falcon-512/m4-ct, not virtual/ml-dsa-44/m4f"):
        check_info(make_info(scheme="falcon-512", impl="m4-ct"), virtual, ML_DSA, msg_len=32)
    with pytest.raises(PqscopeError, match="runs nucleo/ml-dsa-44/m4f"):
        check_info(make_info(board="nucleo"), virtual, ML_DSA, msg_len=32)
    with pytest.raises(PqscopeError, match="--msg-len 1025 exceeds the image's maximum of 1024"):
        check_info(make_info(), virtual, ML_DSA, msg_len=1025)
    with pytest.raises(PqscopeError, match=r"the device's image runs at 24 MHz, not at --clock fast \(168 MHz, 5 flash "
                                           r"wait states\): flash the image built for that clock"):
        check_info(make_info(), virtual.at_clock("fast"), ML_DSA, msg_len=32)
