/* What the files of the emulated core (machine.h) share; nothing else includes it.
 *   machine.c         set-up, the memory map, the devices' view of the core, the run loop
 *   cycle_hooks.c     the hooks that count model time: blocks, loads from flash, divisions
 *   exact_access.c    the exact model time of an access to a time-dependent register
 *   exception.c       the SysTick exception's entry and return, and WFI
 *   memory_hooks.c    the memory's access rights and invalid accesses
 *   analysis_hooks.c  the profiler's and the taint tracker's view of the core, and their hooks
 *   guard_watch.c     stores by the implementation into the harness's guarded memory
 *   native_calls.c    the cryptographic primitives' calls run on the host
 * Unicorn facts each is built on (Unicorn 2.1.4, Cortex-M4 model, checked by experiment) are
 * stated at its top. */
#ifndef VBOARD_MACHINE_INTERNAL_H
#define VBOARD_MACHINE_INTERNAL_H

#include <stddef.h>

#include "machine.h"

#define FETCH_POOL_SIZE (1u << 20)

static const int core_regs[16] = {
	UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_R3, UC_ARM_REG_R4, UC_ARM_REG_R5,
	UC_ARM_REG_R6, UC_ARM_REG_R7, UC_ARM_REG_R8, UC_ARM_REG_R9, UC_ARM_REG_R10, UC_ARM_REG_R11,
	UC_ARM_REG_R12, UC_ARM_REG_SP, UC_ARM_REG_LR, UC_ARM_REG_PC,
};

static inline uint32_t reg(struct machine *m, int r)
{
	uint32_t v = 0;
	uc_reg_read(m->uc, r, &v);
	return v;
}

static inline void set_reg(struct machine *m, int r, uint32_t v)
{
	uc_reg_write(m->uc, r, &v);
}

#define XPSR_IT_BITS 0x0600fc00u /* IT[1:0] in bits 26:25, IT[7:2] in bits 15:10 */

/* Unicorn 2.1.4 restores the state of the accessing instruction, its IT state included, before it
 * calls the TLB fill hook (cpu_restore_state), and likewise before a memory hook's callback.
 * QEMU's code keeps the IT state in env at zero all through a block (each instruction carries its
 * own condition) and writes it back only when a block ends inside an IT block; so an IT block's access that missed the TLB left its IT state in env,
 * and the next block ran its first instructions as conditional ones (a branch not taken, a return
 * into the stack's paint: vboard-it-tlb-miss; a store into a watched guard inside an IT block, a
 * Falcon signature that did not verify). Each such callback sets it to zero again, as QEMU has it. */
static inline void clear_it_state(struct machine *m)
{
	uint32_t epsr = reg(m, UC_ARM_REG_EPSR);
	if (epsr & XPSR_IT_BITS)
		set_reg(m, UC_ARM_REG_EPSR, epsr & ~XPSR_IT_BITS);
}

static inline int read_word(struct machine *m, uint32_t addr, uint32_t *v)
{
	return uc_mem_read(m->uc, addr, v, 4) == UC_ERR_OK ? 0 : -1;
}

/* Execution goes on at `addr` after a jump in model time (exception entry or return, reset, a
 * resumed block): no refill to charge, nothing in the pipeline to pipeline with. */
static inline void continue_at(struct machine *m, uint32_t addr)
{
	m->cur_addr = addr;
	m->cur_size = 0;
	m->cur_exit = (struct pipe_state){0};
}

/* machine.c */
void machine_stop(struct machine *m, enum stop_reason why);
/* Stops with "vboard: error: <what> (pc=...)". */
void machine_fail(struct machine *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Recomputes next_event after a change of SysTick configuration or the cycle limit. */
void machine_schedule(struct machine *m);
void machine_describe_insn(struct machine *m, uint32_t pc, char *out, size_t len);

/* cycle_hooks.c */
int hook_blocks(struct machine *m);
/* Flash wait states are on: hooks the loads that can read flash. */
int hook_flash(struct machine *m);
/* Hooks the divisions of a block whose hooks must exist before it is translated. */
int add_div_hooks(struct machine *m, const struct block_timing *bt);

/* exact_access.c */
bool machine_access_time(struct machine *m, uint64_t *now);
/* Handles an exact access stop: the PC is the accessing instruction; time it and replay. */
int exact_access(struct machine *m, uint32_t pc);

/* exception.c */
/* SysTick brought up to `now`: whether its exception is taken there (pending, not inside its
 * handler, PRIMASK clear). */
bool exception_due_at(struct machine *m, uint64_t now);
int exception_entry(struct machine *m, uint32_t return_pc);
int exception_return(struct machine *m);
int wait_for_interrupt(struct machine *m, uint32_t pc);

/* native_calls.c: the block at `addr` is about to be priced while a call is recorded. */
void native_observe(struct machine *m, uint32_t addr);
void native_calls_free(struct machine *m);

/* memory_hooks.c */
int hook_memory(struct machine *m);

/* analysis_hooks.c: the --profile/--intervals and --taint attachments, where asked for. */
int attach_analyses(struct machine *m);
/* The taint tracker's block gate, hooked before the timing hooks so that it can stop a block
 * before it is priced; and its code hook laid again on taint_hooked_ranges(). */
int hook_taint_gate(struct machine *m);
int rehook_taint(struct machine *m);

#endif
