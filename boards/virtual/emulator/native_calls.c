/* Calls of the Keccak-f[1600] permutation run on the host (a speed-up that changes no result):
 * SPHINCS+ and SLH-DSA over SHAKE spend 90 % of their signing in it, and the host computes a call
 * in a tenth of the time Unicorn takes to emulate it.
 * A function of native_functions is learnt first: NATIVE_RECORDINGS of its calls are emulated and
 * recorded (each block it runs, with the model time at the block's end, and its instruction count;
 * its frame; r0-r3, r12 and the flags at its return; the 200 bytes at r0 before and after). Once
 * every recording ran the same blocks in the same time, left the callee-saved registers as they
 * were, and agreed with one of the host's layouts of the state (permutation.h), a call is run on
 * the host: the state is permuted in place, the frame's words the call writes and the scratch
 * registers are written as the recordings had them (a copy of an entry register where every
 * recording had one, else the last recording's value: a constant, or a word dead by the calling
 * convention, such as pqm4's five theta temporaries), model time, the instruction and block
 * counts and the pipeline state move on by what the recordings measured, the profiler sees the
 * recorded blocks, and execution goes on at LR.
 * Which of the frame's words a call writes (the stack meter sees the deepest one) is learnt by the
 * recordings after the first, which knows the frame: each begins with the frame filled with its own
 * sentinel, and ends with the words that still hold it given back their contents.
 * A call is emulated instead where anything could make it run otherwise: an exception due before
 * it would return, an entry block the translator ended elsewhere than in the recordings, flash wait
 * states (the ART's state decides fetch times), the guard watch, a taint tracker that follows its
 * instructions (one that replays its summary, or is idle, lets it run on the host), or an exact
 * access being replayed.
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

#include "permutation.h"
#include "profile.h"
#include "taint.h"

#define NATIVE_RECORDINGS 4
#define NATIVE_ATTEMPTS 64   /* recordings begun (an exception spoils one) before it is given up */
#define NATIVE_FRAME_WORDS 256 /* slhdsa-c's keccak_f1600 keeps 304 bytes */
#define NATIVE_BLOCKS 2048
#define ENTRY_REGS 15        /* r0-r12, SP, LR */
#define OUT_REGS 6           /* r0-r3, r12, the flags */

static const char *const native_functions[] = {
	"KeccakF1600_StatePermute", /* pqm4's common/keccakf1600.S (interleaved), PQClean's C (lanes) */
	"keccak_f1600",             /* slhdsa-c's sha3_f1600.c (lanes) */
};

enum layout { LAYOUT_LANES, LAYOUT_INTERLEAVED, NLAYOUTS };
static void (*const layouts[NLAYOUTS])(uint8_t *) = {keccak_f1600_lanes, keccak_f1600_interleaved};
static const char *const layout_names[NLAYOUTS] = {"lanes", "interleaved"};
static const int out_regs[OUT_REGS] = {UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2,
				       UC_ARM_REG_R3, UC_ARM_REG_R12, UC_ARM_REG_APSR_NZCVQG};

/* A word the call leaves (in its frame, or a scratch register), as the recordings had it. */
struct word_model {
	uint32_t value;     /* the last recording's */
	uint16_t copies;    /* the entry registers it equalled in every recording (bit n: core_regs[n]) */
};

struct native_block {
	uint32_t addr;
	uint64_t end;       /* model time at its end, from the end of the call's first block */
};

#define FRAME_MAP_WORDS (NATIVE_FRAME_WORDS / 32)

struct native {
	struct machine *m;
	const char *name;
	uint32_t entry, end;
	uint32_t recordings, attempts;
	bool on, off;
	uint8_t layouts;    /* bit per layout every recording agreed with */
	/* what the recordings measured, from the end of the first block to the start of the return's */
	uint64_t cycles, insns;
	uint32_t first_size; /* the entry block's bytes: the recorded time begins at its end */
	uint32_t nblocks;
	struct native_block *blocks;
	uint32_t *block_addrs; /* the blocks' addresses, for the profiler */
	uint32_t last_addr, last_size, last_exit_refill;
	struct pipe_state last_exit;
	uint32_t frame_bytes;
	struct word_model frame[NATIVE_FRAME_WORDS], out[OUT_REGS];
	uint32_t written[FRAME_MAP_WORDS]; /* bit per frame word a recording wrote */
	uint64_t runs;      /* calls run on the host */
};

struct recording {
	struct native *n;
	uint32_t first_size;
	uint32_t regs[ENTRY_REGS];
	uint32_t min_sp;
	uint64_t cycles, insns, block_count; /* at the end of the first block */
	uint64_t last_seen;  /* model time when the last block was seen */
	uint8_t state[KECCAK_STATE_BYTES];
	uint32_t sentinel;   /* the value filling the frame at entry, 0: the frame as it was */
	uint32_t saved[NATIVE_FRAME_WORDS]; /* the frame's contents before the sentinel */
	uint32_t nblocks;
	struct native_block blocks[NATIVE_BLOCKS];
};

