"""Reading run directories back: one run (meta.json + samples.csv) or a suite of runs (a directory
of run directories), summarised from the samples so that interrupted runs report what they have."""

import csv
from dataclasses import dataclass
from pathlib import Path

from .capture import Row
from .errors import PqscopeError
from .metadata import load_json
from .protocol import Op, Status
from .stats import summarize

OPS_BY_LABEL = {op.label: op for op in Op}
STATUS_BY_LABEL = {status.label: status for status in Status}


@dataclass(frozen=True)
class Run:
    path: Path
    meta: dict
    rows: list[Row]

    @property
    def label(self) -> str:
        return f"{self.meta['scheme']} {self.meta['impl']}"

    def results(self) -> list[dict]:
        ops = tuple(OPS_BY_LABEL[label] for label in self.meta["ops"])
        return summarize(self.rows, ops, self.meta["scheme"], self.meta["impl"], self.meta["image"]["text"])


def find_runs(path: Path) -> list[Path]:
    """`path` itself if it is a run directory, else the run directories inside it (a suite)."""
    if (path / "meta.json").is_file():
        return [path]
    runs = sorted(child for child in path.iterdir() if (child / "meta.json").is_file()) if path.is_dir() else []
    if not runs:
        raise PqscopeError(f"{path} is not a run directory (no meta.json) and holds none")
    return runs


def load_run(path: Path) -> Run:
    meta = load_json(path / "meta.json")
    samples = path / "samples.csv"
    try:
        with samples.open(newline="") as file:
            rows = [_row(record) for record in csv.DictReader(file)]
    except FileNotFoundError:
        raise PqscopeError(f"{path} has no samples.csv") from None
    except (KeyError, ValueError) as error:
        raise PqscopeError(f"{samples} is damaged: {error}") from None
    return Run(path, meta, rows)


def _row(record: dict) -> Row:
    return Row(
        sample_id=int(record["sample_id"]), op=OPS_BY_LABEL[record["op"]], seed=bytes.fromhex(record["seed"]),
        cycles=int(record["cycles"]), stack_bytes=int(record["stack_bytes"]),
        status=STATUS_BY_LABEL[record["status"]], verified=record["verified"] == "true",
    )


def newest_run(runs_dir: Path) -> Path:
    """The newest run or suite under `runs_dir` (`pqscope run` names them after their start time)."""
    found = sorted(child for child in runs_dir.iterdir() if child.is_dir()) if runs_dir.is_dir() else []
    if not found:
        raise PqscopeError(f"no runs: {runs_dir} holds none; measure with `pqscope run` or pass --run DIR")
    return found[-1]
