/* Calls of cryptographic primitives run on the host (a speed-up that changes no result): the
 * Keccak-f[1600] permutation, where SPHINCS+ and SLH-DSA over SHAKE spend 90 % of their signing, the
 * SHA-256 and SHA-512 compressions, where their SHA2 sets spend 88 %, and mbedtls's Montgomery
 * multiplication, where RSA's key generation spends 86 %; the host computes a call in a tenth of
 * the time Unicorn takes to emulate it, or less.
 * A function of `primitives` is learnt first, for each length it is called with (its time follows
 * the number of blocks or limbs): NATIVE_RECORDINGS of its calls are emulated and recorded (each
 * block it and its callees run, with the model time at the block's end, and LR at a callee's entry;
 * its instruction count; its frame; r0-r3, r12, LR and the flags at its return; the memory it reads
 * before, and what it writes after). Once every recording ran the same blocks in the same time,
 * left the callee-saved registers and what it only reads as they were, and agreed with one of the
 * host's layouts of the primitive (permutation.h, compression.h, bignum.h), a call is run on the
 * host: what it writes is computed, the frame's words the call writes and the scratch registers
 * are written as the recordings had them (a copy of an entry register where every recording had
 * one, else the last recording's value: a constant, or a word dead by the calling convention, such
 * as pqm4's five theta temporaries), model time, the instruction and block counts and the pipeline
 * state move on by what the recordings measured, the profiler sees the recorded blocks, and
 * execution goes on at LR.
 * Which of the frame's words a call writes (the stack meter sees the deepest one) is learnt by the
 * recordings after the first, which knows the frame: each begins with the frame filled with its own
 * sentinel, and ends with the words that still hold it given back their contents.
 * A call is emulated instead where anything could make it run otherwise: an exception due before
 * it would return, an entry block the translator ended elsewhere than in the recordings, flash wait
 * states (the ART's state decides fetch times), the guard watch, a taint tracker that follows its
 * instructions (one that replays its summary, or is idle, lets it run on the host), an exact
 * access being replayed, or a length no recordings were kept for (NATIVE_LENGTHS a function).
 * Unicorn facts this file is built on:
 * - A UC_HOOK_BLOCK bounded to one address runs only for blocks starting there, after the
 *   unbounded block hooks added before it (the timing hook has priced the block).
 * - Writing PC from a block hook abandons the block before its first instruction (no code hook of
 *   it runs) and execution continues at the new PC.
 * - Where the translator ends a block depends on the code hook's ranges: pqm4's permutation's
 *   entry block is 1,024 bytes with the taint tracker idle, 952 while it follows the permutation's
 *   instructions, so the recorded time, from the end of the entry block, holds for one size. */
#include "machine_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bignum.h"
#include "compression.h"
#include "permutation.h"
#include "profile.h"
#include "taint.h"

#define NATIVE_RECORDINGS 4
#define NATIVE_ATTEMPTS 64   /* recordings begun (an exception spoils one) before a length is given up */
#define NATIVE_LENGTHS 16    /* lengths of input learnt a function; calls with others are emulated */
#define NATIVE_FRAME_WORDS 256 /* slhdsa-c's keccak_f1600 keeps 304 bytes */
#define NATIVE_BLOCKS 4096 /* mbedtls's montmul of 64 limbs runs about 1,900 */
#define NATIVE_OPERAND_BYTES 4096u /* the most memory a call run on the host reads */
#define ENTRY_REGS 15        /* r0-r12, SP, LR */
#define OUT_REGS 7           /* r0-r3, r12, LR, the flags */

#define NATIVE_REGIONS 5
#define NATIVE_SCALARS 3

/* The memory a call reads and writes, in regions, and its arguments that are not memory. */
struct operands {
	uint32_t nregions;
	struct region {
		uint32_t addr, bytes, offset; /* its bytes at `offset` of `bytes` */
		bool written;
	} regions[NATIVE_REGIONS];
	uint32_t scalars[NATIVE_SCALARS];
	uint32_t words[NATIVE_OPERAND_BYTES / 4]; /* the regions' bytes (words: mbedtls's limbs are read as such) */
};

static uint8_t *region_bytes(struct operands *o, uint32_t r)
{
	return (uint8_t *)o->words + o->regions[r].offset;
}

static void add_region(struct operands *o, uint32_t addr, uint32_t bytes, bool written)
{
	uint32_t offset = o->nregions ? o->regions[o->nregions - 1].offset + o->regions[o->nregions - 1].bytes : 0;
	o->regions[o->nregions++] = (struct region){addr, bytes, offset, written};
}

