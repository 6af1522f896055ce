"""Errors the CLI reports as one line on stderr (anything else is a bug and keeps its traceback)."""


class PqscopeError(Exception):
    """A failure caused by input, environment or device, explained by its message.

    `details` (e.g. a compiler log) is shown before the one-line message.
    """

    def __init__(self, message: str, details: str = ""):
        super().__init__(message)
        self.details = details


class UnknownNameError(PqscopeError):
    """A board, scheme or implementation name that does not exist."""

    def __init__(self, kind: str, name: str, valid: list[str], context: str = ""):
        choices = ", ".join(sorted(valid)) or "none exist"
        super().__init__(f"unknown {kind} '{name}'{context}; valid: {choices}")
