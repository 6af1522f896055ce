/* Secret-taint tracking: shadow state, propagation over each instruction's decoded description
 * (taint_decode.c decodes and caches them), and the findings (rules and formats in taint.h). */
#include "taint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "chip.h"
#include "elf.h"
#include "memmap.h"
#include "taint_decode.h"
#include "timing.h"

#define SLOTS 64
#define MAX_WATCHES 64
#define MAX_FRAMES 256
#define MAX_WARNINGS 8
#define MAX_PUBLIC_RANGES 16
#define MAX_SITES 8

/* Leaf summaries (taint.h, "Leaf calls"). While a leaf call is recorded, the upper six bits of a
 * slot or shadow byte label where its value comes from; the taint proper is the lower two. */
#define TAINT_VALUE (TAINT_SECRET | TAINT_DECLASSIFIED)
#define LABEL_ARGUMENT(i) (4u << (i))    /* r0..r3 at the call's entry */
#define LABEL_ARGUMENTS 0x3cu
#define LABEL_ENTRY 0x40u                /* any other slot at entry, but SP and LR */
#define LABEL_MEMORY 0x80u               /* a byte the call read before it wrote it */
#define LEAVES 256                       /* functions with summaries (or known not to have any) */
#define SEALED 64                        /* functions out of the code hook at once (taint.h: 65 ranges) */
#define SUMMARIES TAINT_LEAF_SUMMARIES   /* summaries per function (taint.h) ... */
#define SUMMARY_BUCKETS 64               /* ... found by their call site (SP, LR) */
/* Recordings without a summary before a function is left alone; one with a finding does not
 * count once the function replayed: slhdsa-c's shake_chain makes a finding in every chain WOTS+
 * signs, and replays those of the next layer's tree. */
#define FAILURES 4
#define RECORDINGS TAINT_LEAF_RECORDINGS /* ... and recordings after which fewer replays than them leave it, */
/* ... or, once one of its calls replayed, as many as it keeps summaries: slhdsa-c's memcpy, called
 * from 17 places before its WOTS+ chains repeat their calls millions of times, was left alone
 * (SLH-DSA-SHA2-192s's check 1.3 times as slow), and slhdsa-c's shake_chain, whose first calls
 * compute 35 chains into as many buffers, would be; a function never replayed records no more
 * than RECORDINGS calls, each of which unseals the sealed leaves it calls (SPHINCS+-SHAKE's Keccak) */
#define RECORDINGS_REPLAYED SUMMARIES
#define UNSEALS 4                        /* misses while sealed before it stays hooked ... */
#define REPLAYS_PER_UNSEAL 1024          /* ... unless it replayed this many calls for each */
/* A callee of this many instructions leaves the code hook for its caller's replays, as many of
 * them as a summary lists: SPHINCS+-SHAKE's shake256 replays with pqm4's state extraction and
 * newlib's memset inside, slhdsa-c's shake_chain with a 16-byte memcpy; kept hooked, they cost
 * those checks a third of their time. Shorter ones stay (each rehook drops translated code). */
#define LONG_CALL 16
#define SUMMARY_CALLEES 6
#define SEEN_READ 1
#define SEEN_WRITTEN 2

/* REGION_FLASH_TIMED: flash whose load time follows the address (taint_core.flash_load_timed),
 * reported as "flash" with "timed": true. */
enum region {
	REGION_NONE, REGION_SRAM, REGION_CCM, REGION_FLASH, REGION_FLASH_TIMED, REGION_PERIPHERAL
};
static const char *const region_names[] = {"", "sram", "ccm", "flash", "flash", "peripheral"};
static const char *const kind_names[TAINT_KINDS] = {"address", "branch", "division", "jump",
							"select"};

struct finding {
	uint64_t key;      /* address << 8 | kind << 4 | region; count 0: empty slot */
	uint64_t count;
	uint64_t taken;    /* a branch's executions that went the taken way */
	bool secret;
	uint64_t call_count, call_taken; /* ... within the current call of the scope function (--taint-calls) */
	bool call_secret;
	/* What its executions in the current call did, in order (taint.h, "outcomes"): the host
	 * compares them between secrets. */
	uint64_t call_digest;
	struct outcome_run {
		uint32_t value, repeat;
	} call_runs[TAINT_OUTCOME_RUNS];
	unsigned call_nruns;
};

enum role {
	ROLE_SCOPE = 1,          /* --taint-function */
	ROLE_SECRET = 2,         /* pqs_taint_secret */
	ROLE_PUBLIC = 4,         /* pqs_taint_public */
	ROLE_PUBLIC_RETURN = 8,  /* --taint-public-return */
	ROLE_PUBLIC_ARGUMENT = 16, /* --taint-public-argument */
	ROLE_RANDOM = 32,        /* randombytes(out, n): out is secret once it returns */
	ROLE_WITHIN = 64,        /* --taint-public-within */
};
#define FRAME_ROLES (ROLE_SCOPE | ROLE_PUBLIC_RETURN | ROLE_RANDOM | ROLE_WITHIN)
/* A finding's key: within << 40 | address << 8 | kind << 4 | region, where `within` names the
 * innermost open --taint-public-within call's function by its halfword in flash, + 1 (0: none):
 * findings sort by that function's address. */
#define WITHIN_SHIFT 40
#define WITHIN_OF(entry) (((entry) - FLASH_BASE) / 2 + 1)
#define WITHIN_ENTRY(within) (FLASH_BASE + 2 * ((within) - 1))

struct site {
	uint32_t lo, hi;         /* code addresses lo..hi-1 */
};

struct watch {
	uint32_t entry;
	unsigned roles;
	unsigned index;          /* argument register (ROLE_PUBLIC_ARGUMENT) */
	uint32_t bytes;
	struct site sites[MAX_SITES]; /* ROLE_WITHIN: only calls made from these (none: every call) */
	unsigned nsites;
};

/* A call whose return address is `ret` was made from one of w's sites (its last halfword, that
 * of a BL or a BLX, lies in one). */
static bool called_from_site(const struct watch *w, uint32_t ret)
{
	if (!w->nsites)
		return true;
	for (unsigned i = 0; i < w->nsites; i++)
		if (ret - 2 - w->sites[i].lo < w->sites[i].hi - w->sites[i].lo)
			return true;
	return false;
}

/* --taint-public-secret-bytes: bytes of every region pqs_taint_secret marks that are public. */
struct public_range {
	uint32_t offset, bytes;
};

/* A shadow byte and its taint (summaries' inputs and outputs). */
struct byte_taint {
	uint32_t addr;
	uint8_t taint;
};

struct byte_list {
	struct byte_taint *at;
	uint32_t n, cap;
};

/* Consecutive bytes of one taint: a summary's inputs and outputs, compared and applied at each
 * replay (a SHA-2 compression's message schedule on the stack is hundreds of bytes). */
struct taint_run {
	uint32_t addr, len;
	uint8_t taint;
};

struct run_list {
	struct taint_run *at;
	uint32_t n, cap;
};

/* Memory whose value decided a recorded call's path or addresses (slhdsa-c's sha3_update: the
 * context's position and rate): a summary keyed on it. A recording that found memory deciding
 * names the words its deciding registers were loaded from; the next recording does not label
 * them, and is summarised, keyed on their values at entry, if no other memory decided (the
 * labels prove it). A word is found again relative to the register r0-r3 or SP it lay near at
 * entry, else at its address; a loaded word the call stored and loaded again (a spill) is still
 * the word first loaded. */
#define MEMORY_KEYS 8
struct memory_key {
	uint32_t addr, value;        /* its value at entry */
	uint8_t bytes;
};
struct key_rule {
	int8_t base;                 /* r0..r3, 13 (SP), -1: none (the offset is the address) */
	int32_t offset;
	uint8_t bytes;
};

/* What one leaf call did to the taint, and what another call must share to do the same: SP, LR,
 * the values of the arguments and of the memory that decided its path or addresses, and the taint
 * of every slot and of every byte it read before writing it. */
struct summary {
	uint32_t sp, lr;
	uint8_t keyed;               /* LABEL_ARGUMENTS bits: the r0..r3 whose values are part of the key */
	uint32_t args[4];
	uint64_t used, set;          /* the slots it read before writing them, and those it wrote */
	uint8_t entry[SLOTS];        /* the used slots' taint at entry */
	struct run_list reads;       /* taint at entry */
	struct run_list writes;      /* taint at return */
	uint8_t exit[SLOTS];         /* the set slots' taint at return */
	uint8_t touched;             /* the OR of every input's and output's taint */
	uint64_t instructions;
	uint16_t next;               /* the next summary (index + 1, 0: none) of its call site's bucket */
	uint8_t ncallees;
	struct leaf *callees[SUMMARY_CALLEES]; /* the functions it called in long calls */
	uint8_t nkeys;
	struct memory_key keys[MEMORY_KEYS];
};

struct leaf {
	uint32_t entry, end;         /* its code, [entry, end) */
	unsigned failures, unseals, streak;
	uint64_t recordings, replays; /* replays: its own, and those of summaries it is a long callee of */
	bool sealed;                 /* its code is outside the code hook (taint_hooked_ranges) */
	uint8_t nrules;              /* the memory its recordings are keyed on (MEMORY_KEYS) */
	struct key_rule rules[MEMORY_KEYS];
	struct summary summaries[SUMMARIES];
	unsigned n, next;
	uint16_t bucket[SUMMARY_BUCKETS]; /* the first summary (index + 1) of each call-site bucket */
};

