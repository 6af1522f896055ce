/* The hooks that count model time: the block hook charges each translated block its static
 * cost (timing.c) and the flash lines it runs into (flash_art.c); code hooks add what depends on
 * operands: a division's, a load's from flash.
 * Unicorn facts this file is built on:
 * - uc_emu_stop() from the UC_HOOK_BLOCK callback stops before the block executes.
 * - The FPU works without a CPACR write; the real chip faults. We check CPACR ourselves when a
 *   block containing FP instructions is first priced. */
#include "machine_internal.h"

#include <stdlib.h>
#include <string.h>

#include "flash_art.h"
#include "profile.h"

#define CACHE_MASK ((1u << COST_CACHE_BITS) - 1)

struct div_hook {
	struct machine *m;
	struct div_site site;
	uc_hook handle;
};

static bool div_hooked(struct machine *m, uint32_t addr)
{
	for (uint32_t i = 0; i < m->ndivs; i++)
		if (m->divs[i]->site.addr == addr)
			return true;
	return false;
}

/* The ART's delays for the flash lines a block runs into, from `start`, the time it begins. */
static uint32_t fetch_delay(struct machine *m, const struct fetch_point *f, uint32_t n, uint64_t start)
{
	uint32_t stall = 0;
	for (uint32_t i = 0; i < n; i++)
		stall += art_fetch(m->art, f[i].line, start + f[i].offset + stall);
	return stall;
}

/* Control reaching anything but the fall-through of the previous block is a taken branch: its
 * pipeline refill, and the landing site's (an unaligned 32-bit instruction) on top, whatever
 * the branch: a call then costs its target's landing wherever it is made from, which the
 * probes' calibration relies on. Falling through, the first instruction pipelines with the
 * previous block's last as within a block. */
static uint64_t block_start(const struct machine *m, const struct cost_entry *e)
{
	if (e->addr != m->cur_addr + m->cur_size)
		return m->cycles + m->cur_exit_refill + e->entry_refill;
	return m->cycles + (uint64_t)(int64_t)timing_entry_adjust(&e->entry, &m->cur_exit);
}

static void charge(struct machine *m, const struct cost_entry *e, const struct fetch_point *fetches)
{
	uint64_t start = block_start(m, e);
	m->cycles = start + e->cycles;
	if (__builtin_expect(m->flash_timed, 0))
		m->cycles += fetch_delay(m, fetches, e->nfetches, start);
	m->cur_addr = e->addr;
	m->cur_size = e->size;
	m->cur_exit_refill = e->exit_refill;
	m->cur_exit = e->exit;
	m->blocks++;
	m->insns += e->ninsns;
	if (__builtin_expect(m->prof != NULL, 0))
		profile_block(m->prof, e->addr, m->cycles);
}

static bool in_flash(const struct machine *m, uint32_t addr)
{
	return addr < m->chip->flash_size || addr - FLASH_BASE < m->chip->flash_size;
}

/* The flash lines of an analysed block, as the ART numbers them (nothing outside flash). */
static uint32_t flash_fetches(const struct machine *m, const struct block_timing *bt,
			      struct fetch_point *out)
{
	if (!in_flash(m, bt->addr))
		return 0;
	for (uint32_t i = 0; i < bt->nfetches; i++)
		out[i] = (struct fetch_point){
			art_line((bt->fetch[i].line * TIMING_LINE_BYTES) & (m->chip->flash_size - 1)),
			bt->fetch[i].offset};
	return bt->nfetches;
}

static struct cost_entry cost_entry_of(const struct block_timing *bt, uint32_t fetch_first,
				       uint32_t nfetches)
{
	return (struct cost_entry){bt->addr, bt->size, bt->cycles, bt->ninsns, bt->exit_refill,
				   bt->entry_refill, bt->entry, bt->exit, fetch_first, nfetches};
}

/* Keeps a block's flash lines for its cost entry; a full pool empties the cost cache first. */
static struct cost_entry *new_cost_entry(struct machine *m, const struct block_timing *bt)
{
	if (m->fetch_used + bt->nfetches > FETCH_POOL_SIZE) {
		memset(m->cache, 0, (1u << COST_CACHE_BITS) * sizeof *m->cache);
		m->fetch_used = 0;
	}
	struct cost_entry *e = &m->cache[(bt->addr >> 1) & CACHE_MASK];
	*e = cost_entry_of(bt, m->fetch_used, flash_fetches(m, bt, &m->fetch_pool[m->fetch_used]));
	m->fetch_used += e->nfetches;
	return e;
}

