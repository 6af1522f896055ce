"""A run directory's meta.json, typed: what was measured on which target with which parameters,
what the device said of itself, and how the measurement ended. The runner writes it whenever it
changes (rundir.write_meta); reports and `--resume` read it back through `RunMeta.from_json`, which
checks what they need."""

import dataclasses
import time
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from ..project.errors import PqscopeError

# What reading a run back needs from its meta.json: a report, or resuming each kind.
REPORT_NEEDS = ("scheme", "impl", "ops", "image")
RESUME_NEEDS = {"run": ("board", "scheme", "impl", "ops", "samples", "msg_len", "master_seed"),
                "ct": ("board", "scheme", "impl", "samples", "msg_len", "key_refresh", "master_seed"),
                "taint": ("board", "scheme", "impl", "samples", "msg_len", "master_seed")}


class MetaProblem(PqscopeError):
    """What is wrong with a meta.json ("lacks 'x'"), for the caller to put in context."""


@dataclass
class RunMeta:
    kind: str  # "run" (keygen/sign/verify samples), "ct" (a constant-time test) or "taint" (the exact check)
    board: str | None = None
    scheme: str | None = None
    impl: str | None = None
    samples: int | None = None
    msg_len: int | None = None
    master_seed: str | None = None  # hex
    status: str = "running"  # then "complete", "interrupted" or "failed: <why>"
    samples_completed: int = 0
    schema: int = 1
    tool_version: str | None = None
    command_line: list[str] | None = None
    build: dict | None = None  # compiler, flags and dependency pins of the image's build tree
    started_at: str | None = None
    target: str | None = None  # the kind of target (targets.Target.kind)
    port: str | None = None
    place: str | None = None  # the labgrid place of the board
    hse: str | None = None  # "absent": the virtual board started without its HSE (--without-hse)
    shards: list[dict] | None = None  # a sharded measurement's boards: each one's target, port and emulator_stats
    # Every board that measured in this directory, resumes included, by its serial number (INFO):
    # its target, port and place. The samples name their board by that number.
    boards: dict[str, dict] | None = None
    elf: str | None = None
    image: dict | None = None  # build.ImageSize
    clock: str | None = None  # the board's clock configuration (board.json "clocks"); absent: its default
    clock_hz: int | None = None
    flash_wait_states: int | None = None
    toolchain: dict | None = None  # the image's compiler and optimisation level (toolchain.Toolchain); absent: default
    code_sha256: str | None = None  # of the image's executable sections: a resume must run the same code
    timing_model: str | None = None  # the virtual board's emulator (SHA-256): a resume must price alike
    impl_dir: str | None = None  # a bring-your-own implementation's directory
    impl_stack_bytes: int | None = None  # ... and the stack reserved for it (--stack-bytes)
    info: dict | None = None  # the device's INFO
    probes: dict | None = None  # the image's probes (probes.ProbeSet), if it has any
    variant: dict | None = None  # the probed image and its extra probes (runner.variant_json); absent: plain
    resumed_at: list[str] | None = None
    finished_at: str | None = None
    emulator_stats: dict | None = None
    result: dict | None = None  # the capture's result document (ct: the verdict)
    # kind "run"
    ops: list[str] | None = None
    seed_derivation: str | None = None
    # kind "ct"
    key_refresh: int | None = None
    keys: list[dict] | None = None  # the keys the device made: id, slot, keygen cycles
    fixed_n: bool | None = None  # all `samples` signatures, not a sequential test (absent: sequential)
    stopped_early: str | None = None  # why a sequential test stopped before `samples`
    bound: float | None = None  # the no-leak bound asked for (--bound), as a share of the mean time
    exact_check: int | None = None  # signatures of the exact check beside the test (ct --taint), in taint/
    replay: dict | None = None  # a board's test replayed on the virtual board (replay.ReplaySettings), in replay/
    random_keys: int | None = None  # random keys of the pool the test uses (absent: every slot the image has)
    other_clocks: list[str] | None = None  # the board's clocks its exact check also ran at, each in taint-<clock>/
    # kind "taint"
    one_signature_above: float | None = None  # the first signature alone where its signing took more cycles
    # Entries this version does not know (a newer pqscope's), written back as they were.
    unknown: dict = field(default_factory=dict, repr=False)

    @property
    def seed(self) -> bytes:
        return bytes.fromhex(self.master_seed)

    @property
    def interrupted(self) -> bool:
        return self.status == "interrupted"

    @property
    def device_board(self) -> str:
        """The board the device's INFO names (the virtual board's is the board it emulates)."""
        return self.info["board"]

    @property
    def key_ids(self) -> set[int]:
        """The ids of the keys the device made (a constant-time test's)."""
        return {key["key_id"] for key in self.keys or []}

    def to_json(self) -> dict:
        """The meta.json document: fields without a value are left out."""
        known = {name: value for name, value in dataclasses.asdict(self).items() if value is not None}
        return known | known.pop("unknown")

    @classmethod
    def from_json(cls, data: Any, needs: tuple[str, ...]) -> "RunMeta":
        """The metadata of a meta.json document that has the entries named in `needs`, each of
        its type; raises MetaProblem otherwise."""
        data = {"kind": "run"} | (data if isinstance(data, dict) else {})  # "kind": recorded since ct
        fields = {f.name: f for f in dataclasses.fields(cls) if f.name != "unknown"}
        for name in needs:
            if data.get(name) is None:
                raise MetaProblem(f"lacks '{name}'")
        for name, value in data.items():
            if name in fields and value is not None and not _has_type(value, fields[name].type):
                raise MetaProblem(f"has '{name}' of the wrong type (not {_type_name(fields[name].type)})")
        if data.get("master_seed") is not None:
            try:
                bytes.fromhex(data["master_seed"])
            except ValueError:
                raise MetaProblem(f"has a master_seed that is not hex ({data['master_seed']!r})") from None
        return cls(**{name: value for name, value in data.items() if name in fields},
                   unknown={name: value for name, value in data.items() if name not in fields})


def _base_type(annotation) -> type:
    """str | None -> str, list[str] | None -> list."""
    if isinstance(annotation, types.UnionType):
        (annotation,) = (part for part in typing.get_args(annotation) if part is not type(None))
    return typing.get_origin(annotation) or annotation


def _has_type(value, annotation) -> bool:
    kind = _base_type(annotation)
    if isinstance(value, bool):
        return kind is bool
    return isinstance(value, (int, float) if kind is float else kind)  # JSON writes 1e9 as it likes


def _type_name(annotation) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false", dict: "an object",
            list: "a list"}[_base_type(annotation)]


def timestamp() -> str:
    """Now, as meta.json and a suite's manifest record times."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
