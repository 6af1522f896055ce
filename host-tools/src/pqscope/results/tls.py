"""What a TLS 1.3 handshake costs with given signatures, from measured sizes and cycles.

A handshake carries six signatures and two public keys, each played by one of four roles:

- handshake: the CertificateVerify signature, made online by the server with its leaf key, and
  that leaf public key (in the leaf certificate);
- chain: the two certificate signatures (the intermediate CA's over the leaf certificate, the root
  CA's over the intermediate certificate) and the intermediate public key that checks the first;
- ocsp: the stapled OCSP response's signature;
- sct: the two signed certificate timestamps.

The root's public key sits in the client's trust store, and its self-signature is neither sent nor
checked, so it is counted in neither the bytes nor the client's verifications.

Byte totals count signature and public-key bytes only (plus an optional fixed overhead for the rest
of the certificates and messages), and round trips assume a window that stays at the initial
congestion window: slow start, which doubles the window every round trip, makes the real count
beyond the first extra round trip smaller.
"""

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..link.protocol import Op, Status
from ..project.catalogue import Implementation
from ..project.errors import PqscopeError, UnknownNameError
from .documents.runs import SignatureSizes
from .runs import Run
from .stats import cycle_stats

TARGET_BYTES = 9_000  # the size a handshake's authentication should stay under to go unnoticed
MSS_BYTES = 1460
INITCWND_SEGMENTS = (10, 30)  # Linux's default initial congestion window, and what some CDNs use


@dataclass(frozen=True)
class Role:
    signatures: int
    public_keys: int


HANDSHAKE = "handshake"  # the role whose implementation signs online, which the others default to
ROLES = {
    HANDSHAKE: Role(signatures=1, public_keys=1),
    "chain": Role(signatures=2, public_keys=1),
    "ocsp": Role(signatures=1, public_keys=0),
    "sct": Role(signatures=2, public_keys=0),
}


@dataclass(frozen=True)
class Signer:
    """One implementation's sizes and median cycles; cycles are None when it has no run."""

    scheme: str
    impl: str | None
    pk_bytes: int
    sig_bytes: int
    sign_cycles: float | None
    verify_cycles: float | None
    clock_hz: int | None
    source: str  # the run directory the numbers come from, or "catalogue" (sizes only)

    @property
    def label(self) -> str:
        return f"{self.scheme}/{self.impl}" if self.impl else self.scheme

    def milliseconds(self, cycles: float | None) -> float | None:
        return None if cycles is None or not self.clock_hz else cycles / self.clock_hz * 1e3


def _median_cycles(run: Run, op: Op) -> float | None:
    cycles = [row.cycles for row in run.rows if row.op == op and row.status == Status.OK]
    return cycle_stats(cycles).median if cycles else None


def has_sign_and_verify(run: Run) -> bool:
    return all(_median_cycles(run, op) is not None for op in (Op.SIGN, Op.VERIFY))


def signer_from_run(run: Run) -> Signer:
    """Sizes as the firmware reported them (meta.json info), cycles as the board measured them."""
    if not has_sign_and_verify(run):
        raise PqscopeError(f"{run.path} ({run.label}) has no successful sign and verify samples: "
                           "measure with --ops including sign,verify")
    sizes = SignatureSizes.of(run.meta)
    return Signer(run.meta.scheme, run.meta.impl, sizes.pk_bytes, sizes.sig_bytes,
                  _median_cycles(run, Op.SIGN), _median_cycles(run, Op.VERIFY), run.meta.clock_hz,
                  str(run.path))


def parse_assignments(texts: Iterable[str]) -> dict[str, tuple[str, str | None]]:
    """`ROLE[+ROLE...]=SCHEME[/IMPL]` options into {role: (scheme, impl)}; roles left out default
    to the handshake's implementation."""
    assigned: dict[str, tuple[str, str | None]] = {}
    for text in texts:
        roles, equals, target = text.partition("=")
        scheme, _slash, impl = target.strip().partition("/")
        if not equals or not scheme:
            raise PqscopeError(f"--assign '{text}' is not ROLE=SCHEME[/IMPL] (e.g. chain=falcon-512/fpemu-m4)")
        for role in (part.strip() for part in roles.split("+")):
            if role not in ROLES:
                raise UnknownNameError("role", role, list(ROLES), f" in --assign '{text}'")
            if role in assigned:
                raise PqscopeError(f"--assign gives role '{role}' twice")
            assigned[role] = (scheme, impl or None)
    if assigned and HANDSHAKE not in assigned:
        raise PqscopeError(f"--assign needs {HANDSHAKE}=SCHEME[/IMPL]; the other roles default to it")
    return {role: assigned.get(role, assigned[HANDSHAKE]) for role in ROLES} if assigned else {}


