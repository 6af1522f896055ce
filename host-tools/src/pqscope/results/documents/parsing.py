"""How the typed documents refuse what they cannot read: a field missing or of the wrong type is
an error naming the document (or the file and line of a record) and what was wrong."""

import contextlib
import math

from ...project.errors import PqscopeError

# What reading a field of a damaged document raises.
DAMAGE = (KeyError, TypeError, ValueError, AttributeError, IndexError)


@contextlib.contextmanager
def refused_as(what: str):
    """Turns a damaged field read inside into PqscopeError("`what` is damaged: ...")."""
    try:
        yield
    except DAMAGE as error:
        detail = f"it lacks {error}" if isinstance(error, KeyError) else str(error) or type(error).__name__
        raise PqscopeError(f"{what} is damaged: {detail}") from None


def optional(data: dict, key: str, read=lambda value: value):
    """`read` of the field `key` of `data`, None when it is absent or null."""
    value = data.get(key)
    return None if value is None else read(value)


def without_absent(document: dict, optional_keys: tuple[str, ...]) -> dict:
    """`document` less those of its `optional_keys` whose value is None (absent from its file)."""
    return {key: value for key, value in document.items() if value is not None or key not in optional_keys}


def json_number(value: float | None) -> float | str | None:
    """Strict JSON has no infinity; a certain leak's |t| is written "inf" (or "-inf")."""
    if value is not None and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def number(value: float | str | None) -> float | None:
    """A number as `json_number` wrote it ("inf" and "-inf" are infinities)."""
    return None if value is None else float(value) if isinstance(value, str) else value
