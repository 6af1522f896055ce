"""`pqscope taint`: the exact constant-time check on the virtual board. The emulator tracks the
secret key (the harness marks it before each timed signature, firmware/include/pqscope/taint.h)
through every executed instruction of the signature and reports each one whose timing on the
Cortex-M4 can depend on it (docs/pages/virtual-board.md, "Secret-taint tracking"); this module runs a few
signatures under it, keeps what the emulator reports of each, and finishes with the check's document
(its findings named and declassified by `taint_findings`, each that would convict confirmed or not by
comparing what it did across signatures with other secrets, `taint_relational`: a few more signatures,
each with a key of its own, while some finding is not yet confirmed)."""

import csv
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..link.device import Cancelled
from ..link.protocol import Status
from ..measure.capture import Capture, Finished, shard_directories
from ..measure.key_pairs import KeyPairs
from ..project.catalogue import Declassification, Implementation
from ..project.errors import PqscopeError
from ..project.paths import repo_root
from ..project.toolchain import built_with
from ..results.documents.profile import CheckedSignature, RawFinding, json_lines
from ..results.documents.taint import BENCHMARK_CLOCK, CheckedClock, Coverage, Finding, TaintDocument
from ..results.records import INTERVAL_FUNCTION, KEYGEN_ID_BASE, derive_seed
from ..results.rundir import STATUS_BY_LABEL, csv_lines, sort_by_sample, write_atomically
from ..targets.target import Tainting
from .taint_findings import attribute, check_decisions, emulator_options, merged_findings, named_findings
from .taint_relational import Variant, confirmed, unconfirmed

EXACT_CHECK_SIGNATURES = 2  # the exact check's default: each signature's path is checked whole
# Signatures beyond -n the check adds, each with a key of its own, while a finding that would convict
# has not yet been changed by a secret: one decided by a single key bit goes the same way in all of
# K random keys once in 2^(K-1). Up to CONFIRMING_VARIANTS whatever they cost (the check's time at
# most about triples for -n 2); then, up to MOST_VARIANTS, while the variants' signing has cost less
# than CHEAP_VARIANT_CYCLES in all: where signing is cheap a key bit's decision is missed once in
# 2^31, where it is dear (Falcon, RSA) once in 2^7.
CONFIRMING_VARIANTS = 6
MOST_VARIANTS = 30
CHEAP_VARIANT_CYCLES = 20_000_000
# Beside a constant-time test the check stops at its first signature where signing took more model
# cycles than this: the SPHINCS+ and SLH-DSA s sets' 7 G, whose second signature ran no instruction
# the first had not (coverage 0 new) and took 100 s of their test's 155.
ONE_SIGNATURE_ABOVE = 1e9
CALLS_FILE = "taint-calls.jsonl"
TAINT_FIELDS = ("index", "seed", "status", "board", "cycles")


@dataclass(frozen=True)
class TaintSignature:
    """One signature the exact check followed: signed with key `index`, from `seed`."""

    index: int
    seed: bytes
    status: Status
    board: str = ""  # the serial number of the board that signed it (INFO.board_serial)
    cycles: int | None = None  # its signing time (model cycles: tracking the key costs none); None in older checks

    def values(self) -> tuple:
        return self.index, self.seed.hex(), self.status.label, self.board, "" if self.cycles is None else self.cycles


def _lines(calls: Path) -> list[tuple[str, CheckedSignature]]:
    """The emulator's per-signature lines in `calls`, each with its text; a line cut short by a kill is left out."""
    return list(json_lines(calls, CheckedSignature.from_json, "a signature's findings"))


def _calls(path: Path) -> dict[int, CheckedSignature]:
    """Every shard's per-signature lines (CALLS_FILE) of the check at `path`, by sample id."""
    return {line.sample_id: line for directory in shard_directories(path)
            if (directory / CALLS_FILE).exists() for _, line in _lines(directory / CALLS_FILE)}


