/* The emulated core of the virtual board: Unicorn set-up, the memory map with the devices'
 * windows, the devices' view of the core, and the run loop. Its other parts: machine_internal.h. */
#include "machine_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNTIL_NEVER 0xffffffffu

void machine_stop(struct machine *m, enum stop_reason why)
{
	if (m->stop == STOP_NONE || why == STOP_FAIL)
		m->stop = why;
	uc_emu_stop(m->uc);
}

void machine_fail(struct machine *m, const char *fmt, ...)
{
	if (m->stop == STOP_FAIL)
		return; /* keep the first error */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->fail_msg, sizeof m->fail_msg, fmt, ap);
	va_end(ap);
	machine_stop(m, STOP_FAIL);
}

void machine_schedule(struct machine *m)
{
	uint64_t next = m->max_cycles;
	if (!m->in_handler) {
		const struct systick *t = &m->board->systick;
		uint64_t tick = systick_pending(t) ? 0 : systick_next_event(t);
		if (tick < next)
			next = tick;
	}
	m->flash_timed = !m->flash_free && art_wait_states(m->art) > 0;
	if (m->resume || m->signal || m->native_recording || (m->flash_timed && !m->flash_hooked))
		next = 0;
	m->next_event = next;
}

/* ---- the devices' view of the core ---- */

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
	m->board = board_new(&core, m->uart, m->chip);
	m->art = &m->board->flash.art;
	for (size_t i = 0; i < m->board->nwindows; i++) {
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
		 const struct chip *chip, uint64_t max_cycles, struct profile *prof, struct taint *taint)
{
	memset(m, 0, sizeof *m);
	m->elf = elf;
	m->uart = uart;
	m->chip = chip;
	m->prof = prof;
	m->taint = taint;
	m->max_cycles = max_cycles;
	m->resumed_block = UINT64_MAX;
	m->found_block = UINT64_MAX;
	m->cache = calloc(1u << COST_CACHE_BITS, sizeof *m->cache);
	m->fetch_pool = calloc(FETCH_POOL_SIZE, sizeof *m->fetch_pool);
	m->access_cache = calloc(1u << ACCESS_CACHE_BITS, sizeof *m->access_cache);
	m->bt = malloc(sizeof *m->bt);
	m->flash = malloc(chip->flash_size);
	memset(m->flash, 0xff, chip->flash_size); /* erased flash */
	m->sram = calloc(chip->sram_size, 1);
	m->ccm = chip->ccm_alias == CHIP_OWN_MEMORY ? calloc(chip->ccm_size, 1) : m->sram + chip->ccm_alias;
	if (!timing_open(&m->cs)) {
		fprintf(stderr, "vboard: error: cannot initialise capstone\n");
		return -1;
	}
	uc_err e = uc_open(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS, &m->uc);
	if (e == UC_ERR_OK)
		e = uc_ctl_set_cpu_model(m->uc, UC_CPU_ARM_CORTEX_M4);
	/* flash at 0x08000000 and its boot alias at 0: one buffer, mapped twice; read-only */
	if (e == UC_ERR_OK)
		e = uc_mem_map_ptr(m->uc, FLASH_BASE, chip->flash_size, UC_PROT_READ | UC_PROT_EXEC, m->flash);
	if (e == UC_ERR_OK)
		e = uc_mem_map_ptr(m->uc, 0, chip->flash_size, UC_PROT_READ | UC_PROT_EXEC, m->flash);
	if (e == UC_ERR_OK) /* no instruction fetch from SRAM either: memory_hooks.c says why */
		e = uc_mem_map_ptr(m->uc, SRAM_BASE, chip->sram_size, UC_PROT_READ | UC_PROT_WRITE, m->sram);
	if (e == UC_ERR_OK) /* CCM (or the L4R5's SRAM2 alias) on the data bus only: no instruction fetch */
		e = uc_mem_map_ptr(m->uc, CCM_BASE, chip->ccm_size, UC_PROT_READ | UC_PROT_WRITE, m->ccm);
	if (e == UC_ERR_OK)
		e = uc_mem_map(m->uc, SYSTEM_PAGE_BASE, SYSTEM_PAGE_SIZE, UC_PROT_READ);
	if (e == UC_ERR_OK && chip->flash_size_kib_at) {
		uint16_t kib = (uint16_t)(chip->flash_size >> 10);
		e = uc_mem_write(m->uc, chip->flash_size_kib_at, &kib, sizeof kib);
	}
	if (e != UC_ERR_OK) {
		fprintf(stderr, "vboard: error: unicorn set-up failed: %s\n", uc_strerror(e));
		return -1;
	}
	if (map_devices(m))
		return -1;

	for (size_t i = 0; i < elf->nsegs; i++) {
		const struct elf_segment *s = &elf->segs[i];
		uint64_t end = (uint64_t)s->paddr + s->filesz;
		if (s->paddr >= FLASH_BASE && end <= FLASH_BASE + chip->flash_size) {
			memcpy(m->flash + (s->paddr - FLASH_BASE), s->data, s->filesz);
		} else if (((s->paddr >= SRAM_BASE && end <= SRAM_BASE + chip->sram_size) ||
			    (s->paddr >= CCM_BASE && end <= CCM_BASE + chip->ccm_size))) {
			uc_mem_write(m->uc, s->paddr, s->data, s->filesz);
		} else {
			fprintf(stderr, "vboard: error: ELF segment at address 0x%08x (%u bytes) is "
					"outside the %s's flash, SRAM and %s\n", s->paddr, s->filesz, chip->part,
				chip->ccm_name);
			return -1;
		}
	}

	if ((m->taint && hook_taint_gate(m)) || hook_blocks(m) || hook_memory(m)) {
		fprintf(stderr, "vboard: error: cannot install hooks\n");
		return -1;
	}
	if (attach_analyses(m))
		return -1;

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
	uc_mem_read(m->uc, m->chip->unique_id_base, uid, sizeof uid);
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
	if (uc_mem_write(m->uc, m->chip->unique_id_base, bytes, sizeof bytes) != UC_ERR_OK) {
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
	native_calls_free(m);
	if (m->uc)
		uc_close(m->uc);
	board_free(m->board);
	cs_close(&m->cs);
	free(m->flash);
	if (m->chip && m->chip->ccm_alias == CHIP_OWN_MEMORY)
		free(m->ccm);
	free(m->sram);
	free(m->bt);
	free(m->cache);
	free(m->fetch_pool);
	free(m->load_at);
	free(m->load_bits);
	free(m->load_spans);
	free(m->access_cache);
	free(m->guards);
}

/* ---- run loop ---- */

void machine_describe_insn(struct machine *m, uint32_t pc, char *out, size_t len)
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
				machine_describe_insn(m, pc, insn, sizeof insn);
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
		case STOP_TAINT_HOOKS:
			if (rehook_taint(m) == 0)
				continue;
			machine_fail(m, "cannot lay the taint tracker's code hook again");
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
				m->cycle_limit = true;
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
		return m->cycle_limit ? MACHINE_EXIT_CYCLE_LIMIT : 1;
	}
}
