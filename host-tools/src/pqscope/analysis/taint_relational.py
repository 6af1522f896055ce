"""The relational confirmation of the exact check's findings (issue #54). Taint over-approximates: a
value computed from secrets whose secret parts cancel (a loop from a secret p to p + n for a public
n) is tainted, and its branch with it, though it goes the same way for every key. So each finding
that would convict is compared, visit by visit, between the check's signatures (each with a key and
signing seed of its own: other keys, other signing randomness, and, as the harness draws it from
the signing seed, another message): what each execution did in each signature is the emulator's
outcome (a branch's direction, an address, a division's cycles, a jump's target; taint.h). A
finding whose outcomes differ between two signatures is `confirmed`, with that pair; one whose
outcomes never differed is `unchanged`."""

from dataclasses import dataclass, replace

from ..results.documents.profile import CheckedSignature, RawFinding
from ..results.documents.relational import CONFIRMED, UNCHANGED, OutcomePair, RelationalCheck
from ..results.documents.taint import Finding


@dataclass(frozen=True)
class Variant:
    """A signature the findings are compared across: its index, seeds and the emulator's line for it."""

    index: int
    key_seed: bytes
    sign_seed: bytes
    line: CheckedSignature

    def at(self, place: tuple) -> RawFinding | None:
        """Its finding at `place` (RawFinding.place), None if that instruction never ran on a secret in it."""
        return next((raw for raw in self.line.findings if raw.place == place), None)


def confirmed(findings: list[Finding], raw_findings: list[RawFinding], variants: list[Variant]) -> list[Finding]:
    """The findings (named from `raw_findings`, in their order), each that would convict with its
    confirmation over `variants`; the others (notes, declassified) as they are. Without the
    emulator's outcomes (an older emulator's lines) a finding gets none and convicts as before."""
    return [replace(finding, relational=relational_check(raw.place, variants)) if finding.convicting else finding
            for finding, raw in zip(findings, raw_findings, strict=True)]


def unconfirmed(findings: list[Finding]) -> list[Finding]:
    """The findings that would convict but no pair of signatures changed yet: more variants may."""
    return [finding for finding in findings if finding.convicting and finding.unchanged]


def relational_check(place: tuple, variants: list[Variant]) -> RelationalCheck | None:
    """Whether the finding at `place` did something else in some signature than in the first one."""
    done = [(variant, variant.at(place)) for variant in variants]
    if any(raw is not None and raw.outcome_digest is None for _, raw in done):
        return None
    (first, ran), *others = done
    for other, other_ran in others:
        if _outcome(ran) != _outcome(other_ran):
            visit, outcomes = first_difference(place[1], ran, other_ran)
            return RelationalCheck(CONFIRMED, len(variants), OutcomePair(
                (first.index, other.index), (first.key_seed.hex(), other.key_seed.hex()),
                (first.sign_seed.hex(), other.sign_seed.hex()), visit, outcomes))
    return RelationalCheck(UNCHANGED, len(variants))


def _outcome(raw: RawFinding | None) -> tuple:
    """What a signature's executions of a finding did, all of them: none, or their count and digest."""
    return () if raw is None else (raw.count, raw.outcome_digest)


def first_difference(kind: str, a: RawFinding | None, b: RawFinding | None) -> tuple[int | None, tuple[str, str]]:
    """The first execution (from 1) where two signatures' outcomes differ and what each did there;
    None and their totals when that is beyond the runs the emulator kept."""
    runs = [[list(run) for run in raw.outcomes] if raw else [] for raw in (a, b)]
    visit = 1
    while runs[0] and runs[1] and runs[0][0][0] == runs[1][0][0]:
        step = min(runs[0][0][1], runs[1][0][1])
        visit += step
        for own in runs:
            own[0][1] -= step
            if not own[0][1]:
                own.pop(0)
    if runs[0] and runs[1] or all(_complete(raw) for raw, own in zip((a, b), runs) if not own):
        return visit, tuple(describe(kind, own[0][0] if own else None) for own in runs)
    return None, tuple(f"{raw.count:,} executions, outcome digest {raw.outcome_digest}" if raw else "none"
                       for raw in (a, b))


def _complete(raw: RawFinding | None) -> bool:
    """Whether the runs kept hold every execution (the emulator keeps the first 16 runs)."""
    return raw is None or sum(repeat for _, repeat in raw.outcomes) == raw.count


def describe(kind: str, outcome: int | None) -> str:
    """One execution's outcome in words; None: that signature had no further execution on a secret."""
    if outcome is None:
        return "no further execution on a secret"
    if kind in ("branch", "select"):
        return "taken" if outcome else "not taken"
    if kind == "division":
        return f"{outcome} cycles"
    return f"0x{outcome:08x}"  # an address, or a jump's target