/* Where the call finds its operands, from its entry registers and the words at SP (its fifth to
 * eighth arguments); false: more than NATIVE_OPERAND_BYTES. */
typedef bool locate_fn(const uint32_t regs[ENTRY_REGS], const uint32_t stacked[4], struct operands *o);

/* f(state): the state at r0, 200 bytes (the permutation) */
static bool keccak_operands(const uint32_t regs[ENTRY_REGS], const uint32_t stacked[4], struct operands *o)
{
	(void)stacked;
	add_region(o, regs[0], KECCAK_STATE_BYTES, true);
	return true;
}

/* f(state): the state at r0, one block right after it (slhdsa-c's compressions) */
static bool state_then_block(const uint32_t regs[ENTRY_REGS], struct operands *o, uint32_t state, uint32_t block)
{
	add_region(o, regs[0], state, true);
	add_region(o, regs[0] + state, block, false);
	o->scalars[0] = 1;
	return true;
}

static bool sha256_state_then_block(const uint32_t regs[ENTRY_REGS], const uint32_t stacked[4], struct operands *o)
{
	(void)stacked;
	return state_then_block(regs, o, SHA256_STATE_BYTES, SHA256_BLOCK_BYTES);
}

static bool sha512_state_then_block(const uint32_t regs[ENTRY_REGS], const uint32_t stacked[4], struct operands *o)
{
	(void)stacked;
	return state_then_block(regs, o, SHA512_STATE_BYTES, SHA512_BLOCK_BYTES);
}

/* f(state, in, inlen): the state at r0, inlen / block whole blocks at r1 (crypto_hashblocks) */
static bool state_and_blocks(const uint32_t regs[ENTRY_REGS], struct operands *o, uint32_t state, uint32_t block)
{
	uint32_t blocks = regs[2] / block;
	if (state + blocks * block > NATIVE_OPERAND_BYTES)
		return false;
	add_region(o, regs[0], state, true);
	add_region(o, regs[1], blocks * block, false);
	o->scalars[0] = blocks;
	return true;
}

static bool sha256_state_and_blocks(const uint32_t regs[ENTRY_REGS], const uint32_t stacked[4], struct operands *o)
{
	(void)stacked;
	return state_and_blocks(regs, o, SHA256_STATE_BYTES, SHA256_BLOCK_BYTES);
}

static bool sha512_state_and_blocks(const uint32_t regs[ENTRY_REGS], const uint32_t stacked[4], struct operands *o)
{
	(void)stacked;
	return state_and_blocks(regs, o, SHA512_STATE_BYTES, SHA512_BLOCK_BYTES);
}

/* mbedtls_mpi_core_montmul(X, A, B, B_limbs, N, AN_limbs, mm, T): X and T written, A, B and N read */
static bool montmul_operands(const uint32_t regs[ENTRY_REGS], const uint32_t stacked[4], struct operands *o)
{
	uint32_t b_limbs = regs[3], an_limbs = stacked[1];
	if (b_limbs > an_limbs || an_limbs > 128 || 4 * (5 * an_limbs + 1 + b_limbs) > NATIVE_OPERAND_BYTES)
		return false;
	add_region(o, regs[0], 4 * an_limbs, true);           /* X */
	add_region(o, stacked[3], 4 * (2 * an_limbs + 1), true); /* T */
	add_region(o, regs[1], 4 * an_limbs, false);          /* A */
	add_region(o, regs[2], 4 * b_limbs, false);           /* B */
	add_region(o, stacked[0], 4 * an_limbs, false);       /* N */
	o->scalars[0] = b_limbs, o->scalars[1] = an_limbs, o->scalars[2] = stacked[2];
	return true;
}

static void keccak_lanes(struct operands *o)
{
	keccak_f1600_lanes(region_bytes(o, 0));
}

static void keccak_interleaved(struct operands *o)
{
	keccak_f1600_interleaved(region_bytes(o, 0));
}

static void sha256(struct operands *o)
{
	sha256_blocks(region_bytes(o, 0), region_bytes(o, 1), o->scalars[0]);
}

static void sha512(struct operands *o)
{
	sha512_blocks(region_bytes(o, 0), region_bytes(o, 1), o->scalars[0]);
}