/* A function a recorded call called, [entry, end) (end 0: none), returning to ret with SP sp. */
struct callee {
	uint32_t entry, end, ret, sp;
	uint64_t start;          /* instructions before it was called */
};

struct frame {
	struct call_frame call;  /* func: the entry address */
	unsigned roles;
	uint32_t out, out_bytes; /* ROLE_RANDOM: its arguments, marked when it returns */
	unsigned outer_within;   /* ROLE_WITHIN: the taint's `within` before this call */
};

struct taint {
	/* hot */
	uint8_t r[SLOTS];
	bool any;                /* something may be tainted: else nothing can propagate */
	bool recording;          /* in a call of the scope function, outside a handler */
	uint64_t instructions;
	struct taint_decoder dec; /* each instruction is looked up in its cache */
	uint8_t *sram, *ccm;     /* shadows; ccm inside sram where the chip aliases it (the L4R5's SRAM2) */
	const struct chip *chip;
	uint8_t *covered;        /* a bit per flash halfword: an instruction there ran in a call */
	uint64_t newly_covered;  /* instructions first run in the current call */

	struct taint_core core;
	const struct elf_image *elf;
	struct finding *findings;
	uint32_t finding_mask, finding_used;

	struct watch watch[MAX_WATCHES];
	unsigned nwatch;
	struct public_range public_ranges[MAX_PUBLIC_RANGES];
	unsigned npublic_ranges;
	uint32_t watch_lo, watch_hi;
	uint8_t *watched;        /* a bit per flash halfword: a watched function's entry (watch_lo..hi elsewhere) */
	bool record_always;      /* taint_record(): the tests, without functions */
	struct frame stack[MAX_FRAMES];
	unsigned depth, scope_depth;
	unsigned within;         /* the innermost open --taint-public-within call (WITHIN_OF) */
	uint64_t dropped_frames;
	uint64_t calls;
	uint64_t *coverage;      /* per returned call: the instructions it ran first */
	uint64_t coverage_cap;

	/* --taint-calls: a line per returned call, with what it found and ran first */
	FILE *calls_out;
	uint32_t *first_run;     /* the current call's first-run instruction addresses */
	size_t first_used, first_cap;
	uint64_t call_start;     /* instructions before the current call */
	uint32_t id_addr;        /* --taint-id-symbol: the sample id's word (0: none) */
	uint64_t jump_pending;   /* a jump finding's key (+ 1) whose target, the next block, is its outcome */
	uint32_t sample_id;      /* ... read when the call began */

	bool in_handler;
	bool unhooked;           /* idle: no instruction calls taint_insn (taint_hooked_ranges) */
	uint8_t saved[SLOTS];
	unsigned warnings;

	/* leaf calls: recorded once, replayed while a later call's inputs are the same */
	struct {
		bool on;
		uint8_t *entries;        /* a bit per flash halfword: a function's entry */
		struct leaf *leaves;     /* open addressing by entry, LEAVES of them */
		struct leaf *sealed[SEALED];
		unsigned nsealed;
		uint8_t *seen;           /* per shadow byte, while recording: SEEN_READ | SEEN_WRITTEN */
		struct leaf *leaf;       /* the call being recorded or replayed (NULL: none) */
		const struct summary *replay; /* the summary replayed (NULL: recording) */
		uint32_t ret, sp;        /* the call returns when a block starts at ret with SP sp */
		struct callee callee;    /* recording: the function it called and is in */
		uint64_t start;          /* instructions before the call */
		uint8_t decided;         /* recording: the labels that reached a decision */
		uint32_t from[SLOTS];    /* recording: the memory word (address + 1) a slot was loaded from */
		uint8_t from_bytes[SLOTS];
		/* recording: per word of memory the call wrote, the loaded word stored there (address
		 * + 1, 0: none) and its size; indexed as `seen` by the word's first byte */
		uint32_t *spilled;
		uint8_t *spilled_bytes;
		uint8_t nfound;          /* recording: the words whose loads reached a decision */
		bool found_more;         /* ... and more than MEMORY_KEYS of them, or one not known */
		struct key_rule found[MEMORY_KEYS];
		bool spoiled, refused;   /* recording: a finding; code it cannot summarise */
		struct summary rec;
		struct byte_list read_bytes, written_bytes; /* recording: rec's reads and writes */
		/* summary_for's answer for `looked_up` in the block now beginning: the gate and the
		 * block hook ask up to four times at a function's entry, and nothing between them
		 * changes the inputs unless the block hook ends a call, a recording or marks bytes
		 * (forget_lookup) */
		const struct leaf *looked_up;
		const struct summary *lookup;
		uint64_t recorded, replayed, rehooks;
		uint32_t changed_lo, changed_hi; /* the code whose hooking changed since asked (hi UINT32_MAX: all) */
	} memo;
};

static void forget_lookup(struct taint *t)
{
	t->memo.looked_up = NULL;
}

/* ---- shadow state ---- */

static uint8_t *shadow(struct taint *t, uint32_t addr)
{
	if (addr - SRAM_BASE < t->chip->sram_size)
		return t->sram + (addr - SRAM_BASE);
	if (addr - CCM_BASE < t->chip->ccm_size)
		return t->ccm + (addr - CCM_BASE);
	return NULL;
}

static enum region region_of(const struct taint *t, uint32_t addr)
{
	if (addr - SRAM_BASE < t->chip->sram_size)
		return REGION_SRAM;
	if (addr - CCM_BASE < t->chip->ccm_size)
		return REGION_CCM;
	if (addr - FLASH_BASE < t->chip->flash_size || addr < t->chip->flash_size) /* and its boot alias */
		return REGION_FLASH;
	return REGION_PERIPHERAL;
}

static uint8_t declassify(uint8_t v)
{
	return (v & TAINT_SECRET) ? (uint8_t)((v & ~TAINT_SECRET) | TAINT_DECLASSIFIED) : v;
}

static inline uint8_t or_slots(const struct taint *t, uint64_t m)
{
	uint8_t v = 0;
	while (m) {
		v |= t->r[__builtin_ctzll(m)];
		m &= m - 1;
	}
	return v;
}

static inline void set_slots(struct taint *t, uint64_t m, uint8_t v)
{
	while (m) {
		t->r[__builtin_ctzll(m)] = v;
		m &= m - 1;
	}
}

static inline void merge_slots(struct taint *t, uint64_t m, uint8_t v)
{
	while (m) {
		t->r[__builtin_ctzll(m)] |= v;
		m &= m - 1;
	}
}

static void clear_all(struct taint *t)
{
	forget_lookup(t);
	memset(t->r, 0, sizeof t->r);
	memset(t->sram, 0, t->chip->sram_size);
	memset(t->ccm, 0, t->chip->ccm_size);
	t->any = false;
}

void taint_mark(struct taint *t, uint32_t addr, uint32_t n, uint8_t value)
{
	forget_lookup(t);
	uint32_t outside = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *s = shadow(t, addr + i);
		if (!s)
			outside++;
		else if (value)
			*s |= value;
		else
			*s = declassify(*s);
	}
	if (value && n > outside)
		t->any = true;
	if (value && outside && t->warnings < MAX_WARNINGS) {
		t->warnings++;
		fprintf(stderr, "vboard: warning: %u secret bytes at address 0x%08x are outside SRAM "
				"and CCM: not tainted\n", outside, addr);
	}
}

/* ---- findings ---- */

/* The slot of `key` in the table (open addressing): its entry, or the empty slot it goes in. */
static struct finding *finding_slot(const struct taint *t, uint64_t key)
{
	uint32_t i = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) & t->finding_mask;
	while (t->findings[i].count && t->findings[i].key != key)
		i = (i + 1) & t->finding_mask;
	return &t->findings[i];
}

static void findings_grow(struct taint *t)
{
	struct finding *old = t->findings;
	uint32_t n = t->finding_mask + 1;
	t->finding_mask = 2 * n - 1;
	t->findings = calloc(2 * (size_t)n, sizeof *t->findings);
	for (uint32_t i = 0; i < n; i++)
		if (old[i].count)
			*finding_slot(t, old[i].key) = old[i];
	free(old);
}

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

/* Appends the outcome of the execution just counted (the call's first when call_count is 1). */
static void add_outcome(struct finding *f, uint32_t outcome)
{
	if (f->call_count == 1) {
		f->call_digest = FNV_OFFSET;
		f->call_nruns = 0;
	}
	for (unsigned b = 0; b < 4; b++)
		f->call_digest = (f->call_digest ^ (outcome >> 8 * b & 0xff)) * FNV_PRIME;
	struct outcome_run *last = f->call_nruns ? &f->call_runs[f->call_nruns - 1] : NULL;
	if (last && last->value == outcome && last->repeat < UINT32_MAX)
		last->repeat++;
	else if (f->call_nruns < TAINT_OUTCOME_RUNS)
		f->call_runs[f->call_nruns++] = (struct outcome_run){outcome, 1};
	else
		f->call_nruns = TAINT_OUTCOME_RUNS + 1; /* the runs kept end here: the rest is in the digest */
}

