/* The exact model time of an access to a time-dependent register (SysTick, DEMCR, DWT CYCCNT).
 * Unicorn facts this file is built on:
 * - Inside a uc_mmio_map callback the PC register holds the start of the current translation
 *   block, not the accessing instruction; the other registers hold their values before it
 *   (TCG writes them back before a memory access). So the registers usually tell which of the
 *   block's loads and stores made the access, and a cycle-counter read is answered in place.
 *   When they do not, uc_emu_stop() called from the callback abandons the access: emulation
 *   stops with PC exactly at the accessing instruction, and restarting there replays it. We
 *   then find the instruction in the block, compute the time before it, replay with it armed.
 *   Inside an IT block the stop is deferred to the end of the block, so such accesses are
 *   refused with an error rather than answered inexactly. */
#include "machine_internal.h"

#define ACCESS_CACHE_MASK ((1u << ACCESS_CACHE_BITS) - 1)

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
	return exception_due_at(m, *now);
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
bool machine_access_time(struct machine *m, uint64_t *now)
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

int exact_access(struct machine *m, uint32_t pc)
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
