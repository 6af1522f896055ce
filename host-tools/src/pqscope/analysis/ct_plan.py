"""Which constant-time test a board gets (`pqscope ct` and the jobs that run one): the exact check
on the virtual board, at the board's other clocks, and a real board's replay."""

from ..results.documents.replay import ReplaySettings
from ..targets.kinds import target_kind
from .ct import CtCapture
from .taint import EXACT_CHECK_SIGNATURES


def constant_time_test(board, samples: int, master_seed: bytes, msg_len: int, *, taint_check: bool | None = None,
                       replay: bool = True, replay_flash_timing: str = "modelled",
                       exact_signatures: int = EXACT_CHECK_SIGNATURES, at_other_clocks: bool = False,
                       **options) -> CtCapture:
    """A constant-time test on `board` (boards.Board): the exact check of `exact_signatures`
    beside it on the virtual board (unless `taint_check` is False), there also at the board's
    slowest and fastest clocks where the test runs at another (`at_other_clocks`: the benchmark's
    and a product's), and on a real board the replay with its exact check (unless `replay` is
    False); `options` are CtCapture's."""
    replayed = ReplaySettings(replay_flash_timing) if replay and not target_kind(board).taints else None
    exact = taint_check or (taint_check is None and (target_kind(board).taints or replayed is not None))
    by_speed = sorted(board.clocks.values(), key=lambda clock: clock.hz)
    others = tuple(dict.fromkeys(clock.name for clock in (by_speed[0], by_speed[-1]) if clock.name != board.clock.name))
    return CtCapture(samples, master_seed, msg_len, exact_check=exact_signatures if exact else 0,
                     replay=replayed, other_clocks=others if exact and at_other_clocks and replayed is None else (),
                     **options)