/* Its regions' sizes are multiples of 4, so each begins at a word; little-endian, as the host. */
static void mbedtls_montmul(struct operands *o)
{
	uint32_t *limbs[NATIVE_REGIONS];
	for (uint32_t r = 0; r < o->nregions; r++)
		limbs[r] = o->words + o->regions[r].offset / 4;
	montmul(limbs[0], limbs[2], limbs[3], o->scalars[0], limbs[4], o->scalars[1], o->scalars[2], limbs[1]);
}

enum { LANES = 1, INTERLEAVED = 2, SHA256_BIG_ENDIAN = 4, SHA512_BIG_ENDIAN = 8, MBEDTLS_LIMBS = 16, NLAYOUTS = 5 };
static const struct {
	const char *name;
	void (*run)(struct operands *o); /* the written regions computed from all of them */
} layouts[NLAYOUTS] = {
	{"lanes", keccak_lanes}, {"interleaved", keccak_interleaved},
	{"sha-256", sha256}, {"sha-512", sha512}, {"montmul", mbedtls_montmul},
};

static const struct primitive {
	const char *function; /* its name in the ELF, or the name of GCC's clone (name.isra.0) */
	locate_fn *locate;
	/* what its recordings are kept per (its time follows it): the value of register `length_reg`
	 * and of the stacked argument word `length_stacked` (-1: none) */
	int length_reg, length_stacked;
	bool stacked_arguments; /* `locate` needs the words at SP */
	uint8_t layouts;      /* the layouts (bits) its operands may be kept in */
} primitives[] = {
	/* pqm4's common/keccakf1600.S (interleaved), PQClean's C (lanes) */
	{"KeccakF1600_StatePermute", keccak_operands, -1, -1, false, LANES | INTERLEAVED},
	/* slhdsa-c's sha3_f1600.c */
	{"keccak_f1600", keccak_operands, -1, -1, false, LANES},
	/* slhdsa-c's sha2_256.c and sha2_512.c */
	{"sha2_256_compress", sha256_state_then_block, -1, -1, false, SHA256_BIG_ENDIAN},
	{"sha2_512_compress", sha512_state_then_block, -1, -1, false, SHA512_BIG_ENDIAN},
	/* mupq's common/sha2.c (static: GCC clones it) and pqm4's common/crypto_hashblocks_sha512_inner32.s */
	{"crypto_hashblocks_sha256", sha256_state_and_blocks, 2, -1, false, SHA256_BIG_ENDIAN},
	{"crypto_hashblocks_sha512_m4nofpu_inner", sha512_state_and_blocks, 2, -1, false, SHA512_BIG_ENDIAN},
	/* mbedtls's library/bignum_core.c: B_limbs in r3, AN_limbs stacked second */
	{"mbedtls_mpi_core_montmul", montmul_operands, 3, 1, true, MBEDTLS_LIMBS},
};

static const int out_regs[OUT_REGS] = {UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_R3,
				       UC_ARM_REG_R12, UC_ARM_REG_LR, UC_ARM_REG_APSR_NZCVQG};

/* A word the call leaves (in its frame, or a scratch register), as the recordings had it. */
struct word_model {
	uint32_t value;     /* the last recording's */
	uint16_t copies;    /* the entry registers it equalled in every recording (bit n: core_regs[n]) */
};

struct native_block {
	uint32_t addr;
	uint32_t lr;        /* at a callee's entry, LR as it began (the profiler tells a call by it), else 0 */
	bool entry_lr;      /* ... the call's own LR: a tail call (mbedtls's montmul ends in one) */
	uint64_t end;       /* model time at its end, from the end of the call's first block */
};

#define FRAME_MAP_WORDS (NATIVE_FRAME_WORDS / 32)

struct native_function;

/* What the recordings of a function's calls with one length of input measured. */
struct native {
	struct native_function *fn;
	uint64_t length;    /* the primitive's length_reg and length_stacked at entry */
	uint32_t recordings, attempts;
	bool on, off;
	uint8_t layouts;    /* bit per layout every recording agreed with */
	/* what the recordings measured, from the end of the first block to the start of the return's */
	uint64_t cycles, insns;
	uint32_t first_size; /* the entry block's bytes: the recorded time begins at its end */
	uint32_t nblocks;
	struct native_block *blocks;
	uint32_t *block_addrs; /* the blocks' addresses, for the profiler */
	bool callees;       /* blocks outside the function: the profiler sees each (their calls) */
	uint32_t last_addr, last_size, last_exit_refill;
	struct pipe_state last_exit;
	uint32_t frame_bytes;
	struct word_model frame[NATIVE_FRAME_WORDS], out[OUT_REGS];
	uint32_t written[FRAME_MAP_WORDS]; /* bit per frame word a recording wrote */
	bool all_written;   /* every word of the frame: a call on the host need not read it */
	uint64_t runs;      /* calls run on the host */
};

