"""Where `pqscope ct`'s sequential test looks and when a look stops it: the looks of a test (beside
the virtual board's own exact check, an early one), the key pool made for the first of them, and the
rules a look's analysis is read by (`stop_at_look`)."""

from . import leakstats, sequential
from .ct_analysis import CtResult
from .ttests import LEAK_EVIDENCE_T

# Once the exact check has found a leak, nothing the statistics find can clear it: they stop at
# this many signatures (ct's least -n), enough for the cycles and the per-class picture.
AFTER_EXACT_LEAK = 20
# Once the virtual board's own exact check has found nothing, the statistics stop at the first look
# that shows no leak larger than this share of the mean signing time (95 % confidence): deterministic
# code's classes differ by nothing at once, and only a public rejection loop's noise needs more.
AFTER_EXACT_CLEAN = 0.001


def looks_of(samples: int, *, fixed_n: bool, beside_exact_check: bool) -> list[int]:
    """The looks of a test of at most `samples` signatures: all of them at once with `fixed_n`;
    beside the virtual board's own exact check, an early look first (sequential.EARLY_LOOK), where
    a clean check and constant classes decide. The parameters alone decide them, never the check's
    result or the time it took: a resumed test looks where an uninterrupted one does."""
    return [samples] if fixed_n else sequential.sequential_looks(samples, early=beside_exact_check)


def first_pool(looks: list[int]) -> int | None:
    """The signatures the key pool is first made for (ct_schedule.capture_ct's `first_pool`): the
    early look's, if the test has one before its last (None: the whole pool first)."""
    return looks[0] if len(looks) > 1 and looks[0] == sequential.EARLY_LOOK else None


def bounded(result: CtResult, share: float) -> bool:
    """The statistics show no leak larger than `share` of the mean time."""
    shown = result.total.bound
    return shown is not None and shown.share is not None and shown.share <= share


def bound_shown(result: CtResult, bound: float | None) -> bool:
    """Whether a requested bound holds (no bound requested, or a leak: nothing to show)."""
    return bound is None or result.verdict != leakstats.Verdict.NO_LEAK or bounded(result, bound)


def public_time_settled(result: CtResult) -> bool:
    """Whether what the verdict will say of the public time set apart is known: nothing set apart,
    its statistics decided, or no evidence that it differs between the classes. Only a difference
    (time that depends on the public key) changes the verdict's reason, and that code runs on
    declared-public values only: its no-leak, which takes 1,000 signatures per class, would add
    nothing (Falcon's hash_to_point_vartime, FN-DSA's sampler)."""
    public = result.public_time.tested if result.public_time else None
    return (public is None or public.verdict != leakstats.Verdict.INCONCLUSIVE
            or (public.max_abs_t is not None and public.max_abs_t < LEAK_EVIDENCE_T))


def stop_at_look(result: CtResult, look: int, looks: list[int], *, bound: float | None,
                 exact_clean: bool) -> str | None:
    """Why the test stops at `look` (None: it goes on), given the analysis of its first `look`
    signatures: a definite verdict (with a requested bound shown), or, once the virtual board's own
    exact check is clean (`exact_clean`), no leak found and none larger than AFTER_EXACT_CLEAN of the
    mean time shown (or the smaller bound asked for), the public time set apart settled too."""
    if result.verdict != leakstats.Verdict.INCONCLUSIVE and bound_shown(result, bound):
        return f"{result.verdict} at {look} signatures (looks at {', '.join(map(str, looks))})"
    share = min(bound or AFTER_EXACT_CLEAN, AFTER_EXACT_CLEAN)
    if exact_clean and result.verdict != leakstats.Verdict.LEAK and bounded(result, share) and public_time_settled(result):
        return (f"no-leak: the exact check found nothing, and no leak larger than {share:.2%} of the mean time "
                f"shows at {look} signatures")
    return None