/* Records the loads of a flash block whose address may lie in flash (not SP-based). */
static void note_flash_loads(struct machine *m, const struct block_timing *bt)
{
	if (!m->flash_hooked || !in_flash(m, bt->addr))
		return;
	for (uint32_t i = 0; i < bt->ninsns; i++) {
		const struct access_span *span = &bt->insn[i].access;
		uint32_t half = (bt->insn[i].addr & (m->chip->flash_size - 1)) >> 1;
		uint32_t *at = &m->load_at[half];
		if (span->dir != ACCESS_LOAD || span->base == 13 || *at)
			continue;
		m->load_bits[half >> 3] |= (uint8_t)(1u << (half & 7));
		if (m->nload_spans == m->cap_load_spans) {
			m->cap_load_spans = m->cap_load_spans ? 2 * m->cap_load_spans : 1024;
			m->load_spans = realloc(m->load_spans, m->cap_load_spans * sizeof *m->load_spans);
		}
		m->load_spans[m->nload_spans++] = *span;
		*at = m->nload_spans;
	}
}

static void block_slow(struct machine *m, uint32_t addr, uint32_t size)
{
	struct block_timing *bt = m->bt;
	uint8_t code[4096];

	if (m->native_recording)
		native_observe(m, addr);
	if (m->signal) {
		machine_stop(m, STOP_EVENT);
		return;
	}
	if (m->resume) { /* the remainder of a block, after an exact cycle-counter access */
		if (addr != m->armed_pc || uc_mem_read(m->uc, addr, code, size) ||
		    !timing_analyze(m->cs, code, size, addr, &m->resume_state, bt)) {
			machine_fail(m, "internal: cannot resume at address 0x%08x", addr);
			return;
		}
		m->resume = false;
		continue_at(m, addr); /* execution continues where it stopped */
		struct fetch_point fetches[2 * TIMING_MAX_INSNS];
		struct cost_entry resumed = cost_entry_of(bt, 0, flash_fetches(m, bt, fetches));
		charge(m, &resumed, fetches);
		m->resumed_block = m->blocks;
		machine_schedule(m);
		return;
	}
	if (m->cycles >= m->max_cycles) {
		machine_stop(m, STOP_EVENT);
		return;
	}
	if (m->flash_timed && !m->flash_hooked) {
		machine_stop(m, STOP_FLASH_TIMING);
		return;
	}
	/* An exception is taken where control arrives otherwise than by falling through: where the
	 * translator ends a block (a page, its length, a code hook's range) depends on what it
	 * translated before, an analysis's flushes included, and the time must not. */
	if (exception_due_at(m, m->cycles) && addr != m->cur_addr + m->cur_size) {
		machine_stop(m, STOP_EVENT);
		return;
	}
	machine_schedule(m);

	struct cost_entry *e = &m->cache[(addr >> 1) & CACHE_MASK];
	if (e->addr == addr && e->size == size) {
		charge(m, e, &m->fetch_pool[e->fetch_first]);
		return;
	}
	if (size > sizeof code || uc_mem_read(m->uc, addr, code, size) ||
	    !timing_analyze(m->cs, code, size, addr, NULL, bt)) {
		machine_fail(m, "%.200s", bt->error[0] ? bt->error : "cannot read a block");
		return;
	}
	if (bt->uses_fp && !scs_fpu_enabled(&m->board->scs)) {
		machine_fail(m, "FPU instruction with the FPU disabled (SCB_CPACR=0x%08x) in the block "
				"at address 0x%08x", scs_cpacr(&m->board->scs), addr);
		return;
	}
	if (bt->halts) {
		machine_stop(m, STOP_HALT);
		return;
	}
	for (uint32_t i = 0; i < bt->ndivs; i++) {
		if (!div_hooked(m, bt->divs[i].addr)) {
			/* hooks must exist when the block is translated: add them, translate again */
			m->pending_divs = bt;
			machine_stop(m, STOP_RETRANSLATE);
			return;
		}
	}
	note_flash_loads(m, bt);
	e = new_cost_entry(m, bt);
	charge(m, e, &m->fetch_pool[e->fetch_first]);
}