struct native_function {
	struct machine *m;
	const struct primitive *primitive;
	const char *name;
	uint32_t entry, end;
	uint32_t nlengths;
	struct native lengths[NATIVE_LENGTHS];
};

struct recording {
	struct native *n;
	uint32_t first_size;
	uint32_t regs[ENTRY_REGS];
	uint32_t min_sp;
	uint64_t cycles, insns, block_count; /* at the end of the first block */
	uint64_t last_seen;  /* model time when the last block was seen */
	struct operands before;
	uint32_t sentinel;   /* the value filling the frame at entry, 0: the frame as it was */
	uint32_t saved[NATIVE_FRAME_WORDS]; /* the frame's contents before the sentinel */
	uint32_t nblocks;
	struct native_block blocks[NATIVE_BLOCKS];
};

struct natives {
	struct native_function *fn;
	size_t n;
	struct recording rec;
	struct operands scratch, computed; /* a call run on the host; a recording's call as the host has it */
};

/* The regions' bytes read from memory: false where one is outside it. */
static bool read_regions(struct machine *m, struct operands *o)
{
	for (uint32_t r = 0; r < o->nregions; r++)
		if (uc_mem_read(m->uc, o->regions[r].addr, region_bytes(o, r), o->regions[r].bytes))
			return false;
	return true;
}

/* The call's operands located and read: false where they are too large, or outside memory. */
static bool read_operands(struct machine *m, const struct primitive *p, const uint32_t regs[ENTRY_REGS],
			  struct operands *o)
{
	uint32_t stacked[4] = {0};
	o->nregions = 0;
	if (p->stacked_arguments && uc_mem_read(m->uc, regs[13], stacked, sizeof stacked))
		return false;
	return p->locate(regs, stacked, o) && read_regions(m, o);
}

/* Whether region `r` of `o` shares memory with a region the call writes (mbedtls's X may be A). */
static bool overlaps_written(const struct operands *o, uint32_t r)
{
	const struct region *a = &o->regions[r];
	for (uint32_t w = 0; w < o->nregions; w++) {
		const struct region *b = &o->regions[w];
		if (w != r && b->written && a->addr < b->addr + b->bytes && b->addr < a->addr + a->bytes)
			return true;
	}
	return false;
}

/* In one call into Unicorn each way, not one a register. */
static void read_entry_regs(struct machine *m, uint32_t regs[ENTRY_REGS])
{
	void *values[ENTRY_REGS];
	for (int r = 0; r < ENTRY_REGS; r++)
		values[r] = &regs[r];
	uc_reg_read_batch(m->uc, core_regs, values, ENTRY_REGS);
}

static void write_out_regs(struct machine *m, const uint32_t out[OUT_REGS])
{
	void *const values[OUT_REGS] = {(void *)&out[0], (void *)&out[1], (void *)&out[2], (void *)&out[3],
					(void *)&out[4], (void *)&out[5], (void *)&out[6]};
	uc_reg_write_batch(m->uc, out_regs, values, OUT_REGS);
}

static uint16_t copies_of(uint32_t value, const uint32_t regs[ENTRY_REGS])
{
	uint16_t copies = 0;
	for (int r = 0; r < ENTRY_REGS; r++)
		copies |= (uint16_t)((regs[r] == value) << r);
	return copies;
}

static void learn_word(struct word_model *w, uint32_t value, const uint32_t regs[ENTRY_REGS], bool first)
{
	uint16_t copies = copies_of(value, regs);
	w->copies = first ? copies : w->copies & copies;
	w->value = value;
}

static uint32_t word_of(const struct word_model *w, const uint32_t regs[ENTRY_REGS])
{
	return w->copies ? regs[__builtin_ctz(w->copies)] : w->value;
}

/* The frame's words that still hold the recording's sentinel get their contents back; the others
 * the call wrote (bits set in `written`). A recording cut short (an exception) gives back the words
 * it has not written yet, which it will write after. */
