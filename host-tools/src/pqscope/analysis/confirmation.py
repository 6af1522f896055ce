"""The board's confirmation of the exact check's findings: each leaking function's secret-dependent
outcomes, labelled per signature by the replay on the virtual board, tested in the board's cycles
(`confirm`); and the signatures whose replay did not run the board's path (`disagreements`)."""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from ..results.documents.profile import ProfiledInterval
from ..results.documents.taint import Finding
from .localisation import function_thresholds
from .ttests import MIN_SAMPLES_PER_TEST, json_number


@dataclass(frozen=True)
class Confirmation:
    """One function's findings of the exact check, tested on the board (`confirm`); the sizes are
    the difference between the signatures whose label is above the median and the others, in the
    board's total: the function's own time and any other's that goes with the label (a path that
    evicts flash-accelerator lines slows the code that runs next), which totals cannot tell apart;
    or, when the board's image probes the function, in its own time as the probe measures it."""

    function: str
    findings: int
    state: str  # confirmed, evidence, not-seen, unlabelled
    t: float | None  # of the board's cycles per label cycle
    board_cycles: float | None  # the label's difference as the board shows it
    model_cycles: float | None  # the label's difference in the model
    bound_cycles: float | None  # not seen: no difference larger than this on the board (95 %)
    signatures: int
    priced_apart: tuple[str, ...] = ()  # the functions whose time the board's pace was fitted for on its own
    # not seen: the signatures after which the model's difference would be definite, were the board
    # to show it as the model has it (the standard error falls as one over the root of the count)
    signatures_needed: int | None = None
    probe: str | None = None  # the probe whose cycles were tested (None: the board's totals)

    def to_json(self) -> dict:
        return {"function": self.function, "findings": self.findings, "state": self.state,
                "t": json_number(self.t), "board_cycles": self.board_cycles,
                "model_cycles": self.model_cycles, "bound_cycles": self.bound_cycles, "signatures": self.signatures,
                "priced_apart": list(self.priced_apart), "signatures_needed": self.signatures_needed,
                "probe": self.probe}

    @property
    def reversed(self) -> bool:
        """The board's difference goes the other way from the model's (its slow path is the model's fast one)."""
        return bool(self.board_cycles and self.model_cycles and (self.board_cycles > 0) != (self.model_cycles > 0))

    def describe(self) -> str:
        if self.state == "unlabelled":
            return (f"not labelled: the model's time in it is the same for all but fewer than "
                    f"{MIN_SAMPLES_PER_TEST} of the {self.signatures:,} signatures, too few to test")
        size = f"{self.board_cycles:+,.0f} cycles"
        if self.reversed:
            size += f", the other way round from the model's {self.model_cycles:+,.0f}"
        measured = f"t = {self.t:.1f}" + (f", in its own time: probe {self.probe}" if self.probe else "")
        if self.state == "confirmed":
            return f"confirmed on the board: {size} ({measured})"
        if self.state == "evidence":
            return f"evidence on the board, not yet definite: {size} ({measured})"
        text = f"not seen on the board (no difference larger than {self.bound_cycles:,.0f} cycles, {measured})"
        if self.signatures_needed and self.signatures_needed > self.signatures:
            text += (f"; the model's {self.model_cycles:+,.0f} would need some {_rounded(self.signatures_needed):,} "
                     "signatures to show")
        return text


def _rounded(count: int) -> int:
    """`count` to two significant figures: an estimate's precision."""
    return int(float(f"{count:.2g}"))


# The functions whose board pace the confirmation fits one by one: those whose model time varies
# most. The board's flash wait states, prefetch and bus do not slow every function alike, and a
# single pace for all of them leaves their differences in the residual, where a label correlated
# with any of them takes them for its own.
PACED_FUNCTIONS = 16
# A function whose time the label explains this well (a callee on the secret path) is priced with
# the label, not on its own: the label would otherwise have no variance of its own left to test.
LABEL_EXPLAINED = 0.9


