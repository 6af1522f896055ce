/* Cortex-M4 instruction costs (ARM DDI 0439, table 3-1 and the FPU instruction table), 0 wait
 * states. Everything the TRM lists as single-cycle (data processing, MUL/MLA/MLS, the long and
 * DSP multiplies, saturation, bit-field, extend, reverse, IT unless folded, VADD/VMUL...) costs
 * 1; the exceptions are priced explicitly below. Not modelled: unaligned data-access penalties,
 * skipped conditional instructions costing 1 instead of their full cost, NOP folding, and the
 * data-dependent delays of the write buffer, runs of 32-bit instructions at halfword addresses
 * (timing.h). A branch to an unaligned 32-bit instruction and loads right after a store cost what
 * TIMING_UNALIGNED_TARGET and TIMING_STORE_THEN_* say (timing.h). */
#include "timing.h"

#include <stdio.h>
#include <string.h>

bool timing_open(csh *cs)
{
	if (cs_open(CS_ARCH_ARM, CS_MODE_THUMB | CS_MODE_MCLASS, cs) != CS_ERR_OK)
		return false;
	cs_option(*cs, CS_OPT_DETAIL, CS_OPT_ON);
	return true;
}

/* Capstone register -> r0..r15, or -1 for non-core registers. */
static int core_reg(unsigned reg)
{
	if (reg >= ARM_REG_R0 && reg <= ARM_REG_R12)
		return (int)(reg - ARM_REG_R0);
	if (reg == ARM_REG_SP)
		return 13;
	if (reg == ARM_REG_LR)
		return 14;
	if (reg == ARM_REG_PC)
		return 15;
	return -1;
}

static uint16_t reg_bit(unsigned reg)
{
	int n = core_reg(reg);
	return n < 0 ? 0 : (uint16_t)(1u << n);
}

/* Data words moved by a register list starting at operand `first` (a D register is 2 words). */
static uint32_t list_words(const cs_arm *a, int first)
{
	uint32_t n = 0;
	for (int i = first; i < a->op_count; i++) {
		if (a->operands[i].type != ARM_OP_REG)
			continue;
		unsigned r = a->operands[i].reg;
		n += (r >= ARM_REG_D0 && r <= ARM_REG_D31) ? 2 : 1;
	}
	return n;
}

static const cs_arm_op *mem_operand(const cs_arm *a)
{
	for (int i = 0; i < a->op_count; i++)
		if (a->operands[i].type == ARM_OP_MEM)
			return &a->operands[i];
	return NULL;
}

static bool writes_pc(const cs_arm *a)
{
	return a->op_count > 0 && a->operands[0].type == ARM_OP_REG &&
	       a->operands[0].reg == ARM_REG_PC;
}

enum single_kind { NOT_SINGLE, SINGLE_LOAD, SINGLE_STORE };

/* LDR/STR-class single accesses, the ones the TRM lets neighbouring accesses pipeline with.
 * STREX counts as a load: "STREX is treated more like an LDR". */
static enum single_kind single_kind(unsigned id)
{
	switch (id) {
	case ARM_INS_LDR: case ARM_INS_LDRB: case ARM_INS_LDRH: case ARM_INS_LDRSB:
	case ARM_INS_LDRSH: case ARM_INS_LDRT: case ARM_INS_LDRBT: case ARM_INS_LDRHT:
	case ARM_INS_LDRSBT: case ARM_INS_LDRSHT: case ARM_INS_LDREX: case ARM_INS_LDREXB:
	case ARM_INS_LDREXH: case ARM_INS_STREX: case ARM_INS_STREXB: case ARM_INS_STREXH:
		return SINGLE_LOAD;
	case ARM_INS_STR: case ARM_INS_STRB: case ARM_INS_STRH: case ARM_INS_STRT:
	case ARM_INS_STRBT: case ARM_INS_STRHT:
		return SINGLE_STORE;
	default:
		return NOT_SINGLE;
	}
}

#define NOT_AN_ACCESS UINT32_MAX

/* A load whose destinations include PC: LDR PC, POP {..., pc}, LDM {..., pc}. */
static bool loads_pc(const cs_arm *a, unsigned id)
{
	switch (id) {
	case ARM_INS_LDR: case ARM_INS_POP: case ARM_INS_LDM: case ARM_INS_LDMDB:
		for (int i = 0; i < a->op_count; i++)
			if (a->operands[i].type == ARM_OP_REG && a->operands[i].reg == ARM_REG_PC)
				return true;
		return false;
	default:
		return false;
	}
}