static void close_frame(struct machine *m, struct recording *r, uint32_t written[FRAME_MAP_WORDS])
{
	struct native *n = r->n;
	uint32_t frame[NATIVE_FRAME_WORDS], base = r->regs[13] - n->frame_bytes, sentinel = r->sentinel;
	if (!sentinel)
		return;
	r->sentinel = 0;
	if (uc_mem_read(m->uc, base, frame, n->frame_bytes)) {
		machine_fail(m, "internal: cannot read the frame of %s at address 0x%08x", n->fn->name, base);
		return;
	}
	for (uint32_t i = 0; i < n->frame_bytes / 4; i++) {
		if (frame[i] == sentinel)
			frame[i] = r->saved[i];
		else
			written[i / 32] |= 1u << (i % 32);
	}
	if (uc_mem_write(m->uc, base, frame, n->frame_bytes))
		machine_fail(m, "internal: cannot write the frame of %s at address 0x%08x", n->fn->name, base);
}

static void give_up(struct machine *m, struct native *n)
{
	n->off = true;
	m->native_recording = false;
	machine_schedule(m);
}

static void end_recording(struct machine *m)
{
	uint32_t ignored[FRAME_MAP_WORDS] = {0};
	close_frame(m, &m->natives->rec, ignored);
	m->native_recording = false;
	machine_schedule(m);
}

static bool same_pipe(const struct pipe_state *a, const struct pipe_state *b)
{
	return a->after_load == b->after_load && a->load_dests == b->load_dests &&
	       a->alu_dests == b->alu_dests && a->after_literal == b->after_literal &&
	       a->after_store == b->after_store && a->after_narrow == b->after_narrow;
}

/* Whether this recording ran as the ones before (the first: keeps what it measured). */
static bool same_run(struct machine *m, struct native *n, const struct recording *r, uint32_t frame_bytes)
{
	uint64_t cycles = m->cycles - r->cycles, insns = m->insns - r->insns;
	if (n->recordings == 0) {
		n->blocks = malloc(r->nblocks * sizeof *n->blocks);
		n->block_addrs = malloc(r->nblocks * sizeof *n->block_addrs);
		if (!n->blocks || !n->block_addrs)
			return false;
		memcpy(n->blocks, r->blocks, r->nblocks * sizeof *n->blocks);
		for (uint32_t i = 0; i < r->nblocks; i++) {
			n->block_addrs[i] = r->blocks[i].addr;
			n->callees |= r->blocks[i].addr < n->fn->entry || r->blocks[i].addr >= n->fn->end;
		}
		n->nblocks = r->nblocks;
		n->cycles = cycles, n->insns = insns;
		n->first_size = r->first_size;
		n->frame_bytes = frame_bytes;
		n->last_addr = m->cur_addr, n->last_size = m->cur_size;
		n->last_exit_refill = m->cur_exit_refill, n->last_exit = m->cur_exit;
		n->layouts = n->fn->primitive->layouts;
		return true;
	}
	bool same = n->nblocks == r->nblocks && n->cycles == cycles && n->insns == insns &&
		    n->frame_bytes == frame_bytes && n->last_addr == m->cur_addr &&
		    n->last_size == m->cur_size && n->last_exit_refill == m->cur_exit_refill &&
		    same_pipe(&n->last_exit, &m->cur_exit);
	for (uint32_t i = 0; same && i < r->nblocks; i++)
		same = n->blocks[i].addr == r->blocks[i].addr && n->blocks[i].end == r->blocks[i].end &&
		       n->blocks[i].lr == r->blocks[i].lr && n->blocks[i].entry_lr == r->blocks[i].entry_lr;
	return same;
}

/* The layouts in which the host computes from `before` what the call left in the regions it
 * writes, the regions it only reads kept. */
static uint8_t agreeing_layouts(struct machine *m, const struct operands *before, uint8_t candidates)
{
	struct operands *after = &m->natives->scratch, *computed = &m->natives->computed;
	*after = *before;
	if (!read_regions(m, after))
		return 0;
	for (uint32_t r = 0; r < before->nregions; r++)
		if (!before->regions[r].written && !overlaps_written(before, r) &&
		    memcmp(region_bytes(after, r), region_bytes((struct operands *)before, r), before->regions[r].bytes))
			return 0;
	uint8_t agreeing = 0;
	for (int l = 0; l < NLAYOUTS; l++) {
		if (!(candidates >> l & 1))
			continue;
		*computed = *before;
		layouts[l].run(computed);
		bool same = true;
		for (uint32_t r = 0; same && r < before->nregions; r++)
			same = !before->regions[r].written ||
			       !memcmp(region_bytes(computed, r), region_bytes(after, r), before->regions[r].bytes);
		if (same)
			agreeing |= (uint8_t)(1u << l);
	}
	return agreeing;
}

