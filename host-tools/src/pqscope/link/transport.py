"""Opening the serial line: a device path, a pty, or any pyserial URL (socket://, loop://)."""

import errno

import serial

from ..project.errors import PqscopeError

# Reads return after this long without data, so callers can check their own deadlines.
POLL_SECONDS = 0.05


class TransportError(PqscopeError):
    pass


def open_port(url: str, baud: int) -> serial.SerialBase:
    try:
        return serial.serial_for_url(url, baudrate=baud, timeout=POLL_SECONDS, exclusive=True)
    except ValueError as error:  # malformed URL or unknown URL scheme
        raise TransportError(f"cannot open port {url}: {error}") from None
    except serial.SerialException as error:
        raise TransportError(_explain(url, error)) from None


def _explain(url: str, error: serial.SerialException) -> str:
    code = error.errno
    if code == errno.ENOENT:
        return f"port {url} does not exist (is the board connected? pass --port)"
    if code in (errno.EBUSY, errno.EAGAIN):
        return f"port {url} is busy (another program, e.g. a serial terminal, has it open)"
    if code == errno.EACCES:
        return f"no permission to open port {url} (add your user to the dialout group)"
    return f"cannot open port {url}: {error}"
