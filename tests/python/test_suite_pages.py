"""The main job's pages say first what is not complete, as a run's do (results/progress.py): a
suite interrupted in a member's constant-time test opens with PARTIAL and the resume command, and
once resumed to its end, with its findings: a leak, which fails no command of the main job."""

import os
import signal
import subprocess
import sys

from click.testing import CliRunner

from fakedevice import Behaviour
from pqscope.cli import cli
from pqscope.results import store

SAMPLES, CT_SIGNATURES, ANSWERED = 2, 200, 100  # the board falls silent after ANSWERED of the test's signatures
LEAK = 400  # cycles per unit of a key-derived value (fakedevice.Behaviour.key_leak)
SUITE = ("run", "--board", "stm32f4discovery", "--no-flash", "--member", "ml-dsa-44/m4f", "-n", str(SAMPLES),
         "--ct-n", str(CT_SIGNATURES), "--no-replay", "--seed", "05")


def test_an_interrupted_suite_opens_its_pages_with_what_is_missing(fake_repo, fake_toolchain, pty_device, tmp_path):
    device, port = pty_device(behaviour=Behaviour(key_leak=LEAK, answer_signatures=SAMPLES + ANSWERED))
    out = tmp_path / "suite"
    # The timeout keeps the host waiting for the unanswered signature until it is interrupted.
    process = subprocess.Popen([sys.executable, "-m", "pqscope", *SUITE, "--port", port, "--out", str(out),
                                "--timeout", "3600"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env=os.environ | {"COLUMNS": "1000"})
    stopped = device.stopped_answering.wait(timeout=1800)  # bounds only a failure, however busy the machine
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=1800)
    assert stopped and process.returncode == 130, stderr
    resume = f"resume with `pqscope run --resume {out}`"
    markdown = (out / "report.md").read_text()
    assert markdown.splitlines()[2].startswith("**PARTIAL** this report: ") and resume in markdown.splitlines()[2]
    assert f"interrupted after {ANSWERED} of {CT_SIGNATURES} signatures" in markdown.splitlines()[2]
    assert '<div class="banner undecided"><strong>PARTIAL</strong> this report: ' in (out / "report.html").read_text()

    _device, port = pty_device(behaviour=Behaviour(key_leak=LEAK))
    result = CliRunner().invoke(cli, ["run", "--resume", str(out), "--port", port, "--no-flash"])
    assert result.exit_code == 0, result.stderr  # the main job: a leak is a finding of its report, not a failure
    assert [item["constant_time"]["verdict"] for item in store.read(out / "suite-report.json")["implementations"]] == [
        "leak"]
    assert "PARTIAL" not in (out / "report.md").read_text() and "RUNNING" not in (out / "report.md").read_text()