/* Core registers an instruction writes through its register operands. */
static uint16_t written_core_regs(const cs_arm *a)
{
	uint16_t regs = 0;
	for (int i = 0; i < a->op_count; i++)
		if (a->operands[i].type == ARM_OP_REG && (a->operands[i].access & CS_AC_WRITE))
			regs |= reg_bit(a->operands[i].reg);
	return regs;
}

static uint32_t price_access(const cs_insn *in, const cs_arm *a, const cs_arm_op *m,
			     uint16_t addr_regs, bool literal, const struct pipe_state *prev,
			     struct pipe_state *st);
static bool access_pipelines(const cs_insn *in, const cs_arm *a, const cs_arm_op *m);
static uint32_t price_other(const cs_insn *in, const cs_arm *a);

/* Whether an instruction reads or writes data memory (STREX writes, though it pipelines like a
 * load). */
static enum access_dir data_direction(unsigned id)
{
	switch (id) {
	case ARM_INS_STREX: case ARM_INS_STREXB: case ARM_INS_STREXH:
	case ARM_INS_STRD: case ARM_INS_STM: case ARM_INS_STMDB: case ARM_INS_PUSH:
	case ARM_INS_VSTR: case ARM_INS_VSTMIA: case ARM_INS_VSTMDB: case ARM_INS_VPUSH:
		return ACCESS_STORE;
	case ARM_INS_LDRD: case ARM_INS_LDM: case ARM_INS_LDMDB: case ARM_INS_POP:
	case ARM_INS_VLDR: case ARM_INS_VLDMIA: case ARM_INS_VLDMDB: case ARM_INS_VPOP:
	case ARM_INS_TBB: case ARM_INS_TBH:
		return ACCESS_LOAD;
	}
	switch (single_kind(id)) {
	case SINGLE_LOAD: return ACCESS_LOAD;
	case SINGLE_STORE: return ACCESS_STORE;
	default: return ACCESS_NONE;
	}
}

/* LDR/LDRD/VLDR [PC, #imm]: a constant from a literal pool (TBB/TBH [PC, Rm] index a table). */
static bool is_literal_load(const cs_insn *in, const cs_arm_op *m)
{
	return m && m->mem.base == ARM_REG_PC &&
	       (single_kind(in->id) == SINGLE_LOAD || in->id == ARM_INS_LDRD || in->id == ARM_INS_VLDR);
}

/* Prices one instruction given the pipeline state before it; updates the state.
 * Returns 0 for an instruction the Cortex-M4 does not have. */
static uint32_t price(const cs_insn *in, struct pipe_state *st, bool *mem,
		      struct entry_dependence *dep)
{
	const cs_arm *a = &in->detail->arm;
	struct pipe_state prev = *st;
	*st = (struct pipe_state){0};
	*mem = true;

	const cs_arm_op *m = mem_operand(a);
	uint16_t addr_regs = m ? (uint16_t)(reg_bit(m->mem.base) | reg_bit(m->mem.index)) : 0;
	bool literal = is_literal_load(in, m);
	enum access_dir dir = data_direction(in->id);
	/* TRM 3.3.2: "Any load or store that generates an address dependent on the result of a
	 * preceding data processing operation stalls the pipeline for an additional cycle". */
	uint32_t address_stall = (addr_regs & prev.alu_dests) ? 1 : 0;
	uint32_t c = price_access(in, a, m, addr_regs, literal, &prev, st);
	*dep = (struct entry_dependence){.addr_regs = addr_regs, .access = c != NOT_AN_ACCESS,
					 .pipelines = c != NOT_AN_ACCESS && access_pipelines(in, a, m),
					 .literal = literal, .load = dir == ACCESS_LOAD,
					 .it = in->id == ARM_INS_IT};
	if (c != NOT_AN_ACCESS) {
		st->after_store = dir == ACCESS_STORE;
		uint32_t store_wait = !(prev.after_store && dir == ACCESS_LOAD) ? 0
				      : literal ? TIMING_STORE_THEN_LITERAL : TIMING_STORE_THEN_LOAD;
		return c == 0 ? 0 : c + address_stall + store_wait;
	}

	*mem = false;
	c = price_other(in, a);
	st->alu_dests = written_core_regs(a);
	return c;
}