def confirm(board: list, model: dict, intervals: dict[int, ProfiledInterval], findings: Sequence[Finding],
            looks: int = 1, timed_by: Mapping[str, tuple[str, int]] | None = None) -> list[Confirmation]:
    """Each leaking function of the exact check's `findings`, tested on the `board`'s signatures
    (CtSamples, verified ones only) with the replay's `model` samples and `intervals` by index.

    The label: per signature, the function's model time (inclusive) beyond its calls at its typical
    cost per call, the time the secret-dependent outcomes its findings name add or take away (how
    often it runs is the caller's doing, public or a finding of its own). The board's cycles are
    regressed on the label, the function's calls, the model time of each function that varies most
    (each its own pace on the board) and the rest of the model's time: the label's coefficient is
    the board's cycles per model cycle of the label (each board its own intercept: boards of a farm
    may differ by a constant), and its t decides, with thresholds raised for the functions tested
    and the looks: "confirmed" past the definite one in either direction (a board whose time moves
    against the model's still has time that depends on the outcome), "not seen" below the evidence
    one, with the largest difference the board could still show.

    A function the board's image probes (`timed_by`: its probe's name and position among each
    sample's readings, `probes.probes_timing`) is tested on that probe's cycles instead, regressed
    on the label and its calls alone (each board its own cost per call: a board's probes are off by
    its calibration's error, which every probed call adds): the function's own time on the board,
    without the rest of the signing's, whose board-only variance hides outcomes of a few cycles in
    the totals."""
    functions: dict[str, int] = {}
    for finding in findings:
        if finding.leak:
            functions[finding.function] = functions.get(finding.function, 0) + 1
    timed = [sample for sample in board if sample.status.timed and sample.index in intervals]
    if not functions or len(timed) < 2 * MIN_SAMPLES_PER_TEST:
        return []
    evidence_t, definite_t = function_thresholds(len(functions), looks)
    cycles = np.array([sample.cycles for sample in timed], dtype=np.float64)
    total = np.array([model[sample.index].cycles for sample in timed], dtype=np.float64)
    on_board = [np.array([sample.board == board for sample in timed], dtype=np.float64)
                for board in sorted({sample.board for sample in timed})]
    profile = _profile_columns(timed, intervals)
    varying = [name for name in sorted(profile, key=lambda name: -profile[name][0].std()) if profile[name][0].std() > 0]
    results = []
    for function, count in sorted(functions.items()):
        _, calls, inclusive = profile.get(function, (None, np.zeros_like(total), np.zeros_like(total)))
        label = outcome_label(calls, inclusive)
        slow = slow_half(label)
        if min(slow.sum(), (~slow).sum()) < MIN_SAMPLES_PER_TEST:
            results.append(Confirmation(function, count, "unlabelled", None, None, None, None, len(timed)))
            continue
        probe, position = (timed_by or {}).get(function, (None, 0))
        if probe is None:
            paced = _priced_apart(label, calls, [name for name in varying if name != function][:PACED_FUNCTIONS],
                                  profile)
            own = [profile[name][0] for name in paced]
            rest = total - label - sum(own, np.zeros_like(total))
            per_label, error = _coefficient(np.column_stack([*on_board, rest, *own, calls, label]), cycles)
        else:
            paced = []
            probed = np.array([sample.probes[position].cycles for sample in timed], dtype=np.float64)
            per_label, error = _coefficient(np.column_stack([*on_board, *(calls * board for board in on_board), label]),
                                            probed)
        t = per_label / error if error else math.copysign(math.inf, per_label) if per_label else 0.0
        model_size = float(label[slow].mean() - label[~slow].mean())
        state = "confirmed" if abs(t) > definite_t else "evidence" if abs(t) >= evidence_t else "not-seen"
        bound = (abs(per_label) + CONFIDENCE_Z * error) * abs(model_size) if state == "not-seen" else None
        # A board that shows the label as the model prices it has a coefficient of 1: its t is 1 / error.
        needed = math.ceil(len(timed) * (definite_t * error) ** 2) if state == "not-seen" else None
        results.append(Confirmation(function, count, state, float(t), per_label * model_size, model_size, bound,
                                    len(timed), tuple(paced), needed, probe))
    return results