static struct finding *finding_put(struct taint *t, uint64_t key, uint64_t count, uint64_t taken, bool secret)
{
	if (2 * (t->finding_used + 1) > t->finding_mask + 1)
		findings_grow(t);
	struct finding *f = finding_slot(t, key);
	if (!f->count) {
		f->key = key;
		t->finding_used++;
	}
	f->count += count;
	f->taken += taken;
	f->secret |= secret;
	f->call_count += count;
	f->call_taken += taken;
	f->call_secret |= secret;
	return f;
}

static uint64_t finding_key(const struct taint *t, uint32_t addr, enum taint_kind kind, enum region region)
{
	/* Inside a call declared to work on masked values, a finding is kept apart from the same
	 * instruction's elsewhere, and declassified. */
	return (uint64_t)t->within << WITHIN_SHIFT | (uint64_t)addr << 8 | (uint64_t)kind << 4 | region;
}

/* One execution of a finding and its outcome: what the secret could change of its time. */
static void record(struct taint *t, uint32_t addr, enum taint_kind kind, enum region region,
		   uint8_t v, bool taken, uint32_t outcome)
{
	t->memo.spoiled = true;
	struct finding *f = finding_put(t, finding_key(t, addr, kind, region), 1, taken,
					!t->within && (v & TAINT_SECRET));
	add_outcome(f, outcome);
}

/* A jump's outcome is its target, the block that runs next: recorded there (taint_block). */
static void record_jump(struct taint *t, uint32_t addr, uint8_t v)
{
	t->memo.spoiled = true;
	uint64_t key = finding_key(t, addr, TAINT_JUMP, REGION_NONE);
	finding_put(t, key, 1, 0, !t->within && (v & TAINT_SECRET));
	t->jump_pending = key + 1;
}

/* Whether a branch finding goes the taken way this time (the instruction is about to execute):
 * a secret-dependent branch that always goes one way costs the same time for every secret. */
static bool branch_taken(const struct taint *t, const struct insn *d)
{
	if (d->cond_reg >= 0)
		return (t->core.reg(t->core.core, d->cond_reg) == 0) == (d->cond == ARM_CC_EQ);
	return timing_cond_holds(d->cond, t->core.reg(t->core.core, TAINT_CORE_XPSR));
}

uint64_t taint_finding(const struct taint *t, uint32_t addr, enum taint_kind kind,
		       bool *declassified)
{
	uint64_t count = 0;
	bool secret = false;
	for (uint32_t i = 0; i <= t->finding_mask; i++) {
		const struct finding *f = &t->findings[i];
		if (f->count && (uint32_t)(f->key >> 8) == addr && (f->key >> 4 & 0xf) == kind) {
			count += f->count;
			secret |= f->secret;
		}
	}
	if (declassified)
		*declassified = count && !secret;
	return count;
}

uint64_t taint_branch_taken(const struct taint *t, uint32_t addr)
{
	uint64_t taken = 0;
	for (uint32_t i = 0; i <= t->finding_mask; i++) {
		const struct finding *f = &t->findings[i];
		if (f->count && (uint32_t)(f->key >> 8) == addr && (f->key >> 4 & 0xf) == TAINT_BRANCH)
			taken += f->taken;
	}
	return taken;
}


/* ---- execution ---- */

/* A shadow byte's index in the recording's per-byte arrays (SRAM, then CCM). */
static size_t memory_index(const struct taint *t, const uint8_t *s)
{
	size_t sram = t->chip->sram_size;
	return s >= t->sram && s < t->sram + sram ? (size_t)(s - t->sram) : sram + (size_t)(s - t->ccm);
}

static uint8_t *seen_at(struct taint *t, const uint8_t *s)
{
	return &t->memo.seen[memory_index(t, s)];
}

static void byte_list_add(struct byte_list *l, uint32_t addr, uint8_t taint)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->at = realloc(l->at, l->cap * sizeof *l->at);
	}
	l->at[l->n++] = (struct byte_taint){addr, taint};
}

static int by_address(const void *pa, const void *pb)
{
	uint32_t a = ((const struct byte_taint *)pa)->addr, b = ((const struct byte_taint *)pb)->addr;
	return a < b ? -1 : a > b;
}

/* The bytes (each once) as runs; they are left in address order. */
static void runs_of(struct run_list *runs, struct byte_list *bytes)
{
	qsort(bytes->at, bytes->n, sizeof *bytes->at, by_address);
	runs->n = 0;
	for (uint32_t k = 0; k < bytes->n; k++) {
		const struct byte_taint *b = &bytes->at[k];
		struct taint_run *last = runs->n ? &runs->at[runs->n - 1] : NULL;
		if (last && b->addr == last->addr + last->len && b->taint == last->taint) {
			last->len++;
			continue;
		}
		if (runs->n == runs->cap) {
			runs->cap = runs->cap ? 2 * runs->cap : 16;
			runs->at = realloc(runs->at, runs->cap * sizeof *runs->at);
		}
		runs->at[runs->n++] = (struct taint_run){b->addr, 1, b->taint};
	}
}

static bool run_holds(struct taint *t, const struct taint_run *r)
{
	const uint8_t *s = shadow(t, r->addr);
	for (uint32_t i = 0; i < r->len; i++)
		if (s[i] != r->taint)
			return false;
	return true;
}

static uint32_t key_mask(uint8_t bytes)
{
	return bytes >= 4 ? UINT32_MAX : (1u << 8 * bytes) - 1;
}

static bool in_memory_keys(const struct summary *rec, uint32_t addr)
{
	for (unsigned k = 0; k < rec->nkeys; k++)
		if (addr - rec->keys[k].addr < rec->keys[k].bytes)
			return true;
	return false;
}

/* A load of the byte at `addr` (shadow `s`) by a leaf call being recorded: its taint at entry is
 * an input, and what it loads is labelled as memory, unless the call wrote it first or the
 * recording is keyed on its value. */
static uint8_t recorded_load(struct taint *t, uint32_t addr, const uint8_t *s)
{
	uint8_t *seen = seen_at(t, s);
	if (*seen & SEEN_WRITTEN)
		return *s;
	if (!(*seen & SEEN_READ)) {
		*seen |= SEEN_READ;
		byte_list_add(&t->memo.read_bytes, addr, *s);
	}
	return in_memory_keys(&t->memo.rec, addr) ? *s : *s | LABEL_MEMORY;
}

/* The word at `addr` as a rule: among the arguments on the stack, near an argument's value, near
 * SP, at the recorded call's entry. */
static struct key_rule rule_for(const struct summary *rec, uint32_t addr, uint8_t bytes)
{
	if (addr - rec->sp < 256)
		return (struct key_rule){13, (int32_t)(addr - rec->sp), bytes};
	for (int r = 0; r < 4; r++)
		if (addr - rec->args[r] < 4096)
			return (struct key_rule){(int8_t)r, (int32_t)(addr - rec->args[r]), bytes};
	if (addr - rec->sp < 4096)
		return (struct key_rule){13, (int32_t)(addr - rec->sp), bytes};
	return (struct key_rule){-1, (int32_t)addr, bytes};
}

/* Slots `m` reached a decision of a recorded call with memory among their labels: the words they
 * were loaded from, found for its next recording. */
static void found_deciding_memory(struct taint *t, uint64_t m)
{
	for (; m; m &= m - 1) {
		int slot = __builtin_ctzll(m);
		if (!(t->r[slot] & LABEL_MEMORY))
			continue;
		if (!t->memo.from[slot]) {
			t->memo.found_more = true;
			continue;
		}
		struct key_rule rule = rule_for(&t->memo.rec, t->memo.from[slot] - 1, t->memo.from_bytes[slot]);
		bool known = false;
		for (unsigned k = 0; k < t->memo.nfound; k++)
			known |= t->memo.found[k].base == rule.base && t->memo.found[k].offset == rule.offset;
		if (!known && t->memo.nfound == MEMORY_KEYS)
			t->memo.found_more = true;
		else if (!known)
			t->memo.found[t->memo.nfound++] = rule;
	}
}

/* A recorded instruction wrote slots `m` from slots `from`: the first memory word among them. */
static void loaded_through(struct taint *t, uint64_t m, uint64_t from)
{
	uint32_t addr = 0;
	uint8_t bytes = 0;
	for (; from && !addr; from &= from - 1)
		addr = t->memo.from[__builtin_ctzll(from)], bytes = t->memo.from_bytes[__builtin_ctzll(from)];
	for (; m; m &= m - 1)
		t->memo.from[__builtin_ctzll(m)] = addr, t->memo.from_bytes[__builtin_ctzll(m)] = bytes;
}

static void recorded_store(struct taint *t, uint32_t addr, const uint8_t *s)
{
	uint8_t *seen = seen_at(t, s);
	if (!(*seen & SEEN_WRITTEN)) {
		*seen |= SEEN_WRITTEN;
		byte_list_add(&t->memo.written_bytes, addr, 0);
	}
}

/* A recorded leaf call's instruction reads slots `read`, then writes `written`. */
static inline void recorded_slots(struct taint *t, uint64_t read, uint64_t written)
{
	if (t->memo.leaf) {
		t->memo.rec.used |= read & ~t->memo.rec.set;
		t->memo.rec.set |= written;
	}
}