static uint32_t price_access(const cs_insn *in, const cs_arm *a, const cs_arm_op *m,
			     uint16_t addr_regs, bool literal, const struct pipe_state *prev,
			     struct pipe_state *st)
{
	enum single_kind kind = single_kind(in->id);
	if (kind != NOT_SINGLE) {
		bool immediate_store = kind == SINGLE_STORE && m && m->mem.index == ARM_REG_INVALID;
		bool pipelined = (literal ? prev->after_literal : prev->after_load) &&
				 access_pipelines(in, a, m) && !(addr_regs & prev->load_dests);
		uint32_t cycles = immediate_store || pipelined ? 1 : 2;
		if (kind == SINGLE_LOAD && !writes_pc(a)) {
			st->after_load = !literal;
			st->after_literal = literal;
			st->load_dests = reg_bit(a->operands[0].reg);
		}
		return cycles;   /* LDR PC: +P comes from the taken-branch rule */
	}

	switch (in->id) {
	case ARM_INS_LDRD: case ARM_INS_STRD:
		return 3;    /* "cannot be pipelined ... the two words are pipelined together" */
	case ARM_INS_LDM: case ARM_INS_LDMDB: case ARM_INS_STM: case ARM_INS_STMDB:
		return 1 + list_words(a, 1);   /* 1+N, +P via the taken rule if PC is loaded */
	case ARM_INS_PUSH: case ARM_INS_POP:
		return 1 + list_words(a, 0);
	case ARM_INS_VLDR: case ARM_INS_VSTR:
		return 2;
	case ARM_INS_VLDMIA: case ARM_INS_VLDMDB: case ARM_INS_VSTMIA: case ARM_INS_VSTMDB:
		return 1 + list_words(a, 1);
	case ARM_INS_VPUSH: case ARM_INS_VPOP:
		return 1 + list_words(a, 0);
	case ARM_INS_LDREXD: case ARM_INS_STREXD: case ARM_INS_LDA: case ARM_INS_LDAB:
	case ARM_INS_LDAH: case ARM_INS_LDAEX: case ARM_INS_LDAEXB: case ARM_INS_LDAEXH:
	case ARM_INS_LDAEXD: case ARM_INS_STL: case ARM_INS_STLB: case ARM_INS_STLH:
	case ARM_INS_STLEX: case ARM_INS_STLEXB: case ARM_INS_STLEXH: case ARM_INS_STLEXD:
	case ARM_INS_LDC: case ARM_INS_LDC2: case ARM_INS_LDCL: case ARM_INS_LDC2L:
	case ARM_INS_STC: case ARM_INS_STC2: case ARM_INS_STCL: case ARM_INS_STC2L:
	case ARM_INS_MCR: case ARM_INS_MCR2: case ARM_INS_MRC: case ARM_INS_MRC2:
	case ARM_INS_MCRR: case ARM_INS_MCRR2: case ARM_INS_MRRC: case ARM_INS_MRRC2:
	case ARM_INS_CDP: case ARM_INS_CDP2:
		return 0;
	case ARM_INS_TBB: case ARM_INS_TBH:
		return 3;    /* TRM 3.3.2: two for the load, one for the add, then the refill */
	}
	return NOT_AN_ACCESS;
}

/* A single load/store that costs 1 instead of 2 right after an LDR whose result its address
 * does not use. TRM 3.3.2: "STR Rx,[Ry,#imm] is always one cycle" anyway (the data phase
 * overlaps the next instruction); nothing pipelines after a store; "Any load with a base
 * update is not normally pipelined". */
static bool access_pipelines(const cs_insn *in, const cs_arm *a, const cs_arm_op *m)
{
	enum single_kind kind = single_kind(in->id);
	bool immediate_store = kind == SINGLE_STORE && m && m->mem.index == ARM_REG_INVALID;
	bool base_update_load = kind == SINGLE_LOAD && a->writeback;
	return kind != NOT_SINGLE && !immediate_store && !base_update_load;
}

