"""Reading run directories back: one run (meta.json + samples.csv) or a suite of runs (a directory
of run directories), summarised from the samples so that interrupted runs report what they have."""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..project.errors import PqscopeError
from ..project.metadata import load_json
from ..project.toolchain import built_with
from ..results.records import Row
from .documents.runs import OpResult, RunsDocument, code_bytes, probe_set
from .rundir import OPS_BY_LABEL, read_samples
from .runmeta import REPORT_NEEDS, MetaProblem, RunMeta
from .stats import summarize


@dataclass(frozen=True)
class Run:
    path: Path
    meta: RunMeta
    rows: list[Row]

    @property
    def label(self) -> str:
        return f"{self.meta.scheme} {self.meta.impl}"

    def results(self) -> list[OpResult]:
        ops = tuple(OPS_BY_LABEL[label] for label in self.meta.ops)
        return summarize(self.rows, ops, self.meta.scheme, self.meta.impl, code_bytes(self.meta), probe_set(self.meta))


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
    if not all(label in OPS_BY_LABEL for label in meta.ops) or code_bytes(meta) is None:
        raise PqscopeError(f"{path / 'meta.json'} is damaged: unknown ops or no image text size")
    rows, probe_names = read_samples(path / "samples.csv")
    probes = probe_set(meta)
    recorded = probes.names if probes else ()
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


def runs_document(path: Path, runs: list[Run]) -> RunsDocument:
    """The document of run directories read back from disk (one run, or the runs of a suite)."""
    first = runs[0].meta
    results = tuple(result for run in runs for result in run.results())
    return RunsDocument(first.board, first.clock_hz or 0, str(path), results, first.flash_wait_states,
                        built_with(first.toolchain, first.build))
