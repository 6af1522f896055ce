"""`pqscope atlas`'s document (atlas.json): its plan (the boards, the filters that chose the rows,
the sorted row list every shard splits, the rows chosen but not measured on a board with their
status there and why, the seeds and sizes), the shard it covers (None: every
row, as a whole run or a merge of shards gives it), each row's figures (`AtlasEntry`) and the
findings section (`AtlasFinding`), where each exact-check finding of each row is sorted: declassified
by the catalogue (with its reasons), a reported leak (with the secret it depends on and what the
statistical test says of it), `unchanged` (tainted, never changed by a secret), a note (its kind
costs the same for every secret at the check's clock) or, what a test asserts never happens,
unsorted. Nothing in it depends on the shard, the machine or the time it ran."""

from dataclasses import dataclass

from .parsing import optional, refused_as
from .runs import CycleStats

OPS = ("keygen", "sign", "verify")
# How a finding is sorted; UNSORTED is what none of the others takes (a test asserts there is none).
DECLASSIFIED, LEAK, UNCHANGED, NOTE, UNSORTED = "declassified", "leak", "unchanged", "note", "unsorted"
SORTS = (DECLASSIFIED, LEAK, UNCHANGED, NOTE, UNSORTED)


@dataclass(frozen=True, order=True)
class RowKey:
    """A row of the atlas: a catalogue row (scheme/impl) on a board; sorted by name, then board."""

    scheme: str
    impl: str
    board: str

    @property
    def name(self) -> str:
        return f"{self.scheme}/{self.impl}"

    @property
    def directory(self) -> str:
        """Its directory in the atlas's, relative: <board>/<scheme>-<impl>."""
        return f"{self.board}/{self.scheme}-{self.impl}"

    def to_json(self) -> dict:
        return {"scheme": self.scheme, "impl": self.impl, "board": self.board}

    @classmethod
    def from_json(cls, data: dict) -> "RowKey":
        return cls(data["scheme"], data["impl"], data["board"])


@dataclass(frozen=True)
class ShardPart:
    """Shard `index` of `count` (from 1, as --shard K/N gives it): the rows whose position in the
    plan's sorted list is index - 1 modulo count."""

    index: int
    count: int

    def owns(self, position: int) -> bool:
        return position % self.count == self.index - 1

    @property
    def text(self) -> str:
        return f"{self.index}/{self.count}"

    def to_json(self) -> dict:
        return {"index": self.index, "count": self.count}

    @classmethod
    def from_json(cls, data: dict) -> "ShardPart":
        return cls(data["index"], data["count"])


@dataclass(frozen=True)
class ListedRow:
    """A chosen row the atlas does not measure on a board, since its status there is not ok
    (does-not-fit, build-fails, fails or unmeasured), with the reason that status gives."""

    key: RowKey
    family: str
    status: str
    reason: str

    def to_json(self) -> dict:
        return {**self.key.to_json(), "family": self.family, "status": self.status, "reason": self.reason}

    @classmethod
    def from_json(cls, data: dict) -> "ListedRow":
        return cls(RowKey.from_json(data), data["family"], data["status"], data["reason"])


@dataclass(frozen=True)
class AtlasPlan:
    """What the atlas measures: on `boards`, the rows the filters chose (`rows`, sorted: what the
    shards split; `listed`, those chosen whose status on a board is not ok, sorted: every shard's
    document lists them, since they cost nothing), `samples` of each operation per row, every row's seed derived from
    `master_seed` and its name, the constant-time test of at most `ct_signatures` (sized to the
    row) and the exact check of `exact_signatures`."""

    boards: tuple[str, ...]
    families: tuple[str, ...]
    schemes: tuple[str, ...]
    named_rows: tuple[str, ...]  # --row SCHEME/IMPL
    samples: int
    master_seed: str  # hex
    msg_len: int
    ct_signatures: int
    exact_signatures: int
    rows: tuple[RowKey, ...]
    listed: tuple[ListedRow, ...] = ()

    def to_json(self) -> dict:
        return {"boards": list(self.boards), "families": list(self.families), "schemes": list(self.schemes),
                "named_rows": list(self.named_rows), "samples": self.samples, "master_seed": self.master_seed,
                "msg_len": self.msg_len, "ct_signatures": self.ct_signatures,
                "exact_signatures": self.exact_signatures, "rows": [row.to_json() for row in self.rows],
                "listed": [row.to_json() for row in self.listed]}

    @classmethod
    def from_json(cls, data: dict) -> "AtlasPlan":
        with refused_as("the atlas's plan"):
            return cls(tuple(data["boards"]), tuple(data["families"]), tuple(data["schemes"]),
                       tuple(data["named_rows"]), data["samples"], data["master_seed"], data["msg_len"],
                       data["ct_signatures"], data["exact_signatures"], tuple(map(RowKey.from_json, data["rows"])),
                       # An atlas written before rows were listed listed none (it left them out).
                       tuple(map(ListedRow.from_json, data.get("listed", ()))))


