"""pqscope model-check on the virtual boards: every micro-benchmark of tests/vboard/trm.c reaches the
report with the model's price and the published measurement its source line gives it, and takes
exactly what the model says, in the board's own image of them (the Discovery's vboard-trm, the
Nucleo-L4R5ZI's vboard-l4r5-trm)."""

import json
import os
import re
import subprocess
import sys

import pytest

from pqscope.results import store

from conftest import EMULATOR, ROOT

BENCH_ROW = re.compile(r"^\tX\((\w+), (\d+), (\d+)\)", re.MULTILINE)


def declared_benches() -> dict[str, tuple[int, int | None]]:
    """name -> (model cycles, published cycles on silicon or None), from trm.c's BENCHES table."""
    source = (ROOT / "tests/vboard/trm.c").read_text()
    rows = {name: (int(model), int(silicon) or None) for name, model, silicon in BENCH_ROW.findall(source)}
    assert len(rows) > 50, "trm.c's BENCHES table not found"
    return rows


@pytest.mark.parametrize("board", ["virtual", "nucleo-l4r5zi-virtual"])
def test_every_sequence_takes_what_the_model_prices_it_at(tmp_path, board):
    result = subprocess.run([sys.executable, "-m", "pqscope", "model-check", "--board", board, "--json", "--out",
                             str(tmp_path)],
                            capture_output=True, text=True, env={**os.environ, "PQSCOPE_ROOT": str(ROOT)}, timeout=600)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert store.read(tmp_path / "model-check.json") == document
    output = (tmp_path / "output.txt").read_text().splitlines()
    assert output[0].startswith("empty measurement: ") and output[-1].startswith("TRM: all ")
    assert document["board"] == board and document["target"] == {"target": "virtual"}
    sequences = {s["name"]: s for s in document["sequences"]}
    benches = declared_benches()
    assert set(sequences) == set(benches) | {"udiv_mid_quotient"}
    for name, (model, silicon) in benches.items():
        s = sequences[name]
        assert (s["model_low"], s["model_high"], s["silicon"]) == (model, model, silicon), name
        assert s["cycles"] == model, name
    assert document["departures"] == []
    assert document["model_against_published"] == [name for name, (model, silicon) in benches.items()
                                                   if silicon is not None and silicon != model]


def test_a_halted_board_keeps_its_uart_until_stopped():
    """The benchmarks' image halts once it has printed; the host opens the pty only after that and
    still reads every line (a halted board's UART stays readable until the host stops it)."""
    elf = ROOT / "build/stm32f4discovery/tests/vboard/vboard-trm.elf"
    emulator = subprocess.Popen([str(EMULATOR), "--elf", str(elf), "--uart", "pty"], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        lines = iter(emulator.stderr.readline, "")
        pty = next(line for line in lines if line.startswith("vboard: uart ")).split()[-1]
        assert next(line for line in lines if line.startswith("vboard: ")).startswith("vboard: halted")
        fd = os.open(pty, os.O_RDONLY | os.O_NOCTTY)
        try:
            output = b""
            while b"TRM: " not in output or not output.endswith(b"\n"):
                output += os.read(fd, 4096)
        finally:
            os.close(fd)
        assert output.decode().splitlines()[-1].startswith("TRM: all ")
        assert emulator.poll() is None  # still serving the pty
    finally:
        emulator.terminate()
        assert emulator.wait(timeout=60) == 0