static void on_block(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
	struct machine *m = user;
	uint32_t addr = (uint32_t)address;
	const struct cost_entry *e = &m->cache[(addr >> 1) & CACHE_MASK];
	(void)uc;
	if (__builtin_expect(e->addr != addr || e->size != size || m->cycles >= m->next_event, 0)) {
		block_slow(m, addr, size);
		return;
	}
	charge(m, e, &m->fetch_pool[e->fetch_first]);
}

int hook_blocks(struct machine *m)
{
	uc_hook h;
	return uc_hook_add(m->uc, &h, UC_HOOK_BLOCK, on_block, m, 1, 0) == UC_ERR_OK ? 0 : -1;
}

/* The load at flash halfword `half` is about to execute: its wait for the D-Code side of the ART.
 * The registers are as before it runs. */
static __attribute__((noinline)) void flash_load(struct machine *m, uint32_t half)
{
	if (!m->flash_timed)
		return;
	const struct access_span *s = &m->load_spans[m->load_at[half] - 1];
	uint32_t at = (uint32_t)s->offset;
	if (s->base >= 0)
		at += reg(m, core_regs[s->base]);
	if (s->index >= 0)
		at += reg(m, core_regs[s->index]) << s->shift;
	if (in_flash(m, at)) {
		m->cycles += art_load(m->art, at & (m->chip->flash_size - 1), s->bytes);
		if (m->prof)
			profile_stall(m->prof, m->cycles);
	}
}

/* Every instruction in flash comes here (a skipped IT-conditional one does not): most are not
 * loads that may read flash, so this returns at once, with nothing to save or restore. */
static void on_flash_insn(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
	struct machine *m = user;
	(void)uc, (void)size;
	uint32_t half = ((uint32_t)address & m->flash_mask) >> 1;
	if (m->load_bits[half >> 3] & 1u << (half & 7))
		flash_load(m, half);
}

/* Flash wait states are on: a code hook on flash for the loads, then every block translated and
 * priced again so that the hook and the load table cover it. Code runs from 0x08000000 (the
 * vectors point there), not from the boot alias at 0, which gets no hook. */
int hook_flash(struct machine *m)
{
	uc_hook h;
	m->load_at = calloc(m->chip->flash_size / 2, sizeof *m->load_at);
	m->load_bits = calloc(m->chip->flash_size / 16, 1);
	m->flash_mask = m->chip->flash_size - 1;
	if (!m->load_at || !m->load_bits ||
	    uc_hook_add(m->uc, &h, UC_HOOK_CODE, on_flash_insn, m, FLASH_BASE,
			FLASH_BASE + m->chip->flash_size - 1) != UC_ERR_OK)
		return -1;
	m->flash_hooked = true;
	memset(m->cache, 0, (1u << COST_CACHE_BITS) * sizeof *m->cache);
	m->fetch_used = 0;
	uc_ctl_flush_tb(m->uc);
	machine_schedule(m);
	return 0;
}

/* Operand-dependent UDIV/SDIV cost: a code hook on just the division instructions. */
static void on_div(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
	struct div_hook *d = user;
	struct machine *m = d->m;
	(void)uc, (void)address, (void)size;
	if (d->site.cond != ARM_CC_AL && !timing_cond_holds(d->site.cond, reg(m, UC_ARM_REG_XPSR)))
		return;
	uint32_t n = reg(m, core_regs[d->site.rn]), dv = reg(m, core_regs[d->site.rm]);
	m->cycles += timing_div(n, dv, d->site.is_signed) - TIMING_DIV_BASE;
	if (m->prof)
		profile_stall(m->prof, m->cycles);
}

int add_div_hooks(struct machine *m, const struct block_timing *bt)
{
	for (uint32_t i = 0; i < bt->ndivs; i++) {
		if (div_hooked(m, bt->divs[i].addr))
			continue;
		if (m->ndivs == m->cap_divs) {
			m->cap_divs = m->cap_divs ? 2 * m->cap_divs : 16;
			m->divs = realloc(m->divs, m->cap_divs * sizeof *m->divs);
		}
		struct div_hook *d = calloc(1, sizeof *d);
		d->m = m;
		d->site = bt->divs[i];
		if (uc_hook_add(m->uc, &d->handle, UC_HOOK_CODE, on_div, d, d->site.addr,
				d->site.addr) != UC_ERR_OK) {
			free(d);
			return -1;
		}
		m->divs[m->ndivs++] = d;
	}
	uc_ctl_remove_cache(m->uc, bt->addr, bt->addr + bt->size);
	return 0;
}