/* Everything that is not a data access. */
static uint32_t price_other(const cs_insn *in, const cs_arm *a)
{
	switch (in->id) {
	case ARM_INS_UDIV: case ARM_INS_SDIV:
		return TIMING_DIV_BASE;
	case ARM_INS_ISB:
		return 1 + TIMING_REFILL_EXECUTE;   /* 1+B, B = a pipeline refill for ISB */
	case ARM_INS_VDIV: case ARM_INS_VSQRT:
		return 14;
	case ARM_INS_VMLA: case ARM_INS_VMLS: case ARM_INS_VNMLA: case ARM_INS_VNMLS:
	case ARM_INS_VFMA: case ARM_INS_VFMS: case ARM_INS_VFNMA: case ARM_INS_VFNMS:
		return 3;
	case ARM_INS_VMOV:
		/* two core registers to/from two singles or a double: 2; everything else 1 */
		if (a->op_count >= 3 && core_reg(a->operands[a->op_count - 1].reg) >= 0 &&
		    core_reg(a->operands[a->op_count - 2].reg) >= 0)
			return 2;
		if (a->op_count >= 3 && core_reg(a->operands[0].reg) >= 0 &&
		    core_reg(a->operands[1].reg) >= 0)
			return 2;
		return 1;
	default:
		return 1;
	}
}

/* The span [base + offset, + bytes) of a data access, with PC as a base resolved here: Thumb
 * reads it as the instruction's address + 4, word-aligned. */
static struct access_span span_at(enum access_dir dir, unsigned base, int32_t offset,
				  uint32_t bytes, uint32_t at)
{
	struct access_span s = {dir, false, (int8_t)core_reg(base), -1, 0, offset, bytes};
	if (s.base < 0)
		return (struct access_span){.dir = ACCESS_UNKNOWN};
	if (s.base == 15) {
		s.base = -1;
		s.offset += (int32_t)((at + 4) & ~3u);
	}
	return s;
}

static struct access_span mem_span(enum access_dir dir, const cs_arm *a, uint32_t bytes,
				   uint32_t at)
{
	const cs_arm_op *m = mem_operand(a);
	if (!m || m->mem.scale != 1)
		return (struct access_span){.dir = ACCESS_UNKNOWN};
	struct access_span s = span_at(dir, m->mem.base, m->mem.disp, bytes, at);
	if (m->mem.index != ARM_REG_INVALID) {
		if (m->shift.type != ARM_SFT_INVALID && m->shift.type != ARM_SFT_LSL)
			return (struct access_span){.dir = ACCESS_UNKNOWN};
		s.index = (int8_t)core_reg(m->mem.index);
		s.shift = (uint8_t)m->shift.value;
	}
	return s;
}

/* Where a data-accessing instruction's accesses lie. Post-indexed forms access the base itself
 * (capstone gives their memory operand no displacement); a descending list ends at the base. */
static struct access_span access_span(const cs_insn *in, const cs_arm *a, uint32_t at)
{
	struct access_span s;
	switch (in->id) {
	case ARM_INS_STREX: case ARM_INS_STREXB: case ARM_INS_STREXH:
		s = mem_span(ACCESS_STORE, a, 4, at);
		break;
	case ARM_INS_LDRD: return mem_span(ACCESS_LOAD, a, 8, at);
	case ARM_INS_STRD: return mem_span(ACCESS_STORE, a, 8, at);
	case ARM_INS_VLDR: return mem_span(ACCESS_LOAD, a, 8, at);
	case ARM_INS_VSTR: return mem_span(ACCESS_STORE, a, 8, at);
	case ARM_INS_LDM: case ARM_INS_VLDMIA:
		return span_at(ACCESS_LOAD, a->operands[0].reg, 0, 4 * list_words(a, 1), at);
	case ARM_INS_STM: case ARM_INS_VSTMIA:
		return span_at(ACCESS_STORE, a->operands[0].reg, 0, 4 * list_words(a, 1), at);
	case ARM_INS_LDMDB: case ARM_INS_VLDMDB:
		return span_at(ACCESS_LOAD, a->operands[0].reg, -4 * (int32_t)list_words(a, 1),
			       4 * list_words(a, 1), at);
	case ARM_INS_STMDB: case ARM_INS_VSTMDB:
		return span_at(ACCESS_STORE, a->operands[0].reg, -4 * (int32_t)list_words(a, 1),
			       4 * list_words(a, 1), at);
	case ARM_INS_POP: case ARM_INS_VPOP:
		return span_at(ACCESS_LOAD, ARM_REG_SP, 0, 4 * list_words(a, 0), at);
	case ARM_INS_PUSH: case ARM_INS_VPUSH:
		return span_at(ACCESS_STORE, ARM_REG_SP, -4 * (int32_t)list_words(a, 0),
			       4 * list_words(a, 0), at);
	default:
		switch (single_kind(in->id)) {
		case SINGLE_LOAD: s = mem_span(ACCESS_LOAD, a, 4, at); break;
		case SINGLE_STORE: s = mem_span(ACCESS_STORE, a, 4, at); break;
		default: return (struct access_span){.dir = ACCESS_UNKNOWN};
		}
	}
	s.single = s.dir != ACCESS_UNKNOWN;
	return s;
}