static uint64_t transfer_slots(const struct insn *d)
{
	uint64_t m = 0;
	for (unsigned k = 0; k < d->nxfer; k++)
		if (d->xfer[k] != SLOT_PC)
			m |= BIT(d->xfer[k]);
	return m;
}

/* A recorded store of `slot` at `addr`: a loaded word stored is followed to where it goes. */
static void stored_from(struct taint *t, int slot, uint32_t addr)
{
	const uint8_t *s = shadow(t, addr);
	if (s) {
		t->memo.spilled[memory_index(t, s)] = t->memo.from[slot];
		t->memo.spilled_bytes[memory_index(t, s)] = t->memo.from_bytes[slot];
	}
}

/* A recorded load into `slot` from `addr`, labelled `loaded`, its address from slots `address`:
 * memory the call read before writing it is the word itself; memory it wrote, the word stored
 * there, if it was one; memory read through a loaded pointer, the pointer's word. */
static void loaded_from(struct taint *t, int slot, uint32_t addr, uint8_t bytes, uint8_t loaded, uint64_t address)
{
	const uint8_t *s = shadow(t, addr);
	if (!(loaded & LABEL_MEMORY)) {
		loaded_through(t, BIT(slot), address);
		return;
	}
	if (s && (*seen_at(t, s) & SEEN_WRITTEN))
		t->memo.from[slot] = t->memo.spilled[memory_index(t, s)], bytes = t->memo.spilled_bytes[memory_index(t, s)];
	else
		t->memo.from[slot] = addr + 1;
	t->memo.from_bytes[slot] = bytes;
}

static void exec_memory(struct taint *t, const struct insn *d, uint32_t pc)
{
	uint32_t addr = (uint32_t)d->offset;
	uint8_t at = 0;
	if (d->base >= 0) {
		addr += t->core.reg(t->core.core, d->base);
		at |= t->r[d->base];
	}
	if (d->index >= 0) {
		addr += t->core.reg(t->core.core, d->index) << d->shift;
		at |= t->r[d->index];
	}
	uint8_t extra = at | or_slots(t, d->reads);
	bool recording_leaf = t->memo.leaf != NULL; /* (a replayed call runs no instruction here) */
	enum region region = region_of(t, addr);
	uint64_t address = (d->base >= 0 ? BIT(d->base) : 0) | (d->index >= 0 ? BIT(d->index) : 0);
	if (recording_leaf) {
		bool load = d->cls == CLASS_LOAD;
		recorded_slots(t, address | d->reads | (load ? 0 : transfer_slots(d)), d->writes | (load ? transfer_slots(d) : 0));
		t->memo.decided |= at;
		if (at & LABEL_MEMORY)
			found_deciding_memory(t, address);
		t->memo.refused |= region == REGION_PERIPHERAL || d->unshadowed;
	}
	if ((at & TAINT_VALUE) && t->recording) {
		if (region == REGION_FLASH && t->core.flash_load_timed(t->core.core))
			region = REGION_FLASH_TIMED;
		record(t, pc, TAINT_ADDRESS, region, at, false, addr);
	}
	for (unsigned k = 0; k < d->nxfer; k++) {
		uint32_t a = addr + k * d->xbytes;
		if (d->cls == CLASS_LOAD) {
			uint8_t v = extra, loaded = 0;
			for (unsigned b = 0; b < d->xbytes; b++) {
				const uint8_t *s = shadow(t, a + b);
				loaded |= !s ? 0 : recording_leaf ? recorded_load(t, a + b, s) : *s;
			}
			v |= loaded;
			if (d->xfer[k] != SLOT_PC) {
				t->r[d->xfer[k]] = v;
				if (recording_leaf)
					loaded_from(t, d->xfer[k], a, (uint8_t)d->xbytes, loaded, address);
			} else {
				t->memo.decided |= v;
				t->memo.found_more |= recording_leaf && (v & LABEL_MEMORY); /* a jump: not keyed */
				if ((v & TAINT_VALUE) && t->recording)
					record_jump(t, pc, v);
			}
		} else {
			uint8_t v = t->r[d->xfer[k]] | extra;
			for (unsigned b = 0; b < d->xbytes; b++) {
				uint8_t *s = shadow(t, a + b);
				if (s) {
					if (recording_leaf)
						recorded_store(t, a + b, s);
					*s = v;
				}
			}
			if (recording_leaf)
				stored_from(t, d->xfer[k], a);
		}
	}
	set_slots(t, d->writes, extra);
}

static void exec(struct taint *t, const struct insn *d, uint32_t pc)
{
	if (d->cls == CLASS_LOAD || d->cls == CLASS_STORE) {
		exec_memory(t, d, pc);
		return;
	}
	if (d->cls == CLASS_PAIRS) {
		recorded_slots(t, d->reads | BIT(d->src[0]) | BIT(d->src[1]), BIT(d->xfer[0]) | BIT(d->xfer[1]));
		uint8_t c = or_slots(t, d->reads), lo = t->r[d->src[0]], hi = t->r[d->src[1]];
		t->r[d->xfer[0]] = lo | c;
		t->r[d->xfer[1]] = hi | c;
		if (t->memo.leaf)
			loaded_through(t, BIT(d->xfer[0]) | BIT(d->xfer[1]), 0);
		return;
	}
	t->memo.refused |= d->unshadowed && t->memo.leaf;
	recorded_slots(t, d->reads | d->decides | d->merges, d->writes | d->merges | d->zeroes);
	if (d->finding && t->recording) {
		uint8_t v = or_slots(t, d->decides);
		t->memo.decided |= v;
		if ((v & LABEL_MEMORY) && t->memo.leaf)
			found_deciding_memory(t, d->decides);
		v &= TAINT_VALUE;
		enum taint_kind kind = (enum taint_kind)(d->finding - 1);
		if (v && kind == TAINT_JUMP) {
			record_jump(t, pc, v);
		} else if (v && kind == TAINT_DIVISION) {
			uint32_t n = t->core.reg(t->core.core, d->src[0]), m = t->core.reg(t->core.core, d->src[1]);
			record(t, pc, kind, REGION_NONE, v, false, timing_div(n, m, d->shift));
		} else if (v) {
			bool taken = branch_taken(t, d); /* a branch's or a select's direction */
			record(t, pc, kind, REGION_NONE, v, kind == TAINT_BRANCH && taken, taken);
		}
	}
	uint8_t v = or_slots(t, d->reads);
	set_slots(t, d->writes, v);
	merge_slots(t, d->merges, v);
	set_slots(t, d->zeroes, 0);
	if (t->memo.leaf) {
		loaded_through(t, d->writes | d->merges, d->reads | d->merges);
		loaded_through(t, d->zeroes, 0);
	}
}

/* Sets of flash addresses (instructions run, function entries, watched entries): a bit per halfword. */
static inline bool in_flash(const struct taint *t, uint32_t addr)
{
	return addr - FLASH_BASE < t->chip->flash_size;
}

static inline bool flash_bit(const struct taint *t, const uint8_t *bits, uint32_t addr)
{
	uint32_t half = (addr - FLASH_BASE) >> 1;
	return in_flash(t, addr) && (bits[half >> 3] >> (half & 7) & 1);
}

/* Whether it was clear (outside flash: nothing set). */
static inline bool set_flash_bit(const struct taint *t, uint8_t *bits, uint32_t addr)
{
	uint32_t half = (addr - FLASH_BASE) >> 1;
	if (!in_flash(t, addr) || (bits[half >> 3] >> (half & 7) & 1))
		return false;
	bits[half >> 3] |= (uint8_t)(1u << (half & 7));
	return true;
}

/* Coverage: which instructions of the checked code ran, so that a report can say whether further
 * calls still reach new code (taint follows one path per call). */
static inline void cover(struct taint *t, uint32_t addr)
{
	if (set_flash_bit(t, t->covered, addr)) {
		t->newly_covered++;
		if (t->calls_out) {
			if (t->first_used == t->first_cap) {
				t->first_cap = t->first_cap ? 2 * t->first_cap : 1024;
				t->first_run = realloc(t->first_run, t->first_cap * sizeof *t->first_run);
			}
			t->first_run[t->first_used++] = addr;
		}
	}
}

bool taint_insn(struct taint *t, uint32_t addr)
{
	if (t->memo.replay && !t->in_handler) /* a leaf call whose summary is applied at its return */
		return true;
	if (t->recording)
		cover(t, addr);
	if (!t->any) {
		t->instructions += t->recording;
		return true;
	}
	struct insn *d = insn_slot(&t->dec, addr);
	if (!d->key && !(d = taint_decode_at(&t->dec, &t->core, addr)))
		return false;
	t->instructions += t->recording;
	exec(t, d, addr);
	return true;
}

/* ---- leaf calls ---- */

static bool is_function_entry(const struct taint *t, uint32_t addr)
{
	return t->memo.entries && flash_bit(t, t->memo.entries, addr);
}

/* Whether a watched function may begin at `addr`: asked at every block, so a bit lookup in flash
 * (a row's declassifications watch functions all over the code: a search of them cost a sixth of
 * the key generation's time), the range of the entries elsewhere. */
static bool may_be_watched(const struct taint *t, uint32_t addr)
{
	return in_flash(t, addr) ? flash_bit(t, t->watched, addr) : addr >= t->watch_lo && addr <= t->watch_hi;
}

