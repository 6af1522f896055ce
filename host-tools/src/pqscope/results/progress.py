"""How far the measurement a directory holds went, as a report says it first: complete (nothing
to say), or running, interrupted, failed or not started in part. `running` is believed only while
a live process holds the directory's lock (results.lock)."""

from dataclasses import dataclass
from pathlib import Path

from ..project.errors import PqscopeError
from ..project.metadata import load_json
from .lock import current_status, holder
from .rundir import is_suite, suite_member_names
from .runmeta import RunMeta


@dataclass(frozen=True)
class Unfinished:
    """A measurement not complete: `word` ("running" or "partial") and what `detail`s it; `kind`:
    the measurement's (meta.json's "kind", "run" for a suite)."""

    word: str
    detail: str
    kind: str

    def __str__(self) -> str:
        return f"{self.word}: {self.detail}"


def unfinished(path: Path) -> Unfinished | None:
    """What is not complete in `path`: each part still running (with the process measuring it),
    interrupted or failed, with its records so far, and a suite's members not started; None for a
    complete measurement (or a damaged one: its report says what is wrong)."""
    parts = []
    running = False
    for meta_path in sorted(path.rglob("meta.json")):  # a run, a suite's members, their tests and companions
        try:
            meta = RunMeta.from_json(load_json(meta_path), ("scheme", "impl"))
        except PqscopeError:
            return None
        status = current_status(meta_path.parent, meta.status)
        if status == "complete":
            continue
        name = meta_path.parent.relative_to(path).as_posix() if meta_path.parent != path else path.name
        unit = "samples" if meta.kind == "run" else "signatures"
        # meta.json counts the records as the measurement ended; "running", it has not ended (or
        # its process did without a word: killed, or a disk too full to say so).
        if meta.status == "running":
            running |= status == "running"
            parts.append(f"{name} running ({meta.samples} {unit} asked)" if status == "running" else
                         f"{name} interrupted (its process ended mid-measurement; {meta.samples} {unit} asked)")
        else:
            beyond = meta.samples_completed - meta.samples  # the exact check's confirming variants
            parts.append(f"{name} {status} after {min(meta.samples_completed, meta.samples)} of {meta.samples} {unit}"
                         + (f" and {beyond} confirming variant{'' if beyond == 1 else 's'}" if beyond > 0 else ""))
    if is_suite(path):
        try:
            missing = sum(not (path / name / "meta.json").is_file() for name in suite_member_names(path))
        except PqscopeError:
            return None
        if missing:
            parts.append(f"{missing} member{'s' if missing > 1 else ''} not started")
    if not parts:
        return None
    kind = RunMeta.from_json(load_json(path / "meta.json"), ()).kind if (path / "meta.json").is_file() else "run"
    if running:
        who = holder(path)
        return Unfinished("running", f"{', '.join(parts)}{f', by process {who}' if who else ''}; this report shows "
                                     f"what it holds so far", kind)
    return Unfinished("partial", f"{', '.join(parts)}; resume with `pqscope {kind} --resume {path}`", kind)