/* The refill of a taken branch by the stage its target is issued in (timing.h): `prev_writes`
 * are the core registers the instruction before it writes (in execute while it decodes). */
static uint32_t branch_refill(const cs_insn *in, const cs_arm *a, uint16_t prev_writes)
{
	if (in->id == ARM_INS_TBB || in->id == ARM_INS_TBH || loads_pc(a, in->id))
		return TIMING_REFILL_UNPREDICTED;
	bool from_lr = a->op_count > 0 && a->operands[a->op_count - 1].type == ARM_OP_REG &&
		       a->operands[a->op_count - 1].reg == ARM_REG_LR;
	bool early;
	switch (in->id) {
	case ARM_INS_B: case ARM_INS_BL:
		early = true;
		break;
	case ARM_INS_BX: case ARM_INS_BLX:
		early = from_lr;
		break;
	case ARM_INS_MOV:
		early = writes_pc(a) && from_lr && a->op_count == 2;
		break;
	default: /* CBZ, CBNZ, ADD PC, ... */
		early = false;
	}
	return early && !(prev_writes & reg_bit(ARM_REG_LR)) ? TIMING_REFILL_DECODE : TIMING_REFILL_EXECUTE;
}

static bool is_fp(unsigned id)
{
	return (id >= ARM_INS_VABA && id <= ARM_INS_VZIP) || id == ARM_INS_FCONSTS ||
	       id == ARM_INS_FCONSTD || id == ARM_INS_FMSTAT;
}

bool timing_analyze(csh cs, const uint8_t *code, uint32_t size, uint32_t addr,
		    const struct pipe_state *entry, struct block_timing *bt)
{
	struct pipe_state st = {0};
	if (entry)
		st = *entry;
	bt->addr = addr;
	bt->size = size;
	bt->cycles = 0;
	bt->exit_refill = TIMING_REFILL_EXECUTE;
	bt->entry_refill = 0;
	bt->entry = (struct entry_dependence){0};
	bt->ninsns = 0;
	bt->halts = false;
	bt->uses_fp = false;
	bt->it_mem = false;
	bt->ndivs = 0;
	bt->nfetches = 0;
	bt->error[0] = 0;

	cs_insn *in = cs_malloc(cs);
	const uint8_t *p = code;
	size_t left = size;
	uint64_t pc = addr;
	int it_left = 0;
	uint16_t prev_writes = 0; /* core registers the previous instruction of the block wrote */
	bool ok = true;
	while (left > 0) {
		uint32_t at = (uint32_t)pc;
		if (!cs_disasm_iter(cs, &p, &left, &pc, in)) {
			snprintf(bt->error, sizeof bt->error,
				 "undecodable instruction at address 0x%08x", at);
			ok = false;
			break;
		}
		if (bt->ninsns == TIMING_MAX_INSNS) {
			snprintf(bt->error, sizeof bt->error,
				 "block at 0x%08x has more than %d instructions", addr, TIMING_MAX_INSNS);
			ok = false;
			break;
		}
		const cs_arm *a = &in->detail->arm;
		struct insn_cost *ic = &bt->insn[bt->ninsns++];
		ic->addr = at;
		ic->size = in->size;
		ic->before = st;
		ic->in_it = it_left > 0;
		bool mem;
		struct entry_dependence dep;
		uint32_t c = price(in, &st, &mem, &dep);
		if (bt->ninsns == 1)
			bt->entry = dep;
		if (c == 0) {
			snprintf(bt->error, sizeof bt->error,
				 "instruction '%.40s %.60s' not implemented by the Cortex-M4 at address 0x%08x",
				 in->mnemonic, in->op_str, at);
			ok = false;
			break;
		}
		if (in->id == ARM_INS_IT && ic->before.after_narrow)
			c = 0; /* folded (timing.h) */
		st.after_narrow = in->size == 2;
		if (bt->ninsns == 1 && in->size == 4 && (at & 2))
			bt->entry_refill = TIMING_UNALIGNED_TARGET;
		ic->cycles = (uint16_t)c;
		/* lines of this instruction's first and last halfword, where they start a new one */
		for (uint32_t line = at / TIMING_LINE_BYTES; line <= (at + in->size - 1) / TIMING_LINE_BYTES;
		     line++)
			if (bt->nfetches == 0 || bt->fetch[bt->nfetches - 1].line != line)
				bt->fetch[bt->nfetches++] = (struct fetch_point){line, bt->cycles};
		bt->exit_refill = branch_refill(in, a, prev_writes);
		prev_writes = written_core_regs(a);
		ic->mem = mem;
		ic->access = mem ? access_span(in, a, at) : (struct access_span){.dir = ACCESS_NONE};
		bt->cycles += c;
		if (mem && ic->in_it)
			bt->it_mem = true;
		if (is_fp(in->id))
			bt->uses_fp = true;
		if (it_left > 0)
			it_left--;
		if (in->id == ARM_INS_IT)
			it_left = (int)strlen(in->mnemonic) - 1;
		if (bt->ninsns == 1 && in->id == ARM_INS_B && a->op_count == 1 &&
		    (a->cc == ARM_CC_AL || a->cc == ARM_CC_INVALID) &&
		    a->operands[0].type == ARM_OP_IMM && (uint32_t)a->operands[0].imm == at)
			bt->halts = true;
		if (in->id == ARM_INS_UDIV || in->id == ARM_INS_SDIV) {
			if (bt->ndivs == TIMING_MAX_DIVS) {
				snprintf(bt->error, sizeof bt->error,
					 "more than %d divisions in the block at 0x%08x", TIMING_MAX_DIVS, addr);
				ok = false;
				break;
			}
			struct div_site *d = &bt->divs[bt->ndivs++];
			int n_ops = a->op_count;
			d->addr = at;
			d->rn = (uint8_t)core_reg(a->operands[n_ops - 2].reg);
			d->rm = (uint8_t)core_reg(a->operands[n_ops - 1].reg);
			d->cond = (uint8_t)(a->cc == ARM_CC_INVALID ? ARM_CC_AL : a->cc);
			d->is_signed = in->id == ARM_INS_SDIV;
		}
	}
	cs_free(in, 1);
	bt->exit = st;
	return ok;
}

