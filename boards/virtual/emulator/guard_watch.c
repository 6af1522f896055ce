/* The harness's guarded memory watched exactly (firmware/include/pqscope/guard.h), with
 * --watch-guards: while an operation runs, a store by the implementation into a guard around one
 * of its buffers or into the harness's state, and at any time a store of a stack grown past the
 * end of .bss, stops the board with an error naming the operation, the buffer or the symbol, the
 * offset, and the storing instruction with its function. The firmware's canaries and copies find
 * such a store after the operation on any board; here it is caught at the instruction.
 * Unicorn facts this file is built on:
 * - A UC_HOOK_MEM_WRITE callback bounded to an address range sees the exact PC of the store and
 *   runs for stores into that range only; but with any such hook every store takes unicorn
 *   2.1.4's slow path (three to six times slower over a signature), so the watch is asked for only
 *   to replay a sample the firmware found at fault (the host does: pqscope.targets.virtual). */
#include "machine_internal.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD_PREFIX "pqs_guarded_"
#define STATE_SYMBOL "pqs_guarded_state"
#define DISARM_FUNCTION "pqs_guard_disarm"
#define STACK_LIMIT_SYMBOL "__pqscope_stack_limit" /* the end of .bss (the board's linker script) */
/* guard.h's layout: PQS_GUARD_BYTES, then struct pqs_harness_state's operation:u32,
 * armed_count:u32 and armed[PQS_GUARD_MAX_ARMED] {name, start, bytes: u32 each}. */
#define GUARD_BYTES 64u
#define MAX_ARMED 4u
#define OPERATION_OFFSET GUARD_BYTES
#define ARMED_OFFSET (GUARD_BYTES + 8u)

static const char *const operation_names[] = {"none", "keygen", "sign", "verify"};

struct armed_buffer {
	uint32_t start, bytes;
	char name[32];
};

struct guard_watch {
	uint32_t state, state_size;      /* pqs_guarded_state */
	uint32_t disarm, disarm_size;    /* the only code that ends an operation */
	uint32_t stack_limit;            /* the stack's lowest address, 0 if unknown */
	uint32_t operation;              /* 1 + the op running, 0 between operations */
	uint32_t narmed;
	struct armed_buffer armed[MAX_ARMED];
};

static void read_name(struct machine *m, uint32_t addr, char *out, size_t size)
{
	size_t n = 0;
	for (; n + 1 < size; n++)
		if (uc_mem_read(m->uc, addr + n, &out[n], 1) != UC_ERR_OK || out[n] == '\0')
			break;
	out[n] = '\0';
}

/* The harness marked an operation running: the buffers it handed it are armed in its state. */
static void start_operation(struct machine *m, struct guard_watch *w, uint32_t operation)
{
	uint32_t count = 0;
	uc_mem_read(m->uc, w->state + OPERATION_OFFSET + 4, &count, 4);
	w->operation = operation;
	w->narmed = count < MAX_ARMED ? count : MAX_ARMED;
	for (uint32_t i = 0; i < w->narmed; i++) {
		uint32_t words[3] = {0};
		uc_mem_read(m->uc, w->state + ARMED_OFFSET + 12 * i, words, sizeof words);
		w->armed[i].start = words[1];
		w->armed[i].bytes = words[2];
		read_name(m, words[0], w->armed[i].name, sizeof w->armed[i].name);
	}
}

static void report(struct machine *m, const struct guard_watch *w, const char *what, const char *where)
{
	char insn[100];
	uint32_t pc = reg(m, UC_ARM_REG_PC);
	const struct elf_func *f = elf_function_at(m->elf, pc);
	machine_describe_insn(m, pc, insn, sizeof insn);
	machine_fail(m, "%s%s wrote %s by %s in %s at address 0x%08x", what,
		     operation_names[w->operation < 4 ? w->operation : 0], where, insn,
		     f ? f->name : "unknown code", pc);
}

/* The data symbol holding `addr` as "name+offset", or "" if none does. */
static void data_symbol_at(const struct elf_image *elf, uint32_t addr, char *out, size_t len)
{
	const Elf32_Sym *sym = elf->symtab;
	out[0] = '\0';
	for (size_t k = 0; k < elf->nsyms; k++)
		if (ELF32_ST_TYPE(sym[k].st_info) == STT_OBJECT && sym[k].st_name < elf->strtab_size &&
		    addr - sym[k].st_value < sym[k].st_size) {
			snprintf(out, len, " (%s+%u)", elf->strtab + sym[k].st_name, addr - sym[k].st_value);
			return;
		}
}

/* A store below the stack's limit (into .bss and .data) while the stack pointer is there too:
 * the stack overflowed. */
