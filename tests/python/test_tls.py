"""pqscope tls-budget and the reports' TLS section, on run directories written here (exact, known
samples) and on one the tool writes itself on the virtual board with the fake device."""

import csv
import html
import json
from pathlib import Path
from statistics import median

import pytest
from click.testing import CliRunner

from fakedevice import fake_cycles
from pqscope.results.records import sample_seed
from pqscope.cli import cli
from pqscope.link.protocol import Op
from pqscope.views.runs import TLS_CAPTION

CLOCK_HZ = 24_000_000


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def budget(*args: str) -> list[dict]:
    result = invoke("tls-budget", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["rows"]


def assert_one_line_error(result, expected: str) -> None:
    assert result.exit_code != 0 and result.stdout == "" and "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert expected in line


def write_run(path: Path, scheme: str, impl: str, pk_bytes: int, sig_bytes: int, cycles: dict[str, list[int]],
              clock_hz: int = CLOCK_HZ) -> Path:
    """A run directory as `pqscope run` writes it, with the given cycles per operation."""
    path.mkdir(parents=True)
    meta = {
        "schema": 1, "board": "virtual", "scheme": scheme, "impl": impl, "image": {"text": 1000, "data": 0, "bss": 0},
        "ops": list(cycles), "samples": max(map(len, cycles.values())), "status": "complete", "clock_hz": clock_hz,
        "info": {"clock_hz": clock_hz, "pk_bytes": pk_bytes, "sk_bytes": 1, "sig_bytes": sig_bytes,
                 "scheme": scheme, "impl": impl},
    }
    (path / "meta.json").write_text(json.dumps(meta))
    with (path / "samples.csv").open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["sample_id", "op", "seed", "cycles", "stack_bytes", "status", "verified"])
        for op, values in cycles.items():
            for sample_id, value in enumerate(values):
                writer.writerow([sample_id, op, "00", value, 100, "ok", "true"])
    return path


def add_failed_verify(path: Path, cycles: int) -> None:
    """A failed verification, whose cycles no figure may include."""
    with (path / "samples.csv").open("a", newline="") as stream:
        csv.writer(stream).writerow([99, "verify", "00", cycles, 100, "valid_rejected", "false"])


@pytest.fixture
def runs(tmp_path) -> dict[str, Path]:
    """ML-DSA-44 and ECDSA P-256 at 24 MHz, Falcon-512 at 168 MHz, with odd sample counts: the median
    is one of the samples."""
    mldsa = write_run(tmp_path / "mldsa", "ml-dsa-44", "m4f", 1312, 2420,
                      {"keygen": [1, 2, 3], "sign": [4_000_000, 9_000_000, 5_000_000], "verify": [1_200_000, 1_100_000, 1_300_000]})
    add_failed_verify(mldsa, 999_000_000)
    falcon = write_run(tmp_path / "falcon", "falcon-512", "fpemu-m4", 897, 690,
                       {"sign": [40_000_000], "verify": [480_000, 470_000, 475_000]}, clock_hz=168_000_000)
    ecdsa = write_run(tmp_path / "ecdsa", "ecdsa-p256", "mbedtls", 65, 64,
                      {"sign": [6_800_000], "verify": [23_500_000]})
    return {"mldsa": mldsa, "falcon": falcon, "ecdsa": ecdsa}


def test_one_scheme_in_every_role(runs):
    (row,) = budget("--run", str(runs["mldsa"]))
    assert row["scheme"] == "ml-dsa-44" and row["impl"] == "m4f"
    assert row["bytes"] == 6 * 2420 + 2 * 1312 == 17_144
    assert (row["fits_9kB"], row["fits_initcwnd10"], row["fits_initcwnd30"]) == (False, False, True)
    assert row["extra_round_trips_initcwnd10"] == 1 and row["extra_round_trips_initcwnd30"] == 0
    # Six verifications at the median of the successful ones; the handshake signature's median signing.
    assert row["verify_cycles"] == 6 * 1_200_000
    assert row["verify_ms"] == pytest.approx(6 * 1_200_000 / CLOCK_HZ * 1e3) == pytest.approx(300.0)
    assert row["sign_cycles"] == 5_000_000 and row["sign_ms"] == pytest.approx(5_000_000 / CLOCK_HZ * 1e3)
    assert [(p["role"], p["signatures"], p["public_keys"], p["bytes"]) for p in row["parts"]] == [
        ("handshake", 1, 1, 2420 + 1312), ("chain", 2, 1, 2 * 2420 + 1312), ("ocsp", 1, 0, 2420), ("sct", 2, 0, 4840)]