static unsigned watched_roles(const struct taint *t, uint32_t addr)
{
	unsigned roles = 0;
	if (!may_be_watched(t, addr))
		return 0;
	for (unsigned i = 0; i < t->nwatch; i++)
		if (t->watch[i].entry == addr)
			roles |= t->watch[i].roles;
	return roles;
}

static bool is_watched(const struct taint *t, uint32_t addr)
{
	return watched_roles(t, addr) != 0;
}

/* The leaf of the function at `entry`: found, made (NULL when the table is full), or NULL. */
static struct leaf *leaf_at(struct taint *t, uint32_t entry, bool make)
{
	for (unsigned probe = 0, i = (entry >> 1) % LEAVES; probe < LEAVES; probe++, i = (i + 1) % LEAVES) {
		struct leaf *l = &t->memo.leaves[i];
		if (l->entry == entry)
			return l;
		if (!l->entry) {
			const struct elf_func *f = make ? elf_function_at(t->elf, entry) : NULL;
			if (!f)
				return NULL;
			l->entry = entry;
			l->end = f->addr + f->size;
			/* a function whose extent is unknown cannot leave the code hook */
			l->failures = f->addr == entry && f->size ? 0 : FAILURES;
			return l;
		}
	}
	return NULL;
}

static unsigned call_site_bucket(uint32_t sp, uint32_t lr)
{
	return ((sp ^ lr * 0x9e3779b1u) >> 7) % SUMMARY_BUCKETS;
}

/* The summary of `l` whose inputs the call about to begin shares, or NULL. */
static const struct summary *summary_for(struct taint *t, const struct leaf *l)
{
	if (t->memo.looked_up == l)
		return t->memo.lookup;
	t->memo.looked_up = l;
	t->memo.lookup = NULL;
	uint32_t sp = t->core.reg(t->core.core, 13), lr = t->core.reg(t->core.core, 14), args[4];
	bool args_read = false; /* r0-r3, read once a summary of this call site needs them */
	for (unsigned i = l->bucket[call_site_bucket(sp, lr)]; i; i = l->summaries[i - 1].next) {
		const struct summary *s = &l->summaries[i - 1];
		bool same = s->sp == sp && s->lr == lr;
		for (uint64_t m = s->used; same && m; m &= m - 1)
			same = s->entry[__builtin_ctzll(m)] == t->r[__builtin_ctzll(m)];
		for (int r = 0; same && s->keyed && !args_read && r < 4; r++)
			args[r] = t->core.reg(t->core.core, r), args_read = r == 3;
		for (unsigned r = 0; same && r < 4; r++)
			same = !(s->keyed & LABEL_ARGUMENT(r)) || s->args[r] == args[r];
		for (uint32_t k = 0; same && k < s->reads.n; k++)
			same = run_holds(t, &s->reads.at[k]);
		for (unsigned k = 0; same && k < s->nkeys; k++) {
			uint32_t value;
			same = t->core.read_word(t->core.core, s->keys[k].addr, &value) &&
			       (value & key_mask(s->keys[k].bytes)) == s->keys[k].value;
		}
		if (same)
			return t->memo.lookup = s;
	}
	return NULL;
}

/* Whether a leaf call can begin at `addr` now: a block at a function's entry, inside a checked
 * call, with something tainted, no leaf call open (or the open one returning here). */
static bool leaf_call_may_begin(const struct taint *t, uint32_t addr)
{
	return t->memo.on && t->recording && t->any && is_function_entry(t, addr) && !is_watched(t, addr) &&
	       (!t->memo.leaf || (addr == t->memo.ret && t->core.reg(t->core.core, 13) == t->memo.sp));
}

static void begin_leaf_call(struct taint *t, uint32_t addr)
{
	struct leaf *l = leaf_at(t, addr, true);
	if (!l || l->failures >= FAILURES)
		return;
	t->memo.leaf = l;
	t->memo.ret = t->core.reg(t->core.core, 14) & ~1u;
	t->memo.sp = t->core.reg(t->core.core, 13);
	t->memo.start = t->instructions;
	if ((t->memo.replay = summary_for(t, l))) {
		l->streak++;
		l->replays++;
		for (unsigned i = 0; i < t->memo.replay->ncallees; i++)
			t->memo.replay->callees[i]->replays++;
		t->memo.replayed++;
		return;
	}
	if (l->sealed) { /* taint_gate unseals a function before a call it cannot replay */
		fprintf(stderr, "vboard: internal error: a call of the function at 0x%08x ran outside the taint "
				"tracker's code hook\n", addr);
		abort();
	}
	l->streak = 0;
	if (++l->recordings > (l->replays ? RECORDINGS_REPLAYED : RECORDINGS) && l->replays < l->recordings) {
		/* its inputs rarely repeat */
		l->failures = FAILURES;
		t->memo.leaf = NULL;
		return;
	}
	struct summary *rec = &t->memo.rec;
	rec->sp = t->memo.sp;
	rec->lr = t->core.reg(t->core.core, 14);
	for (int r = 0; r < 4; r++)
		rec->args[r] = t->core.reg(t->core.core, r);
	forget_lookup(t); /* the labels below */
	memcpy(rec->entry, t->r, SLOTS);
	rec->used = rec->set = 0;
	t->memo.read_bytes.n = t->memo.written_bytes.n = 0;
	rec->nkeys = 0;
	for (unsigned k = 0; k < l->nrules && t->core.read_word; k++) {
		const struct key_rule *r = &l->rules[k];
		uint32_t addr = (uint32_t)r->offset + (r->base < 0 ? 0 : r->base == 13 ? rec->sp : rec->args[r->base]);
		uint32_t value;
		if (t->core.read_word(t->core.core, addr, &value))
			rec->keys[rec->nkeys++] = (struct memory_key){addr, value & key_mask(r->bytes), r->bytes};
	}
	memset(t->memo.from, 0, sizeof t->memo.from);
	t->memo.nfound = 0;
	t->memo.found_more = false;
	for (int slot = 0; slot < SLOTS; slot++)
		if (slot != TAINT_SP && slot != TAINT_LR)
			t->r[slot] |= slot < 4 ? LABEL_ARGUMENT(slot) : LABEL_ENTRY;
	t->memo.decided = 0;
	t->memo.spoiled = t->memo.refused = false;
	rec->ncallees = 0;
	t->memo.callee.end = 0;
}

/* Summary `index` leaves its call site's bucket (it is about to be replaced). */
static void unlink_summary(struct leaf *l, unsigned index)
{
	const struct summary *s = &l->summaries[index];
	uint16_t *link = &l->bucket[call_site_bucket(s->sp, s->lr)];
	while (*link != index + 1)
		link = &l->summaries[*link - 1].next;
	*link = s->next;
}

/* The labels go, each seen byte is forgotten; with `keep`, the recording becomes a summary. */
static void end_recording(struct taint *t, bool keep)
{
	forget_lookup(t);
	struct summary *rec = &t->memo.rec;
	uint8_t touched = 0;
	for (int slot = 0; slot < SLOTS; slot++) {
		t->r[slot] &= TAINT_VALUE;
		rec->exit[slot] = t->r[slot];
		touched |= (rec->used >> slot & 1 ? rec->entry[slot] : 0) | (rec->set >> slot & 1 ? t->r[slot] : 0);
	}
	struct byte_list *reads = &t->memo.read_bytes, *writes = &t->memo.written_bytes;
	for (uint32_t k = 0; k < reads->n; k++) {
		*seen_at(t, shadow(t, reads->at[k].addr)) = 0;
		touched |= reads->at[k].taint;
	}
	for (uint32_t k = 0; k < writes->n; k++) {
		uint8_t *s = shadow(t, writes->at[k].addr);
		*seen_at(t, s) = 0;
		t->memo.spilled[memory_index(t, s)] = 0;
		*s &= TAINT_VALUE;
		writes->at[k].taint = *s;
		touched |= *s;
	}
	if (keep) {
		runs_of(&rec->reads, reads);
		runs_of(&rec->writes, writes);
		struct leaf *l = t->memo.leaf;
		rec->keyed = t->memo.decided & LABEL_ARGUMENTS;
		rec->touched = touched;
		rec->instructions = t->instructions - t->memo.start;
		bool replacing = l->n == SUMMARIES;
		unsigned index = replacing ? l->next++ % SUMMARIES : l->n++;
		struct summary *slot = &l->summaries[index];
		struct summary old = *slot; /* its lists are reused by the next recording */
		if (replacing)
			unlink_summary(l, index);
		*slot = *rec;
		uint16_t *head = &l->bucket[call_site_bucket(rec->sp, rec->lr)];
		slot->next = *head;
		*head = (uint16_t)(index + 1);
		rec->reads = old.reads;
		rec->writes = old.writes;
		t->memo.recorded++;
	}
	t->memo.leaf = NULL;
}

/* The recorded call's callee has returned, to the call's own function or, tail-called (pqm4's
 * crypto_hashblocks_sha512 branches to its assembly compression), with the call itself: a long
 * run puts its function on the summary's list (the first SUMMARY_CALLEES), whose replays take it out of
 * the code hook (taint_gate). */