def outcome_label(calls: np.ndarray, inclusive: np.ndarray) -> np.ndarray:
    """Per signature, a function's time (inclusive) beyond its `calls` at its typical cost per call
    (the median signature's): the cycles its secret-dependent outcomes add or take away. Not the
    mean cost: calls that cost the same in all but a few signatures would leave every signature a
    sliver of those few's difference, in proportion to its calls, a label that is the call count."""
    called = calls > 0
    typical = float(np.median(inclusive[called] / calls[called])) if called.any() else 0.0
    return inclusive - calls * typical


def _profile_columns(timed: list, intervals: dict[int, ProfiledInterval]
                     ) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each profiled function's exclusive cycles, calls and inclusive cycles per signature."""
    rows = [intervals[sample.index] for sample in timed]
    names = sorted({name for row in rows for name in row.functions})
    return {name: tuple(np.array([float(column(row.function(name))) for row in rows])
                        for column in (attrgetter("cycles"), attrgetter("calls"), attrgetter("inclusive_cycles")))
            for name in names}


def _priced_apart(label: np.ndarray, calls: np.ndarray, candidates: list[str], profile: dict) -> list[str]:
    """The `candidates` that keep their own pace beside the `label`: those left once the ones that
    together explain the label are given back to it, the most explaining first."""
    kept = list(candidates)
    while kept and _explained(label, [profile[name][0] for name in kept] + [calls]) > LABEL_EXPLAINED:
        kept.remove(min(kept, key=lambda name: _explained(
            label, [profile[other][0] for other in kept if other != name] + [calls])))
    return kept


def _explained(values: np.ndarray, columns: list[np.ndarray]) -> float:
    """The share of `values`' variance a least-squares fit on `columns` (and a constant) explains."""
    predictors = np.column_stack([np.ones_like(values), *columns])
    fitted, *_ = np.linalg.lstsq(predictors, values, rcond=None)
    return 1.0 - float(np.var(values - predictors @ fitted) / np.var(values))


CONFIDENCE_Z = 1.645  # one-sided 95 %: the bound of a two one-sided tests' margin, as leakstats.leak_bound's


def _coefficient(predictors: np.ndarray, values: np.ndarray) -> tuple[float, float]:
    """The last predictor's least-squares coefficient and its standard error."""
    fitted, _, rank, _ = np.linalg.lstsq(predictors, values, rcond=None)
    freedom = len(values) - rank
    residual = values - predictors @ fitted
    variance = residual @ residual / freedom if freedom > 0 else 0.0
    covariance = np.linalg.pinv(predictors.T @ predictors) * variance
    return float(fitted[-1]), float(math.sqrt(max(covariance[-1, -1], 0.0)))


def slow_half(values: np.ndarray) -> np.ndarray:
    """The values above the median, or from it on, whichever splits the more evenly (few distinct
    values put many at the median)."""
    median = np.median(values)
    return min(values > median, values >= median, key=lambda slow: abs(2 * int(slow.sum()) - len(values)))


def disagreements(board: list, model: dict) -> list[int]:
    """The board's signatures whose replay ended otherwise (status) or used another amount of stack:
    the board did not run the replayed path (another image, or a fault)."""
    return [sample.index for sample in board if sample.index in model and (
        model[sample.index].status != sample.status or model[sample.index].stack_bytes != sample.stack_bytes)]


def all_confirmed(confirmations: list[Confirmation]) -> bool:
    """Every finding the board can test (labelled) confirmed, at least one."""
    states = {item.state for item in confirmations}
    return "confirmed" in states and states <= {"confirmed", "unlabelled"}