def test_a_mixed_assignment_adds_a_row_named_by_its_parts(runs):
    rows = budget(*(f"--run={path}" for path in runs.values()), "--assign", "handshake=ml-dsa-44/m4f",
                  "--assign", "chain=falcon-512/fpemu-m4", "--assign", "ocsp+sct=ecdsa-p256/mbedtls")
    assert [r["scheme"] for r in rows[:3]] == ["ml-dsa-44", "falcon-512", "ecdsa-p256"]
    mixed = rows[3]
    assert mixed["scheme"] == "handshake=ml-dsa-44/m4f chain=falcon-512/fpemu-m4 ocsp+sct=ecdsa-p256/mbedtls"
    assert mixed["impl"] is None
    assert mixed["bytes"] == (2420 + 1312) + (2 * 690 + 897) + 3 * 64 == 6_201
    assert (mixed["fits_9kB"], mixed["fits_initcwnd10"], mixed["extra_round_trips_initcwnd10"]) == (True, True, 0)
    assert mixed["verify_cycles"] == 1_200_000 + 2 * 475_000 + 3 * 23_500_000
    # Each part's time at its own run's clock.
    assert mixed["verify_ms"] == pytest.approx((1_200_000 + 3 * 23_500_000) / 24e3 + 2 * 475_000 / 168e3)
    assert mixed["sign_cycles"] == 5_000_000
    assert [(p["role"], p["scheme"], p["impl"], p["bytes"], p["verify_cycles"], p["source"]) for p in mixed["parts"]] == [
        ("handshake", "ml-dsa-44", "m4f", 3732, 1_200_000, str(runs["mldsa"])),
        ("chain", "falcon-512", "fpemu-m4", 2277, 950_000, str(runs["falcon"])),
        ("ocsp", "ecdsa-p256", "mbedtls", 64, 23_500_000, str(runs["ecdsa"])),
        ("sct", "ecdsa-p256", "mbedtls", 128, 47_000_000, str(runs["ecdsa"])),
    ]


def test_roles_not_assigned_take_the_handshakes_and_a_bare_scheme_its_run(runs):
    rows = budget("--run", str(runs["mldsa"]), "--run", str(runs["falcon"]),
                  "--assign", "handshake=falcon-512", "--assign", "sct=ml-dsa-44")
    mixed = rows[-1]
    assert mixed["scheme"] == "handshake+chain+ocsp=falcon-512/fpemu-m4 sct=ml-dsa-44/m4f"
    assert mixed["bytes"] == 4 * 690 + 2 * 897 + 2 * 2420
    assert mixed["sign_cycles"] == 40_000_000


def test_assigning_one_measured_implementation_everywhere_repeats_no_row(runs):
    assert len(budget("--run", str(runs["mldsa"]), "--assign", "handshake=ml-dsa-44/m4f")) == 1


def test_a_scheme_without_a_run_has_catalogue_sizes_and_no_cycles(fake_repo, runs):
    mixed = budget("--run", str(runs["falcon"]), "--assign", "handshake=falcon-512/fpemu-m4",
                   "--assign", "ocsp+sct=ml-dsa-44")[-1]
    assert mixed["bytes"] == (690 + 897) + (2 * 690 + 897) + 3 * 2420  # the fake catalogue's ML-DSA-44 sizes
    assert mixed["verify_cycles"] is None and mixed["verify_ms"] is None
    assert mixed["sign_cycles"] == 40_000_000
    assert mixed["parts"][2]["source"] == "catalogue" and mixed["parts"][2]["impl"] is None


def test_sizes_come_from_the_run_not_the_catalogue(fake_repo, tmp_path):
    # The fake catalogue says 1312/2420 for ML-DSA-44; the firmware's INFO in meta.json wins.
    run = write_run(tmp_path / "run", "ml-dsa-44", "m4f", 1000, 2000, {"sign": [1], "verify": [2]})
    assert budget("--run", str(run))[0]["bytes"] == 6 * 2000 + 2 * 1000