def _keep_signatures(path: Path, samples_name: str, master_seed: bytes, samples: int) -> list[TaintSignature]:
    """The signatures a resumed check keeps (its confirming variants among them): those in its CSV
    whose emulator line was written (the CSV and every shard's line file are written back with just
    those, atomically)."""
    csv_path = path / samples_name
    lines = csv_path.read_text().splitlines(keepends=True) if csv_path.exists() else []
    rows = list(csv.reader(line for line in lines[1:] if line.endswith("\n")))
    calls = _calls(path)
    kept = {}
    for number, row in enumerate(rows, start=2):
        try:
            index, seed, status, board, *cycles = row  # no cycles in checks before they were kept
            signature = TaintSignature(int(index), bytes.fromhex(seed), STATUS_BY_LABEL[status], board,
                                       int(cycles[0]) if cycles and cycles[0] else None)
        except (ValueError, KeyError) as error:
            raise PqscopeError(f"{csv_path} is damaged at line {number}: {error}") from None
        if not 0 <= signature.index < samples + MOST_VARIANTS or \
                signature.seed != derive_seed(master_seed, "sign", signature.index):
            raise PqscopeError(f"{csv_path} does not belong to this check: line {number} is not a signature of "
                               "meta.json's master seed and -n")
        if signature.index in calls:
            kept[signature.index] = signature
    for directory in shard_directories(path):
        if (directory / CALLS_FILE).exists():
            own = [text for text, line in _lines(directory / CALLS_FILE) if line.sample_id in kept]
            write_atomically(directory / CALLS_FILE, "".join(own))
    ordered = [kept[index] for index in sorted(kept)]
    write_atomically(csv_path, csv_lines([TAINT_FIELDS, *(s.values() for s in ordered)]) if ordered else "")
    return ordered


