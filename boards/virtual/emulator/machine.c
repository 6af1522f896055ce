/* Unicorn facts this file is built on (Unicorn 2.1.4, Cortex-M4 model, checked by experiment):
 * - Inside a uc_mmio_map callback the PC register holds the start of the current translation
 *   block, not the accessing instruction; the other registers hold their values before it
 *   (TCG writes them back before a memory access). So the registers usually tell which of the
 *   block's loads and stores made the access, and a cycle-counter read is answered in place.
 *   When they do not, uc_emu_stop() called from the callback abandons the access: emulation
 *   stops with PC exactly at the accessing instruction, and restarting there replays it. We
 *   then find the instruction in the block, compute the time before it, replay with it armed.
 *   Inside an IT block the stop is deferred to the end of the block, so such accesses are
 *   refused with an error rather than answered inexactly.
 * - uc_emu_stop() from the UC_HOOK_BLOCK callback stops before the block executes.
 * - There is no NVIC or exception model: the SysTick exception is stacked and unstacked here.
 *   The handler's "bx lr" to EXC_RETURN (0xFFFFFFF9) makes uc_emu_start fail with
 *   UC_ERR_EXCEPTION and PC = 0xFFFFFFF8 (an execute-never address); we unstack there. The core
 *   stays in Thread mode for Unicorn throughout, so it never runs its own exception return.
 * - The FPU works without a CPACR write; the real chip faults. We check CPACR ourselves when a
 *   block containing FP instructions is first priced.
 * - The UC_HOOK_MEM_INVALID callback sees the exact PC.
 * - Taint tracking (--taint) adds a UC_HOOK_CODE on every instruction and a second UC_HOOK_BLOCK.
 *   Hooks run in the order they were added; once a callback calls uc_emu_stop(), the callbacks
 *   after it and the code hooks of the instructions that do not run are skipped, so the taint
 *   tracker sees a block stopped by the timing hook only when it runs again. Unicorn does not
 *   call the code hook of an IT-block instruction whose condition fails. */
#include "machine.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flash_art.h"
#include "profile.h"
#include "taint.h"

#define CACHE_MASK ((1u << COST_CACHE_BITS) - 1)
#define FETCH_POOL_SIZE (1u << 20)
#define ACCESS_CACHE_MASK ((1u << ACCESS_CACHE_BITS) - 1)
#define SYSTICK_EXCEPTION 15
#define EXC_RETURN_BASIC 0xfffffff9u  /* Thread mode, main stack, basic frame */
#define EXC_RETURN_FP 0xffffffe9u     /* ... extended (FP) frame */
#define CONTROL_SPSEL (1u << 1)
#define CONTROL_FPCA (1u << 2)
#define XPSR_ALIGN (1u << 9)
#define XPSR_IT_BITS 0x0600fc00u      /* IT[1:0] in bits 26:25, IT[7:2] in bits 15:10 */
#define UNTIL_NEVER 0xffffffffu

struct div_hook {
	struct machine *m;
	struct div_site site;
	uc_hook handle;
};

static const int core_regs[16] = {
	UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_R3, UC_ARM_REG_R4, UC_ARM_REG_R5,
	UC_ARM_REG_R6, UC_ARM_REG_R7, UC_ARM_REG_R8, UC_ARM_REG_R9, UC_ARM_REG_R10, UC_ARM_REG_R11,
	UC_ARM_REG_R12, UC_ARM_REG_SP, UC_ARM_REG_LR, UC_ARM_REG_PC,
};

static uint32_t reg(struct machine *m, int r)
{
	uint32_t v = 0;
	uc_reg_read(m->uc, r, &v);
	return v;
}

static void set_reg(struct machine *m, int r, uint32_t v)
{
	uc_reg_write(m->uc, r, &v);
}

static void machine_stop(struct machine *m, enum stop_reason why)
{
	if (m->stop == STOP_NONE || why == STOP_FAIL)
		m->stop = why;
	uc_emu_stop(m->uc);
}

/* Stops with "vboard: error: <what> (pc=...)". */
static void machine_fail(struct machine *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void machine_fail(struct machine *m, const char *fmt, ...)
{
	if (m->stop == STOP_FAIL)
		return; /* keep the first error */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->fail_msg, sizeof m->fail_msg, fmt, ap);
	va_end(ap);
	machine_stop(m, STOP_FAIL);
}

/* Recomputes next_event after a change of SysTick configuration or the cycle limit. */
static void machine_schedule(struct machine *m)
{
	uint64_t next = m->max_cycles;
	if (!m->in_handler) {
		uint64_t tick = systick_pending(&m->board->systick) ? 0 : systick_next_event(&m->board->systick);
		if (tick < next)
			next = tick;
	}
	m->flash_timed = !m->flash_free && art_wait_states(m->art) > 0;
	if (m->resume || m->signal || (m->flash_timed && !m->flash_hooked))
		next = 0;
	m->next_event = next;
}

