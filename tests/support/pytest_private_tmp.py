"""pytest hooks: each session gets a temporary directory of its own, removed once the session has
passed (a failed one's is kept to look at). pytest's own numbered directories
(/tmp/pytest-of-USER/pytest-N) are pruned by whichever session starts next, which can remove the
directory of a session still running beside it, and ctest runs several sessions at once."""

import shutil
import tempfile

_PRIVATE = "_pqscope_private_basetemp"


def pytest_configure(config):
    if config.option.basetemp is None:
        config.option.basetemp = tempfile.mkdtemp(prefix="pqscope-pytest-")
        setattr(config, _PRIVATE, True)


def pytest_sessionfinish(session, exitstatus):
    if getattr(session.config, _PRIVATE, False) and exitstatus == 0:
        shutil.rmtree(session.config.option.basetemp, ignore_errors=True)