static void callee_returned(struct taint *t)
{
	struct callee *callee = &t->memo.callee;
	if (!callee->end)
		return;
	callee->end = 0;
	if (t->instructions - callee->start < LONG_CALL)
		return;
	struct summary *rec = &t->memo.rec;
	struct leaf *c = leaf_at(t, callee->entry, true);
	for (unsigned i = 0; i < rec->ncallees; i++)
		if (rec->callees[i] == c)
			return;
	if (c && rec->ncallees < SUMMARY_CALLEES)
		rec->callees[rec->ncallees++] = c;
}

static void end_leaf_call(struct taint *t)
{
	const struct summary *s = t->memo.replay;
	if (s) {
		forget_lookup(t);
		for (uint32_t k = 0; k < s->writes.n; k++)
			memset(shadow(t, s->writes.at[k].addr), s->writes.at[k].taint, s->writes.at[k].len);
		for (uint64_t m = s->set; m; m &= m - 1)
			t->r[__builtin_ctzll(m)] = s->exit[__builtin_ctzll(m)];
		t->instructions += s->instructions;
		t->memo.replay = NULL;
		t->memo.leaf = NULL;
		return;
	}
	struct leaf *l = t->memo.leaf;
	callee_returned(t);
	/* a summary holds where no finding was made and nothing but SP, LR and the arguments'
	 * values decided the path and the addresses */
	bool keep = !t->memo.spoiled && !t->memo.refused && !(t->memo.decided & (LABEL_ENTRY | LABEL_MEMORY));
	if (t->memo.refused)
		l->failures = FAILURES;
	else if (!keep && (!t->memo.spoiled || !l->replays))
		l->failures++;
	if (!keep && !t->memo.spoiled && !t->memo.refused && !(t->memo.decided & LABEL_ENTRY) && !t->memo.found_more &&
	    t->memo.nfound && l->nrules + t->memo.nfound <= MEMORY_KEYS) { /* keyed on them next */
		memcpy(l->rules + l->nrules, t->memo.found, t->memo.nfound * sizeof *t->memo.found);
		l->nrules += t->memo.nfound;
	}
	end_recording(t, keep);
}

static bool in_leaf(const struct leaf *l, uint32_t addr)
{
	return addr - l->entry < l->end - l->entry;
}

/* A block of a call being recorded: its function's code, or a function it calls that calls no
 * further (slhdsa-c's SHA-256 compression copies its round constants with memcpy), until that
 * returns. Anything else is not summarised: a call from the callee, a jump elsewhere, a function
 * the tracker watches (its marks and frames are not in a summary), an entry again with another
 * return address (recursion). */
static void recorded_block(struct taint *t, uint32_t addr)
{
	const struct leaf *l = t->memo.leaf;
	uint32_t sp = t->core.reg(t->core.core, 13), lr = t->core.reg(t->core.core, 14) & ~1u;
	struct callee *callee = &t->memo.callee;
	if (callee->end) {
		if (addr == callee->ret && sp == callee->sp) /* back in the call's own function */
			callee_returned(t);
		else if (addr - callee->entry >= callee->end - callee->entry || (addr == callee->entry && lr != callee->ret))
			t->memo.refused = true;
		if (callee->end)
			return;
	}
	if (in_leaf(l, addr)) {
		if (addr == l->entry && lr != t->memo.ret)
			t->memo.refused = true;
		return;
	}
	const struct elf_func *f = is_function_entry(t, addr) && !is_watched(t, addr) ? elf_function_at(t->elf, addr) : NULL;
	if (!f || f->addr != addr || !f->size) {
		t->memo.refused = true;
		return;
	}
	*callee = (struct callee){addr, addr + f->size, lr, sp, t->instructions};
}

static void seal(struct taint *t, struct leaf *l, bool on)
{
	l->sealed = on;
	if (t->memo.changed_hi > t->memo.changed_lo) {
		t->memo.changed_lo = l->entry < t->memo.changed_lo ? l->entry : t->memo.changed_lo;
		t->memo.changed_hi = l->end > t->memo.changed_hi ? l->end : t->memo.changed_hi;
	} else {
		t->memo.changed_lo = l->entry, t->memo.changed_hi = l->end;
	}
	if (on) {
		t->memo.sealed[t->memo.nsealed++] = l;
		return;
	}
	l->unseals++;
	for (unsigned i = 0; i < t->memo.nsealed; i++)
		if (t->memo.sealed[i] == l)
			t->memo.sealed[i] = t->memo.sealed[--t->memo.nsealed];
}

bool taint_gate(struct taint *t, uint32_t addr)
{
	/* With nothing tainted outside a checked call taint_insn does nothing: idle, no instruction
	 * calls it (the key's generation, the harness between signatures run at full speed), until a
	 * block that can begin a call or mark a secret. */
	forget_lookup(t); /* a block begins */
	bool idle = !t->any && !t->recording && !t->memo.leaf;
	bool wakes = watched_roles(t, addr) & (ROLE_SCOPE | ROLE_SECRET);
	if (t->unhooked != (idle && !wakes)) {
		t->unhooked = !t->unhooked;
		t->memo.changed_lo = 0, t->memo.changed_hi = UINT32_MAX;
		return true;
	}
	if (t->unhooked)
		return false;
	const struct leaf *replayed = t->memo.replay ? t->memo.leaf : NULL;
	if (replayed && !t->in_handler && !(addr == t->memo.ret && t->core.reg(t->core.core, 13) == t->memo.sp))
		return false; /* the replayed call's own code, or its callee's */
	bool entry = is_function_entry(t, addr), changed = false;
	for (unsigned i = 0; i < t->memo.nsealed; i++) {
		struct leaf *l = t->memo.sealed[i];
		if (addr != l->entry && in_leaf(l, addr)) { /* reached otherwise than by a replayed call */
			seal(t, l, false);
			changed = true;
			break;
		}
	}
	struct leaf *l = entry ? leaf_at(t, addr, false) : NULL;
	if (l && (l->n || l->sealed) && !idle) { /* (sealed as a callee only, it may have no summary) */
		const struct summary *hit = leaf_call_may_begin(t, addr) && l->failures < FAILURES ?
					    summary_for(t, l) : NULL;
		bool sealed = hit && (l->sealed || l->streak >= TAINT_SEAL_STREAK) &&
			      (l->unseals < UNSEALS || l->unseals * REPLAYS_PER_UNSEAL < l->replays);
		if (sealed != l->sealed && (!sealed || t->memo.nsealed < SEALED)) {
			seal(t, l, sealed);
			changed = true;
		}
		for (unsigned i = 0; hit && i < hit->ncallees; i++) { /* its long callees, for its replay */
			struct leaf *c = hit->callees[i];
			if (!c->sealed && t->memo.nsealed < SEALED &&
			    (c->unseals < UNSEALS || c->unseals * REPLAYS_PER_UNSEAL < c->replays)) {
				seal(t, c, true);
				changed = true;
			}
		}
	}
	t->memo.rehooks += changed;
	return changed;
}

static int by_entry(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	return a < b ? -1 : a > b;
}

bool taint_changed_code(struct taint *t, uint32_t *lo, uint32_t *hi)
{
	bool some = t->memo.changed_hi > t->memo.changed_lo;
	*lo = t->memo.changed_lo, *hi = t->memo.changed_hi;
	t->memo.changed_lo = t->memo.changed_hi = 0;
	return some && *hi != UINT32_MAX;
}

unsigned taint_hooked_ranges(const struct taint *t, uint32_t (*ranges)[2])
{
	if (t->unhooked)
		return 0;
	uint32_t sealed[SEALED][2];
	unsigned n = t->memo.nsealed, k = 0;
	for (unsigned i = 0; i < n; i++)
		sealed[i][0] = t->memo.sealed[i]->entry, sealed[i][1] = t->memo.sealed[i]->end;
	qsort(sealed, n, sizeof sealed[0], by_entry);
	uint32_t from = 0;
	for (unsigned i = 0; i < n; i++) {
		if (sealed[i][0] > from)
			ranges[k][0] = from, ranges[k++][1] = sealed[i][0] - 1;
		from = sealed[i][1];
	}
	ranges[k][0] = from, ranges[k++][1] = UINT32_MAX;
	return k;
}

/* ---- calls, returns and marks ---- */

static void update_recording(struct taint *t)
{
	t->recording = (t->scope_depth > 0 || t->record_always) && !t->in_handler;
}

static void write_call(struct taint *t);

static void call_returned(struct taint *t, const struct frame *f)
{
	forget_lookup(t);
	if (f->roles & ROLE_PUBLIC_RETURN)
		t->r[0] = declassify(t->r[0]);
	if (f->roles & ROLE_WITHIN)
		t->within = f->outer_within;
	/* The signing randomness is a secret like the key; randomness drawn outside a signature
	 * (the harness's message, key generation) is not part of the question. */
	if ((f->roles & ROLE_RANDOM) && t->scope_depth > 0)
		taint_mark(t, f->out, f->out_bytes, TAINT_SECRET);
	if ((f->roles & ROLE_SCOPE) && --t->scope_depth == 0) {
		clear_all(t);
		if (t->calls_out)
			write_call(t);
		if (t->calls == t->coverage_cap) {
			t->coverage_cap = t->coverage_cap ? 2 * t->coverage_cap : 64;
			t->coverage = realloc(t->coverage, t->coverage_cap * sizeof *t->coverage);
		}
		t->coverage[t->calls++] = t->newly_covered;
		t->newly_covered = 0;
	}
}

