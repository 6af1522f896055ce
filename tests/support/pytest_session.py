"""pytest hooks shared by the host and target tests.

- Each session gets a temporary directory of its own, removed once the session has passed (a
  failed one's is kept to look at). pytest's own numbered directories (/tmp/pytest-of-USER/pytest-N)
  are pruned by whichever session starts next, which can remove the directory of a session still
  running beside it, and ctest runs several sessions at once.
- Ctrl-C reaches the commands the tests start, as it would a user's: a shell script's background
  jobs inherit SIGINT ignored, and a command started from one would never see the tests' SIGINT."""

import shutil
import signal
import tempfile

_PRIVATE = "_pqscope_private_basetemp"


def pytest_configure(config):
    # A handler of our own becomes the default disposition in every process the tests start.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if config.option.basetemp is None:
        config.option.basetemp = tempfile.mkdtemp(prefix="pqscope-pytest-")
        setattr(config, _PRIVATE, True)


def pytest_sessionfinish(session, exitstatus):
    if getattr(session.config, _PRIVATE, False) and exitstatus == 0:
        shutil.rmtree(session.config.option.basetemp, ignore_errors=True)