@dataclass(frozen=True)
class StartedAtlas:
    """An atlas directory's plan and the shard it measures (atlas-plan.json, written before any row starts)."""

    plan: AtlasPlan
    shard: ShardPart | None

    def to_json(self) -> dict:
        return {"plan": self.plan.to_json(), "shard": None if self.shard is None else self.shard.to_json()}

    @classmethod
    def from_json(cls, data: dict) -> "StartedAtlas":
        with refused_as("the atlas's plan (atlas-plan.json)"):
            return cls(AtlasPlan.from_json(data["plan"]), optional(data, "shard", ShardPart.from_json))


@dataclass(frozen=True)
class RowVerdict:
    """A row's constant-time test: its verdict (the exact check's and the statistics' weighed), why,
    the exact check's own verdict and size, and the statistics' (signatures, max |t|, the bound)."""

    verdict: str
    reason: str
    exact_verdict: str
    exact_signatures: int
    exact_instructions: int
    statistics_verdict: str
    signatures: int
    max_abs_t: float | None
    bound_cycles: float | None
    bound_share: float | None

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "reason": self.reason, "exact_verdict": self.exact_verdict,
                "exact_signatures": self.exact_signatures, "exact_instructions": self.exact_instructions,
                "statistics_verdict": self.statistics_verdict, "signatures": self.signatures,
                "max_abs_t": None if self.max_abs_t is None else round(self.max_abs_t, 6),
                "bound_cycles": self.bound_cycles, "bound_share": self.bound_share}

    @classmethod
    def from_json(cls, data: dict) -> "RowVerdict":
        return cls(data["verdict"], data["reason"], data["exact_verdict"], data["exact_signatures"],
                   data["exact_instructions"], data["statistics_verdict"], data["signatures"], data["max_abs_t"],
                   data["bound_cycles"], data["bound_share"])


@dataclass(frozen=True)
class AtlasEntry:
    """One row's figures: cycles per operation over the samples (min, median, mean, max), stack
    per operation, the image's sizes, the key and signature sizes the device gave, the share of
    signing in hashing (the profiler's cycles in the family's hashing functions, `hashing_functions`
    those that ran), and its constant-time test."""

    key: RowKey
    family: str
    seed: str  # hex: the row's master seed
    clock_hz: int
    samples: int
    verified: int  # samples whose signature verified and whose corrupted copy did not
    cycles: dict[str, CycleStats]  # by op
    stack_bytes: dict[str, int]  # by op
    text_bytes: int
    data_bytes: int
    bss_bytes: int
    pk_bytes: int
    sig_bytes: int
    hashing_share: float | None  # of signing; None: no signing profile
    hashing_functions: tuple[str, ...]
    test: RowVerdict

    @property
    def verdict(self) -> str:
        return self.test.verdict

    def to_json(self) -> dict:
        return {**self.key.to_json(), "family": self.family, "seed": self.seed, "clock_hz": self.clock_hz,
                "samples": self.samples, "verified": self.verified,
                "cycles": {op: stats.to_json() for op, stats in self.cycles.items()},
                "stack_bytes": dict(self.stack_bytes), "text_bytes": self.text_bytes, "data_bytes": self.data_bytes,
                "bss_bytes": self.bss_bytes, "pk_bytes": self.pk_bytes, "sig_bytes": self.sig_bytes,
                "hashing_share": None if self.hashing_share is None else round(self.hashing_share, 6),
                "hashing_functions": list(self.hashing_functions), "constant_time": self.test.to_json()}

    @classmethod
    def from_json(cls, data: dict) -> "AtlasEntry":
        return cls(RowKey.from_json(data), data["family"], data["seed"], data["clock_hz"], data["samples"],
                   data["verified"], {op: CycleStats.from_json(stats) for op, stats in data["cycles"].items()},
                   dict(data["stack_bytes"]), data["text_bytes"], data["data_bytes"], data["bss_bytes"],
                   data["pk_bytes"], data["sig_bytes"], data["hashing_share"], tuple(data["hashing_functions"]),
                   RowVerdict.from_json(data["constant_time"]))


