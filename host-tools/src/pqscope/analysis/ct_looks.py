"""Where `pqscope ct`'s sequential test looks and when a look stops it: the looks of a test (beside
the virtual board's own exact check, an early one), the key pool made for the first of them, and the
rules a look's analysis is read by (`stop_at_look`)."""

from . import leakstats, sequential
from .ct_analysis import CtResult
from .ttests import LEAK_EVIDENCE_T

# Once the exact check has found a leak, nothing the statistics find can clear it: they stop at
# this many signatures (ct's least -n), enough for the cycles and the per-class picture.
AFTER_EXACT_LEAK = 20
# A leak the exact check found before the statistics began leaves them this many random keys: they
# only picture the classes, and each key is a key generation (RSA-2048's: 2-5 G cycles, 10-20 s).
KEYS_AFTER_EXACT_LEAK = 2
# Once the virtual board's own exact check has found nothing, the statistics stop at the first look
# that shows no leak larger than this share of the mean signing time (95 % confidence): deterministic
# code's classes differ by nothing at once, and only a public rejection loop's noise needs more.
AFTER_EXACT_CLEAN = 0.001


# The early look's signatures cost at most this many model cycles of signing: about half a minute
# on two emulators (SLH-DSA-SHA2-128s signs in 6.8 G cycles: 4 signatures, not 20).
EARLY_LOOK_CYCLES = 2e10
# Two per class: the fewest whose TOST bound (Welch's standard error) is computed.
FEWEST_EARLY = 4


def early_look(sign_cycles: tuple[int | None, ...] | None) -> int:
    """The early look's signatures, for a signing that took `sign_cycles` in the exact check (its
    document's): sequential.EARLY_LOOK, fewer (even, at least FEWEST_EARLY) where those would cost
    more than EARLY_LOOK_CYCLES. Below 10 per class no t-test is computed: a clean exact check and
    the bound alone decide there, which is all the early look ever decides by."""
    known = [cycles for cycles in sign_cycles or () if cycles]
    if not known:
        return sequential.EARLY_LOOK
    affordable = int(EARLY_LOOK_CYCLES / max(known)) // 2 * 2
    return max(FEWEST_EARLY, min(sequential.EARLY_LOOK, affordable))


def looks_of(samples: int, *, fixed_n: bool, beside_exact_check: bool,
             sign_cycles: tuple[int | None, ...] | None = None) -> list[int]:
    """The looks of a test of at most `samples` signatures: all of them at once with `fixed_n`;
    beside the virtual board's own exact check, an early look first (`early_look` of the signing
    cycles that check measured), where a clean check and constant classes decide. The parameters
    and the model's cycles decide them, never the check's findings or the time anything took: a
    resumed test looks where an uninterrupted one does."""
    early = early_look(sign_cycles) if beside_exact_check else None
    return [samples] if fixed_n else sequential.sequential_looks(samples, early=early)


def random_keys_after(exact_leak: bool, random_keys: int | None) -> int | None:
    """The random keys of a test whose exact check's result is known before its first signature."""
    return min(random_keys or KEYS_AFTER_EXACT_LEAK, KEYS_AFTER_EXACT_LEAK) if exact_leak else random_keys


def first_pool(looks: list[int]) -> int | None:
    """The signatures the key pool is first made for (ct_schedule.capture_ct's `first_pool`): the
    early look's, if the test has one before its last (None: the whole pool first)."""
    return looks[0] if len(looks) > 1 and looks[0] <= sequential.EARLY_LOOK else None


def bounded(result: CtResult, share: float) -> bool:
    """The statistics show no leak larger than `share` of the mean time."""
    return _within(result.total.bound, share)


def _within(shown, share: float) -> bool:
    return shown is not None and shown.share is not None and shown.share <= share


def bound_shown(result: CtResult, bound: float | None) -> bool:
    """Whether a requested bound holds (no bound requested, or a leak: nothing to show)."""
    return bound is None or result.verdict != leakstats.Verdict.NO_LEAK or bounded(result, bound)


def public_time_settled(result: CtResult, look: int) -> bool:
    """Whether what the verdict will say of the public time set apart is known at `look`: nothing
    set apart, its statistics decided, or, from sequential.FIRST_LOOK on, no evidence that it differs
    between the classes. Only a difference (time that depends on the public key) changes the
    verdict's reason, and that code runs on declared-public values only: its no-leak, which takes
    1,000 signatures per class, would add nothing (Falcon's hash_to_point_vartime, FN-DSA's
    sampler). A dependence on the public key like control-public-seed's shows by 100 signatures
    (|t| about 13 there), not always by 20."""
    public = result.public_time.tested if result.public_time else None
    return (public is None or public.verdict != leakstats.Verdict.INCONCLUSIVE
            or (look >= sequential.FIRST_LOOK and public.max_abs_t is not None and public.max_abs_t < LEAK_EVIDENCE_T))


def stop_at_look(result: CtResult, look: int, looks: list[int], *, bound: float | None,
                 exact_clean: bool) -> str | None:
    """Why the test stops at `look` (None: it goes on), given the analysis of its first `look`
    signatures: a definite verdict (with a requested bound shown), or, once the virtual board's own
    exact check is clean (`exact_clean`), no leak found and none larger than AFTER_EXACT_CLEAN of the
    mean time shown (or the smaller bound asked for), the public time set apart settled too."""
    if result.verdict != leakstats.Verdict.INCONCLUSIVE and bound_shown(result, bound):
        return f"{result.verdict} at {look} signatures (looks at {', '.join(map(str, looks))})"
    share = min(bound or AFTER_EXACT_CLEAN, AFTER_EXACT_CLEAN)
    if not exact_clean or result.verdict == leakstats.Verdict.LEAK or not public_time_settled(result, look):
        return None
    shown = f"no-leak: the exact check found nothing, and no leak larger than {share:.2%} of the mean time shows"
    if bounded(result, share):
        return f"{shown} at {look} signatures"
    # A public rejection loop's paths (ML-DSA's) leave the total's bound wide for thousands.
    if result.paths is not None and _within(result.paths.bound, share):
        return f"{shown} at {look} signatures with {result.paths.describe()}"
    return None
