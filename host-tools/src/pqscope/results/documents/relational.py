"""The relational confirmation of an exact-check finding (issue #54): taint says a secret reaches an
instruction's timing, but a value whose secret parts cancel is tainted too (a loop from a secret p to
p + n for a public n). So the check compares what the instruction did, visit by visit, between
signatures made with other secrets: a finding whose outcomes differed is `confirmed`, with the pair
that shows it; one whose outcomes never differed is `unchanged` (evidence, not proof, that no secret
changes it), kept apart and not a leak."""

from dataclasses import dataclass

from .parsing import optional

CONFIRMED, UNCHANGED = "confirmed", "unchanged"


@dataclass(frozen=True)
class OutcomePair:
    """Two signatures of the check whose outcomes at a finding differ: where they first differ and
    what each did there."""

    signatures: tuple[int, int]  # their indexes in the check
    key_seeds: tuple[str, str]  # the seeds of their keys (hex): KEYGEN_SLOT's
    sign_seeds: tuple[str, str]  # the seeds of their signing (hex): SIGN_SLOT's, the message and the randomness
    visit: int | None  # the execution in the signature (from 1) where they first differ; None: beyond those kept
    outcomes: tuple[str, str]  # what each did at that visit (or, beyond those kept, in all)

    def describe(self) -> str:
        where = f"at execution {self.visit:,}" if self.visit else "after the first executions kept"
        return (f"signatures {self.signatures[0]} and {self.signatures[1]} differ {where}: "
                f"{self.outcomes[0]} vs {self.outcomes[1]}")

    def to_json(self) -> dict:
        return {"signatures": list(self.signatures), "key_seeds": list(self.key_seeds),
                "sign_seeds": list(self.sign_seeds), "visit": self.visit, "outcomes": list(self.outcomes)}

    @classmethod
    def from_json(cls, data: dict) -> "OutcomePair":
        return cls(tuple(data["signatures"]), tuple(data["key_seeds"]), tuple(data["sign_seeds"]), data["visit"],
                   tuple(data["outcomes"]))


@dataclass(frozen=True)
class RelationalCheck:
    """Whether other secrets changed what a finding's instruction did, over `variants` signatures."""

    state: str  # CONFIRMED or UNCHANGED
    variants: int  # the signatures compared, each with a key and signing seed of its own
    pair: OutcomePair | None = None  # a confirmed finding's evidence

    def describe(self) -> str:
        if self.state == CONFIRMED and self.pair:
            return f"confirmed: {self.pair.describe()}"
        return f"tainted, never changed by a secret in {self.variants} variants (evidence, not proof)"

    def to_json(self) -> dict:
        return {"state": self.state, "variants": self.variants,
                "pair": None if self.pair is None else self.pair.to_json()}

    @classmethod
    def from_json(cls, data: dict) -> "RelationalCheck":
        return cls(data["state"], data["variants"], optional(data, "pair", OutcomePair.from_json))
