"""pytest hooks shared by the host and target tests.

- Each session gets a temporary directory of its own, removed once the session has passed (a
  failed one's is kept to look at). pytest's own numbered directories (/tmp/pytest-of-USER/pytest-N)
  are pruned by whichever session starts next, which can remove the directory of a session still
  running beside it, and ctest runs several sessions at once.
- Ctrl-C reaches the commands the tests start, as it would a user's: a shell script's background
  jobs inherit SIGINT ignored, and a command started from one would never see the tests' SIGINT.
- The test tiers (issue #53; docs/pages/guide.md, "Tests"): the marker `slow` marks a long
  measurement, which the quick tier deselects (-m "not slow") and the slow tier selects (-m slow).
- A session that ran no test body (none selected, or every one skipped) exits with SKIPPED, which
  ctest's SKIP_RETURN_CODE reports as skipped, not as passed."""

import shutil
import signal
import tempfile

import pytest

_PRIVATE = "_pqscope_private_basetemp"
# automake's code for a skipped test; pytest's own codes are 0 to 5.
SKIPPED = 77


class _BodiesRun:
    """Counts the tests whose body ran (passed or failed, xfail included) and the skipped ones."""

    def __init__(self):
        self.ran = 0
        self.skipped = 0

    def pytest_runtest_logreport(self, report):
        if report.failed or (report.when == "call" and (report.passed or hasattr(report, "wasxfail"))):
            self.ran += 1
        elif report.skipped:
            self.skipped += 1

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        if session.config.option.collectonly:
            return
        if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED or (exitstatus == pytest.ExitCode.OK and not self.ran):
            what = f"all {self.skipped} skipped" if self.skipped else "no test selected"
            reporter = session.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:  # after the progress line, before the summary
                reporter.write_line("")
                reporter.write_line(f"pqscope: skipped ({what}): exit status {SKIPPED}")
            session.exitstatus = SKIPPED


def pytest_configure(config):
    # A handler of our own becomes the default disposition in every process the tests start.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if config.option.basetemp is None:
        config.option.basetemp = tempfile.mkdtemp(prefix="pqscope-pytest-")
        setattr(config, _PRIVATE, True)
    config.addinivalue_line("markers", "slow: a long measurement (minutes to hours), run by the slow tier only "
                                       "(ctest --preset stm32f4discovery-slow; the quick tier deselects it)")
    if not config.pluginmanager.has_plugin("pqscope-bodies-run"):
        config.pluginmanager.register(_BodiesRun(), "pqscope-bodies-run")


def pytest_sessionfinish(session, exitstatus):
    passed = exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
    if getattr(session.config, _PRIVATE, False) and passed:
        shutil.rmtree(session.config.option.basetemp, ignore_errors=True)
