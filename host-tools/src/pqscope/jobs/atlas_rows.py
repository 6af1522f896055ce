"""One atlas row's answer, from what its directory keeps: its figures (`entry`: the samples' cycles
and stack, the image's sizes, the share of signing in hashing from the profiler) and its
exact-check findings, each sorted (`sorted_findings`): declassified by the catalogue with its
reasons, a reported leak with the secret it depends on and what the statistical test says of it,
unchanged, a note, or unsorted when none of these holds (the atlas's test asserts none is)."""

import hashlib
import re
from pathlib import Path

from ..link.protocol import Op
from ..project.catalogue import Implementation
from ..results.documents.atlas import (DECLASSIFIED, LEAK, NOTE, UNCHANGED, UNSORTED, AtlasEntry, AtlasFinding,
                                       Reason, RowKey, RowVerdict, image_sections)
from ..results.documents.ct import CtDocument, FunctionLeak
from ..results.documents.declassifications import AppliedDeclassification
from ..results.documents.profile import ProfiledInterval
from ..results.documents.runs import SignatureSizes
from ..results.documents.taint import Finding, TaintDocument
from ..results.runs import Run

# The functions whose cycles are hashing, as data: pqm4's hashing profile counts the cycles in SHA-2,
# SHA-3 (Keccak) and AES of its common folder; here they count wherever their code is (a scheme's
# own SHA-3 or SHA-2, Mbed TLS's). Regular expressions (any case) on a function's name without a
# PQClean namespace (PQCLEAN_<SCHEME>_<IMPL>_) or a GCC clone's suffix (.isra.0); every family's
# are EVERY_FAMILY's plus its own. The core primitives (a permutation or compression function,
# CORE) count with their callees, which are no hashing functions; the rest of a hashing API
# (absorbing, squeezing, padding) with its own cycles. So a core called inside a function whose time
# the test books apart as public (where the profiler keeps only its cycles with callees) counts too.
EVERY_FAMILY = (r"keccak", r"^shake(128|256)?(_|$)", r"^sha3_", r"^sha(224|256|384|512)(_|$)", r"^sha2_(256|512)_",
                r"^crypto_hashblocks_sha(256|512)", r"^mbedtls_(internal_)?sha(256|512)", r"^aes(128|192|256)?_")
HASHING_FUNCTIONS = {
    "FN-DSA": (r"^fndsa_(sha3|shake)_",),
    "SLH-DSA": (r"^shake_",),  # slhdsa-c's SHAKE tweakable hashes (its SHA-2 ones are sha2_256_*)
}
CORE = (r"^KeccakF1600_State(Permute|XORBytes|ExtractBytes)$", r"^keccak_?f1600$", r"^fndsa_sha3_process_block$",
        r"^sha(2_)?(256|512)_compress$", r"^crypto_hashblocks_sha(256|512)$", r"^mbedtls_internal_sha(256|512)_process$",
        r"^aes(128|192|256)?_(ecb|encrypt)")
NAMESPACE = re.compile(r"^PQCLEAN_[A-Z0-9]+_[A-Z0-9]+_")
# The signing randomness is drawn through these (the harness's randombytes, PQClean's name for it).
RANDOMNESS = ("randombytes", "PQCLEAN_randombytes")
SIGN = Op.SIGN.label


def row_seed(master_seed: bytes, key: RowKey) -> bytes:
    """A row's seed: from the master seed and the row's name alone, never its place in a shard,
    so that a shard measures a row as the whole atlas does (the same on every board)."""
    return hashlib.sha256(master_seed + b"atlas:" + key.name.encode()).digest()


def _bare(name: str) -> str:
    return NAMESPACE.sub("", name.split(".")[0])


def hashing(family: str, name: str) -> bool:
    """Whether function `name` is hashing in rows of `family` (HASHING_FUNCTIONS)."""
    patterns = EVERY_FAMILY + HASHING_FUNCTIONS.get(family, ())
    return any(re.search(pattern, _bare(name), re.IGNORECASE) for pattern in patterns)


def core(name: str) -> bool:
    """Whether hashing function `name` is a core primitive, counted with its callees (CORE)."""
    return any(re.search(pattern, _bare(name), re.IGNORECASE) for pattern in CORE)


def used_intervals(intervals: list[ProfiledInterval], ct: CtDocument) -> list[ProfiledInterval]:
    """The signing intervals of the signatures the test's verdict used (its first ones: signatures
    other shards took meanwhile are left out, so that the share does not depend on the shards)."""
    total = ct.statistics.total.n
    used = total.fixed + total.random + ct.statistics.failed_samples
    return [interval for interval in intervals if interval.sample_id is not None and interval.sample_id < used]


def hashing_share(family: str, intervals: list[ProfiledInterval]) -> tuple[float | None, tuple[str, ...]]:
    """The share of signing cycles in hashing functions, and those functions (None: no profile)."""
    total = sum(interval.cycles or 0 for interval in intervals)
    names = sorted({name for interval in intervals for name, time in interval.functions.items()
                    if time.calls and hashing(family, name)})
    if not total:
        return None, tuple(names)
    cycles = sum((interval.function(name).inclusive_cycles or 0) if core(name) else interval.function(name).cycles
                 for interval in intervals for name in names)
    return cycles / total, tuple(names)