static void on_data_write(uc_engine *uc, uc_mem_type type, uint64_t address, int size, int64_t value,
			  void *user)
{
	struct machine *m = user;
	const struct guard_watch *w = m->guards;
	uint32_t sp = reg(m, UC_ARM_REG_SP);
	char where[160];
	(void)uc, (void)type, (void)size, (void)value;
	clear_it_state(m);
	if (sp >= w->stack_limit || (uint32_t)address < sp)
		return;
	data_symbol_at(m->elf, (uint32_t)address, where, sizeof where);
	char overflow[240];
	snprintf(overflow, sizeof overflow, "at address 0x%08x%s with sp=0x%08x, below the end of .bss "
		 "0x%08x,", (uint32_t)address, where, sp, w->stack_limit);
	report(m, w, "stack overflow into .bss: ", overflow);
}

/* The value of the symbol `name` of any type (the linker script's are untyped), 0 if none. */
static uint32_t symbol_value(const struct elf_image *elf, const char *name)
{
	const Elf32_Sym *sym = elf->symtab;
	for (size_t k = 0; k < elf->nsyms; k++)
		if (sym[k].st_name < elf->strtab_size && !strcmp(elf->strtab + sym[k].st_name, name))
			return sym[k].st_value;
	return 0;
}

/* A store the implementation may make, or the place it wrote outside its buffers. */
static bool outside_buffers(const struct guard_watch *w, uint32_t addr, uint32_t size, char *where,
			    size_t len)
{
	if (addr + size > w->state && addr < w->state + w->state_size) {
		int32_t offset = (int32_t)(addr - w->state) - (int32_t)GUARD_BYTES;
		snprintf(where, len, "at offset %d of the harness's state (%s+%u)", offset, STATE_SYMBOL,
			 addr - w->state);
		return true;
	}
	for (uint32_t i = 0; i < w->narmed; i++) {
		const struct armed_buffer *b = &w->armed[i];
		int64_t offset = (int64_t)addr - b->start;
		bool before = offset < 0 && offset + size > -(int64_t)GUARD_BYTES;
		bool past = offset + size > b->bytes && offset < (int64_t)b->bytes + GUARD_BYTES;
		if (before)
			snprintf(where, len, "at offset %lld of the %s (its start - %lld)", (long long)offset,
				 b->name, (long long)-offset);
		else if (past)
			snprintf(where, len, "at offset %lld of the %s (its %u bytes + %lld)",
				 (long long)offset, b->name, b->bytes, (long long)(offset - b->bytes));
		if (before || past)
			return true;
	}
	return false;
}

static void on_guarded_write(uc_engine *uc, uc_mem_type type, uint64_t address, int size,
			     int64_t value, void *user)
{
	struct machine *m = user;
	struct guard_watch *w = m->guards;
	uint32_t addr = (uint32_t)address;
	char where[160];
	(void)uc, (void)type;
	clear_it_state(m);
	if (addr == w->state + OPERATION_OFFSET && size == 4) {
		uint32_t pc = reg(m, UC_ARM_REG_PC);
		if (w->operation == 0) {
			if (value != 0)
				start_operation(m, w, (uint32_t)value);
			return;
		}
		if (pc - w->disarm < w->disarm_size) {
			w->operation = 0;
			return;
		}
	}
	if (w->operation == 0 || m->in_handler) /* the harness's own business, and its SysTick handler */
		return;
	if (outside_buffers(w, addr, (uint32_t)size, where, sizeof where))
		report(m, w, "", where);
}

int machine_watch_guards(struct machine *m)
{
	const Elf32_Sym *sym = m->elf->symtab;
	size_t disarm = 0;
	struct guard_watch w = {0};
	if (!sym || elf_find_object(m->elf, STATE_SYMBOL, &w.state, &w.state_size) != 1 ||
	    elf_find_function(m->elf, DISARM_FUNCTION, &disarm) != 1)
		return 0; /* not a pqscope image (a test program): nothing of the harness's to watch */
	w.disarm = m->elf->funcs[disarm].addr;
	w.disarm_size = m->elf->funcs[disarm].size;
	w.stack_limit = symbol_value(m->elf, STACK_LIMIT_SYMBOL);
	m->guards = malloc(sizeof *m->guards);
	*m->guards = w;
	uc_hook h;
	if (w.stack_limit > SRAM_BASE &&
	    uc_hook_add(m->uc, &h, UC_HOOK_MEM_WRITE, on_data_write, m, SRAM_BASE, w.stack_limit - 1) != UC_ERR_OK) {
		fprintf(stderr, "vboard: error: cannot watch the data below the stack\n");
		return -1;
	}
	for (size_t k = 0; k < m->elf->nsyms; k++) {
		if (ELF32_ST_TYPE(sym[k].st_info) != STT_OBJECT || sym[k].st_name >= m->elf->strtab_size ||
		    strncmp(m->elf->strtab + sym[k].st_name, GUARD_PREFIX, strlen(GUARD_PREFIX)) ||
		    sym[k].st_size == 0)
			continue;
		if (uc_hook_add(m->uc, &h, UC_HOOK_MEM_WRITE, on_guarded_write, m, sym[k].st_value,
				(uint64_t)sym[k].st_value + sym[k].st_size - 1) != UC_ERR_OK) {
			fprintf(stderr, "vboard: error: cannot watch %s\n", m->elf->strtab + sym[k].st_name);
			return -1;
		}
	}
	return 0;
}
