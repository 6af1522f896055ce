"""Scheme implementations, from firmware/schemes/catalogue.json.

Only the fields the host tool uses are read; the build-only ones (source, api, namespace,
symmetric, libraries, defines, config_overrides, extra_sources, probes) are
firmware/cmake/catalogue.cmake's."""

from dataclasses import MISSING, dataclass, fields
from pathlib import Path

from .errors import PqscopeError, match_name
from .metadata import load_json, require

CATALOGUE = Path("firmware/schemes/catalogue.json")
# What a declassification names (the exact check's, pqscope taint): a public part of the secret
# key ("OFFSET:BYTES"), a function argument that holds public data at its entry
# ("FUNCTION:INDEX:BYTES", INDEX 0..3 = r0..r3), a function whose return value is public, a
# function whose branches are public decisions (all of them, or those at "file:line" `lines`,
# wherever a compiler inlined them; "file:0", code a compiler gave no line, only in that function), or
# a function that computes only on values masked by fresh randomness (blinding): what its calls,
# callees included, decide on is independent of the secrets ("within"; only the calls made from
# "file:line" `lines` if it names some).
DECLASSIFY_KINDS = ("secret_bytes", "argument", "return", "decision", "within")


@dataclass(frozen=True)
class Declassification:
    """A value or decision the scheme publishes, so that secret-dependent timing caused only by
    it is reported as declassified, never as a leak."""
    kind: str    # one of DECLASSIFY_KINDS
    what: str    # OFFSET:BYTES, FUNCTION:INDEX:BYTES or FUNCTION
    reason: str  # a key of the catalogue's declassification_reasons
    why: str     # that reason, in words
    lines: tuple[str, ...] = ()  # file:line (basename) places: a decision's branches, a within's call sites

    @property
    def function(self) -> str | None:
        return None if self.kind == "secret_bytes" else self.what.split(":")[0]

    def to_json(self) -> dict:
        return {"kind": self.kind, "what": self.what, "reason": self.reason, "why": self.why,
                **({"lines": list(self.lines)} if self.lines else {})}


def declassifications(row: dict, reasons: dict, path: Path) -> tuple[Declassification, ...]:
    found = []
    for entry in row.get("declassify", ()):
        kinds = [kind for kind in DECLASSIFY_KINDS if kind in entry]
        why = reasons.get(entry.get("why"))
        if len(kinds) != 1 or why is None or (entry.get("lines") and kinds[0] not in ("decision", "within")):
            raise PqscopeError(f"{path}: {row.get('scheme')} {row.get('impl')}: a declassify entry needs exactly one "
                               f"of {', '.join(DECLASSIFY_KINDS)}, 'why' naming one of declassification_reasons, and "
                               f"'lines' only for a decision or a within: {entry}")
        found.append(Declassification(kinds[0], entry[kinds[0]], entry["why"], why, tuple(entry.get("lines", ()))))
    return tuple(found)


# A discovered row's status on a board before its first measurement (project/discovery.py).
UNMEASURED = "unmeasured"
# The statuses of rows that are built: an unmeasured row may well work.
BUILT_STATUSES = ("ok", UNMEASURED)
# What building and running a discovered row may have found instead (tests/bench/atlas_status.py).
MEASURED_FAILURES = ("build-fails", "fails")


