"""The runner: one measurement lifecycle for every command, whatever the target and the capture."""

import contextlib
import dataclasses
import csv
import hashlib
import json

import pytest
from rich.console import Console

from conftest import REPO
from fakedevice import Behaviour, LoopbackPort, make_info
from pqscope.project.boards import get_board
from pqscope.project.build import PLAIN, read_size
from pqscope.project.catalogue import find_implementation, load_catalogue
from pqscope.analysis.ct import CtCapture
from pqscope.link.device import DeviceSession
from pqscope.project.errors import PqscopeError
from pqscope.link.protocol import Op
from pqscope.measure.halt import Halt
from pqscope.measure.runner import Runner
from pqscope.measure.capture import SampleCapture
from pqscope.targets.target import Connection, Image, Link, Target
from pqscope.targets.serial import SerialTarget
from pqscope.targets.virtual import VirtualTarget
from pqscope.targets.kinds import open_target
from pqscope.results import store

OPS = (Op.KEYGEN, Op.SIGN, Op.VERIFY)


class LoopbackTarget(Target):
    """A target whose board is the in-process fake device; it builds nothing and records what the
    runner asked of it."""

    kind = "loopback"

    def __init__(self, elf, *, profiles=False, behaviour=None, interrupt_after=None, model=None, halt_after=None):
        super().__init__(REPO, get_board(REPO, "virtual"), Link(timeout=5))
        self.profiles = profiles
        self.elf, self.behaviour, self.interrupt_after, self.model = elf, behaviour, interrupt_after, model
        self.halt_after = halt_after  # (commands, halt): InterruptingPort's, halting instead
        self.asked: list = []

    def timing_model(self):
        return self.model

    def image(self, implementation, console, variant=PLAIN, keys_held=1):
        self.asked.append("image")
        return Image(self.elf, read_size(self.elf))

    @contextlib.contextmanager
    def connect(self, elf, console, *, stats_dir, on_receive=None, profiling=None):
        self.asked.append(("connect", profiling))
        port = LoopbackPort(make_info(), self.behaviour)
        if self.interrupt_after is not None:
            port = InterruptingPort(port, self.interrupt_after)
        if self.halt_after is not None:
            port = InterruptingPort(port, *self.halt_after)
        connection = Connection(DeviceSession(port, on_receive=on_receive, sample_timeout=5), "loopback")
        yield connection
        connection.stats = {"model_cycles": port.device.model_cycles}


class InterruptingPort:
    """Passes everything through until the device has answered `commands` commands after HELLO,
    then raises KeyboardInterrupt on the next write, as Ctrl-C between two samples would, or calls
    `halt` (a measure.halt.Halt), as another thread would, and writes it."""

    def __init__(self, port: LoopbackPort, commands: int, halt=None):
        self._port, self._left, self._halt = port, commands + 1, halt

    def __getattr__(self, name):
        return getattr(self._port, name)

    def write(self, data: bytes) -> int:
        if self._left == 0 and self._halt is None:
            raise KeyboardInterrupt
        if self._left == 0:
            self._halt()
        self._left -= 1
        return self._port.write(data)


@pytest.fixture
def implementation():
    return find_implementation(load_catalogue(REPO), "ml-dsa-44", "m4f")


def quiet() -> Console:
    return Console(file=open("/dev/null", "w"))


def csv_rows(path) -> list[dict]:
    with path.open(newline="") as stream:
        return list(csv.DictReader(stream))


def test_a_complete_measurement_records_every_sample_and_how_it_ran(tiny_elf, implementation, tmp_path):
    target = LoopbackTarget(tiny_elf[0])
    outcome = Runner(target, quiet()).measure(implementation, tmp_path / "run", SampleCapture(OPS, 7, b"s", 32))
    meta = json.loads((tmp_path / "run/meta.json").read_text())
    assert meta == outcome.meta.to_json()
    assert (meta["kind"], meta["status"], meta["samples_completed"], meta["target"]) == ("run", "complete", 7, "loopback")
    assert meta["info"]["scheme"] == "ml-dsa-44" and meta["clock_hz"] == make_info().clock_hz
    assert meta["emulator_stats"]["model_cycles"] == sum(row.cycles for rows in outcome.records for row in rows)
    assert [row["sample_id"] for row in csv_rows(tmp_path / "run/samples.csv")] == [str(i) for i in range(7) for _ in OPS]
    assert outcome.result is None and not outcome.interrupted
    # Without a profiler the capture's profiling is never asked for.
    assert target.asked == ["image", ("connect", None)]


