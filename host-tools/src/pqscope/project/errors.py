"""Errors the CLI reports as one line on stderr (anything else is a bug and keeps its traceback)."""

import difflib
from collections.abc import Iterable


class PqscopeError(Exception):
    """A failure caused by input, environment or device, explained by its message.

    `details` (e.g. a compiler log) is shown before the one-line message.
    """

    def __init__(self, message: str, details: str = ""):
        super().__init__(message)
        self.details = details


class UnknownNameError(PqscopeError):
    """A board, scheme or implementation name that does not exist: the names close to it are
    suggested, or, if none is, every valid name listed."""

    def __init__(self, kind: str, name: str, valid: Iterable[str], context: str = ""):
        valid = sorted(set(valid))
        close = _closest(name, valid)
        if close:
            hint = f"did you mean {' or '.join(close)}?"
        else:
            hint = f"valid: {', '.join(valid) or 'none exist'}"
        super().__init__(f"unknown {kind} '{name}'{context}; {hint}")


def match_name(kind: str, name: str, valid: Iterable[str], context: str = "") -> str:
    """The valid name that `name` is, whatever its case (ML-DSA-44 is ml-dsa-44); UnknownNameError
    if none is."""
    valid = list(valid)
    matches = [choice for choice in valid if choice.lower() == name.lower()]
    if name in valid:
        return name
    if len(matches) == 1:
        return matches[0]
    raise UnknownNameError(kind, name, valid, context)


# How much less alike than the closest name another may be and still be suggested beside it.
SUGGESTION_MARGIN = 0.05


def _closest(name: str, valid: list[str]) -> list[str]:
    """The valid names most like `name` (difflib's ratio, regardless of case; at least 0.6), best first."""
    scores = {choice: difflib.SequenceMatcher(None, name.lower(), choice.lower()).ratio() for choice in valid}
    best = max(scores.values(), default=0.0)
    return sorted((choice for choice, score in scores.items() if score >= max(0.6, best - SUGGESTION_MARGIN)),
                  key=lambda choice: -scores[choice])