void taint_block(struct taint *t, uint32_t addr)
{
	if (t->memo.leaf) {
		if (addr == t->memo.ret && t->core.reg(t->core.core, 13) == t->memo.sp)
			end_leaf_call(t);
		else if (t->memo.replay)
			return;
		else
			recorded_block(t, addr);
	}
	if (t->jump_pending && !t->in_handler) { /* a SysTick between a jump and its target waits */
		add_outcome(finding_slot(t, t->jump_pending - 1), addr);
		t->jump_pending = 0;
	}
	while (call_returns(t->depth ? &t->stack[t->depth - 1].call : NULL, addr)) {
		t->depth--;
		call_returned(t, &t->stack[t->depth]);
	}
	if (may_be_watched(t, addr)) {
		unsigned roles = 0, within = 0;
		uint32_t lr = t->core.reg(t->core.core, 14);
		for (unsigned i = 0; i < t->nwatch; i++) {
			const struct watch *w = &t->watch[i];
			if (w->entry != addr)
				continue;
			roles |= w->roles;
			if ((w->roles & ROLE_WITHIN) && called_from_site(w, lr & ~1u))
				within = WITHIN_OF(w->entry);
			uint32_t r0 = t->core.reg(t->core.core, 0), r1 = t->core.reg(t->core.core, 1);
			if (w->roles & ROLE_SECRET) {
				taint_mark(t, r0, r1, TAINT_SECRET);
				for (unsigned k = 0; k < t->npublic_ranges; k++) {
					const struct public_range *p = &t->public_ranges[k];
					if (p->offset < r1)
						taint_mark(t, r0 + p->offset,
							   p->bytes < r1 - p->offset ? p->bytes : r1 - p->offset, 0);
				}
			}
			if (w->roles & ROLE_PUBLIC)
				taint_mark(t, r0, r1, 0);
			if (w->roles & ROLE_PUBLIC_ARGUMENT)
				taint_mark(t, t->core.reg(t->core.core, (int)w->index), w->bytes, 0);
		}
		if ((roles & FRAME_ROLES) &&
		    call_begins(t->depth ? &t->stack[t->depth - 1].call : NULL, addr, lr)) {
			if (t->depth == MAX_FRAMES) {
				t->dropped_frames++;
			} else {
				t->stack[t->depth++] = (struct frame){{addr, lr & ~1u}, roles & FRAME_ROLES,
								      t->core.reg(t->core.core, 0),
								      t->core.reg(t->core.core, 1), t->within};
				if (within)
					t->within = within;
				if ((roles & ROLE_SCOPE) && t->scope_depth++ == 0) {
					t->call_start = t->instructions;
					uint8_t id[4] = {0};
					if (t->id_addr && t->core.code(t->core.core, t->id_addr, id, 4) == 4)
						t->sample_id = (uint32_t)id[0] | (uint32_t)id[1] << 8 |
							       (uint32_t)id[2] << 16 | (uint32_t)id[3] << 24;
				}
			}
		}
	}
	update_recording(t);
	if (leaf_call_may_begin(t, addr))
		begin_leaf_call(t, addr);
	forget_lookup(t); /* its instructions run next */
}

void taint_exception_entry(struct taint *t, uint32_t frame, bool fp)
{
	forget_lookup(t);
	static const int stacked[8] = {0, 1, 2, 3, 12, TAINT_LR, -1, -1};
	if (t->memo.leaf && !t->memo.replay) { /* a recording's labels must not reach the handler */
		/* One that cannot be summarised fails as at its return: recorded again at every call,
		 * a long caller (SPHINCS+'s merkle_sign, which a SysTick interrupts more often at
		 * 168 MHz) kept the leaf calls it makes tracked in full. */
		if (t->memo.refused)
			t->memo.leaf->failures = FAILURES;
		end_recording(t, false);
	}
	memcpy(t->saved, t->r, sizeof t->saved); /* every slot: the four flags, Q and GE too */
	for (int i = 0; i < 8; i++) {
		uint8_t v = stacked[i] < 0 ? 0 : t->r[stacked[i]];
		if (i == 7) /* xPSR */
			v = or_slots(t, NZCV | F_Q | F_GE);
		for (uint32_t b = 0; b < 4; b++) {
			uint8_t *s = shadow(t, frame + 4 * (uint32_t)i + b);
			if (s)
				*s = v;
		}
	}
	for (int i = 0; fp && i < 18; i++) { /* s0-s15, FPSCR, reserved */
		uint8_t v = i < 16 ? t->r[TAINT_S0 + i] : i == 16 ? t->r[TAINT_FPSCR] : 0;
		for (uint32_t b = 0; b < 4; b++) {
			uint8_t *s = shadow(t, frame + 0x20 + 4 * (uint32_t)i + b);
			if (s)
				*s = v;
		}
	}
	if (t->memo.replay) /* the slots are as the call began: its frame may hold any value it touched */
		for (uint32_t b = 0; b < (fp ? 0x68u : 0x20u); b++) {
			uint8_t *s = shadow(t, frame + b);
			if (s)
				*s |= t->memo.replay->touched;
		}
	t->r[TAINT_LR] = 0; /* EXC_RETURN */
	t->in_handler = true;
	update_recording(t);
}

void taint_exception_return(struct taint *t)
{
	forget_lookup(t);
	memcpy(t->r, t->saved, sizeof t->r);
	t->in_handler = false;
	update_recording(t);
}

/* ---- set-up ---- */

struct taint *taint_new(const struct elf_image *elf, const struct chip *chip)
{
	struct taint *t = calloc(1, sizeof *t);
	t->elf = elf;
	t->chip = chip;
	t->sram = calloc(chip->sram_size, 1);
	t->ccm = chip->ccm_alias == CHIP_OWN_MEMORY ? calloc(chip->ccm_size, 1) : t->sram + chip->ccm_alias;
	t->covered = calloc(chip->flash_size / 16, 1);
	t->watched = calloc(chip->flash_size / 16, 1);
	t->finding_mask = 63;
	t->findings = calloc(t->finding_mask + 1, sizeof *t->findings);
	t->watch_lo = UINT32_MAX;
	t->memo.on = true;
	t->memo.leaves = calloc(LEAVES, sizeof *t->memo.leaves);
	t->memo.seen = calloc((size_t)chip->sram_size + chip->ccm_size, 1);
	t->memo.spilled = calloc((size_t)chip->sram_size + chip->ccm_size, sizeof *t->memo.spilled);
	t->memo.spilled_bytes = calloc((size_t)chip->sram_size + chip->ccm_size, 1);
	if (!taint_decoder_open(&t->dec)) {
		free(t);
		return NULL;
	}
	return t;
}

static int add_watch(struct taint *t, const char *name, unsigned roles, unsigned index,
		     uint32_t bytes, const char *option)
{
	size_t f = 0, found = t->elf ? elf_find_function(t->elf, name, &f) : 0;
	if (found != 1) {
		if (option)
			fprintf(stderr, "vboard: error: %s function symbol '%s' in the ELF (%s)\n",
				found ? "more than one" : "no", name, option);
		else if (found) /* an optional mark function, but not a unique one: say so */
			fprintf(stderr, "vboard: warning: more than one function symbol '%s' in the ELF: "
					"its calls are ignored\n", name);
		return -1;
	}
	if (t->nwatch == MAX_WATCHES) {
		fprintf(stderr, "vboard: error: at most %d taint functions\n", MAX_WATCHES);
		return -1;
	}
	uint32_t entry = t->elf->funcs[f].addr;
	t->watch[t->nwatch++] = (struct watch){.entry = entry, .roles = roles, .index = index, .bytes = bytes};
	if (in_flash(t, entry)) {
		set_flash_bit(t, t->watched, entry);
	} else {
		if (entry < t->watch_lo)
			t->watch_lo = entry;
		if (entry > t->watch_hi)
			t->watch_hi = entry;
	}
	return 0;
}

int taint_scope_function(struct taint *t, const char *name)
{
	return add_watch(t, name, ROLE_SCOPE, 0, 0, "--taint-function");
}

int taint_public_return(struct taint *t, const char *name)
{
	return add_watch(t, name, ROLE_PUBLIC_RETURN, 0, 0, "--taint-public-return");
}

int taint_public_argument(struct taint *t, const char *name, unsigned index, uint32_t bytes)
{
	return add_watch(t, name, ROLE_PUBLIC_ARGUMENT, index, bytes, "--taint-public-argument");
}

int taint_public_within(struct taint *t, const char *name, const uint32_t (*sites)[2], unsigned nsites)
{
	if (nsites > MAX_SITES) {
		fprintf(stderr, "vboard: error: --taint-public-within '%s': at most %d call sites\n", name, MAX_SITES);
		return -1;
	}
	if (add_watch(t, name, ROLE_WITHIN, 0, 0, "--taint-public-within"))
		return -1;
	struct watch *w = &t->watch[t->nwatch - 1];
	if (w->entry - FLASH_BASE >= t->chip->flash_size) {
		fprintf(stderr, "vboard: error: --taint-public-within '%s': the function is not in flash\n", name);
		return -1;
	}
	for (unsigned i = 0; i < nsites; i++)
		w->sites[i] = (struct site){sites[i][0], sites[i][1]};
	w->nsites = nsites;
	return 0;
}

