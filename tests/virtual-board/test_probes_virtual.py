"""On-device probes against the virtual board's profiler on the same probed image: in every
signature, each probe's call count equals the profiler's, and its cycles equal the profiler's
inclusive cycles of the function less what the device takes out, to within the documented few
cycles per call. This is what makes a probe on a real board the same evidence as the profiler on
the virtual one.

The device takes out the cost of probed calls nested inside a probed call (a probe reports what
its function costs without probes), which the profiler of the probed image counts: libm's `sqrt`
calls the probed `__ieee754_sqrt` once per call (newlib's w_sqrt.c), so `sqrt`'s probe is
`probe_call_cycles` less per call than its inclusive cycles there. An interrupt that lands in a
probed call is in the probe's cycles (the counter runs on), not in the profiler's inclusive cycles
(the handler's own): a probe may exceed them by the signature's interrupt time."""

import pytest
from elftools.elf.elffile import ELFFile

from conftest import EMULATOR, ROOT
from pqscope.project.boards import get_board
from pqscope.project.build import Variant, build_image
from pqscope.project.console import stderr
from pqscope.analysis.ct_schedule import capture_ct, load_intervals
from pqscope.analysis.ct_analysis import join_intervals
from pqscope.targets.target import Link, Profiling
from pqscope.targets.virtual import VirtualTarget

SIGNATURES = 12
# A probe's cycles leave out the body of an empty function (its self cost is calibrated on one),
# which the profiler counts: a return, a few cycles per call (firmware/PROTOCOL.md, "Probes").
CYCLES_PER_CALL = 4
# The one interrupt signing takes (boards/stm32f4discovery/board.c: SysTick counts its wraps).
INTERRUPT_HANDLER = "sys_tick_handler"
# Probed functions that call another probed function once per call: (caller, callee).
NESTED = {("falcon-512", "fpnative"): {"sqrt": "__ieee754_sqrt"}}


def function_aliases(elf) -> dict[str, set[str]]:
    """Each function's names (libgcc's __aeabi_ddiv is __divdf3: the profiler names one of them)."""
    with open(elf, "rb") as stream:
        symbols = [s for s in ELFFile(stream).get_section_by_name(".symtab").iter_symbols()
                   if s["st_info"]["type"] == "STT_FUNC" and s["st_value"]]
    by_address: dict[int, set[str]] = {}
    for symbol in symbols:
        by_address.setdefault(symbol["st_value"], set()).add(symbol.name)
    return {symbol.name: by_address[symbol["st_value"]] for symbol in symbols}


@pytest.mark.parametrize(("scheme", "impl"), [("ml-dsa-44", "m4f"), ("falcon-512", "fpnative")])
def test_probe_cycles_equal_the_profilers_inclusive_cycles(scheme, impl, tmp_path):
    board = get_board(ROOT, "virtual")
    elf = build_image(ROOT, board, scheme, impl, Variant(probed=True))
    target = VirtualTarget(ROOT, board, Link(timeout=3600), emulator=EMULATOR)
    profiling = Profiling(tmp_path / "intervals.jsonl", "run_sign")
    with target.connect(elf, stderr(), stats_dir=tmp_path, profiling=profiling) as connection:
        info = connection.session.hello()
        signatures = list(capture_ct(connection.session, info, samples=SIGNATURES, master_seed=b"\x5e", msg_len=32))
        names = connection.session.probe_names
    intervals = join_intervals(signatures, load_intervals(profiling.intervals.parent))
    aliases = function_aliases(elf)
    nested = NESTED.get((scheme, impl), {})
    assert names, f"{scheme}/{impl}: the probed image probes nothing"

    def profiled(functions: dict, name: str) -> tuple[int, int, int]:
        found = [functions[alias] for alias in aliases[name] if alias in functions]
        assert len(found) <= 1, (name, aliases[name])
        return tuple(found[0]) if found else (0, 0, 0)

    called = set()
    for signature, interval in zip(signatures, intervals, strict=True):
        functions = {name: (time.cycles, time.calls, time.inclusive_cycles) for name, time in interval.functions.items()}
        interrupted = functions.get(INTERRUPT_HANDLER, (0, 0, 0))[2]
        for name, probe in zip(names, signature.probes, strict=True):
            _exclusive, calls, inclusive = profiled(functions, name)
            assert probe.calls == calls, (signature.index, name)
            if name in nested:
                assert profiled(functions, nested[name])[1] == calls, (signature.index, name)
                inclusive -= calls * info.probe_call_cycles
            assert -interrupted <= inclusive - probe.cycles <= CYCLES_PER_CALL * calls, (
                signature.index, name, probe.cycles, inclusive, calls, interrupted)
            if calls:
                called.add(name)
    assert called, "no probed function was called: the comparison proved nothing"
