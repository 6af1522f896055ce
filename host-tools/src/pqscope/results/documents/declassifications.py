"""The declassifications an exact check applied, as its document keeps them (taint.json's
`declassifications`, written by project.catalogue's Declassification.to_json)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class AppliedDeclassification:
    """The catalogue's reason for a declassification, and that reason in words."""

    reason: str
    why: str

    @classmethod
    def from_json(cls, data: dict) -> "AppliedDeclassification":
        return cls(data["reason"], data["why"])