class TaintCapture(Capture):
    """The exact check's signatures (`pqscope taint`, and `pqscope ct --taint` beside the test):
    each signed with a fresh key of its own, the key tainted, every instruction followed by the
    emulator; taint.csv holds one row per signature, CALLS_FILE each one's findings."""

    kind, unit, samples_name, fields, view = "taint", "signatures", "taint.csv", TAINT_FIELDS, "taint"
    # The -n signatures' ids, their findings merged, and named and declassified: unchanged by the variants.
    _named: tuple[tuple[int, ...], list[RawFinding], list[Finding]] | None = None

    def __init__(self, samples: int, master_seed: bytes, msg_len: int, *, one_signature_above: float | None = None,
                 key_pairs: KeyPairs | None = None):
        """`one_signature_above`: the first signature alone where its signing took more model cycles;
        `key_pairs`: where it keeps the keys it makes (for the statistics after it)."""
        super().__init__(samples, master_seed, msg_len)
        self.one_signature_above = one_signature_above
        self.key_pairs = key_pairs
        self._calls_files: set[Path] = set()
        # Every shard's signatures so far (kept or signed), index -> signing cycles: what variants are decided by.
        self._signed: dict[int, int | None] = {}
        self._signing = threading.Condition()
        self._next_variant = 0  # the variant index the next shard to ask takes

    @classmethod
    def from_meta(cls, meta) -> "TaintCapture":
        return cls(meta.samples, meta.seed, meta.msg_len, one_signature_above=meta.one_signature_above)

    def parameters(self) -> dict:
        return {"one_signature_above": self.one_signature_above}

    def label(self, implementation: Implementation) -> str:
        return f"taint {super().label(implementation)}"

    def count_text(self, records: int) -> str:
        variants = records - self.samples
        return super().count_text(min(records, self.samples)) + (
            f" and {variants} confirming variant{'' if variants == 1 else 's'}" if variants > 0 else "")

    def most_shards(self) -> int:
        """The -n signatures at once, then variants side by side."""
        return self.samples + CONFIRMING_VARIANTS

    def instrumented(self, target) -> bool:
        if not target.taints:
            raise PqscopeError(f"board {target.board.name} cannot track the key through its instructions: taint runs "
                               "on the virtual board (--board virtual)")
        return True

    def check_image(self, implementation: Implementation, elf: Path) -> None:
        check_decisions(implementation.declassify, elf)
        self._emulator_options = emulator_options(implementation.declassify, elf)
        self._elf, self._declassify = elf, implementation.declassify

    def profiling(self, implementation: Implementation, directory: Path) -> Tainting:
        self._calls_files.add(directory / CALLS_FILE)
        return Tainting(directory / CALLS_FILE, INTERVAL_FUNCTION, self._emulator_options)

    def keep(self, path: Path, profiled: bool) -> list[TaintSignature]:
        kept = _keep_signatures(path, self.samples_name, self.master_seed, self.samples)
        self._calls_files |= {directory / CALLS_FILE for directory in shard_directories(path)}
        return kept

    def records(self, session, info, kept, shard) -> Iterator[TaintSignature]:
        """The shard's part of the -n signatures (the first alone if its signing took over
        `one_signature_above` cycles: it and the second are then one shard's), then confirming
        variants (signatures made alike, not merged into the findings), each shard taking the next
        one while a finding that would convict may be unchanged by the secrets so far
        (`variants_end`). A shard may sign a variant the others' signatures then show was not
        needed (at most shards - 1 such): `finish` leaves them out, so the result is the same on
        any number of shards."""
        done = {signature.index for signature in kept}
        with self._signing:
            self._signed.update((signature.index, signature.cycles) for signature in kept)
        for index in self._signatures_of(shard, done):
            variant = index >= self.samples
            # Fewer variants than the signatures below `index` can show the variants end (they confirm
            # fewer findings and cost less), never that they go on: the -n ones' findings are needed.
            if variant and self._signed_below(self.samples) and self._variants_ended(index):
                break
            seed, key_id = derive_seed(self.master_seed, "key", index), KEYGEN_ID_BASE + index
            key = (session.keygen_slot(0, seed, key_id) if self.key_pairs is None else
                   self.key_pairs.make_and_keep(session, info, 0, seed, key_id))
            if key.status != Status.OK:
                raise PqscopeError(f"key generation {index} failed on the device ({key.status.label})")
            # Its key made meanwhile, a variant waits for all but the other shards' latest: at most
            # one variant fewer than the shards can be signed beyond those one shard would sign.
            settled = max(self.samples, index - shard.count + 1)
            if variant and not self._signed_below(settled):
                self._wait_for_signatures_below(settled, session)
                if self._variants_ended(index):
                    break
            seed = derive_seed(self.master_seed, "sign", index)
            # One message for every signature: what differs between them is the key and the signing randomness.
            signed = session.sign_slot(0, seed, self.msg_len, index, derive_seed(self.master_seed, "message", 0))
            # A corrupted copy accepted too (verification ignoring its first byte) leaves the signature's
            # path what it was: checked, its status kept in taint.csv, as `ct` keeps its time.
            if not signed.status.timed:
                raise PqscopeError(f"signature {index} failed on the device ({signed.status.label})")
            if variant:
                self.progress = f"confirming the findings: variant {index - self.samples + 1}"
            with self._signing:
                self._signed[index] = signed.cycles
                self._signing.notify_all()
            yield TaintSignature(index, seed, signed.status, info.board_serial, signed.cycles)

    def _signatures_of(self, shard, done: set[int]) -> Iterator[int]:
        """The shard's -n signatures (each shard its own, all the first's where it may be alone), then
        each variant no shard has taken yet, in order."""
        for index in range(self.samples):
            alone = 0 < index and self._first_is_enough(self._signed.get(0))
            mine = (0 if self.one_signature_above is not None else index % shard.count) == shard.index
            if mine and index not in done and not alone:
                yield index
        while True:
            with self._signing:
                index = self._next_variant = max(self._next_variant, self.samples)
                while index in done:
                    index += 1
                self._next_variant = index + 1
            if index >= self.samples + MOST_VARIANTS:
                return
            yield index

    def _signed_below(self, end: int) -> bool:
        """Every signature below `end` that will be signed is."""
        return all(index in self._signed or (0 < index < self.samples and self._first_is_enough(self._signed.get(0)))
                   for index in range(end))

    def _wait_for_signatures_below(self, end: int, session) -> None:
        """Until `_signed_below(end)`, or the session is cancelled."""
        with self._signing:
            while not self._signed_below(end):
                if session.cancelled:
                    raise Cancelled
                self._signing.wait(0.5)

    def _variants_ended(self, before: int) -> bool:
        """The variants end below index `before`, by the signatures signed so far."""
        lines = {index: line for index, line in self._lines().items() if index < before}
        return self.variants_end(lines, self._signed, before) is not None

    def _first_is_enough(self, first: int | None) -> bool:
        return self.one_signature_above is not None and first is not None and first > self.one_signature_above

    def variants_end(self, lines: dict[int, CheckedSignature], cycles: dict[int, int | None], end: int) -> int | None:
        """The variants one shard would sign, where the signatures below index `end` decide it (None:
        one more is needed to know): it signs variant `made` while a finding that would convict is
        unchanged by the signatures before it, up to CONFIRMING_VARIANTS whatever they cost, then
        while the variants' signing has cost less than CHEAP_VARIANT_CYCLES, up to MOST_VARIANTS."""
        spent = 0
        for made in range(end - self.samples + 1):
            within = made < CONFIRMING_VARIANTS or spent < CHEAP_VARIANT_CYCLES
            before = {index: line for index, line in lines.items() if index < self.samples + made}
            if made == MOST_VARIANTS or not within or not unconfirmed(self._findings(before, self._elf,
                                                                                       self._declassify)):
                return made
            spent += cycles.get(self.samples + made) or 0
        return None

    def _lines(self) -> dict[int, CheckedSignature]:
        """Every shard's per-signature lines written so far, by sample id."""
        return {line.sample_id: line for calls in self._calls_files if calls.exists() for _, line in _lines(calls)}

    def _findings(self, lines: dict[int, CheckedSignature], elf: Path,
                  declassify: tuple[Declassification, ...]) -> list[Finding]:
        """The findings of the -n signatures' `lines` (by sample id), named from `elf`, declassified,
        and confirmed or not across all the lines (the confirming variants' too)."""
        signatures = tuple(index for index in sorted(lines) if index < self.samples)
        if self._named is None or self._named[0] != signatures:  # named once while only variants are added
            merged = merged_findings([lines[index] for index in signatures])
            self._named = signatures, merged, attribute(named_findings(merged, elf, repo_root()), declassify)
        _, merged, findings = self._named
        variants = [Variant(index, derive_seed(self.master_seed, "key", index),
                            derive_seed(self.master_seed, "sign", index), lines[index]) for index in sorted(lines)]
        return confirmed(findings, merged, variants)

    def write(self, run_dir, record: TaintSignature) -> None:
        run_dir.write_record(record.values())

    def finish(self, implementation, path, records, meta, profiled) -> Finished:
        calls = _calls(path)
        self._elf, self._declassify = Path(meta.elf), implementation.declassify
        end = self.variants_end(calls, {record.index: record.cycles for record in records},
                                max(record.index for record in records) + 1)
        records = [record for record in records if end is None or record.index < self.samples + end]
        missing = [record.index for record in records if record.index not in calls]
        if missing:
            raise PqscopeError(f"the emulator wrote no findings for signature {missing[0]}: its check would be lost")
        ordered = sorted((record for record in records if record.index < self.samples), key=lambda record: record.index)
        lines = [calls[record.index] for record in ordered]
        # A check resumed from before runs recorded their clock ran at the board's default, the benchmark clock.
        clock = CheckedClock(meta.clock, meta.clock_hz, meta.flash_wait_states) if meta.clock else BENCHMARK_CLOCK
        findings = self._findings({record.index: calls[record.index] for record in records}, self._elf,
                                  self._declassify)
        sort_by_sample(path / self.samples_name)
        document = TaintDocument(
            implementation.scheme, implementation.impl, meta.board, signatures=len(lines),
            instructions=sum(line.instructions for line in lines),
            verdict="leak" if any(f.leak for f in findings) else "no-leak", findings=tuple(findings),
            built_with=built_with(meta.toolchain, meta.build), sign_cycles=tuple(record.cycles for record in ordered),
            declassifications=tuple(item.to_json() for item in implementation.declassify),
            # one path per signature: how much code each one reached that no earlier one had
            coverage=_coverage(lines), clock=clock)
        return Finished(document.to_json())


def _coverage(lines: list[CheckedSignature]) -> Coverage:
    """Distinct instructions the signatures ran, and per signature those no earlier one ran (each
    emulator lists what it ran first: a resumed check's new emulator starts from nothing)."""
    seen: set[int] = set()
    new = []
    for line in lines:
        first = set(line.covered) - seen
        new.append(len(first))
        seen |= first
    return Coverage(len(seen), tuple(new))