/* The call being recorded returned: control is at its return address, the block not yet priced. */
static void finish_recording(struct machine *m, struct recording *r)
{
	struct native *n = r->n;
	uint32_t frame_bytes = r->regs[13] - r->min_sp;
	uint32_t frame[NATIVE_FRAME_WORDS], written[FRAME_MAP_WORDS] = {0};
	bool sentinel = r->sentinel;
	close_frame(m, r, written);
	bool conforms = r->nblocks && m->blocks - r->block_count == r->nblocks &&
			frame_bytes <= sizeof frame && !(frame_bytes & 3);
	for (int i = 4; conforms && i <= 13; i++) /* r4-r11 and SP kept (r12 is scratch) */
		conforms = i == 12 || reg(m, core_regs[i]) == r->regs[i];
	if (conforms)
		r->blocks[r->nblocks - 1].end = m->cycles - r->cycles;
	if (!conforms || !same_run(m, n, r, frame_bytes) || uc_mem_read(m->uc, r->min_sp, frame, frame_bytes)) {
		give_up(m, n);
		return;
	}
	n->layouts &= agreeing_layouts(m, &r->before, n->layouts);
	bool first = n->recordings == 0;
	for (uint32_t i = 0; i < frame_bytes / 4; i++)
		learn_word(&n->frame[i], frame[i], r->regs, first);
	for (int i = 0; sentinel && i < FRAME_MAP_WORDS; i++)
		n->written[i] |= written[i];
	for (int i = 0; i < OUT_REGS; i++)
		learn_word(&n->out[i], reg(m, out_regs[i]), r->regs, first);
	n->recordings++;
	n->off = !n->layouts;
	n->on = n->layouts && n->recordings == NATIVE_RECORDINGS;
	n->all_written = true;
	for (uint32_t i = 0; i < n->frame_bytes / 4; i++)
		n->all_written &= n->written[i / 32] >> (i % 32) & 1;
	end_recording(m);
}

void native_observe(struct machine *m, uint32_t addr)
{
	struct recording *r = &m->natives->rec;
	const struct native_function *fn = r->n->fn;
	uint32_t sp = reg(m, UC_ARM_REG_SP);
	if (addr == (r->regs[14] & ~1u) && sp == r->regs[13]) {
		finish_recording(m, r);
		return;
	}
	/* anything but the blocks of the function past its entry and of its callees, each once: an
	 * exception, a loop back to the entry, a block stopped and run again, too many blocks */
	if (addr == fn->entry || m->in_handler || m->resume ||
	    m->cycles == r->last_seen || r->nblocks == NATIVE_BLOCKS || m->flash_timed) {
		end_recording(m);
		return;
	}
	if (sp < r->min_sp)
		r->min_sp = sp;
	if (r->nblocks)
		r->blocks[r->nblocks - 1].end = m->cycles - r->cycles;
	const struct elf_func *callee = addr < fn->entry || addr >= fn->end ? elf_function_at(m->elf, addr) : NULL;
	uint32_t lr = callee && callee->addr == addr ? reg(m, UC_ARM_REG_LR) : 0;
	bool entry_lr = lr && lr == r->regs[14];
	r->blocks[r->nblocks++] = (struct native_block){.addr = addr, .lr = entry_lr ? 0 : lr, .entry_lr = entry_lr};
	r->last_seen = m->cycles;
}

/* Distinct per recording: a word the call writes holds none of them after it but by chance. */
static uint32_t sentinel_of(uint32_t recording)
{
	return 0x9E3779B9u * (recording + 1u) | 1u;
}

