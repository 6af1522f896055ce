"""A run's directory: raw.bin, samples.csv and meta.json, each written as data arrives so that an
interrupted run loses nothing already received, and can be resumed (`pqscope run --resume`)."""

import csv
import io
import json
import os
from collections.abc import Callable
from pathlib import Path

from ..link.protocol import Op, Status
from ..project.errors import PqscopeError
from ..project.metadata import load_json
from ..results.records import Row, sample_seed
from .lock import LOCK_NAME
from .probes import names_from_columns, probe_columns, probe_values, readings_from_values
from .runmeta import RESUME_NEEDS, MetaProblem, RunMeta

CSV_FIELDS = ("sample_id", "op", "seed", "cycles", "stack_bytes", "status", "verified", "board")
# The columns of runs measured before samples named their board: still read (board ""); a resume
# writes the samples it keeps back with CSV_FIELDS.
FIELDS_WITHOUT_BOARD = CSV_FIELDS[:-1]
OPS_BY_LABEL = {op.label: op for op in Op}
STATUS_BY_LABEL = {status.label: status for status in Status}


def write_atomically(path: Path, text: str) -> None:
    """Replaces `path` with `text` as one step: an interruption leaves the previous file whole."""
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w", newline="") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


def read_samples(path: Path) -> tuple[list[Row], tuple[str, ...]]:
    """The rows of a samples.csv and the names of its probe columns. A last line without its end
    (the run was killed while writing it) is dropped; damage anywhere else is an error naming the
    line. A file without even its header (a run killed before it began) holds no rows."""
    try:
        with path.open(newline="") as file:
            text = file.read()
    except FileNotFoundError:
        raise PqscopeError(f"{path.parent} has no {path.name}") from None
    except UnicodeDecodeError:
        raise PqscopeError(f"{path} is damaged: not text") from None
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines.pop()
    if not lines:
        return [], ()
    reader = csv.reader(lines)
    header = next(reader)
    fields = CSV_FIELDS if tuple(header[:len(CSV_FIELDS)]) == CSV_FIELDS else FIELDS_WITHOUT_BOARD
    names = read_header(path, header, fields)
    try:
        return [_row(record, len(fields)) for record in reader], names
    except (KeyError, ValueError, csv.Error) as error:
        raise PqscopeError(f"{path} is damaged at line {reader.line_num}: {error}") from None


def read_header(path: Path, header: list[str], fields: tuple[str, ...]) -> tuple[str, ...]:
    """The probe names of a CSV whose header is `fields` then probe columns."""
    try:
        if tuple(header[:len(fields)]) != fields:
            raise ValueError
        return names_from_columns(header[len(fields):])
    except ValueError:
        raise PqscopeError(f"{path} is damaged: its header is not {','.join(fields)} "
                           "(then probe:<name>:cycles,probe:<name>:calls for each probe)") from None


def _row(record: list[str], fixed: int) -> Row:
    """A row of a CSV whose first `fixed` columns are CSV_FIELDS' (or FIELDS_WITHOUT_BOARD)."""
    if len(record) < fixed or (len(record) - fixed) % 2:
        raise ValueError(f"{len(record)} fields")
    values = record[:fixed] + [""] * (len(CSV_FIELDS) - fixed)  # without a board column: ""
    sample_id, op, seed, cycles, stack_bytes, status, verified, board = values
    return Row(
        sample_id=int(sample_id), op=OPS_BY_LABEL[op], seed=bytes.fromhex(seed), cycles=int(cycles),
        stack_bytes=int(stack_bytes), status=STATUS_BY_LABEL[status], verified=verified == "true",
        probes=readings_from_values(record[fixed:]), board=board,
    )


def write_meta(directory: Path, meta: RunMeta) -> None:
    write_atomically(directory / "meta.json", json.dumps(meta.to_json(), indent=2) + "\n")


