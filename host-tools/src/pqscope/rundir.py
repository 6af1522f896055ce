"""A run's directory: raw.bin, samples.csv and meta.json, each written as data arrives so that an
interrupted run loses nothing already received."""

import csv
import json
import os
from pathlib import Path

from .capture import Row
from .errors import PqscopeError

CSV_FIELDS = ("sample_id", "op", "seed", "cycles", "stack_bytes", "status", "verified")


class RunDirectory:
    """`samples_name` and `fields` name the CSV and its columns (a constant-time test has its own)."""

    def __init__(self, path: Path, samples_name: str = "samples.csv", fields: tuple[str, ...] = CSV_FIELDS):
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise PqscopeError(f"cannot create the run directory {path}: {error.strerror}") from None
        if any(path.iterdir()):
            raise PqscopeError(f"run directory {path} is not empty; choose another --out")
        self.path = path
        self._raw = (path / "raw.bin").open("ab", buffering=0)
        self._csv_file = (path / samples_name).open("w", newline="")
        self._csv = csv.writer(self._csv_file)
        self.write_record(fields)

    def __enter__(self) -> "RunDirectory":
        return self

    def __exit__(self, *exc) -> None:
        self._raw.close()
        self._csv_file.close()

    def write_raw(self, data: bytes) -> None:
        self._raw.write(data)

    def write_rows(self, rows: list[Row]) -> None:
        for row in rows:
            self.write_record(
                (row.sample_id, row.op.label, row.seed.hex(), row.cycles, row.stack_bytes,
                 row.status.label, "true" if row.verified else "false")
            )

    def write_record(self, values) -> None:
        """One CSV row, flushed at once so that an interrupted run keeps it."""
        self._csv.writerow(values)
        self._csv_file.flush()

    def write_meta(self, meta: dict) -> None:
        # Replace atomically: an interruption leaves the previous complete meta.json.
        temporary = self.path / "meta.json.tmp"
        temporary.write_text(json.dumps(meta, indent=2) + "\n")
        os.replace(temporary, self.path / "meta.json")