struct natives {
	struct native *fn;
	size_t n;
	struct recording rec;
};

static void read_entry_regs(struct machine *m, uint32_t regs[ENTRY_REGS])
{
	for (int r = 0; r < ENTRY_REGS; r++)
		regs[r] = reg(m, core_regs[r]);
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
		machine_fail(m, "internal: cannot read the frame of %s at address 0x%08x", n->name, base);
		return;
	}
	for (uint32_t i = 0; i < n->frame_bytes / 4; i++) {
		if (frame[i] == sentinel)
			frame[i] = r->saved[i];
		else
			written[i / 32] |= 1u << (i % 32);
	}
	if (uc_mem_write(m->uc, base, frame, n->frame_bytes))
		machine_fail(m, "internal: cannot write the frame of %s at address 0x%08x", n->name, base);
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
		for (uint32_t i = 0; i < r->nblocks; i++)
			n->block_addrs[i] = r->blocks[i].addr;
		n->nblocks = r->nblocks;
		n->cycles = cycles, n->insns = insns;
		n->first_size = r->first_size;
		n->frame_bytes = frame_bytes;
		n->last_addr = m->cur_addr, n->last_size = m->cur_size;
		n->last_exit_refill = m->cur_exit_refill, n->last_exit = m->cur_exit;
		n->layouts = (1u << NLAYOUTS) - 1;
		return true;
	}
	bool same = n->nblocks == r->nblocks && n->cycles == cycles && n->insns == insns &&
		    n->frame_bytes == frame_bytes && n->last_addr == m->cur_addr &&
		    n->last_size == m->cur_size && n->last_exit_refill == m->cur_exit_refill &&
		    same_pipe(&n->last_exit, &m->cur_exit);
	for (uint32_t i = 0; same && i < r->nblocks; i++)
		same = n->blocks[i].addr == r->blocks[i].addr && n->blocks[i].end == r->blocks[i].end;
	return same;
}

/* The call being recorded returned: control is at its return address, the block not yet priced. */
static void finish_recording(struct machine *m, struct recording *r)
{
	struct native *n = r->n;
	uint32_t frame_bytes = r->regs[13] - r->min_sp;
	uint8_t after[KECCAK_STATE_BYTES];
	uint32_t frame[NATIVE_FRAME_WORDS], written[FRAME_MAP_WORDS] = {0};
	bool sentinel = r->sentinel;
	close_frame(m, r, written);
	bool conforms = r->nblocks && m->blocks - r->block_count == r->nblocks &&
			frame_bytes <= sizeof frame && !(frame_bytes & 3);
	for (int i = 4; conforms && i <= 13; i++) /* r4-r11 and SP kept (r12 is scratch) */
		conforms = i == 12 || reg(m, core_regs[i]) == r->regs[i];
	if (conforms)
		r->blocks[r->nblocks - 1].end = m->cycles - r->cycles;
	if (!conforms || !same_run(m, n, r, frame_bytes) ||
	    uc_mem_read(m->uc, r->regs[0], after, sizeof after) ||
	    uc_mem_read(m->uc, r->min_sp, frame, frame_bytes)) {
		give_up(m, n);
		return;
	}
	for (int l = 0; l < NLAYOUTS; l++) {
		uint8_t state[KECCAK_STATE_BYTES];
		memcpy(state, r->state, sizeof state);
		layouts[l](state);
		if (memcmp(state, after, sizeof state))
			n->layouts &= (uint8_t)~(1u << l);
	}
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
	end_recording(m);
}

void native_observe(struct machine *m, uint32_t addr)
{
	struct recording *r = &m->natives->rec;
	uint32_t sp = reg(m, UC_ARM_REG_SP);
	if (addr == (r->regs[14] & ~1u) && sp == r->regs[13]) {
		finish_recording(m, r);
		return;
	}
	/* anything but the function's own blocks past its entry, each once: an exception, a callee, a
	 * loop back to the entry, a block stopped and run again, too many blocks */
	if (addr <= r->n->entry || addr >= r->n->end || m->in_handler || m->resume ||
	    m->cycles == r->last_seen || r->nblocks == NATIVE_BLOCKS || m->flash_timed) {
		end_recording(m);
		return;
	}
	if (sp < r->min_sp)
		r->min_sp = sp;
	if (r->nblocks)
		r->blocks[r->nblocks - 1].end = m->cycles - r->cycles;
	r->blocks[r->nblocks++].addr = addr;
	r->last_seen = m->cycles;
}

/* Distinct per recording: a word the call writes holds none of them after it but by chance. */
static uint32_t sentinel_of(uint32_t recording)
{
	return 0x9E3779B9u * (recording + 1u) | 1u;
}

static void begin_recording(struct machine *m, struct native *n, uint32_t first_size)
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
	read_entry_regs(m, r->regs);
	if (uc_mem_read(m->uc, r->regs[0], r->state, sizeof r->state))
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