def resume_parameters(path: Path, kind: str = "run") -> RunMeta:
    """meta.json of a run (or constant-time test) to resume, checked to hold what resuming needs."""
    if not (path / "meta.json").is_file():
        raise PqscopeError(f"cannot resume {path}: it is not a run directory (no meta.json)")
    data = load_json(path / "meta.json")
    found = data.get("kind", "run") if isinstance(data, dict) else kind
    if found != kind:
        raise PqscopeError(f"cannot resume {path}: it is a '{found}' run; resume it with `pqscope "
                           f"{found} --resume`" if found in RESUME_NEEDS else f"cannot resume {path}: "
                           f"it is a '{found}' run, which does not resume")
    try:
        meta = RunMeta.from_json(data, RESUME_NEEDS[kind])
    except MetaProblem as problem:
        raise PqscopeError(f"cannot resume {path}: meta.json {problem}") from None
    _check_ops_and_seed(path, {"ops": meta.ops or [], "master_seed": meta.master_seed})
    return meta


def _check_ops_and_seed(path: Path, parameters: dict) -> None:
    unknown = [label for label in parameters.get("ops", ()) if label not in OPS_BY_LABEL]
    try:
        bytes.fromhex(parameters["master_seed"])
    except ValueError:
        unknown.append(f"master_seed {parameters['master_seed']!r}")
    if unknown:
        raise PqscopeError(f"cannot resume {path}: its parameters are damaged ({', '.join(map(str, unknown))})")


SUITE_MANIFEST = "suite.json"
# What resuming a suite takes from its suite.json, with each value's type.
SUITE_FIELDS = {"board": str, "members": list, "ops": list, "samples": int, "msg_len": int, "master_seed": str}