static void begin_recording(struct machine *m, struct native *n, const uint32_t regs[ENTRY_REGS],
			    uint32_t first_size)
{
	struct recording *r = &m->natives->rec;
	/* with the frame known, only where nothing (an exception) would write into it but the call,
	 * and from an entry block as the first recording's */
	if (n->recordings && (m->cycles + n->cycles >= m->next_event || first_size != n->first_size))
		return;
	if (++n->attempts > NATIVE_ATTEMPTS) {
		n->off = true;
		return;
	}
	r->n = n;
	r->first_size = first_size;
	memcpy(r->regs, regs, sizeof r->regs);
	if (!read_operands(m, n->fn->primitive, regs, &r->before))
		return;
	r->sentinel = 0;
	if (n->recordings) {
		uint32_t fill[NATIVE_FRAME_WORDS], base = r->regs[13] - n->frame_bytes;
		for (uint32_t i = 0; i < n->frame_bytes / 4; i++)
			fill[i] = sentinel_of(n->recordings);
		if (uc_mem_read(m->uc, base, r->saved, n->frame_bytes) ||
		    uc_mem_write(m->uc, base, fill, n->frame_bytes))
			return; /* emulated as it is: a frame outside memory faults where the chip would */
		r->sentinel = sentinel_of(n->recordings);
	}
	r->min_sp = r->regs[13];
	r->cycles = m->cycles;
	r->last_seen = UINT64_MAX;
	r->insns = m->insns;
	r->block_count = m->blocks;
	r->nblocks = 0;
	m->native_recording = true; /* every block to the slow path, which observes it */
	machine_schedule(m);
}

/* The profiler sees the recorded blocks: those of a leaf at once (its own, none its entry), those
 * of a function with callees one by one as they ran, its callees' entries with LR as it was. */
static void profile_recorded(struct machine *m, const struct native *n, const uint32_t regs[ENTRY_REGS])
{
	if (!n->callees) {
		profile_blocks_inside(m->prof, n->block_addrs, n->nblocks, m->cycles + n->cycles);
		return;
	}
	uint32_t lr = reg(m, UC_ARM_REG_LR);
	for (uint32_t i = 0; i < n->nblocks; i++) {
		uint32_t at_entry = n->blocks[i].entry_lr ? regs[14] : n->blocks[i].lr;
		if (at_entry && at_entry != lr)
			set_reg(m, UC_ARM_REG_LR, lr = at_entry);
		profile_block(m->prof, n->blocks[i].addr, m->cycles + n->blocks[i].end);
	}
}

/* The call runs on the host: its effects as recorded, its state computed. */
static void run_on_host(struct machine *m, struct native *n, const uint32_t regs[ENTRY_REGS])
{
	struct operands *o = &m->natives->scratch;
	uint32_t frame[NATIVE_FRAME_WORDS];
	if (!read_operands(m, n->fn->primitive, regs, o))
		return; /* emulated: it faults where the chip would */
	layouts[__builtin_ctz(n->layouts)].run(o);
	uint32_t base = regs[13] - n->frame_bytes;
	if (!n->all_written && uc_mem_read(m->uc, base, frame, n->frame_bytes))
		return;
	for (uint32_t i = 0; i < n->frame_bytes / 4; i++)
		if (n->written[i / 32] >> (i % 32) & 1)
			frame[i] = word_of(&n->frame[i], regs);
	for (uint32_t r = 0; r < o->nregions; r++)
		if (o->regions[r].written &&
		    uc_mem_write(m->uc, o->regions[r].addr, region_bytes(o, r), o->regions[r].bytes)) {
			machine_fail(m, "internal: cannot write the operands of %s at address 0x%08x", n->fn->name,
				     o->regions[r].addr);
			return;
		}
	if (uc_mem_write(m->uc, base, frame, n->frame_bytes)) {
		machine_fail(m, "internal: cannot write the frame of %s at address 0x%08x", n->fn->name, base);
		return;
	}
	if (m->prof)
		profile_recorded(m, n, regs);
	uint32_t out[OUT_REGS];
	for (int i = 0; i < OUT_REGS; i++)
		out[i] = word_of(&n->out[i], regs);
	write_out_regs(m, out);
	m->cycles += n->cycles;
	m->insns += n->insns;
	m->blocks += n->nblocks;
	m->cur_addr = n->last_addr, m->cur_size = n->last_size;
	m->cur_exit_refill = n->last_exit_refill, m->cur_exit = n->last_exit;
	n->runs++;
	set_reg(m, UC_ARM_REG_PC, regs[14] | 1u);
}

/* The recordings of the function's calls of `length` (NULL: none are kept). */
static struct native *native_for(struct native_function *fn, uint64_t length)
{
	for (uint32_t i = 0; i < fn->nlengths; i++)
		if (fn->lengths[i].length == length)
			return &fn->lengths[i];
	if (fn->nlengths == NATIVE_LENGTHS)
		return NULL;
	struct native *n = &fn->lengths[fn->nlengths++];
	*n = (struct native){.fn = fn, .length = length};
	return n;
}