/* Prices the current block again (deterministically the same as when it was charged). */
static bool analyze_current(struct machine *m, struct block_timing *bt)
{
	uint8_t code[4096];
	const struct pipe_state *entry = m->blocks == m->resumed_block ? &m->resume_state : NULL;
	if (m->cur_size > sizeof code || uc_mem_read(m->uc, m->cur_addr, code, m->cur_size) ||
	    !timing_analyze(m->cs, code, m->cur_size, m->cur_addr, entry, bt)) {
		machine_fail(m, "cannot analyse the block at address 0x%08x", m->cur_addr);
		return false;
	}
	return true;
}

/* Model time before an instruction whose static cost to the end of the block is `suffix`, with
 * SysTick brought up to it. True if the SysTick exception is then taken before the instruction. */
static bool time_before(struct machine *m, uint32_t suffix, uint64_t *now)
{
	*now = m->cycles - suffix;
	systick_advance(&m->board->systick, *now);
	return systick_pending(&m->board->systick) && !m->in_handler &&
	       !(reg(m, UC_ARM_REG_PRIMASK) & 1);
}

/* The access map of the block now running. A resumed block's is rebuilt each time: its costs
 * depend on the pipeline state it resumed with. */
static const struct access_map *current_access_map(struct machine *m)
{
	bool resumed = m->blocks == m->resumed_block;
	struct access_map *map = resumed ? &m->resumed_map
				 : &m->access_cache[(m->cur_addr >> 1) & ACCESS_CACHE_MASK];
	if (!resumed && map->addr == m->cur_addr && map->size == m->cur_size)
		return map;
	struct block_timing *bt = m->bt;
	if (!analyze_current(m, bt))
		return NULL;
	map->addr = m->cur_addr;
	map->size = m->cur_size;
	map->it_mem = bt->it_mem;
	map->nsites = 0;
	for (uint32_t i = 0; i < bt->ninsns && map->nsites <= ACCESS_SITES_MAX; i++) {
		if (!bt->insn[i].mem)
			continue;
		if (map->nsites < ACCESS_SITES_MAX)
			map->site[map->nsites] = (struct access_site){bt->insn[i].access,
								   timing_suffix(bt, (int)i)};
		map->nsites++;
	}
	return map;
}

/* Whether `site` can have made the peripheral access in progress, judged from the registers as
 * they are now. For the instruction that made it they are exact (Unicorn writes every register
 * back before an MMIO callback; only the PC lags), so it always can. */
static bool may_have_made_access(struct machine *m, const struct access_span *site)
{
	if (site->dir == ACCESS_UNKNOWN)
		return true;
	if (site->dir != (m->access_write ? ACCESS_STORE : ACCESS_LOAD))
		return false;
	uint32_t start = (uint32_t)site->offset;
	if (site->base >= 0)
		start += reg(m, core_regs[site->base]);
	if (site->index >= 0)
		start += reg(m, core_regs[site->index]) << site->shift;
	return m->access_addr - start < site->bytes || start - m->access_addr < m->access_size;
}

/* The site of the current block making the access in progress, or -1 if more than one can be.
 * Those before the last one found in this run of the block have run. */
static int accessing_site(struct machine *m, const struct access_map *map)
{
	if (map->nsites > ACCESS_SITES_MAX)
		return -1;
	uint32_t from = 0;
	if (m->found_block == m->blocks)
		from = (uint32_t)m->found_site + (map->site[m->found_site].span.single ? 1 : 0);
	int found = -1;
	for (uint32_t i = from; i < map->nsites; i++) {
		if (!may_have_made_access(m, &map->site[i].span))
			continue;
		if (found >= 0)
			return -1;
		found = (int)i;
	}
	return found;
}

/* Exact model time of the instruction now accessing a time-dependent register. When the
 * registers tell which instruction of the block it is, the time comes from the block's costs in
 * place. Returns false when the access must be abandoned: the instruction is ambiguous or an
 * exception comes first, so the emulator stops, locates the instruction and replays it
 * (exact_access). */
static bool machine_access_time(struct machine *m, uint64_t *now)
{
	if (m->armed && m->cur_addr == m->armed_pc) {
		m->armed = false;
		*now = m->armed_time;
		m->found_block = m->blocks;
		m->found_site = 0;
		return true;
	}
	const struct access_map *map = current_access_map(m);
	if (!map)
		return false;
	if (map->it_mem) {
		machine_fail(m, "cycle-counter access in a block with IT-conditional loads/stores "
				"(not supported) at address 0x%08x", m->cur_addr);
		return false;
	}
	int site = accessing_site(m, map);
	if (site >= 0 && !time_before(m, map->site[site].suffix, now)) {
		m->found_block = m->blocks;
		m->found_site = site;
		machine_schedule(m);
		return true;
	}
	machine_stop(m, STOP_EXACT_ACCESS);
	return false;
}

/* ---- block hook: the timing hot path ---- */

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

/* Execution goes on at `addr` after a jump in model time (exception entry or return, reset, a
 * resumed block): no refill to charge, nothing in the pipeline to pipeline with. */
