"""The main job's step estimates against a recorded suite (issue #55): the default suite on the
virtual board, two emulators per step, as `pqscope run` recorded it (its members' run directories:
medians of key generation and signing, each emulator's model cycles per second; their
constant-time tests: signatures, random keys, exact-check signatures, how long the step took and
how long its exact check took). An estimate is within a factor of 1.5 of what the step took, or
none is shown: the exact check's time cannot be told beforehand (it took 5 to 85 times as long
as its signatures' cycles at the emulator's speed in this suite)."""

import csv
import json

import pytest

from pqscope.jobs.suite import STEP_SECONDS, ct_seconds
from pqscope.results.runs import load_run

SHARDS = 2
# (member, keygen and signing medians, each emulator's model cycles per second, the test's signatures,
# random keys and exact-check signatures, the step's seconds (meta.json's started_at to finished_at), the
# exact check's seconds (its emulator's wall_seconds)); recorded 2026-11-28 on two cores.
RECORDED = [
    ("ecdsa-p256-mbedtls", 5313017, 6674872, [160004033, 123087619], 100, 10, 2, 20.0, 14.355223),
    ("falcon-512-fpemu-c", 159378929, 60687986, [631395985, 563961606], 40, 1, 1, 9.0, 3.845129),
    ("falcon-512-fpemu-m4", 126553709, 39108445, [317858640, 293703184], 62, 2, 1, 10.0, 2.908949),
    ("falcon-512-fpnative", 111691023, 35160005, [343004801, 373810474], 70, 2, 1, 33.0, 24.127554),
    ("fndsa_provisional-512-m4f", 61516716, 22135065, [367725946, 309578160], 100, 5, 2, 10.0, 3.622491),
    ("ml-dsa-44-m4f", 1395344, 2655389, [203159157, 152020721], 100, 10, 2, 3.0, 0.420994),
    ("sphincs-sha2-128f-simple-clean", 14481989, 338842737, [277283924, 288984303], 20, 10, 1, 24.0, 13.630567),
]
MEMBERS = [pytest.param(*row, id=row[0]) for row in RECORDED]


def recorded_run(path, keygen: int, sign: int, speeds: list[int]):
    """A run directory with the recorded medians and emulators' speeds (one sample of each operation)."""
    path.mkdir()
    meta = {"kind": "run", "board": "virtual", "scheme": "s", "impl": "i", "ops": ["keygen", "sign"], "samples": 1,
            "msg_len": 32, "master_seed": "01", "status": "complete", "clock_hz": 24_000_000,
            "image": {"text": 1, "data": 0, "bss": 0},
            "shards": [{"target": "virtual", "emulator_stats": {"model_cycles_per_second": speed}} for speed in speeds]}
    (path / "meta.json").write_text(json.dumps(meta))
    with (path / "samples.csv").open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["sample_id", "op", "seed", "cycles", "stack_bytes", "status", "verified", "board"])
        for op, cycles in (("keygen", keygen), ("sign", sign)):
            writer.writerow([0, op, "01", cycles, 1024, "ok", "true", "B0"])
    return load_run(path)


@pytest.mark.parametrize("name, keygen, sign, speeds, signatures, keys, exact, step, exact_seconds", MEMBERS)
def test_a_step_with_the_exact_check_shows_no_estimate(tmp_path, name, keygen, sign, speeds, signatures, keys, exact,
                                                       step, exact_seconds):
    assert ct_seconds(recorded_run(tmp_path / name, keygen, sign, speeds), signatures, keys, SHARDS, exact) is None


@pytest.mark.parametrize("name, keygen, sign, speeds, signatures, keys, exact, step, exact_seconds", MEMBERS)
def test_a_step_of_statistics_is_estimated_within_a_factor_of_1_5(tmp_path, name, keygen, sign, speeds, signatures,
                                                                  keys, exact, step, exact_seconds):
    estimate = ct_seconds(recorded_run(tmp_path / name, keygen, sign, speeds), signatures, keys, SHARDS, 0)
    took = step - exact_seconds  # the step without its exact check
    assert took / 1.5 <= estimate <= took * 1.5


def test_a_board_s_pace_is_its_clock(tmp_path):
    path = tmp_path / "board"
    run = recorded_run(path, 1_000_000, 2_400_000, [])  # no emulator statistics: a board at 24 MHz
    assert ct_seconds(run, 100, 10, 1, 0) == pytest.approx(STEP_SECONDS + (11 * 1_000_000 + 100 * 2_400_000) / 24e6)