int taint_public_secret_bytes(struct taint *t, uint32_t offset, uint32_t bytes)
{
	if (t->npublic_ranges == MAX_PUBLIC_RANGES) {
		fprintf(stderr, "vboard: error: at most %d --taint-public-secret-bytes\n",
			MAX_PUBLIC_RANGES);
		return -1;
	}
	t->public_ranges[t->npublic_ranges++] = (struct public_range){offset, bytes};
	return 0;
}

int taint_attach(struct taint *t, const struct taint_core *core)
{
	t->core = *core;
	/* the firmware's marks: optional, an image without them has no secrets */
	add_watch(t, "pqs_taint_secret", ROLE_SECRET, 0, 0, NULL);
	add_watch(t, "pqs_taint_public", ROLE_PUBLIC, 0, 0, NULL);
	add_watch(t, "randombytes", ROLE_RANDOM, 0, 0, NULL);
	if (t->elf) {
		t->memo.entries = calloc(t->chip->flash_size / 16, 1);
		for (size_t i = 0; i < t->elf->nfuncs; i++) {
			if (t->elf->funcs[i].size)
				set_flash_bit(t, t->memo.entries, t->elf->funcs[i].addr);
		}
	}
	update_recording(t);
	return 0;
}

void taint_leaf_summaries(struct taint *t, bool on)
{
	t->memo.on = on;
}

void taint_leaf_counts(const struct taint *t, uint64_t *recorded, uint64_t *replayed, uint64_t *rehooks)
{
	*recorded = t->memo.recorded;
	*replayed = t->memo.replayed;
	*rehooks = t->memo.rehooks;
}

/* ---- output ---- */

static int by_address_kind_region(const void *pa, const void *pb)
{
	const struct finding *a = pa, *b = pb;
	uint32_t x = (uint32_t)(a->key >> 8), y = (uint32_t)(b->key >> 8);
	if (x != y)
		return x < y ? -1 : 1;
	int k = strcmp(kind_names[a->key >> 4 & 0xf], kind_names[b->key >> 4 & 0xf]);
	if (k)
		return k;
	uint64_t r = (a->key & 0xf) | (a->key >> WITHIN_SHIFT) << 4, s = (b->key & 0xf) | (b->key >> WITHIN_SHIFT) << 4;
	return r < s ? -1 : r > s;
}

static void write_finding(FILE *f, const struct finding *e, uint64_t count, uint64_t taken, bool secret,
			  bool outcomes)
{
	unsigned within = (unsigned)(e->key >> WITHIN_SHIFT);
	enum taint_kind kind = (enum taint_kind)(e->key >> 4 & 0xf);
	fprintf(f, "{\"kind\": \"%s\", \"address\": \"0x%08x\", \"count\": %llu, \"declassified\": %s",
		kind_names[kind], (uint32_t)(e->key >> 8), (unsigned long long)count,
		secret ? "false" : "true");
	if (kind == TAINT_ADDRESS)
		fprintf(f, ", \"region\": \"%s\"", region_names[e->key & 0xf]);
	if (kind == TAINT_ADDRESS && (e->key & 0xf) == REGION_FLASH_TIMED)
		fputs(", \"timed\": true", f);
	if (kind == TAINT_BRANCH)
		fprintf(f, ", \"taken\": %llu", (unsigned long long)taken);
	if (within)
		fprintf(f, ", \"within\": \"0x%08x\"", WITHIN_ENTRY(within));
	if (outcomes) {
		fprintf(f, ", \"outcome_digest\": \"%016llx\", \"outcomes\": [",
			(unsigned long long)e->call_digest);
		unsigned nruns = e->call_nruns < TAINT_OUTCOME_RUNS ? e->call_nruns : TAINT_OUTCOME_RUNS;
		for (unsigned i = 0; i < nruns; i++)
			fprintf(f, "%s[%lu, %lu]", i ? ", " : "", (unsigned long)e->call_runs[i].value,
				(unsigned long)e->call_runs[i].repeat);
		fputc(']', f);
	}
	fputc('}', f);
}

/* The findings with a count (of the whole run, or of the current call), in the output's order. */
static size_t sorted_findings(const struct taint *t, struct finding **list, bool in_call)
{
	*list = malloc((t->finding_used + 1) * sizeof **list);
	size_t n = 0;
	for (uint32_t i = 0; i <= t->finding_mask; i++)
		if (in_call ? t->findings[i].call_count : t->findings[i].count)
			(*list)[n++] = t->findings[i];
	qsort(*list, n, sizeof **list, by_address_kind_region);
	return n;
}

/* The line of the call that just returned (--taint-calls), flushed at once so that a killed run
 * keeps every call before it; then the next call starts counting afresh. */
static void write_call(struct taint *t)
{
	FILE *f = t->calls_out;
	struct finding *list;
	size_t n = sorted_findings(t, &list, true);
	fprintf(f, "{\"call\": %llu, \"sample_id\": %lu, \"instructions\": %llu, \"findings\": [",
		(unsigned long long)t->calls, (unsigned long)t->sample_id,
		(unsigned long long)(t->instructions - t->call_start));
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ", " : "", f);
		write_finding(f, &list[i], list[i].call_count, list[i].call_taken, list[i].call_secret, true);
	}
	fputs("], \"covered\": [", f);
	for (size_t i = 0; i < t->first_used; i++)
		fprintf(f, "%s%lu", i ? ", " : "", (unsigned long)t->first_run[i]);
	fputs("]}\n", f);
	fflush(f);
	free(list);
	for (uint32_t i = 0; i <= t->finding_mask; i++) {
		t->findings[i].call_count = t->findings[i].call_taken = 0;
		t->findings[i].call_secret = false;
	}
	t->first_used = 0;
}

int taint_calls(struct taint *t, const char *path)
{
	/* Appended to: a resumed check (pqscope taint --resume) keeps the lines of the calls before. */
	t->calls_out = fopen(path, "a");
	if (!t->calls_out) {
		fprintf(stderr, "vboard: error: cannot write %s (--taint-calls)\n", path);
		return -1;
	}
	return 0;
}

int taint_id_symbol(struct taint *t, const char *name)
{
	uint32_t size = 0;
	size_t found = t->elf ? elf_find_object(t->elf, name, &t->id_addr, &size) : 0;
	if (found != 1 || size != 4) {
		fprintf(stderr, "vboard: error: %s (--taint-id-symbol)\n",
			found > 1 ? "more than one such data symbol" : found ? "the symbol is not a 32-bit word" :
			"no such data symbol in the ELF");
		return -1;
	}
	return 0;
}

int taint_write(const struct taint *t, const char *path)
{
	struct finding *list;
	size_t n = sorted_findings(t, &list, false);

	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "vboard: error: cannot write %s\n", tmp);
		free(list);
		return -1;
	}
	fprintf(f, "{\"format\": \"pqscope-vboard-taint\", \"version\": 1, \"calls\": %llu, "
		   "\"instructions\": %llu, \"findings\": [",
		(unsigned long long)t->calls, (unsigned long long)t->instructions);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n  " : "\n  ", f);
		write_finding(f, &list[i], list[i].count, list[i].taken, list[i].secret, false);
	}
	fprintf(f, "%s], \"coverage\": [", n ? "\n" : "");
	for (uint64_t i = 0; i < t->calls; i++)
		fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)t->coverage[i]);
	fprintf(f, "]}\n");
	free(list);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "vboard: error: cannot write %s\n", path);
		return -1;
	}
	return 0;
}

bool taint_call_untracked(const struct taint *t)
{
	return t->unhooked || (t->memo.replay && !t->in_handler);
}

uint64_t taint_instructions(const struct taint *t)
{
	return t->instructions;
}

uint8_t taint_get(const struct taint *t, int slot)
{
	return t->r[slot];
}

void taint_set(struct taint *t, int slot, uint8_t value)
{
	forget_lookup(t);
	t->r[slot] = value;
	if (value)
		t->any = true;
}

uint8_t taint_memory(const struct taint *t, uint32_t addr)
{
	const uint8_t *s = shadow((struct taint *)t, addr);
	return s ? *s : 0;
}

void taint_record(struct taint *t, bool on)
{
	t->record_always = on;
	update_recording(t);
}

void taint_free(struct taint *t)
{
	if (t) {
		taint_decoder_close(&t->dec);
		if (t->calls_out)
			fclose(t->calls_out);
		free(t->first_run);
		free(t->covered);
		free(t->watched);
		free(t->coverage);
		free(t->findings);
		for (unsigned i = 0; i < LEAVES; i++)
			for (unsigned k = 0; k < t->memo.leaves[i].n; k++) {
				free(t->memo.leaves[i].summaries[k].reads.at);
				free(t->memo.leaves[i].summaries[k].writes.at);
			}
		free(t->memo.rec.reads.at);
		free(t->memo.rec.writes.at);
		free(t->memo.read_bytes.at);
		free(t->memo.written_bytes.at);
		free(t->memo.leaves);
		free(t->memo.seen);
		free(t->memo.spilled);
		free(t->memo.spilled_bytes);
		free(t->memo.entries);
		if (t->chip->ccm_alias == CHIP_OWN_MEMORY)
			free(t->ccm);
		free(t->sram);
		free(t);
	}
}
