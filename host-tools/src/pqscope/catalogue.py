"""Scheme implementations, from firmware/schemes/catalogue.json."""

from dataclasses import dataclass
from pathlib import Path

from .errors import UnknownNameError
from .metadata import load_json, require

CATALOGUE = Path("firmware/schemes/catalogue.json")


@dataclass(frozen=True)
class Implementation:
    scheme: str
    impl: str
    family: str
    pk_bytes: int
    sk_bytes: int
    sig_bytes: int
    stack_bytes: int
    status: str


def load_catalogue(root: Path) -> list[Implementation]:
    path = root / CATALOGUE
    rows = require(load_json(path), "implementations", path)
    return [
        Implementation(**{field: require(row, field, path) for field in Implementation.__dataclass_fields__})
        for row in rows
    ]


def find_implementation(catalogue: list[Implementation], scheme: str, impl: str) -> Implementation:
    impls = [row for row in catalogue if row.scheme == scheme]
    if not impls:
        raise UnknownNameError("scheme", scheme, sorted({row.scheme for row in catalogue}))
    for row in impls:
        if row.impl == impl:
            return row
    raise UnknownNameError("impl", impl, [row.impl for row in impls], f" of scheme {scheme}")
