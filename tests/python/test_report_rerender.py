"""`pqscope report DIR` renders a result directory from what it keeps, the same as the command
that made it wrote it: a constant-time test (with its plots' data) and a run."""

import json

from click.testing import CliRunner

from pqscope.cli import cli
from pqscope.results import store
from test_cli import RUN, invoke
from test_ct_resume import CT, ports_of

WRITTEN = {"md": "report.md", "html": "report.html"}


def assert_rendered_as_written(out, formats: dict[str, str]) -> None:
    for fmt, name in formats.items():
        result = invoke("report", str(out), "--format", fmt)
        assert result.exit_code == 0, result.stderr
        assert result.stdout == (out / name).read_text(), fmt


def test_a_ct_directory_renders_as_the_command_wrote_it(fake_repo, fake_toolchain, pty_device, tmp_path):
    _devices, ports = ports_of(pty_device, 1, key_leak=400, probes=("sqrt",), probe_leak=300)
    out = tmp_path / "ct"
    ct = [*CT[:CT.index("-n")], "-n", "100", "--seed", "07", "--probes"]
    result = CliRunner().invoke(cli, [*ct, *ports, "--out", str(out), "--json"])
    assert result.exit_code == 4, result.stderr  # a leak
    assert json.loads(result.stdout) == store.read(out / "ct.json")
    assert "<img" in (out / "report.html").read_text()
    assert_rendered_as_written(out, {**WRITTEN, "json": "ct.json"})
    table = invoke("report", str(out))
    assert table.exit_code == 0 and "ml-dsa-44 m4f on stm32f4discovery" in table.stdout


def test_a_run_directory_renders_as_the_command_wrote_it(fake_repo, fake_toolchain, tmp_path):
    out = tmp_path / "run"
    assert invoke(*RUN, "-n", "3", "--seed", "0b", "--out", str(out)).exit_code == 0
    assert_rendered_as_written(out, WRITTEN)


def test_csv_is_for_runs_only(fake_repo, fake_toolchain, pty_device, tmp_path):
    _devices, ports = ports_of(pty_device, 1)
    out = tmp_path / "ct"
    ct = [*CT[:CT.index("-n")], "-n", "20", "--seed", "07", "--fixed-n"]
    assert CliRunner().invoke(cli, [*ct, *ports, "--out", str(out)]).exit_code == 5  # inconclusive: 20 signatures
    result = invoke("report", str(out), "--format", "csv")
    assert result.exit_code != 0 and "CSV is for runs" in result.stderr
