"""Ending a measurement from another thread than the one running it (the exact check beside a
constant-time test's statistics, `ct_beside`), as a Ctrl-C would end it there."""

import threading

from ..link.device import DeviceSession


class Halt:
    """Called, it cancels every board session the measurements given it have opened or will open,
    and they end "interrupted" (each resumes with the test), keeping what they captured."""

    def __init__(self):
        self._lock = threading.Lock()
        self._sessions: list[DeviceSession] = []
        self.halted = False

    def __call__(self) -> None:
        with self._lock:
            self.halted = True
            sessions = list(self._sessions)
        for session in sessions:
            session.cancel()

    def watch(self, session: DeviceSession) -> None:
        """A session a measurement opened: cancelled now if the halt came first."""
        with self._lock:
            self._sessions.append(session)
            halted = self.halted
        if halted:
            session.cancel()

    def check(self) -> None:
        """Ends the measurement running in this thread if it was halted (its sessions' captures end
        quietly when cancelled: what they took must not pass for a complete capture)."""
        if self.halted:
            raise KeyboardInterrupt