def test_overhead_is_added_once_per_handshake(runs):
    (row,) = budget("--run", str(runs["ecdsa"]), "--overhead", "14086")
    assert row["bytes"] == 514 + 14_086 == 14_600 and row["overhead_bytes"] == 14_086
    assert row["fits_initcwnd10"] is True and row["extra_round_trips_initcwnd10"] == 0
    (row,) = budget("--run", str(runs["ecdsa"]), "--overhead", "14087")
    assert row["bytes"] == 14_601 and row["fits_initcwnd10"] is False and row["extra_round_trips_initcwnd10"] == 1


def test_a_suite_gives_a_row_per_run_and_the_table_shows_them(runs, tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    for name in ("mldsa", "falcon"):
        runs[name].rename(suite / name)
    assert [r["scheme"] for r in budget("--run", str(suite))] == ["falcon-512", "ml-dsa-44"]
    result = invoke("tls-budget", "--run", str(suite), "--run", str(runs["ecdsa"]),
                    "--assign", "handshake=ml-dsa-44/m4f", "--assign", "chain=falcon-512/fpemu-m4")
    assert result.exit_code == 0, result.stderr
    assert "TLS 1.3 handshake budget" in result.stdout
    # The mixed row's name, one role per line: the roles left out share the handshake's line.
    for figure in ("17,144", "7,200,000", "300.00", "5,000,000", "208.33", "handshake+ocsp+sct=ml-dsa-44/m4f",
                   "chain=falcon-512/fpemu-m4"):
        assert figure in result.stdout


def test_without_run_the_newest_under_runs(fake_repo, tmp_path):
    write_run(fake_repo / "runs/20260101-120000-virtual-ml-dsa-44-m4f", "ml-dsa-44", "m4f", 1312, 2420,
              {"sign": [1], "verify": [2]})
    write_run(fake_repo / "runs/20260102-090000-virtual-ecdsa-p256-mbedtls", "ecdsa-p256", "mbedtls", 65, 64,
              {"sign": [1], "verify": [2]})
    assert [r["scheme"] for r in budget()] == ["ecdsa-p256"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--assign", "handshake"), "--assign 'handshake' is not ROLE=SCHEME[/IMPL]"),
        (("--assign", "chain="), "--assign 'chain=' is not ROLE=SCHEME[/IMPL]"),
        (("--assign", "leaf=ml-dsa-44/m4f"), "unknown role 'leaf' in --assign 'leaf=ml-dsa-44/m4f'; valid: chain, "),
        (("--assign", "handshake=ml-dsa-44/m4f", "--assign", "sct+handshake=ml-dsa-44/m4f"),
         "--assign gives role 'handshake' twice"),
        (("--assign", "chain=ml-dsa-44/m4f"), "--assign needs handshake=SCHEME[/IMPL]"),
        (("--assign", "handshake=ml-dsa-44/m4f", "--assign", "chain=falcon-512/fpnative"),
         "--assign: no run of falcon-512/fpnative among the runs (ml-dsa-44/m4f, falcon-512/fpemu-m4)"),
        (("--assign", "handshake=ml-dsa-44/m4f", "--assign", "chain=no-such-sig"),
         "unknown scheme 'no-such-sig' in --assign; valid: ml-dsa-44"),
    ],
)
def test_bad_assignments_are_one_line(fake_repo, runs, args, expected):
    assert_one_line_error(invoke("tls-budget", "--run", str(runs["mldsa"]), "--run", str(runs["falcon"]), *args),
                          expected)


def test_two_runs_of_one_scheme_are_ambiguous(runs, tmp_path):
    clean = write_run(tmp_path / "clean", "ml-dsa-44", "clean", 1312, 2420, {"sign": [1], "verify": [2]})
    result = invoke("tls-budget", "--run", str(runs["mldsa"]), "--run", str(clean), "--assign", "handshake=ml-dsa-44")
    assert_one_line_error(result, "--assign: several runs of ml-dsa-44")


def test_no_runs_is_one_line(fake_repo):
    assert_one_line_error(invoke("tls-budget"), f"no runs: {fake_repo / 'runs'} holds none")
    (fake_repo / "runs").mkdir()
    assert_one_line_error(invoke("tls-budget"), "no runs:")


def test_a_run_without_sign_and_verify_samples_is_one_line(tmp_path):
    run = write_run(tmp_path / "keygen-only", "ml-dsa-44", "m4f", 1312, 2420, {"keygen": [1, 2]})
    assert_one_line_error(invoke("tls-budget", "--run", str(run)),
                          f"{run} (ml-dsa-44 m4f) has no successful sign and verify samples")