@dataclass(frozen=True)
class Reason:
    """A catalogue declassification that applied: its reason's key and the reason in words."""

    reason: str
    why: str

    def to_json(self) -> dict:
        return {"reason": self.reason, "why": self.why}

    @classmethod
    def from_json(cls, data: dict) -> "Reason":
        return cls(data["reason"], data["why"])


@dataclass(frozen=True)
class AtlasFinding:
    """One exact-check finding of a row, sorted (`sort`, one of SORTS): where it is (function,
    source line, address), its mechanism (kind, the memory an address hit, whether its load time
    followed the address), its executions, and what sorted it: the catalogue's `reasons` (declassified),
    the `secret` it depends on and the `statistics` of it (a leak), or `detail` (unchanged, a
    note, and why it is unsorted)."""

    key: RowKey
    sort: str
    kind: str
    region: str | None
    timed: bool
    function: str | None
    file: str | None
    line: int | None
    address: str
    executions: int
    reasons: tuple[Reason, ...] = ()
    secret: str | None = None
    statistics: str | None = None
    detail: str | None = None

    def to_json(self) -> dict:
        return {**self.key.to_json(), "sort": self.sort, "kind": self.kind, "region": self.region,
                "timed": self.timed, "function": self.function, "file": self.file, "line": self.line,
                "address": self.address, "executions": self.executions,
                "reasons": [reason.to_json() for reason in self.reasons], "secret": self.secret,
                "statistics": self.statistics, "detail": self.detail}

    @classmethod
    def from_json(cls, data: dict) -> "AtlasFinding":
        return cls(RowKey.from_json(data), data["sort"], data["kind"], data["region"], data["timed"],
                   data["function"], data["file"], data["line"], data["address"], data["executions"],
                   tuple(map(Reason.from_json, data["reasons"])), data["secret"], data["statistics"], data["detail"])


@dataclass(frozen=True)
class RowResult:
    """What a finished row keeps (row.json in its directory): its entry and its findings, sorted."""

    entry: AtlasEntry
    findings: tuple[AtlasFinding, ...]

    def to_json(self) -> dict:
        return {"entry": self.entry.to_json(), "findings": [finding.to_json() for finding in self.findings]}

    @classmethod
    def from_json(cls, data: dict) -> "RowResult":
        with refused_as("an atlas row's result (row.json)"):
            return cls(AtlasEntry.from_json(data["entry"]), tuple(map(AtlasFinding.from_json, data["findings"])))


@dataclass(frozen=True)
class AtlasDocument:
    """The atlas (atlas.json): its plan, the shard it covers (None: all of the plan's rows), each
    row's entry in the plan's order and every finding of those rows, sorted, row by row."""

    plan: AtlasPlan
    shard: ShardPart | None
    entries: tuple[AtlasEntry, ...]
    findings: tuple[AtlasFinding, ...]

    @property
    def unsorted(self) -> tuple[AtlasFinding, ...]:
        return tuple(finding for finding in self.findings if finding.sort == UNSORTED)

    @property
    def leaks(self) -> tuple[AtlasFinding, ...]:
        return tuple(finding for finding in self.findings if finding.sort == LEAK)

    @property
    def owned_rows(self) -> tuple[RowKey, ...]:
        """The plan's rows this document covers (its shard's, or all)."""
        return tuple(row for position, row in enumerate(self.plan.rows)
                     if self.shard is None or self.shard.owns(position))

    @property
    def complete(self) -> bool:
        return tuple(entry.key for entry in self.entries) == self.owned_rows

    def findings_of(self, key: RowKey) -> tuple[AtlasFinding, ...]:
        return tuple(finding for finding in self.findings if finding.key == key)

    def to_json(self) -> dict:
        sorts = {sort: sum(finding.sort == sort for finding in self.findings) for sort in SORTS}
        return {"kind": "atlas", "plan": self.plan.to_json(),
                "shard": None if self.shard is None else self.shard.to_json(), "complete": self.complete,
                "rows": [entry.to_json() for entry in self.entries], "sorted": sorts,
                "findings": [finding.to_json() for finding in self.findings]}

    @classmethod
    def from_json(cls, data: dict) -> "AtlasDocument":
        with refused_as("the atlas's document (atlas.json)"):
            return cls(AtlasPlan.from_json(data["plan"]), optional(data, "shard", ShardPart.from_json),
                       tuple(map(AtlasEntry.from_json, data["rows"])),
                       tuple(map(AtlasFinding.from_json, data["findings"])))


def image_sections(image: dict) -> tuple[int, int, int]:
    """An image's .text, .data and .bss bytes, as a run's meta.json keeps them (build.ImageSize)."""
    return image["text"], image["data"], image["bss"]
