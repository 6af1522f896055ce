"""On-device probes against the virtual board's profiler, on the same probed image: each probe's
cycles in a signature equal the profiler's inclusive cycles of that function in the signature's
interval, up to the documented per-call difference, and their call counts are equal. This is what
makes a probe on a real board the same evidence as the profiler on the virtual one."""

import json

import pytest

from conftest import EMULATOR, ROOT
from pqscope.boards import get_board
from pqscope.build import Variant, build_image
from pqscope.console import stderr
from pqscope.ct import capture_ct, join_intervals, load_intervals
from pqscope.targets import Link, Profiling, VirtualTarget

SIGNATURES = 12
# A probe's cycles leave out the body of an empty function (its self cost is calibrated on one),
# which the profiler counts: a return, up to this many cycles per call (firmware/PROTOCOL.md).
CYCLES_PER_CALL = 4


def signatures_with_probes_and_profile(scheme: str, impl: str, tmp_path):
    board = get_board(ROOT, "virtual")
    elf = build_image(ROOT, board, scheme, impl, Variant(probed=True))
    target = VirtualTarget(ROOT, board, Link(timeout=3600), emulator=EMULATOR)
    profiling = Profiling(tmp_path / "intervals.jsonl", "run_sign")
    with target.connect(elf, stderr(), stats_dir=tmp_path, profiling=profiling) as connection:
        session = connection.session
        info = session.hello()
        samples = list(capture_ct(session, info, samples=SIGNATURES, master_seed=b"\x5e", msg_len=32))
        names = session.probe_names
    return names, samples, join_intervals(samples, load_intervals(profiling.intervals))


@pytest.mark.parametrize(("scheme", "impl"), [("ml-dsa-44", "m4f"), ("falcon-512", "fpnative")])
def test_probe_cycles_equal_the_profilers_inclusive_cycles(scheme, impl, tmp_path):
    names, samples, intervals = signatures_with_probes_and_profile(scheme, impl, tmp_path)
    assert names, f"{scheme}/{impl}: the probed image probes nothing"
    called = set()
    for sample, interval in zip(samples, intervals, strict=True):
        for name, probe in zip(names, sample.probes, strict=True):
            _exclusive, calls, inclusive = interval["functions"].get(name, (0, 0, 0))
            assert probe.calls == calls, (sample.index, name)
            assert abs(probe.cycles - inclusive) <= CYCLES_PER_CALL * calls, (
                sample.index, name, probe.cycles, inclusive, json.dumps(interval["functions"].get(name)))
            if calls:
                called.add(name)
    assert called, "no probed function was called: the comparison proved nothing"
