"""Scheme implementations, from firmware/schemes/catalogue.json.

Only the fields the host tool uses are read; the build-only ones (source, api, namespace,
symmetric, libraries, defines, config_overrides, extra_sources, probes) are
firmware/cmake/catalogue.cmake's."""

from dataclasses import MISSING, dataclass, fields
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
    status: str  # "ok", or why the row is not built, e.g. "does-not-fit"
    reason: str = ""  # for a status other than "ok": the explanation
    slow: bool = False  # billions of cycles per sample: left out of the default tests
    # A function the implementation calls once per signing attempt (its rejection loop), so the
    # constant-time test can take the public number of attempts out of the signing time.
    retry_function: str = ""
    # Functions whose time depends only on public inputs (e.g. expanding ML-DSA's matrix A from
    # the public seed rho): the constant-time test books their time (with their callees) apart.
    public_functions: tuple[str, ...] = ()
    # Further functions its probed image times on the device (firmware/PROTOCOL.md, "Probes").
    probes: tuple[str, ...] = ()
    # Set for a bring-your-own implementation (--impl-dir): built from this directory.
    directory: Path | None = None

    @property
    def probed_functions(self) -> tuple[str, ...]:
        """What its probed image probes besides --probe names, in the build's order."""
        return tuple(dict.fromkeys([*filter(None, [self.retry_function]), *self.public_functions, *self.probes]))


def load_catalogue(root: Path) -> list[Implementation]:
    path = root / CATALOGUE
    rows = require(load_json(path), "implementations", path)
    return [
        Implementation(**{
            field.name: require(row, field.name, path) if field.default is MISSING else row.get(field.name, field.default)
            for field in fields(Implementation)
        } | {"public_functions": tuple(row.get("public_functions", ())), "probes": tuple(row.get("probes", ()))})
        for row in rows
    ]


# The stack reserved for an implementation that is not in the catalogue (as CMake's default).
IMPL_DIR_STACK_BYTES = 16384


def implementation_from_dir(directory: Path, scheme: str | None = None, impl: str | None = None) -> Implementation:
    """An implementation outside the catalogue: by default named as pqm4 lays them out,
    crypto_sign/<scheme>/<impl>. Its key and signature sizes come from the device (INFO)."""
    directory = directory.resolve()
    return Implementation(scheme or directory.parent.name, impl or directory.name, "bring-your-own",
                          0, 0, 0, IMPL_DIR_STACK_BYTES, "ok", directory=directory)


def find_implementation(catalogue: list[Implementation], scheme: str, impl: str) -> Implementation:
    impls = [row for row in catalogue if row.scheme == scheme]
    if not impls:
        raise UnknownNameError("scheme", scheme, sorted({row.scheme for row in catalogue}))
    for row in impls:
        if row.impl == impl:
            return row
    raise UnknownNameError("impl", impl, [row.impl for row in impls], f" of scheme {scheme}")