def test_an_interrupted_measurement_resumes_to_the_uninterrupted_one(tiny_elf, implementation, tmp_path):
    whole = Runner(LoopbackTarget(tiny_elf[0]), quiet()).measure(implementation, tmp_path / "whole",
                                                                 SampleCapture(OPS, 9, b"s", 32))
    console = Console(record=True, file=open("/dev/null", "w"), width=500)
    cut = Runner(LoopbackTarget(tiny_elf[0], interrupt_after=4), console).measure(
        implementation, tmp_path / "cut", SampleCapture(OPS, 9, b"s", 32))
    assert cut.interrupted and cut.meta.samples_completed == 4 and len(cut.records) == 4
    assert f"interrupted after 4 of 9 samples; data kept in {tmp_path / 'cut'}" in console.export_text()
    assert json.loads((tmp_path / "cut/meta.json").read_text())["status"] == "interrupted"

    resumed = Runner(LoopbackTarget(tiny_elf[0]), quiet()).measure(
        implementation, tmp_path / "cut", SampleCapture(OPS, 9, b"s", 32), resumed=cut.meta)
    assert resumed.meta.status == "complete" and len(resumed.meta.resumed_at) == 1
    # The last sample written is measured again: a kill may have cut it.
    assert resumed.records == whole.records
    assert csv_rows(tmp_path / "cut/samples.csv") == csv_rows(tmp_path / "whole/samples.csv")


def test_a_measurement_halted_from_another_thread_ends_interrupted_and_resumes(tiny_elf, implementation, tmp_path):
    """A Halt (the exact check's beside a constant-time test, halted by the test's thread) cancels the
    sessions: the sample it was taking is lost, those before kept, and the run resumes to the whole
    one; halted before it starts, it ends interrupted at its board's INFO, with nothing measured."""
    whole = Runner(LoopbackTarget(tiny_elf[0]), quiet()).measure(implementation, tmp_path / "whole",
                                                                 SampleCapture(OPS, 9, b"s", 32))
    halt = Halt()
    cut = Runner(LoopbackTarget(tiny_elf[0], halt_after=(4, halt)), quiet(), halt=halt).measure(
        implementation, tmp_path / "cut", SampleCapture(OPS, 9, b"s", 32))
    assert cut.interrupted and cut.meta.samples_completed == 4 and halt.halted
    resumed = Runner(LoopbackTarget(tiny_elf[0]), quiet()).measure(
        implementation, tmp_path / "cut", SampleCapture(OPS, 9, b"s", 32), resumed=cut.meta)
    assert resumed.meta.status == "complete" and resumed.records == whole.records

    early = Halt()
    early()
    before = Runner(LoopbackTarget(tiny_elf[0]), quiet(), halt=early).measure(
        implementation, tmp_path / "before", SampleCapture(OPS, 9, b"s", 32))
    assert before.interrupted and before.meta.samples_completed == 0
    assert json.loads((tmp_path / "before/meta.json").read_text())["status"] == "interrupted"


def test_a_failure_is_recorded_and_raised(tiny_elf, implementation, tmp_path):
    target = LoopbackTarget(tiny_elf[0], behaviour=Behaviour(fault_on_run=True))
    with pytest.raises(PqscopeError, match="HardFault at pc=0x080012af"):
        Runner(target, quiet()).measure(implementation, tmp_path / "run", SampleCapture(OPS, 3, b"s", 32))
    meta = json.loads((tmp_path / "run/meta.json").read_text())
    assert meta["status"].startswith("failed: ") and "HardFault" in meta["status"] and "finished_at" in meta


