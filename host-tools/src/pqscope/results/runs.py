"""Reading run directories back: one run (meta.json + samples.csv) or a suite of runs (a directory
of run directories), summarised from the samples so that interrupted runs report what they have."""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..project.errors import PqscopeError
from ..project.metadata import load_json
from ..project.toolchain import built_with
from ..results.records import Row
from .probes import ProbeSet
from .rundir import OPS_BY_LABEL, read_samples
from .runmeta import REPORT_NEEDS, MetaProblem, RunMeta
from .stats import summarize

RESULTS_SCHEMA = 1


@dataclass(frozen=True)
class Run:
    path: Path
    meta: RunMeta
    rows: list[Row]

    @property
    def label(self) -> str:
        return f"{self.meta.scheme} {self.meta.impl}"

    def results(self) -> list[dict]:
        ops = tuple(OPS_BY_LABEL[label] for label in self.meta.ops)
        probes = ProbeSet.from_json(self.meta.probes) if self.meta.probes else None
        return summarize(self.rows, ops, self.meta.scheme, self.meta.impl, self.meta.image["text"], probes)


def find_runs(path: Path) -> list[Path]:
    """`path` itself if it is a run directory, else the run directories inside it (a suite)."""
    if (path / "meta.json").is_file():
        return [path]
    runs = sorted(child for child in path.iterdir() if (child / "meta.json").is_file()) if path.is_dir() else []
    if not runs:
        raise PqscopeError(f"{path} is not a run directory (no meta.json) and holds none")
    return runs


def load_run(path: Path) -> Run:
    try:
        meta = RunMeta.from_json(load_json(path / "meta.json"), REPORT_NEEDS)
    except MetaProblem as problem:
        raise PqscopeError(f"{path / 'meta.json'} is damaged: it {problem}") from None
    if not all(label in OPS_BY_LABEL for label in meta.ops) or not isinstance(meta.image.get("text"), int):
        raise PqscopeError(f"{path / 'meta.json'} is damaged: unknown ops or no image text size")
    rows, probe_names = read_samples(path / "samples.csv")
    recorded = tuple(meta.probes["names"]) if meta.probes else ()
    if probe_names != recorded:
        raise PqscopeError(f"{path} is damaged: samples.csv has the probes {list(probe_names)}, meta.json "
                           f"{list(recorded)}")
    return Run(path, meta, rows)


def newest_measured_run(runs_dir: Path, measured: Callable[[Run], bool]) -> tuple[Path, list[Run]]:
    """The newest run or suite under `runs_dir` (`pqscope run` names them after their start time)
    holding runs that are `measured`, and those runs; directories that are not runs (constant-time
    tests, damaged ones) are passed over."""
    found = sorted((child for child in runs_dir.iterdir() if child.is_dir()), reverse=True) if runs_dir.is_dir() else []
    for path in found:
        try:
            runs = [run for run in map(load_run, find_runs(path)) if measured(run)]
        except PqscopeError:
            continue
        if runs:
            return path, runs
    raise PqscopeError(f"no runs: {runs_dir} holds none with the samples needed; measure with `pqscope run` or "
                       "pass --run DIR")


def run_document(board: str, clock_hz: int, run_dir: Path, results: list[dict],
                 flash_wait_states: int | None = None, built: dict | None = None) -> dict:
    return {"schema": RESULTS_SCHEMA, "board": board, "clock_hz": clock_hz, "flash_wait_states": flash_wait_states,
            **({"built_with": built} if built else {}), "run_dir": str(run_dir), "results": results}


def runs_document(path: Path, runs: list[Run]) -> dict:
    """The document of run directories read back from disk (one run, or the runs of a suite)."""
    first = runs[0].meta
    results = [result for run in runs for result in run.results()]
    return run_document(first.board, first.clock_hz or 0, path, results, first.flash_wait_states,
                        built_with(first.toolchain, first.build))