@dataclass(frozen=True)
class Implementation:
    scheme: str
    impl: str
    family: str
    pk_bytes: int
    sk_bytes: int
    sig_bytes: int
    stack_bytes: int
    status: str  # "ok", or why the row is not built, e.g. "does-not-fit" (BUILT_STATUSES)
    reason: str = ""  # for a status other than "ok", on every board or on some: the explanation
    # (board, status) where the status on a board (the one whose images it runs) differs from `status`.
    boards: tuple[tuple[str, str], ...] = ()
    slow: bool = False  # billions of cycles per sample: left out of the default tests
    # A function the implementation calls once per signing attempt (its rejection loop), so the
    # constant-time test can take the public number of attempts out of the signing time.
    retry_function: str = ""
    # Functions whose time depends only on public inputs (e.g. expanding ML-DSA's matrix A from
    # the public seed rho): the constant-time test books their time (with their callees) apart.
    public_functions: tuple[str, ...] = ()
    # Further functions its probed image times on the device (firmware/PROTOCOL.md, "Probes").
    probes: tuple[str, ...] = ()
    # Values and decisions it publishes by design, for the exact check (pqscope taint).
    declassify: tuple[Declassification, ...] = ()
    # Set for a bring-your-own implementation (--impl-dir) and a discovered one: built from this directory.
    directory: Path | None = None
    # The folder of the pqm4 tree it builds from (crypto_sign/<scheme>/<impl> or mupq's), if any.
    pqm4_folder: str = ""
    # (board, reason) where the reason on a board differs from `reason` (a discovered row's).
    board_reasons: tuple[tuple[str, str], ...] = ()
    # The impl of the same scheme whose host build (firmware/transcripts) must give the same
    # transcripts as this row's image; "": none.
    host_reference: str = ""

    def status_on(self, board: str) -> str:
        """The row's status on `board` (a firmware board: boards/<name>/, as a virtual board's `emulates`)."""
        return dict(self.boards).get(board, self.status)

    def reason_on(self, board: str) -> str:
        return dict(self.board_reasons).get(board, self.reason)

    def check_builds_on(self, board: str) -> None:
        """Refuses a row that is not built for `board`, saying why. A discovered row not measured yet
        is built: it may well work."""
        status = self.status_on(board)
        if status not in BUILT_STATUSES:
            again = (f"; to see it again: --impl-dir {self.directory} --stack-bytes {self.stack_bytes}"
                     if self.directory and status in MEASURED_FAILURES else "")
            raise PqscopeError(f"{self.scheme} {self.impl} is not built for board {board} ({status}): "
                               f"{self.reason_on(board)}{again}")

    @property
    def impl_dir(self) -> Path | None:
        """The directory of a bring-your-own implementation (--impl-dir), which names it; a discovered
        row is named by its scheme and impl, though it builds from its folder too."""
        return None if self.pqm4_folder else self.directory

    @property
    def probed_functions(self) -> tuple[str, ...]:
        """What its probed image probes besides --probe names, in the build's order."""
        return tuple(dict.fromkeys([*filter(None, [self.retry_function]), *self.public_functions, *self.probes]))


def load_catalogue(root: Path) -> list[Implementation]:
    path = root / CATALOGUE
    document = load_json(path)
    rows = require(document, "implementations", path)
    reasons = document.get("declassification_reasons", {})
    return [
        Implementation(**{
            field.name: require(row, field.name, path) if field.default is MISSING else row.get(field.name, field.default)
            for field in fields(Implementation)
        } | {"public_functions": tuple(row.get("public_functions", ())), "probes": tuple(row.get("probes", ())),
             "boards": tuple(row.get("boards", {}).items()),
             "declassify": declassifications(row, reasons, path),
             "pqm4_folder": row["source"]["path"] if row.get("source", {}).get("dependency") == "pqm4" else ""})
        for row in rows
    ]


# The stack reserved for an implementation that is not in the catalogue (as CMake's default).
IMPL_DIR_STACK_BYTES = 16384


def implementation_from_dir(directory: Path, scheme: str | None = None, impl: str | None = None,
                            stack_bytes: int | None = None) -> Implementation:
    """An implementation outside the catalogue: by default named as pqm4 lays them out,
    crypto_sign/<scheme>/<impl>, with IMPL_DIR_STACK_BYTES of stack unless told. Its key and
    signature sizes come from the device (INFO)."""
    directory = directory.resolve()
    return Implementation(scheme or directory.parent.name, impl or directory.name, "bring-your-own",
                          0, 0, 0, stack_bytes or IMPL_DIR_STACK_BYTES, "ok", directory=directory)


def find_implementation(catalogue: list[Implementation], scheme: str, impl: str) -> Implementation:
    """The row of `scheme` and `impl`, named in any case."""
    scheme = match_name("scheme", scheme, {row.scheme for row in catalogue})
    impls = {row.impl: row for row in catalogue if row.scheme == scheme}
    return impls[match_name("impl", impl, impls, f" of scheme {scheme}")]