/* What the recordings of the call now beginning are kept per (struct primitive). */
static uint64_t length_of(struct machine *m, const struct primitive *p)
{
	uint32_t stacked = 0;
	if (p->length_stacked >= 0)
		uc_mem_read(m->uc, reg(m, UC_ARM_REG_SP) + 4u * (uint32_t)p->length_stacked, &stacked, 4);
	return (p->length_reg >= 0 ? reg(m, core_regs[p->length_reg]) : 0) | (uint64_t)stacked << 32;
}

static void on_native_entry(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
	struct native_function *fn = user;
	struct machine *m = fn->m;
	(void)uc;
	/* the timing hook priced this block (it is the current one) and nothing is pending */
	if (m->native_recording || m->cur_addr != (uint32_t)address || m->in_handler ||
	    m->resume || m->flash_timed || m->stop != STOP_NONE ||
	    (m->taint && !taint_call_untracked(m->taint)))
		return;
	struct native *n = native_for(fn, length_of(m, fn->primitive));
	if (!n || n->off)
		return;
	uint32_t regs[ENTRY_REGS];
	read_entry_regs(m, regs);
	if (!n->on)
		begin_recording(m, n, regs, size);
	else if (m->cycles + n->cycles < m->next_event && size == n->first_size)
		run_on_host(m, n, regs); /* not where the translator ended the entry block elsewhere (a code hook) */
}

/* The primitive function `name` is (its own name, or a GCC clone's: name.isra.0), or NULL. */
static const struct primitive *primitive_of(const char *name)
{
	for (size_t k = 0; k < sizeof primitives / sizeof *primitives; k++) {
		size_t len = strlen(primitives[k].function);
		if (!strncmp(name, primitives[k].function, len) && (name[len] == '\0' || name[len] == '.'))
			return &primitives[k];
	}
	return NULL;
}

int machine_native_calls(struct machine *m)
{
	struct natives *ns = m->natives = calloc(1, sizeof *ns);
	for (size_t f = 0; ns && f < m->elf->nfuncs; f++)
		ns->n += primitive_of(m->elf->funcs[f].name) != NULL;
	if (!ns || !(ns->fn = calloc(ns->n + 1, sizeof *ns->fn)))
		return -1;
	size_t i = 0;
	for (size_t f = 0; f < m->elf->nfuncs; f++) {
		const struct elf_func *elf_fn = &m->elf->funcs[f];
		const struct primitive *p = primitive_of(elf_fn->name);
		if (!p)
			continue;
		struct native_function *fn = &ns->fn[i++];
		*fn = (struct native_function){.m = m, .primitive = p, .name = elf_fn->name, .entry = elf_fn->addr,
					       .end = elf_fn->addr + elf_fn->size};
		uc_hook h;
		if (uc_hook_add(m->uc, &h, UC_HOOK_BLOCK, on_native_entry, fn, elf_fn->addr, elf_fn->addr) != UC_ERR_OK)
			return -1;
	}
	return 0;
}

void native_calls_stats(const struct machine *m, char *out, size_t len)
{
	size_t used = (size_t)snprintf(out, len, ", \"native_calls\": [");
	for (size_t i = 0; m->natives && i < m->natives->n && used < len; i++) {
		const struct native_function *fn = &m->natives->fn[i];
		unsigned long long runs = 0;
		unsigned on = 0;
		const char *layout = NULL;
		for (uint32_t k = 0; k < fn->nlengths; k++) {
			const struct native *n = &fn->lengths[k];
			runs += n->runs;
			on += n->on;
			if (n->on && !layout)
				layout = layouts[__builtin_ctz(n->layouts)].name;
		}
		used += (size_t)snprintf(out + used, len - used,
					 "%s{\"function\": \"%s\", \"address\": \"0x%08x\", \"run_on_host\": %llu, "
					 "\"lengths_on_host\": %u, \"layout\": %s%s%s}", i ? ", " : "", fn->name, fn->entry,
					 runs, on, layout ? "\"" : "", layout ? layout : "null", layout ? "\"" : "");
	}
	if (used < len)
		snprintf(out + used, len - used, "]");
}

void native_calls_free(struct machine *m)
{
	for (size_t i = 0; m->natives && i < m->natives->n; i++)
		for (uint32_t k = 0; k < m->natives->fn[i].nlengths; k++)
			free(m->natives->fn[i].lengths[k].blocks), free(m->natives->fn[i].lengths[k].block_addrs);
	if (m->natives)
		free(m->natives->fn);
	free(m->natives);
	m->natives = NULL;
}
