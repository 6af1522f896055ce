/* The profiler's and the taint tracker's view of the core (struct profile_core, struct
 * taint_core), and the taint tracker's hooks.
 * Unicorn facts this file is built on:
 * - Taint tracking (--taint) adds a UC_HOOK_CODE on the instructions it tracks (every one but
 *   the sealed leaves', none while it is idle) and a second UC_HOOK_BLOCK; its gate, a
 *   UC_HOOK_BLOCK added before the timing hooks, runs first on every block.
 * - Which instructions call a code hook is decided when a block is translated (the hook's range
 *   is checked then): a changed range takes effect once the translated code is flushed.
 *   Hooks run in the order they were added; once a callback calls uc_emu_stop(), the callbacks
 *   after it and the code hooks of the instructions that do not run are skipped, so the taint
 *   tracker sees a block stopped by the timing hook only when it runs again. Unicorn does not
 *   call the code hook of an IT-block instruction whose condition fails. */
#include "machine_internal.h"

#include <stdio.h>
#include <string.h>

#include "profile.h"
#include "taint.h"

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
	uint32_t flash_size = m->chip->flash_size;
	if (addr - FLASH_BASE < flash_size) {
		uint32_t n = flash_size - (addr - FLASH_BASE) < len ? flash_size - (addr - FLASH_BASE) : len;
		memcpy(buf, m->flash + (addr - FLASH_BASE), n);
		return n;
	}
	for (; len >= 2; len -= 2) /* elsewhere (SRAM): as much as is mapped */
		if (uc_mem_read(m->uc, addr, buf, len) == UC_ERR_OK)
			return len;
	return 0;
}

/* A flash load's wait follows its address only through the ART's data cache (which lines it
 * holds): without it, behind wait states, every load misses alike (art_load). */
static bool core_flash_load_timed(void *core)
{
	const struct machine *m = core;
	return m->flash_timed && (m->art->acr & FLASH_ACR_DCEN);
}

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

static void on_taint_gate(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
	struct machine *m = user;
	(void)uc, (void)size;
	if (taint_gate(m->taint, (uint32_t)address))
		machine_stop(m, STOP_TAINT_HOOKS);
}

int hook_taint_gate(struct machine *m)
{
	uc_hook h;
	return uc_hook_add(m->uc, &h, UC_HOOK_BLOCK, on_taint_gate, m, 1, 0) == UC_ERR_OK ? 0 : -1;
}

/* The code hook on every instruction but those of the sealed leaf functions (on none while the
 * tracker is idle); the translated code whose hooking changed goes, since Unicorn decides at
 * translation which instructions call a code hook. */
int rehook_taint(struct machine *m)
{
	uint32_t ranges[65][2];
	for (unsigned i = 0; i < m->ntaint_hooks; i++)
		uc_hook_del(m->uc, m->taint_hooks[i]);
	m->ntaint_hooks = taint_hooked_ranges(m->taint, ranges);
	for (unsigned i = 0; i < m->ntaint_hooks; i++)
		if (uc_hook_add(m->uc, &m->taint_hooks[i], UC_HOOK_CODE, on_taint_insn, m, ranges[i][0],
				ranges[i][1]) != UC_ERR_OK)
			return -1;
	uint32_t lo, hi;
	if (taint_changed_code(m->taint, &lo, &hi))
		uc_ctl_remove_cache(m->uc, lo, hi);
	else
		uc_ctl_flush_tb(m->uc);
	return 0;
}

/* Called once the timing hooks are in: the taint hooks run after them (see above). */
int attach_analyses(struct machine *m)
{
	uc_hook h;
	if (m->prof &&
	    profile_attach(m->prof, &(struct profile_core){m, core_link_register, core_read_word}))
		return -1;
	if (m->taint) {
		if (uc_hook_add(m->uc, &h, UC_HOOK_BLOCK, on_taint_block, m, 1, 0) != UC_ERR_OK ||
		    uc_hook_add(m->uc, &m->taint_hooks[0], UC_HOOK_CODE, on_taint_insn, m, 1, 0) != UC_ERR_OK) {
			fprintf(stderr, "vboard: error: cannot install the taint hooks\n");
			return -1;
		}
		m->ntaint_hooks = 1;
		if (taint_attach(m->taint, &(struct taint_core){m, core_register, core_code,
								 core_flash_load_timed, core_read_word}))
			return -1;
	}
	return 0;
}