/* The call runs on the host: its effects as recorded, its state permuted. */
static void run_on_host(struct machine *m, struct native *n)
{
	uint32_t regs[ENTRY_REGS], frame[NATIVE_FRAME_WORDS];
	uint8_t state[KECCAK_STATE_BYTES];
	read_entry_regs(m, regs);
	if (uc_mem_read(m->uc, regs[0], state, sizeof state))
		return; /* emulated: it faults where the chip would */
	layouts[__builtin_ctz(n->layouts)](state);
	uint32_t base = regs[13] - n->frame_bytes;
	if (uc_mem_read(m->uc, base, frame, n->frame_bytes))
		return;
	for (uint32_t i = 0; i < n->frame_bytes / 4; i++)
		if (n->written[i / 32] >> (i % 32) & 1)
			frame[i] = word_of(&n->frame[i], regs);
	if (uc_mem_write(m->uc, regs[0], state, sizeof state) || uc_mem_write(m->uc, base, frame, n->frame_bytes)) {
		machine_fail(m, "internal: cannot write the state of %s at address 0x%08x", n->name, regs[0]);
		return;
	}
	for (int i = 0; i < OUT_REGS; i++)
		set_reg(m, out_regs[i], word_of(&n->out[i], regs));
	m->cycles += n->cycles;
	if (m->prof) /* the recorded blocks are the function's own (native_observe), none its entry */
		profile_blocks_inside(m->prof, n->block_addrs, n->nblocks, m->cycles);
	m->insns += n->insns;
	m->blocks += n->nblocks;
	m->cur_addr = n->last_addr, m->cur_size = n->last_size;
	m->cur_exit_refill = n->last_exit_refill, m->cur_exit = n->last_exit;
	n->runs++;
	set_reg(m, UC_ARM_REG_PC, regs[14] | 1u);
}

static void on_native_entry(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
	struct native *n = user;
	struct machine *m = n->m;
	(void)uc;
	/* the timing hook priced this block (it is the current one) and nothing is pending */
	if (n->off || m->native_recording || m->cur_addr != (uint32_t)address || m->in_handler ||
	    m->resume || m->flash_timed || m->stop != STOP_NONE ||
	    (m->taint && !taint_call_untracked(m->taint)))
		return;
	if (!n->on)
		begin_recording(m, n, size);
	else if (m->cycles + n->cycles < m->next_event && size == n->first_size)
		run_on_host(m, n); /* not where the translator ended the entry block elsewhere (a code hook) */
}

static bool is_native_function(const char *name)
{
	for (size_t k = 0; k < sizeof native_functions / sizeof *native_functions; k++)
		if (!strcmp(name, native_functions[k]))
			return true;
	return false;
}

int machine_native_calls(struct machine *m)
{
	struct natives *ns = m->natives = calloc(1, sizeof *ns);
	for (size_t f = 0; ns && f < m->elf->nfuncs; f++)
		ns->n += is_native_function(m->elf->funcs[f].name);
	if (!ns || !(ns->fn = calloc(ns->n + 1, sizeof *ns->fn)))
		return -1;
	size_t i = 0;
	for (size_t f = 0; f < m->elf->nfuncs; f++) {
		const struct elf_func *fn = &m->elf->funcs[f];
		if (!is_native_function(fn->name))
			continue;
		ns->fn[i] = (struct native){.m = m, .name = fn->name, .entry = fn->addr, .end = fn->addr + fn->size};
		uc_hook h;
		if (uc_hook_add(m->uc, &h, UC_HOOK_BLOCK, on_native_entry, &ns->fn[i], fn->addr, fn->addr) != UC_ERR_OK)
			return -1;
		i++;
	}
	return 0;
}

void native_calls_stats(const struct machine *m, char *out, size_t len)
{
	size_t used = (size_t)snprintf(out, len, ", \"native_calls\": [");
	for (size_t i = 0; m->natives && i < m->natives->n && used < len; i++) {
		const struct native *n = &m->natives->fn[i];
		used += (size_t)snprintf(out + used, len - used,
					 "%s{\"function\": \"%s\", \"address\": \"0x%08x\", \"run_on_host\": %llu, "
					 "\"layout\": %s%s%s}", i ? ", " : "", n->name, n->entry,
					 (unsigned long long)n->runs, n->on ? "\"" : "",
					 n->on ? layout_names[__builtin_ctz(n->layouts)] : "null", n->on ? "\"" : "");
	}
	if (used < len)
		snprintf(out + used, len - used, "]");
}

void native_calls_free(struct machine *m)
{
	for (size_t i = 0; m->natives && i < m->natives->n; i++)
		free(m->natives->fn[i].blocks), free(m->natives->fn[i].block_addrs);
	if (m->natives)
		free(m->natives->fn);
	free(m->natives);
	m->natives = NULL;
}
