"""One writer per run directory: a measurement holds its directory's lock (an OS lock, flock, on a
file in the directory, that dies with its process) until it has recorded how it ended. A second writer is refused with the holder's process id; the lock of a
killed process is gone with it, so its directory resumes at once. A reader tells a live
measurement (`running`, its lock held) from one that was killed (`running` in meta.json, no
holder)."""

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from ..project.errors import PqscopeError

LOCK_NAME = ".pqscope-writer"
# A holder killed a moment ago (`kill -9 PID; pqscope run --resume DIR`) may not have ended yet:
# its lock goes with it within this time; a live writer holds it for the whole measurement.
ENDING_SECONDS = 2.0

# The directories this process holds, by resolved path: the command and its runner both take the
# lock of the same directory, and flock would refuse the second of them.
_held: dict[Path, int] = {}


class DirectoryBusy(PqscopeError):
    """Another live process measures into the directory."""


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Holds `path`'s writer lock for the block, creating `path` if need be (and removing it again
    if the block leaves it empty); raises DirectoryBusy if another process holds it."""
    key = path.resolve()
    if key in _held:
        yield
        return
    created = not path.exists()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise PqscopeError(f"cannot create the run directory {path}: {error.strerror}") from None
    _held[key] = _acquire(path)
    try:
        yield
    finally:
        fd = _held.pop(key)
        # Removed while still held: a writer that opened it meanwhile finds it unlinked and retries.
        with contextlib.suppress(OSError):
            (path / LOCK_NAME).unlink()
        os.close(fd)
        if created:
            with contextlib.suppress(OSError):  # not empty: kept
                path.rmdir()


def _acquire(path: Path) -> int:
    lock = path / LOCK_NAME
    patience = time.monotonic() + ENDING_SECONDS
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise PqscopeError(f"cannot write into the run directory {path}: {error.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() < patience:
                time.sleep(0.05)
                continue
            raise DirectoryBusy(_busy(path, recorded_holder(path))) from None
        if _still_linked(fd, lock):
            break
        os.close(fd)  # its holder removed it as it ended: the next file is the lock
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n{' '.join(sys.argv)}\n".encode())
    except OSError:
        pass  # a full disk: the lock holds all the same, only its message lacks the pid
    return fd


def _still_linked(fd: int, lock: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), lock.stat())
    except FileNotFoundError:
        return False


def recorded_holder(path: Path) -> tuple[int, str] | None:
    """The process id and command line the lock file of `path` records, if it records any."""
    try:
        pid, _, command = (path / LOCK_NAME).read_text().partition("\n")
        return int(pid), command.strip()
    except (OSError, ValueError):
        return None


def holder(path: Path) -> int | None:
    """The process id of the live process measuring into `path`, if one is."""
    recorded = recorded_holder(path)
    if recorded is None or not _alive(recorded[0]):
        return None  # no writer, or a killed one (not probed: a probe would make a starting writer fail)
    if recorded[0] == os.getpid():
        return recorded[0] if path.resolve() in _held else None
    try:
        fd = os.open(path / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # a reused process id holds no lock
        return None
    except BlockingIOError:
        return recorded[0]
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _busy(path: Path, recorded: tuple[int, str] | None) -> str:
    who = f"process {recorded[0]} ({recorded[1]})" if recorded else "another process (starting)"
    return (f"{path} is being measured by {who}: one measurement writes into a directory at a time; wait for it to "
            f"end, or stop it (a stopped one resumes with --resume), or choose another --out")


def current_status(path: Path, recorded: str) -> str:
    """A measurement's status as its directory `path` holds it: meta.json's (`recorded`), but
    "interrupted" where it says "running" and no live process measures there (it was killed)."""
    return "interrupted" if recorded == "running" and holder(path) is None else recorded