def resolve(scheme: str, impl: str | None, signers: list[Signer],
            catalogue: Callable[[], list[Implementation]]) -> Signer:
    """The measured signer an assignment names. A scheme without an implementation and without a
    run falls back to the catalogue's sizes, with its cycles unavailable."""
    matches = [s for s in signers if s.scheme == scheme and impl in (None, s.impl)]
    name = f"{scheme}/{impl}" if impl else scheme
    if len(matches) > 1:
        raise PqscopeError(f"--assign: several runs of {name} ({', '.join(s.source for s in matches)}); "
                           "name the implementation or pass only one of them with --run")
    if matches:
        return matches[0]
    if impl:
        measured = ", ".join(s.label for s in signers)
        raise PqscopeError(f"--assign: no run of {name} among the runs ({measured}); measure it and pass it with --run")
    rows = [row for row in catalogue() if row.scheme == scheme]
    if not rows:
        raise UnknownNameError("scheme", scheme, sorted({row.scheme for row in catalogue()}), " in --assign")
    return Signer(scheme, None, rows[0].pk_bytes, rows[0].sig_bytes, None, None, None, "catalogue")


def _name(assignment: dict[str, Signer]) -> str:
    """`handshake=a chain=b ocsp+sct=c`: roles sharing an implementation are joined by '+'."""
    roles_by_signer: dict[str, list[str]] = {}
    for role, signer in assignment.items():
        roles_by_signer.setdefault(signer.label, []).append(role)
    return " ".join(f"{'+'.join(roles)}={label}" for label, roles in roles_by_signer.items())


def _total(values: Iterable[float | None]) -> float | None:
    values = list(values)
    return None if None in values else sum(values)


@dataclass(frozen=True)
class Part:
    """What one role puts in a handshake: its signatures' and public keys' bytes, and what the
    client spends verifying them."""

    role: str
    signer: Signer
    verify_cycles: float | None

    @classmethod
    def of(cls, role: str, signer: Signer) -> "Part":
        verify = None if signer.verify_cycles is None else ROLES[role].signatures * signer.verify_cycles
        return cls(role, signer, verify)

    @property
    def bytes(self) -> int:
        counts = ROLES[self.role]
        return counts.signatures * self.signer.sig_bytes + counts.public_keys * self.signer.pk_bytes

    @property
    def verify_ms(self) -> float | None:
        return self.signer.milliseconds(self.verify_cycles)

    def to_json(self) -> dict:
        counts, signer = ROLES[self.role], self.signer
        return {"role": self.role, "scheme": signer.scheme, "impl": signer.impl, "source": signer.source,
                "signatures": counts.signatures, "sig_bytes": signer.sig_bytes,
                "public_keys": counts.public_keys, "pk_bytes": signer.pk_bytes, "bytes": self.bytes,
                "verify_cycles": self.verify_cycles, "verify_ms": self.verify_ms}


def budget(assignment: dict[str, Signer], overhead_bytes: int = 0) -> dict:
    """One row of the budget: bytes, window fits, client verification and server signing cost."""
    parts = [Part.of(role, signer) for role, signer in assignment.items()]
    signers = set(assignment.values())
    uniform = len(signers) == 1
    handshake = assignment[HANDSHAKE]
    total = sum(part.bytes for part in parts) + overhead_bytes
    row = {
        "scheme": handshake.scheme if uniform else _name(assignment),
        "impl": handshake.impl if uniform else None,
        "bytes": total, "overhead_bytes": overhead_bytes, "fits_9kB": total <= TARGET_BYTES,
    }
    for segments in INITCWND_SEGMENTS:
        window = segments * MSS_BYTES
        row[f"fits_initcwnd{segments}"] = total <= window
        row[f"extra_round_trips_initcwnd{segments}"] = math.ceil(total / window) - 1
    row |= {
        "verify_cycles": _total(part.verify_cycles for part in parts),
        "verify_ms": _total(part.verify_ms for part in parts),
        "sign_cycles": handshake.sign_cycles, "sign_ms": handshake.milliseconds(handshake.sign_cycles),
        "parts": [part.to_json() for part in parts],
    }
    return row


def resolve_assignment(assigned: dict[str, tuple[str, str | None]], signers: list[Signer],
                       catalogue: Callable[[], list[Implementation]]) -> dict[str, Signer]:
    return {role: resolve(scheme, impl, signers, catalogue) for role, (scheme, impl) in assigned.items()}


def budget_rows(signers: list[Signer], mixed: dict[str, Signer] | None = None, overhead_bytes: int = 0) -> list[dict]:
    """A row per measured implementation used in every role, then the mixed assignment's row."""
    rows = [budget(dict.fromkeys(ROLES, signer), overhead_bytes) for signer in signers]
    if mixed:
        row = budget(mixed, overhead_bytes)
        if row not in rows:  # an assignment of one measured implementation to every role is its own row
            rows.append(row)
    return rows