static void continue_at(struct machine *m, uint32_t addr)
{
	m->cur_addr = addr;
	m->cur_size = 0;
	m->cur_exit = (struct pipe_state){0};
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

static bool in_flash(uint32_t addr)
{
	return addr < FLASH_SIZE || addr - FLASH_BASE < FLASH_SIZE;
}

/* The flash lines of an analysed block, as the ART numbers them (nothing outside flash). */
static uint32_t flash_fetches(const struct block_timing *bt, struct fetch_point *out)
{
	if (!in_flash(bt->addr))
		return 0;
	for (uint32_t i = 0; i < bt->nfetches; i++)
		out[i] = (struct fetch_point){
			art_line((bt->fetch[i].line * TIMING_LINE_BYTES) & (FLASH_SIZE - 1)),
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
	*e = cost_entry_of(bt, m->fetch_used, flash_fetches(bt, &m->fetch_pool[m->fetch_used]));
	m->fetch_used += e->nfetches;
	return e;
}

/* Records the loads of a flash block whose address may lie in flash (not SP-based). */
static void note_flash_loads(struct machine *m, const struct block_timing *bt)
{
	if (!m->flash_hooked || !in_flash(bt->addr))
		return;
	for (uint32_t i = 0; i < bt->ninsns; i++) {
		const struct access_span *span = &bt->insn[i].access;
		uint32_t half = (bt->insn[i].addr & (FLASH_SIZE - 1)) >> 1;
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
		struct cost_entry resumed = cost_entry_of(bt, 0, flash_fetches(bt, fetches));
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
	systick_advance(&m->board->systick, m->cycles);
	if (systick_pending(&m->board->systick) && !m->in_handler && !(reg(m, UC_ARM_REG_PRIMASK) & 1)) {
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

/* A load that may read flash is about to execute (a skipped IT-conditional one does not come
 * here): its wait for the D-Code side of the ART. The registers are as before it runs. */
static void on_flash_insn(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
	struct machine *m = user;
	(void)uc, (void)size;
	uint32_t half = (uint32_t)(address & (FLASH_SIZE - 1)) >> 1;
	if (!(m->load_bits[half >> 3] & 1u << (half & 7)) || !m->flash_timed)
		return;
	uint32_t site = m->load_at[half];
	const struct access_span *s = &m->load_spans[site - 1];
	uint32_t at = (uint32_t)s->offset;
	if (s->base >= 0)
		at += reg(m, core_regs[s->base]);
	if (s->index >= 0)
		at += reg(m, core_regs[s->index]) << s->shift;
	if (in_flash(at)) {
		m->cycles += art_load(m->art, at & (FLASH_SIZE - 1), s->bytes);
		if (m->prof)
			profile_stall(m->prof, m->cycles);
	}
}

/* Flash wait states are on: a code hook on flash for the loads, then every block translated and
 * priced again so that the hook and the load table cover it. Code runs from 0x08000000 (the
 * vectors point there), not from the boot alias at 0, which gets no hook. */
static int hook_flash(struct machine *m)
{
	uc_hook h;
	m->load_at = calloc(FLASH_SIZE / 2, sizeof *m->load_at);
	m->load_bits = calloc(FLASH_SIZE / 16, 1);
	if (!m->load_at || !m->load_bits ||
	    uc_hook_add(m->uc, &h, UC_HOOK_CODE, on_flash_insn, m, FLASH_BASE,
			FLASH_BASE + FLASH_SIZE - 1) != UC_ERR_OK)
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

static int add_div_hooks(struct machine *m, const struct block_timing *bt)
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

static bool on_invalid(uc_engine *uc, uc_mem_type type, uint64_t address, int size,
		       int64_t value, void *user)
{
	struct machine *m = user;
	uint32_t addr = (uint32_t)address;
	const char *what = "access to";
	(void)uc, (void)size, (void)value;
	switch (type) {
	case UC_MEM_READ_UNMAPPED: what = "read from"; break;
	case UC_MEM_WRITE_UNMAPPED: what = "write to"; break;
	case UC_MEM_FETCH_UNMAPPED: what = "instruction fetch from"; break;
	case UC_MEM_WRITE_PROT: what = "write to read-only"; break;
	case UC_MEM_FETCH_PROT: what = "instruction fetch from non-executable"; break;
	default: break;
	}
	const char *name = board_peripheral_name(addr);
	if (name)
		machine_fail(m, "%s unemulated peripheral %s at address 0x%08x", what, name, addr);
	else if (addr >= FLASH_BASE && addr < FLASH_BASE + FLASH_SIZE)
		machine_fail(m, "%s flash at address 0x%08x", what, addr);
	else
		machine_fail(m, "%s %s at address 0x%08x", what,
			     type == UC_MEM_WRITE_PROT || type == UC_MEM_FETCH_PROT ? "memory"
										: "unmapped memory",
			     addr);
	return false;
}

/* Unicorn 2.1.4 restores the state of the accessing instruction, its IT state included, before it
 * calls the TLB fill hook (cpu_restore_state). QEMU's code keeps the IT state in env at zero all
 * through a block (each instruction carries its own condition) and writes it back only when a block
 * ends inside an IT block; so an IT block's access that missed the TLB left its IT state in env,
 * and the next block ran its first instructions as conditional ones (a branch not taken, a return
 * into the stack's paint: vboard-it-tlb-miss). Zero again, as QEMU has it. */
static void clear_it_state(struct machine *m)
{
	uint32_t epsr = reg(m, UC_ARM_REG_EPSR);
	if (epsr & XPSR_IT_BITS)
		set_reg(m, UC_ARM_REG_EPSR, epsr & ~XPSR_IT_BITS);
}

/* The TLB filled by this hook (unicorn's virtual TLB), identity-mapped, with each region's own
 * rights: unicorn 2.1.4 takes the rights of the Cortex-M default memory map instead, where SRAM
 * and CCM are executable, and keeps every store to an executable page on its slow path (it never
 * clears TLB_NOTDIRTY there), which made the emulator four times slower. So code runs from flash
 * only; anything but SRAM and CCM gets all rights here and meets its mapping's own checks and
 * the invalid-access hook. */
static bool on_tlb_fill(uc_engine *uc, uint64_t address, uc_mem_type type, uc_tlb_entry *result, void *user)
{
	struct machine *m = user;
	(void)uc;
	bool ram = (address >= SRAM_BASE && address - SRAM_BASE < SRAM_SIZE) ||
		   (address >= CCM_BASE && address - CCM_BASE < CCM_SIZE);
	if (ram && type == UC_MEM_FETCH) {
		machine_fail(m, "instruction fetch from %s at address 0x%08x: the virtual board runs code "
				"from flash only", address >= SRAM_BASE ? "SRAM" : "CCM", (uint32_t)address);
		return false;
	}
	result->paddr = address;
	result->perms = ram ? UC_PROT_READ | UC_PROT_WRITE : UC_PROT_ALL;
	if (type != UC_MEM_FETCH) /* a fetch's fill comes while a block is translated: nothing restored */
		clear_it_state(m);
	return true;
}

/* The invalid-access hook on everything but SRAM and CCM, where every access is valid (unicorn
 * 2.1.4 also keeps each store to a page any memory hook covers on its slow path), and the TLB
 * filled by on_tlb_fill. */
static int hook_memory(struct machine *m)
{
	static const uint64_t gaps[][2] = {
		{0, CCM_BASE - 1},
		{CCM_BASE + CCM_SIZE, SRAM_BASE - 1},
		{SRAM_BASE + SRAM_SIZE, UINT32_MAX},
	};
	for (size_t i = 0; i < sizeof gaps / sizeof gaps[0]; i++) {
		uc_hook h;
		if (uc_hook_add(m->uc, &h, UC_HOOK_MEM_INVALID, on_invalid, m, gaps[i][0], gaps[i][1]) !=
		    UC_ERR_OK)
			return -1;
	}
	uc_hook h;
	if (uc_ctl_tlb_mode(m->uc, UC_TLB_VIRTUAL) != UC_ERR_OK ||
	    uc_hook_add(m->uc, &h, UC_HOOK_TLB_FILL, on_tlb_fill, m, 1, 0) != UC_ERR_OK)
		return -1;
	return 0;
}

/* ---- SysTick exception entry and return (ARMv7-M ARM B1.5.6, B1.5.8) ---- */

static int write_word(struct machine *m, uint32_t addr, uint32_t v)
{
	return uc_mem_write(m->uc, addr, &v, 4) == UC_ERR_OK ? 0 : -1;
}

static int read_word(struct machine *m, uint32_t addr, uint32_t *v)
{
	return uc_mem_read(m->uc, addr, v, 4) == UC_ERR_OK ? 0 : -1;
}

static int exception_entry(struct machine *m, uint32_t return_pc)
{
	uint32_t control = reg(m, UC_ARM_REG_CONTROL);
	if (control & CONTROL_SPSEL) {
		machine_fail(m, "SysTick exception on the process stack (not supported) at address "
				"0x%08x", return_pc);
		return -1;
	}
	bool fp = control & CONTROL_FPCA;
	uint32_t sp = reg(m, UC_ARM_REG_SP);
	uint32_t framesize = fp ? 0x68 : 0x20;
	bool stkalign = scs_stack_align8(&m->board->scs);
	bool align = stkalign && (sp & 4);
	uint32_t frame = (sp - framesize) & (stkalign ? ~4u : ~0u);
	uint32_t words[8] = {
		reg(m, UC_ARM_REG_R0), reg(m, UC_ARM_REG_R1), reg(m, UC_ARM_REG_R2),
		reg(m, UC_ARM_REG_R3), reg(m, UC_ARM_REG_R12), reg(m, UC_ARM_REG_LR), return_pc,
		(reg(m, UC_ARM_REG_XPSR) & ~0x1ffu) | (align ? XPSR_ALIGN : 0),
	};
	int err = 0;
	for (int i = 0; i < 8; i++)
		err |= write_word(m, frame + 4 * (uint32_t)i, words[i]);
	if (fp) { /* lazy stacking reserves this space; storing it eagerly is equivalent */
		for (int i = 0; i < 16; i++)
			err |= write_word(m, frame + 0x20 + 4 * (uint32_t)i, reg(m, UC_ARM_REG_S0 + i));
		err |= write_word(m, frame + 0x60, reg(m, UC_ARM_REG_FPSCR));
	}
	uint32_t handler;
	err |= read_word(m, scs_vector_table(&m->board->scs) + 4 * SYSTICK_EXCEPTION, &handler);
	if (err || !(handler & 1)) {
		machine_fail(m, "bad SysTick exception entry (stack 0x%08x, vector 0x%08x) at address "
				"0x%08x", frame, handler, return_pc);
		return -1;
	}
	m->exc_return = fp ? EXC_RETURN_FP : EXC_RETURN_BASIC;
	if (m->taint)
		taint_exception_entry(m->taint, frame, fp);
	set_reg(m, UC_ARM_REG_SP, frame);
	set_reg(m, UC_ARM_REG_LR, m->exc_return);
	set_reg(m, UC_ARM_REG_CONTROL, control & ~CONTROL_FPCA);
	set_reg(m, UC_ARM_REG_XPSR, reg(m, UC_ARM_REG_XPSR) & 0xf8000000u); /* flags kept, no IT */
	set_reg(m, UC_ARM_REG_PC, handler & ~1u);
	systick_taken(&m->board->systick);
	m->in_handler = true;
	m->cycles += TIMING_EXC_ENTRY;
	continue_at(m, handler & ~1u); /* the entry cost includes fetching the handler */
	machine_schedule(m);
	return 0;
}

static int exception_return(struct machine *m)
{
	uint32_t frame = reg(m, UC_ARM_REG_SP);
	uint32_t w[8];
	int err = 0;
	for (int i = 0; i < 8; i++)
		err |= read_word(m, frame + 4 * (uint32_t)i, &w[i]);
	bool fp = m->exc_return == EXC_RETURN_FP;
	if (fp) {
		for (int i = 0; i < 16; i++) {
			uint32_t s;
			err |= read_word(m, frame + 0x20 + 4 * (uint32_t)i, &s);
			set_reg(m, UC_ARM_REG_S0 + i, s);
		}
		uint32_t fpscr;
		err |= read_word(m, frame + 0x60, &fpscr);
		set_reg(m, UC_ARM_REG_FPSCR, fpscr);
	}
	if (err) {
		machine_fail(m, "bad exception return frame at address 0x%08x", frame);
		return -1;
	}
	static const int regs[6] = {UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2,
				    UC_ARM_REG_R3, UC_ARM_REG_R12, UC_ARM_REG_LR};
	for (int i = 0; i < 6; i++)
		set_reg(m, regs[i], w[i]);
	uint32_t sp = frame + (fp ? 0x68 : 0x20) + ((w[7] & XPSR_ALIGN) ? 4 : 0);
	set_reg(m, UC_ARM_REG_SP, sp);
	set_reg(m, UC_ARM_REG_XPSR, w[7] & ~XPSR_ALIGN);
	uint32_t control = reg(m, UC_ARM_REG_CONTROL);
	set_reg(m, UC_ARM_REG_CONTROL, fp ? control | CONTROL_FPCA : control & ~CONTROL_FPCA);
	set_reg(m, UC_ARM_REG_PC, w[6]);
	m->in_handler = false;
	m->cycles += TIMING_EXC_RETURN;
	continue_at(m, w[6] & ~1u);
	if (m->prof)
		profile_exception_return(m->prof, m->cycles);
	if (m->taint)
		taint_exception_return(m->taint);
	machine_schedule(m);
	return 0;
}

/* ---- the devices' and the profiler's view of the core ---- */

static bool core_access_time(void *m, uint64_t *now)
{
	return machine_access_time(m, now);
}

static void core_fail(void *m, const char *message)
{
	machine_fail(m, "%s", message);
}

static void core_stop(void *m, enum device_stop why)
{
	machine_stop(m, why == DEVICE_STOP_INPUT_EOF ? STOP_INPUT_EOF : STOP_EVENT);
}

static void core_reschedule(void *m)
{
	machine_schedule(m);
}

static uint32_t core_link_register(void *m)
{
	return reg(m, UC_ARM_REG_LR);
}

static bool core_read_word(void *m, uint32_t addr, uint32_t *value)
{
	return read_word(m, addr, value) == 0;
}

static uint32_t core_register(void *m, int n)
{
	return reg(m, n == TAINT_CORE_XPSR ? UC_ARM_REG_XPSR : core_regs[n]);
}

static uint32_t core_code(void *core, uint32_t addr, uint8_t *buf, uint32_t len)
{
	struct machine *m = core;
	if (addr - FLASH_BASE < FLASH_SIZE) {
		uint32_t n = FLASH_SIZE - (addr - FLASH_BASE) < len ? FLASH_SIZE - (addr - FLASH_BASE) : len;
		memcpy(buf, m->flash + (addr - FLASH_BASE), n);
		return n;
	}
	for (; len >= 2; len -= 2) /* elsewhere (SRAM): as much as is mapped */
		if (uc_mem_read(m->uc, addr, buf, len) == UC_ERR_OK)
			return len;
	return 0;
}

/* ---- taint tracking (--taint) ---- */

static void on_taint_block(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
	struct machine *m = user;
	(void)uc, (void)size;
	taint_block(m->taint, (uint32_t)address);
}

static void on_taint_insn(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
	struct machine *m = user;
	(void)uc, (void)size;
	if (!taint_insn(m->taint, (uint32_t)address))
		machine_fail(m, "cannot decode the instruction at address 0x%08x for taint tracking",
			     (uint32_t)address);
}

static uint64_t mmio_read(uc_engine *uc, uint64_t off, unsigned size, void *user)
{
	const struct mmio_window *w = user;
	(void)uc;
	w->m->access_addr = w->base + (uint32_t)off;
	w->m->access_size = size;
	w->m->access_write = false;
	return board_read(w->m->board, w->base + (uint32_t)off, size);
}

static void mmio_write(uc_engine *uc, uint64_t off, unsigned size, uint64_t value, void *user)
{
	const struct mmio_window *w = user;
	(void)uc;
	w->m->access_addr = w->base + (uint32_t)off;
	w->m->access_size = size;
	w->m->access_write = true;
	board_write(w->m->board, w->base + (uint32_t)off, size, (uint32_t)value);
}

static int map_devices(struct machine *m)
{
	const struct device_core core = {m, core_access_time, core_fail, core_stop, core_reschedule,
					 &m->signal};
	m->board = board_new(&core, m->uart);
	m->art = &m->board->flash.art;
	for (size_t i = 0; i < BOARD_WINDOWS; i++) {
		const struct device_window *w = m->board->window[i].regs;
		m->mmio[i] = (struct mmio_window){m, w->base};
		uc_err e = uc_mmio_map(m->uc, w->base, w->size, mmio_read, &m->mmio[i], mmio_write,
				       &m->mmio[i]);
		if (e != UC_ERR_OK) {
			fprintf(stderr, "vboard: error: cannot map %s: %s\n", w->name, uc_strerror(e));
			return -1;
		}
	}
	return 0;
}

/* ---- set-up ---- */

int machine_init(struct machine *m, struct elf_image *elf, struct uart_host *uart,
		 uint64_t max_cycles, struct profile *prof, struct taint *taint)
{
	memset(m, 0, sizeof *m);
	m->elf = elf;
	m->uart = uart;
	m->prof = prof;
	m->taint = taint;
	m->max_cycles = max_cycles;
	m->resumed_block = UINT64_MAX;
	m->found_block = UINT64_MAX;
	m->cache = calloc(1u << COST_CACHE_BITS, sizeof *m->cache);
	m->fetch_pool = calloc(FETCH_POOL_SIZE, sizeof *m->fetch_pool);
	m->access_cache = calloc(1u << ACCESS_CACHE_BITS, sizeof *m->access_cache);
	m->bt = malloc(sizeof *m->bt);
	m->flash = malloc(FLASH_SIZE);
	memset(m->flash, 0xff, FLASH_SIZE); /* erased flash */
	if (!timing_open(&m->cs)) {
		fprintf(stderr, "vboard: error: cannot initialise capstone\n");
		return -1;
	}
	uc_err e = uc_open(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS, &m->uc);
	if (e == UC_ERR_OK)
		e = uc_ctl_set_cpu_model(m->uc, UC_CPU_ARM_CORTEX_M4);
	/* flash at 0x08000000 and its boot alias at 0: one buffer, mapped twice; read-only */
	if (e == UC_ERR_OK)
		e = uc_mem_map_ptr(m->uc, FLASH_BASE, FLASH_SIZE, UC_PROT_READ | UC_PROT_EXEC, m->flash);
	if (e == UC_ERR_OK)
		e = uc_mem_map_ptr(m->uc, 0, FLASH_SIZE, UC_PROT_READ | UC_PROT_EXEC, m->flash);
	if (e == UC_ERR_OK) /* no instruction fetch from SRAM either: on_tlb_fill says why */
		e = uc_mem_map(m->uc, SRAM_BASE, SRAM_SIZE, UC_PROT_READ | UC_PROT_WRITE);
	if (e == UC_ERR_OK) /* CCM is on the data bus only: no instruction fetch */
		e = uc_mem_map(m->uc, CCM_BASE, CCM_SIZE, UC_PROT_READ | UC_PROT_WRITE);
	if (e == UC_ERR_OK)
		e = uc_mem_map(m->uc, SYSTEM_PAGE_BASE, SYSTEM_PAGE_SIZE, UC_PROT_READ);
	if (e != UC_ERR_OK) {
		fprintf(stderr, "vboard: error: unicorn set-up failed: %s\n", uc_strerror(e));
		return -1;
	}
	if (map_devices(m))
		return -1;

	for (size_t i = 0; i < elf->nsegs; i++) {
		const struct elf_segment *s = &elf->segs[i];
		uint64_t end = (uint64_t)s->paddr + s->filesz;
		if (s->paddr >= FLASH_BASE && end <= FLASH_BASE + FLASH_SIZE) {
			memcpy(m->flash + (s->paddr - FLASH_BASE), s->data, s->filesz);
		} else if (((s->paddr >= SRAM_BASE && end <= SRAM_BASE + SRAM_SIZE) ||
			    (s->paddr >= CCM_BASE && end <= CCM_BASE + CCM_SIZE))) {
			uc_mem_write(m->uc, s->paddr, s->data, s->filesz);
		} else {
			fprintf(stderr, "vboard: error: ELF segment at address 0x%08x (%u bytes) is "
					"outside flash, SRAM and CCM\n", s->paddr, s->filesz);
			return -1;
		}
	}

	uc_hook h;
	if (uc_hook_add(m->uc, &h, UC_HOOK_BLOCK, on_block, m, 1, 0) != UC_ERR_OK ||
	    hook_memory(m)) {
		fprintf(stderr, "vboard: error: cannot install hooks\n");
		return -1;
	}
	if (prof && profile_attach(prof, &(struct profile_core){m, core_link_register, core_read_word}))
		return -1;
	if (taint) {
		if (uc_hook_add(m->uc, &h, UC_HOOK_BLOCK, on_taint_block, m, 1, 0) != UC_ERR_OK ||
		    uc_hook_add(m->uc, &h, UC_HOOK_CODE, on_taint_insn, m, 1, 0) != UC_ERR_OK) {
			fprintf(stderr, "vboard: error: cannot install the taint hooks\n");
			return -1;
		}
		if (taint_attach(taint, &(struct taint_core){m, core_register, core_code}))
			return -1;
	}

	/* Reset: SP from vector 0, PC from vector 1 (boot from flash, aliased at 0). */
	uint32_t sp = 0, pc = 0;
	memcpy(&sp, m->flash, 4);
	memcpy(&pc, m->flash + 4, 4);
	if (!(pc & 1)) {
		fprintf(stderr, "vboard: error: reset vector 0x%08x has no Thumb bit at address "
				"0x00000004 (pc=0x%08x)\n", pc, pc);
		return -1;
	}
	set_reg(m, UC_ARM_REG_SP, sp);
	set_reg(m, UC_ARM_REG_LR, 0xffffffffu); /* ARMv7-M TakeReset: a reset handler that returns faults */
	set_reg(m, UC_ARM_REG_PC, pc & ~1u);
	continue_at(m, pc & ~1u); /* reset fetch is part of the start-up, not a taken branch */
	machine_schedule(m);
	return 0;
}

void machine_set_board_timing(struct machine *m, bool flash_free, uint32_t jitter)
{
	m->flash_free = flash_free;
	machine_schedule(m);
	/* Seeded by the unique ID: each stand-in board has noise of its own, the same on every start. */
	uint8_t uid[12] = {0};
	uint64_t seed = 0xcbf29ce484222325ull;
	uc_mem_read(m->uc, UNIQUE_ID_BASE, uid, sizeof uid);
	for (int i = 0; i < 12; i++)
		seed = (seed ^ uid[i]) * 0x100000001b3ull;
	cycle_jitter_set(&m->board->jitter, jitter, seed);
}

void machine_remove_hse(struct machine *m)
{
	rcc_remove_hse(&m->board->rcc);
}

int machine_set_unique_id(struct machine *m, const uint32_t words[3])
{
	uint8_t bytes[12];
	for (int i = 0; i < 12; i++)
		bytes[i] = (uint8_t)(words[i / 4] >> (8 * (i % 4)));
	if (uc_mem_write(m->uc, UNIQUE_ID_BASE, bytes, sizeof bytes) != UC_ERR_OK) {
		fprintf(stderr, "vboard: error: cannot set the unique ID\n");
		return -1;
	}
	return 0;
}

void machine_free(struct machine *m)
{
	for (uint32_t i = 0; i < m->ndivs; i++)
		free(m->divs[i]);
	free(m->divs);
	if (m->uc)
		uc_close(m->uc);
	board_free(m->board);
	cs_close(&m->cs);
	free(m->flash);
	free(m->bt);
	free(m->cache);
	free(m->fetch_pool);
	free(m->load_at);
	free(m->load_bits);
	free(m->load_spans);
	free(m->access_cache);
}

/* ---- run loop ---- */

static void describe_insn(struct machine *m, uint32_t pc, char *out, size_t len)
{
	uint8_t code[4];
	cs_insn *in = NULL;
	snprintf(out, len, "unknown instruction");
	if (uc_mem_read(m->uc, pc, code, 4) == UC_ERR_OK &&
	    cs_disasm(m->cs, code, 4, pc, 1, &in) == 1)
		snprintf(out, len, "'%.20s %.60s'", in->mnemonic, in->op_str);
	if (in)
		cs_free(in, 1);
}

/* Handles an exact access stop: the PC is the accessing instruction; time it and replay. */
static int exact_access(struct machine *m, uint32_t pc)
{
	struct block_timing *bt = m->bt;
	if (!analyze_current(m, bt))
		return -1;
	int idx = timing_find(bt, pc);
	if (idx < 0) {
		machine_fail(m, "internal: accessing instruction not in its block at address 0x%08x", pc);
		return -1;
	}
	m->replayed_accesses++;
	uint64_t now;
	bool exception_first = time_before(m, timing_suffix(bt, idx), &now);
	m->cycles = now;
	if (exception_first)
		return exception_entry(m, pc); /* the access replays after return */
	m->armed = true;
	m->armed_pc = pc;
	m->armed_time = now;
	m->resume = true;
	m->resume_state = bt->insn[idx].before;
	machine_schedule(m);
	return 0;
}

/* WFI sleeps until the next SysTick exception: model time jumps to it (the block hook then
 * takes the exception). Without an enabled interrupt the core would sleep forever. */
static int wait_for_interrupt(struct machine *m, uint32_t pc)
{
	uint16_t insn = 0;
	uc_mem_read(m->uc, pc - 2, &insn, 2);
	if (insn != 0xbf30) {
		char what[100];
		describe_insn(m, pc, what, sizeof what);
		machine_fail(m, "emulation stopped unexpectedly before %s at address 0x%08x", what, pc);
		return -1;
	}
	uint64_t tick = systick_next_event(&m->board->systick);
	bool pending = systick_pending(&m->board->systick);
	if (!pending && (tick == UINT64_MAX || m->in_handler)) {
		machine_fail(m, "WFI with no interrupt that could wake the core at address 0x%08x",
			     pc - 2);
		return -1;
	}
	if (!pending && tick > m->cycles)
		m->cycles = tick;
	machine_schedule(m);
	return 0;
}

int machine_run(struct machine *m)
{
	for (;;) {
		m->stop = STOP_NONE;
		uint32_t start = reg(m, UC_ARM_REG_PC);
		uc_err err = uc_emu_start(m->uc, start | 1, UNTIL_NEVER, 0, 0);
		uint32_t pc = reg(m, UC_ARM_REG_PC);

		if (m->stop == STOP_FAIL) {
			uart_flush(m->uart);
			fprintf(stderr, "vboard: error: %s (pc=0x%08x)\n", m->fail_msg, pc);
			return 1;
		}
		if (err != UC_ERR_OK) {
			if (m->in_handler && (pc | 1) == (m->exc_return | 1)) {
				if (exception_return(m) == 0)
					continue;
			} else {
				char insn[100];
				describe_insn(m, pc, insn, sizeof insn);
				machine_fail(m, "%s (%s) at address 0x%08x", uc_strerror(err),
					     err == UC_ERR_EXCEPTION || err == UC_ERR_INSN_INVALID ?
						     insn : "fault", pc);
			}
			uart_flush(m->uart);
			fprintf(stderr, "vboard: error: %s (pc=0x%08x)\n", m->fail_msg, pc);
			return 1;
		}

		switch (m->stop) {
		case STOP_EXACT_ACCESS:
			if (exact_access(m, pc) == 0)
				continue;
			break;
		case STOP_FLASH_TIMING:
			if (hook_flash(m) == 0)
				continue;
			machine_fail(m, "cannot hook the loads from flash");
			break;
		case STOP_RETRANSLATE:
			if (add_div_hooks(m, m->pending_divs) == 0)
				continue;
			machine_fail(m, "cannot hook the division at address 0x%08x", pc);
			break;
		case STOP_EVENT:
			if (m->signal) {
				uart_flush(m->uart);
				fprintf(stderr, "vboard: stopped by signal %d at pc=0x%08x\n", m->signal, pc);
				return 0;
			}
			if (m->cycles >= m->max_cycles) {
				machine_fail(m, "cycle limit %llu exceeded at address 0x%08x",
					     (unsigned long long)m->max_cycles, pc);
				break;
			}
			if (exception_entry(m, pc) == 0)
				continue;
			break;
		case STOP_HALT:
			uart_flush(m->uart);
			fprintf(stderr, "vboard: halted at pc=0x%08x\n", pc);
			return 0;
		case STOP_INPUT_EOF:
			uart_flush(m->uart);
			fprintf(stderr, "vboard: end of uart input at pc=0x%08x\n", pc);
			return 0;
		case STOP_NONE: /* Unicorn returns after WFI with PC past it */
			if (wait_for_interrupt(m, pc) == 0)
				continue;
			break;
		case STOP_FAIL:
			break;
		}
		uart_flush(m->uart);
		fprintf(stderr, "vboard: error: %s (pc=0x%08x)\n", m->fail_msg, pc);
		return 1;
	}
}