int timing_find(const struct block_timing *bt, uint32_t addr)
{
	for (uint32_t i = 0; i < bt->ninsns; i++)
		if (bt->insn[i].addr == addr)
			return (int)i;
	return -1;
}

uint32_t timing_suffix(const struct block_timing *bt, int from)
{
	uint32_t c = 0;
	for (uint32_t i = (uint32_t)from; i < bt->ninsns; i++)
		c += bt->insn[i].cycles;
	return c;
}

/* The TRM gives 2..12 cycles with early termination "based on the number of leading ones and
 * zeroes in the input operands". Model: 2 cycles plus one per 3.2 significant quotient bits
 * (32 bits -> 12), so the cost grows with the quotient as on the hardware, and a secret-dependent
 * division shows up as a secret-dependent time. Division by zero returns 0 early: 2 cycles. */
uint32_t timing_div(uint32_t n, uint32_t d, bool is_signed)
{
	if (d == 0)
		return TIMING_DIV_BASE;
	if (is_signed) {
		n = (int32_t)n < 0 ? 0u - n : n;
		d = (int32_t)d < 0 ? 0u - d : d;
	}
	uint32_t q = n / d;
	uint32_t bits = q ? 32u - (uint32_t)__builtin_clz(q) : 0;
	return TIMING_DIV_BASE + (bits * 10 + 31) / 32;
}

bool timing_cond_holds(uint8_t cond, uint32_t xpsr)
{
	bool n = xpsr >> 31 & 1, z = xpsr >> 30 & 1, c = xpsr >> 29 & 1, v = xpsr >> 28 & 1;
	switch (cond) {
	case ARM_CC_EQ: return z;
	case ARM_CC_NE: return !z;
	case ARM_CC_HS: return c;
	case ARM_CC_LO: return !c;
	case ARM_CC_MI: return n;
	case ARM_CC_PL: return !n;
	case ARM_CC_VS: return v;
	case ARM_CC_VC: return !v;
	case ARM_CC_HI: return c && !z;
	case ARM_CC_LS: return !c || z;
	case ARM_CC_GE: return n == v;
	case ARM_CC_LT: return n != v;
	case ARM_CC_GT: return !z && n == v;
	case ARM_CC_LE: return z || n != v;
	default: return true;
	}
}