def make_empty_directory(path: Path, what: str) -> None:
    """`path`, created if need be; a directory already holding anything (but its writer's lock) is
    refused."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise PqscopeError(f"cannot create the {what} directory {path}: {error.strerror}") from None
    if any(child.name != LOCK_NAME for child in path.iterdir()):
        raise PqscopeError(f"{what} directory {path} is not empty; choose another --out")


def start_suite(path: Path, manifest: dict) -> None:
    """A new suite directory holding its manifest (the members and their shared parameters),
    written before any member starts so that a killed suite can be resumed as a whole."""
    make_empty_directory(path, "suite")
    write_atomically(path / SUITE_MANIFEST, json.dumps(manifest, indent=2) + "\n")


def is_suite(path: Path) -> bool:
    return (path / SUITE_MANIFEST).is_file()


def suite_parameters(path: Path) -> dict:
    """suite.json of a suite to resume, checked to hold what resuming needs."""
    manifest = load_json(path / SUITE_MANIFEST)
    if not isinstance(manifest, dict):
        raise PqscopeError(f"cannot resume {path}: {SUITE_MANIFEST} holds no object")
    for key, kind in SUITE_FIELDS.items():
        if not isinstance(manifest.get(key), kind):
            raise PqscopeError(f"cannot resume {path}: {SUITE_MANIFEST} lacks '{key}' ({kind.__name__})")
    if not all(isinstance(member, dict) and isinstance(member.get("scheme"), str) and
               isinstance(member.get("impl"), str) for member in manifest["members"]):
        raise PqscopeError(f"cannot resume {path}: {SUITE_MANIFEST} is damaged (members need a scheme and an impl)")
    _check_ops_and_seed(path, manifest)
    return manifest


def suite_member_names(path: Path) -> list[str]:
    """The directory names of the members suite.json lists (SCHEME-IMPL), checked as for a resume."""
    return [f"{member['scheme']}-{member['impl']}" for member in suite_parameters(path)["members"]]


def member_state(path: Path) -> RunMeta | None:
    """A suite member's meta.json to resume from, or None if the member never started: nothing
    of it, or only the empty files of a run killed before its meta.json was in place (removed;
    killed while writing it, it leaves meta.json.tmp, write_atomically's)."""
    if (path / "meta.json").is_file():
        return resume_parameters(path)
    if not path.exists():
        return None
    files = {child.name: child for child in path.iterdir()}
    never_started = (set(files) <= {"raw.bin", "samples.csv", "meta.json.tmp", LOCK_NAME}
                     and ("raw.bin" not in files or files["raw.bin"].stat().st_size == 0)
                     and ("samples.csv" not in files or files["samples.csv"].read_bytes().count(b"\n") <= 1))
    if not never_started:
        raise PqscopeError(f"cannot resume the suite: {path} holds data but no meta.json")
    for file in files.values():
        file.unlink()
    path.rmdir()
    return None


def keep_complete_samples(samples: Path, master_seed: bytes) -> list[Row]:
    """The samples a resumed run keeps, written back as samples.csv (atomically): all but the last
    one written, which may lack rows if the run was killed while writing it."""
    rows, probe_names = read_samples(samples)
    last = rows[-1].sample_id if rows else None
    kept = [row for row in rows if row.sample_id != last]
    check_samples(samples, kept, master_seed)
    write_atomically(samples, csv_lines([CSV_FIELDS + probe_columns(probe_names), *map(_csv_values, kept)])
                     if kept else "")
    return kept


def check_samples(samples: Path, rows: list[Row], master_seed: bytes) -> None:
    """That the `rows` of `samples` are each measured once, with the seeds of this run."""
    seen = set()
    for row in rows:
        if (row.sample_id, row.op) in seen:
            raise PqscopeError(f"{samples} is damaged: sample {row.sample_id} {row.op.label} appears twice")
        if row.seed != sample_seed(master_seed, row.sample_id):
            raise PqscopeError(f"{samples} does not belong to this run: the seed of sample "
                               f"{row.sample_id} is not derived from meta.json's master seed")
        seen.add((row.sample_id, row.op))


class RunDirectory:
    """`samples_name` names the CSV (a constant-time test has its own)."""

    def __init__(self, path: Path, samples_name: str = "samples.csv", *, resuming: bool = False):
        """A new, empty run directory; or, `resuming`, an existing one whose samples file holds
        the samples kept (see keep_complete_samples), to which the run appends."""
        self.path = path
        if not resuming:
            make_empty_directory(path, "run")
        self._raw: list = []
        self._samples = path / samples_name
        self._csv_fd = os.open(self._samples, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def start_samples(self, fields: tuple[str, ...]) -> None:
        """The CSV's header, once the device has said what it measures (its probes): written to a
        new file; a resumed run's must be the same, or its columns would mix two images."""
        header = csv_lines([fields])
        if os.fstat(self._csv_fd).st_size == 0:
            self._append(header)
        elif not self._samples.read_bytes().startswith(header.encode()):
            raise PqscopeError(f"cannot resume {self.path}: the device measures {','.join(fields)}, but "
                               f"{self._samples.name} holds other columns (another image's probes)")

    def __enter__(self) -> "RunDirectory":
        return self

    def __exit__(self, *exc) -> None:
        for raw in self._raw:
            raw.close()
        os.close(self._csv_fd)

    def raw_writer(self, directory: Path) -> Callable[[bytes], object]:
        """What writes a board's bytes, as received, to `directory`'s raw.bin (the run's own,
        or a shard's), appending to what an earlier run left there."""
        self._raw.append((directory / "raw.bin").open("ab", buffering=0))
        return self._raw[-1].write

    def write_rows(self, rows: list[Row]) -> None:
        """One sample's rows, in one write: a killed run keeps all of them or none."""
        self._append(csv_lines([_csv_values(row) for row in rows]))

    def write_record(self, values) -> None:
        """One CSV row, written at once so that an interrupted run keeps it."""
        self._append(csv_lines([values]))

    def _append(self, text: str) -> None:
        data = text.encode()
        while data:
            data = data[os.write(self._csv_fd, data):]


def _csv_values(row: Row) -> tuple:
    return (row.sample_id, row.op.label, row.seed.hex(), row.cycles, row.stack_bytes, row.status.label,
            "true" if row.verified else "false", row.board, *probe_values(row.probes))


def sort_by_sample(samples_path: Path) -> None:
    """A CSV whose first column is the sample number, in sample order (shards write their samples
    as they come; a sample's rows keep their order): the same file however many shards measured."""
    header, *rows = samples_path.read_text().splitlines(keepends=True)
    write_atomically(samples_path, header + "".join(sorted(rows, key=lambda row: int(row.split(",", 1)[0]))))


def csv_lines(records) -> str:
    buffer = io.StringIO()
    csv.writer(buffer).writerows(records)
    return buffer.getvalue()
