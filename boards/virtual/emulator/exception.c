/* The SysTick exception (ARMv7-M ARM B1.5.6, B1.5.8), taken and returned from here, and WFI
 * waiting for it.
 * Unicorn facts this file is built on:
 * - There is no NVIC or exception model: the SysTick exception is stacked and unstacked here.
 *   The handler's "bx lr" to EXC_RETURN (0xFFFFFFF9) makes uc_emu_start fail with
 *   UC_ERR_EXCEPTION and PC = 0xFFFFFFF8 (an execute-never address); we unstack there. The core
 *   stays in Thread mode for Unicorn throughout, so it never runs its own exception return. */
#include "machine_internal.h"

#include "profile.h"
#include "taint.h"

#define SYSTICK_EXCEPTION 15
#define EXC_RETURN_BASIC 0xfffffff9u  /* Thread mode, main stack, basic frame */
#define EXC_RETURN_FP 0xffffffe9u     /* ... extended (FP) frame */
#define CONTROL_SPSEL (1u << 1)
#define CONTROL_FPCA (1u << 2)
#define XPSR_ALIGN (1u << 9)

bool exception_due_at(struct machine *m, uint64_t now)
{
	systick_advance(&m->board->systick, now);
	return systick_pending(&m->board->systick) && !m->in_handler &&
	       !(reg(m, UC_ARM_REG_PRIMASK) & 1);
}

static int write_word(struct machine *m, uint32_t addr, uint32_t v)
{
	return uc_mem_write(m->uc, addr, &v, 4) == UC_ERR_OK ? 0 : -1;
}

int exception_entry(struct machine *m, uint32_t return_pc)
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

int exception_return(struct machine *m)
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
		profile_exception_return(m->prof, m->cycles, w[6] & ~1u);
	if (m->taint)
		taint_exception_return(m->taint);
	machine_schedule(m);
	return 0;
}

/* WFI sleeps until the next SysTick exception: model time jumps to it, and the exception is
 * taken before the instruction after WFI (the block hook would not: control falls through to it).
 * Without an enabled interrupt the core would sleep forever. */
int wait_for_interrupt(struct machine *m, uint32_t pc)
{
	uint16_t insn = 0;
	uc_mem_read(m->uc, pc - 2, &insn, 2);
	if (insn != 0xbf30) {
		char what[100];
		machine_describe_insn(m, pc, what, sizeof what);
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
	return exception_due_at(m, m->cycles) ? exception_entry(m, pc) : 0;
}