def entry(key: RowKey, row: Implementation, seed: bytes, run: Run, ct: CtDocument, taint: TaintDocument | None,
          intervals: list[ProfiledInterval]) -> AtlasEntry:
    """The row's figures from its samples' `run`, its test's document and signing profile."""
    results = {result.op: result for result in run.results()}
    text, data, bss = image_sections(run.meta.image)
    sizes = SignatureSizes.of(run.meta)
    share, functions = hashing_share(row.family, intervals)
    bound = ct.statistics.total.bound
    signing = results.get(SIGN) or next(iter(results.values()))
    test = RowVerdict(
        ct.verdict, ct.reason, taint.verdict if taint else "none", taint.signatures if taint else 0,
        taint.instructions if taint else 0, ct.statistics.verdict,
        ct.statistics.total.n.fixed + ct.statistics.total.n.random, ct.statistics.total.max_abs_t,
        None if bound is None else bound.cycles, None if bound is None else bound.share)
    return AtlasEntry(key, row.family, seed.hex(), run.meta.clock_hz or 0, run.meta.samples, signing.verified,
                      {op: result.cycles for op, result in results.items() if result.cycles},
                      {op: result.stack_bytes for op, result in results.items() if result.stack_bytes is not None},
                      text, data, bss, sizes.pk_bytes, sizes.sig_bytes, share, functions, test)


def sorted_findings(key: RowKey, taint: TaintDocument | None, ct: CtDocument,
                    intervals: list[ProfiledInterval]) -> tuple[AtlasFinding, ...]:
    """Each of the exact check's findings, sorted (in the check's order)."""
    if taint is None:
        return ()
    reasons = {item.reason: item.why for item in map(AppliedDeclassification.from_json, taint.declassifications or ())}
    draws = any(interval.function(name).calls for interval in intervals for name in RANDOMNESS)
    functions = {function.name: function for function in ct.statistics.top_functions or ()}
    return tuple(_sorted(key, finding, reasons, draws, functions, ct) for finding in taint.findings)


def _sorted(key: RowKey, finding: Finding, reasons: dict[str, str], draws: bool,
            functions: dict[str, FunctionLeak], ct: CtDocument) -> AtlasFinding:
    where = dict(key=key, kind=finding.kind, region=finding.region, timed=finding.timed, function=finding.function,
                 file=finding.file, line=finding.line, address=finding.hex_address, executions=finding.count)
    if finding.declassified:
        unknown = [reason for reason in finding.declassified_by if reason not in reasons]
        if not finding.declassified_by or unknown:
            return AtlasFinding(**where, sort=UNSORTED, detail=(
                f"declassified by the emulator, but the catalogue gives no reason named {', '.join(unknown)}"
                if unknown else "declassified by the emulator, but no declassification of the catalogue names it"))
        return AtlasFinding(**where, sort=DECLASSIFIED, reasons=tuple(
            Reason(reason, reasons[reason]) for reason in finding.declassified_by),
            detail=None if not finding.within else f"made inside a call of {finding.within}")
    if finding.leak:
        if not (finding.function and finding.file and finding.line):
            return AtlasFinding(**where, sort=UNSORTED, detail="a leak the image names no function and source line for")
        return AtlasFinding(**where, sort=LEAK, secret=_secret(finding, draws, functions),
                            statistics=_statistics(finding, functions, ct),
                            detail=None if finding.relational is None else finding.relational.describe())
    if finding.unchanged:
        return AtlasFinding(**where, sort=UNCHANGED, detail=finding.relational.describe())
    if not finding.convicting and finding.kind in ("address", "select"):
        return AtlasFinding(**where, sort=NOTE, detail=(
            "a constant-time select: each instruction of the IT block takes one cycle, executed or skipped"
            if finding.kind == "select" else
            f"an address in {finding.region or 'memory'} whose every address costs the same at the check's clock"))
    return AtlasFinding(**where, sort=UNSORTED, detail="neither declassified, a leak, unchanged nor a note")


def _secret(finding: Finding, draws: bool, functions: dict[str, FunctionLeak]) -> str:
    """The secret a leak depends on: the key where the statistics (fixed against random keys, which
    see only the key) show its function, or where signing draws no randomness; else either (the
    exact check follows the key and the signing randomness as one secret)."""
    function = functions.get(finding.function or "")
    if function is not None and function.depends_on_class:
        return f"the long-term key (the statistics show it in {function.name}: t = {function.t:.1f})"
    if not draws:
        return "the long-term key (signing draws no randomness: the key and what is derived from it are its secrets)"
    return ("the key or the signing randomness (the exact check follows both as one secret; the statistics, which "
            "see only the key, do not show it)")


def _statistics(finding: Finding, functions: dict[str, FunctionLeak], ct: CtDocument) -> str:
    """What the statistical test says of a leak: its function's test if it localised one, and the total's."""
    total = ct.statistics.total
    n = total.n.fixed + total.n.random
    text = f"{ct.statistics.verdict} over {n} signatures (max |t| " + (
        "n/a" if total.max_abs_t is None else f"{total.max_abs_t:.1f}") + ")"
    if total.bound is not None:
        text += f"; {total.bound.describe()}"
    function = functions.get(finding.function or "")
    if function is not None:
        text += f"; {function.describe()}"
    return text


def kept_path(path: Path, key: RowKey) -> Path:
    """A row's directory in the atlas directory `path`."""
    return path / key.directory