def test_the_reports_show_the_tls_table_and_plot(runs, tmp_path):
    page = invoke("report", str(runs["mldsa"]), "--format", "html").stdout
    section = page[page.index("<h2>TLS 1.3 handshake budget</h2>"):]
    assert section.count("<tr>") == 2  # headings and ML-DSA-44
    assert "<td>ml-dsa-44/m4f</td><td>17,144</td><td>no</td><td>no</td><td>yes</td><td>1</td>" in section
    assert "<td>7,200,000</td><td>300.00</td><td>5,000,000</td><td>208.33</td>" in section
    assert f'<img alt="{html.escape(TLS_CAPTION)}" src="data:image/png;base64,' in section
    markdown = invoke("report", str(runs["mldsa"]), "--format", "md").stdout
    assert "## TLS 1.3 handshake budget" in markdown
    assert "| ml-dsa-44/m4f | 17,144 | no | no | yes | 1 | 7,200,000 | 300.00 | 5,000,000 | 208.33 |" in markdown


def test_a_suite_report_leaves_out_runs_without_sign_and_verify(runs, tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    runs["ecdsa"].rename(suite / "ecdsa")
    write_run(suite / "keygen-only", "ml-dsa-44", "m4f", 1312, 2420, {"keygen": [1, 2]})
    page = invoke("report", str(suite), "--format", "html").stdout
    section = page[page.index("<h2>TLS 1.3 handshake budget</h2>"):]
    assert section.count("<tr>") == 2 and "<td>ecdsa-p256/mbedtls</td><td>514</td>" in section


def test_no_tls_section_without_sign_and_verify(tmp_path):
    run = write_run(tmp_path / "keygen-only", "ml-dsa-44", "m4f", 1312, 2420, {"keygen": [1, 2]})
    assert "TLS" not in invoke("report", str(run), "--format", "html").stdout
    assert "TLS" not in invoke("report", str(run), "--format", "md").stdout


def test_a_run_the_tool_measured(fake_repo, fake_toolchain, tmp_path):
    """End to end through `pqscope run` (the fake device on the virtual board path): sizes from its
    INFO, cycles from the samples it sent, and the report.html that run wrote."""
    out = tmp_path / "run"
    run = invoke("run", "--scheme", "ml-dsa-44", "--impl", "m4f", "-n", "5", "--seed", "05", "--out", str(out))
    assert run.exit_code == 0, run.stderr
    seeds = [sample_seed(bytes.fromhex("05"), i) for i in range(5)]
    (row,) = budget("--run", str(out))
    assert row["bytes"] == 17_144
    assert row["verify_cycles"] == 6 * median(fake_cycles(seed, Op.VERIFY) for seed in seeds)
    assert row["sign_cycles"] == median(fake_cycles(seed, Op.SIGN) for seed in seeds)
    assert row["sign_ms"] == pytest.approx(row["sign_cycles"] / CLOCK_HZ * 1e3)
    assert "<h2>TLS 1.3 handshake budget</h2>" in (out / "report.html").read_text()


def test_without_run_the_newest_run_with_sign_and_verify_is_taken_and_named(fake_repo):
    runs = fake_repo / "runs"
    write_run(runs / "20260101-000000-virtual-ecdsa-p256-mbedtls", "ecdsa-p256", "mbedtls", 65, 64,
              {"sign": [100, 100], "verify": [300, 300]})
    write_run(runs / "20260102-000000-virtual-ml-dsa-44-m4f", "ml-dsa-44", "m4f", 1312, 2420, {"keygen": [1, 2]})
    (runs / "20260103-000000-virtual-falcon-512-fpnative-ct").mkdir()
    (runs / "20260103-000000-virtual-falcon-512-fpnative-ct/meta.json").write_text('{"kind": "ct"}')
    result = invoke("tls-budget", "--json")
    assert result.exit_code == 0, result.stderr
    assert [row["scheme"] for row in json.loads(result.stdout)["rows"]] == ["ecdsa-p256"]
    assert "20260101-000000-virtual-ecdsa-p256-mbedtls" in result.stderr.replace("\n", "")


def test_without_run_and_no_measured_run_the_error_says_how_to_get_one(fake_repo):
    write_run(fake_repo / "runs/keygen-only", "ml-dsa-44", "m4f", 1312, 2420, {"keygen": [1, 2]})
    assert_one_line_error(invoke("tls-budget"), "holds none with the samples needed; measure with `pqscope run`")