def test_resuming_refuses_other_code(tiny_elf, implementation, tmp_path):
    cut = Runner(LoopbackTarget(tiny_elf[0], interrupt_after=2), quiet()).measure(
        implementation, tmp_path / "run", SampleCapture(OPS, 5, b"s", 32))
    with pytest.raises(PqscopeError, match="changed since the run started"):
        Runner(LoopbackTarget(tiny_elf[0]), quiet()).measure(
            implementation, tmp_path / "run", SampleCapture(OPS, 5, b"s", 32),
            resumed=dataclasses.replace(cut.meta, code_sha256="0" * 64))


def test_resuming_refuses_another_timing_model(tiny_elf, implementation, tmp_path):
    what = SampleCapture(OPS, 5, b"s", 32)
    cut = Runner(LoopbackTarget(tiny_elf[0], interrupt_after=2, model="a" * 64), quiet()).measure(
        implementation, tmp_path / "run", what)
    assert json.loads((tmp_path / "run/meta.json").read_text())["timing_model"] == "a" * 64
    with pytest.raises(PqscopeError, match="emulator changed since the run started"):
        Runner(LoopbackTarget(tiny_elf[0], model="b" * 64), quiet()).measure(
            implementation, tmp_path / "run", what, resumed=cut.meta)
    resumed = Runner(LoopbackTarget(tiny_elf[0], model="a" * 64), quiet()).measure(
        implementation, tmp_path / "run", what, resumed=cut.meta)
    assert resumed.meta.status == "complete" and len(resumed.records) == 5


def test_the_virtual_boards_timing_model_is_its_emulators_digest(tmp_path):
    emulator = tmp_path / "pqscope-vboard"
    emulator.write_bytes(b"an emulator build")
    target = VirtualTarget(REPO, get_board(REPO, "virtual"), emulator=emulator)
    assert target.timing_model() == hashlib.sha256(b"an emulator build").hexdigest()


def test_a_profiling_target_is_asked_to_profile_the_constant_time_test(tiny_elf, implementation, tmp_path):
    target = LoopbackTarget(tiny_elf[0], profiles=True)
    what = CtCapture(40, b"s", 32)
    # The fake device writes no intervals: the profile the runner asked for is what is checked.
    with pytest.raises(PqscopeError, match="cannot read the emulator's intervals"):
        Runner(target, quiet()).measure(implementation, tmp_path / "ct", what)
    (_, profiling), = [asked for asked in target.asked if asked != "image"]
    assert profiling.intervals == tmp_path / "ct/intervals.jsonl" and profiling.function == "run_sign"
    assert profiling.public_functions == implementation.public_functions


def test_a_constant_time_test_without_a_profiler_finishes_with_its_verdict(tiny_elf, implementation, tmp_path):
    outcome = Runner(LoopbackTarget(tiny_elf[0], behaviour=Behaviour(key_leak=400)), quiet()).measure(
        implementation, tmp_path / "ct", CtCapture(200, b"s", 32))
    assert outcome.result["verdict"] == "leak" and "top_functions" not in outcome.result
    meta = json.loads((tmp_path / "ct/meta.json").read_text())
    assert meta["result"] == outcome.result == store.read(tmp_path / "ct/ct.json")
    assert len(meta["keys"]) == make_info().key_slots and len(csv_rows(tmp_path / "ct/ct.csv")) == 200


def test_a_board_on_a_serial_port_needs_the_port_before_anything_is_built(fake_repo, implementation):
    target = SerialTarget(fake_repo, get_board(fake_repo, "stm32f4discovery"), Link())
    with pytest.raises(PqscopeError, match="reached over a serial port: pass --port"):
        Runner(target, quiet())


def test_a_budget_of_cycles_is_the_virtual_boards_alone(fake_repo):
    """A real board runs as long as it runs: a budget for it is refused, not silently ignored."""
    assert isinstance(open_target(fake_repo, get_board(fake_repo, "virtual"), Link(max_cycles=1000)), VirtualTarget)
    with pytest.raises(PqscopeError, match="a budget of cycles stops the virtual board; board stm32f4discovery runs"):
        open_target(fake_repo, get_board(fake_repo, "stm32f4discovery"), Link(port="/dev/null", max_cycles=1000))

