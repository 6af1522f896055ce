/* The taint tracker's decoder: each instruction as a description of what it reads, writes and
 * decides (struct insn), cached by address. Capstone 5 facts it is built on (checked on the
 * encodings of taint_test.c):
 * - cs_regs_access misses some reads: SSAT/USAT's source and shifted second operands (PKHBT,
 *   UXTAB) have access 0, and the long multiply-accumulates (UMLAL, SMLAL...) do not list their
 *   accumulator pair as read. Register operands with access 0 are taken as read, and the
 *   accumulators are added here.
 * - Flag writes: update_flags is set for ANDS/LSLS/CMP... but regs_access lists CPSR for some
 *   only; update_flags decides, except for the 32-bit data-processing encodings, where the S bit
 *   does: capstone sets update_flags (and lists CPSR written) for ADC.W and SBC.W without S.
 *   Which flags are written follows the instruction (flag_writes()); regs_access's CPSR is all
 *   of NZCV. Capstone does not say whether a modified immediate (ANDS r0, r1, #0x3fc) was
 *   encoded rotated, which decides whether C is written: the encoding's i:imm3 does.
 * - Flag reads: regs_access lists CPSR read for ADC, SBC, RRX (not for an RRX-shifted operand):
 *   these read C only; a condition reads what cond_flags() says.
 * - MSR/MRS name APSR as a system-register operand: handled by instruction.
 * - Inside an IT block a 16-bit data-processing instruction does not set the flags: it decodes
 *   differently after its IT. cs_disasm starts each call outside any IT block, so an IT
 *   instruction is decoded together with its block, and the block's instructions are cached
 *   in that context (control only enters an IT block through its IT instruction). */
#include "taint_decode.h"

#include <stdlib.h>
#include <string.h>

#include "timing.h"

#define CORE_SLOTS 0x7fffull            /* r0..r14 */

/* ---- decoding ---- */

/* Slots of a capstone register (a d register is two singles). */
static uint64_t reg_slots(unsigned reg)
{
	if (reg >= ARM_REG_R0 && reg <= ARM_REG_R12)
		return BIT(reg - ARM_REG_R0);
	if (reg >= ARM_REG_S0 && reg <= ARM_REG_S31)
		return BIT(TAINT_S0 + reg - ARM_REG_S0);
	if (reg >= ARM_REG_D0 && reg <= ARM_REG_D15)
		return 3ull << (TAINT_S0 + 2 * (reg - ARM_REG_D0));
	switch (reg) {
	case ARM_REG_SP: return BIT(TAINT_SP);
	case ARM_REG_LR: return BIT(TAINT_LR);
	case ARM_REG_PC: return BIT(SLOT_PC);
	case ARM_REG_APSR: case ARM_REG_APSR_NZCV: case ARM_REG_CPSR: return NZCV;
	case ARM_REG_FPSCR: case ARM_REG_FPSCR_NZCV: return BIT(TAINT_FPSCR);
	default: return 0; /* ITSTATE, ... */
	}
}

static int core_reg(unsigned reg)
{
	uint64_t s = reg_slots(reg);
	return s && !(s & ~(CORE_SLOTS | BIT(SLOT_PC))) ? __builtin_ctzll(s) : -1;
}

/* The flags that condition `cc` reads (ARMv7-M ARM A7.3). */
static uint64_t cond_flags(int cc)
{
	switch (cc) {
	case ARM_CC_EQ: case ARM_CC_NE: return F_Z;
	case ARM_CC_HS: case ARM_CC_LO: return F_C;
	case ARM_CC_MI: case ARM_CC_PL: return F_N;
	case ARM_CC_VS: case ARM_CC_VC: return F_V;
	case ARM_CC_HI: case ARM_CC_LS: return F_C | F_Z;
	case ARM_CC_GE: case ARM_CC_LT: return F_N | F_V;
	case ARM_CC_GT: case ARM_CC_LE: return F_Z | F_N | F_V;
	default: return 0; /* AL */
	}
}

static uint16_t halfword(const cs_insn *in, int k)
{
	return (uint16_t)(in->bytes[2 * k] | in->bytes[2 * k + 1] << 8);
}

static bool modified_immediate(const cs_insn *in)
{
	return in->size == 4 && (halfword(in, 0) & 0xfa00) == 0xf000 && !(halfword(in, 1) & 0x8000);
}

/* The S bit of a 32-bit data-processing encoding (modified immediate, shifted register, shift
 * by register), or -1 for other encodings. Capstone sets update_flags for ADC.W and SBC.W
 * without S too. */
static int s_bit(const cs_insn *in)
{
	if (in->size != 4)
		return -1;
	uint16_t hw1 = halfword(in, 0), hw2 = halfword(in, 1);
	if (modified_immediate(in) || (hw1 & 0xfe00) == 0xea00 ||
	    ((hw1 & 0xff80) == 0xfa00 && (hw2 & 0xf0f0) == 0xf000))
		return hw1 >> 4 & 1;
	return -1;
}

/* The carry flag a logical instruction with S (ANDS, MOVS, TST...) writes through its last
 * operand: *set when a shift or a rotated immediate produces a carry out, *merge when it may
 * (a shift by a register amount, or an immediate of an unknown encoding), else C is unchanged
 * (no shift, a 16-bit MOVS #imm8, a modified immediate whose encoding does not rotate). */
static void shifter_carry(const cs_insn *in, const cs_arm *a, uint64_t *set, uint64_t *merge)
{
	if (!a->op_count)
		return;
	const cs_arm_op *op = &a->operands[a->op_count - 1];
	if (op->type == ARM_OP_IMM) {
		if (modified_immediate(in)) {
			uint16_t hw1 = halfword(in, 0), hw2 = halfword(in, 1);
			if (((hw1 >> 10 & 1) << 3 | (hw2 >> 12 & 7)) >= 4) /* i:imm3: rotated */
				*set |= F_C;
		} else if (in->size == 4) {
			*merge |= F_C;
		}
		return;
	}
	switch (op->shift.type) {
	case ARM_SFT_INVALID:
		break;
	case ARM_SFT_ASR: case ARM_SFT_LSL: case ARM_SFT_LSR: case ARM_SFT_ROR:
		if (op->shift.value)
			*set |= F_C;
		break;
	case ARM_SFT_RRX:
		*set |= F_C;
		break;
	default: /* by a register amount, which may be 0 */
		*merge |= F_C;
		break;
	}
}

/* The flags a flag-setting instruction writes (*set: to the OR of its inputs) or may write
 * (*merge: ORed into), as the ARMv7-M ARM defines them; a flag in neither keeps its taint. */
static void flag_writes(const cs_insn *in, const cs_arm *a, uint64_t *set, uint64_t *merge)
{
	*set = *merge = 0;
	switch (in->id) {
	case ARM_INS_ADD: case ARM_INS_ADC: case ARM_INS_SUB: case ARM_INS_SBC: case ARM_INS_RSB:
	case ARM_INS_CMP: case ARM_INS_CMN: case ARM_INS_NEG:
		*set = NZCV;
		break;
	case ARM_INS_MUL: case ARM_INS_MLA:
		*set = F_N | F_Z;
		break;
	case ARM_INS_RRX:
		*set = F_N | F_Z | F_C;
		break;
	case ARM_INS_LSL: case ARM_INS_LSR: case ARM_INS_ASR: case ARM_INS_ROR: {
		const cs_arm_op *amount = a->op_count ? &a->operands[a->op_count - 1] : NULL;
		*set = F_N | F_Z;
		if (amount && amount->type == ARM_OP_IMM) {
			if (amount->imm)
				*set |= F_C;
		} else {
			*merge = F_C; /* a register amount: C is unchanged when it is 0 */
		}
		break;
	}
	case ARM_INS_AND: case ARM_INS_BIC: case ARM_INS_ORR: case ARM_INS_ORN: case ARM_INS_EOR:
	case ARM_INS_MOV: case ARM_INS_MOVS: case ARM_INS_MVN: case ARM_INS_TST: case ARM_INS_TEQ:
		*set = F_N | F_Z;
		shifter_carry(in, a, set, merge);
		break;
	default: /* not known here: any flag may change */
		*merge = NZCV;
		break;
	}
}

/* Instructions whose result depends on the carry flag (and on no other flag). */
static bool reads_carry(const cs_insn *in, const cs_arm *a)
{
	if (in->id == ARM_INS_ADC || in->id == ARM_INS_SBC || in->id == ARM_INS_RRX)
		return true;
	for (int i = 0; i < a->op_count; i++) {
		const cs_arm_op *op = &a->operands[i];
		if (op->type == ARM_OP_REG &&
		    (op->shift.type == ARM_SFT_RRX || op->shift.type == ARM_SFT_RRX_REG))
			return true;
	}
	return false;
}

/* Instructions that set GE or the sticky Q (and not NZCV). */
/* The parallel additions and subtractions: they write all four GE bits. */
static bool sets_ge(unsigned id)
{
	switch (id) {
	case ARM_INS_SADD16: case ARM_INS_SADD8: case ARM_INS_SASX: case ARM_INS_SSAX:
	case ARM_INS_SSUB16: case ARM_INS_SSUB8: case ARM_INS_UADD16: case ARM_INS_UADD8:
	case ARM_INS_UASX: case ARM_INS_USAX: case ARM_INS_USUB16: case ARM_INS_USUB8:
		return true;
	default:
		return false;
	}
}

/* The saturating and DSP instructions that can set the sticky Q bit (never clear it). */
static bool sets_q(unsigned id)
{
	switch (id) {
	case ARM_INS_QADD: case ARM_INS_QSUB: case ARM_INS_QDADD: case ARM_INS_QDSUB:
	case ARM_INS_SSAT: case ARM_INS_SSAT16: case ARM_INS_USAT: case ARM_INS_USAT16:
	case ARM_INS_SMLABB: case ARM_INS_SMLABT: case ARM_INS_SMLATB: case ARM_INS_SMLATT:
	case ARM_INS_SMLAWB: case ARM_INS_SMLAWT: case ARM_INS_SMLAD: case ARM_INS_SMLADX:
	case ARM_INS_SMLSD: case ARM_INS_SMLSDX: case ARM_INS_SMUAD: case ARM_INS_SMUADX:
		return true;
	default:
		return false;
	}
}

/* Multiply-accumulates whose accumulator pair capstone does not list as read. */
static bool accumulates_pair(unsigned id)
{
	switch (id) {
	case ARM_INS_UMLAL: case ARM_INS_SMLAL: case ARM_INS_UMAAL: case ARM_INS_SMLALBB:
	case ARM_INS_SMLALBT: case ARM_INS_SMLALTB: case ARM_INS_SMLALTT: case ARM_INS_SMLALD:
	case ARM_INS_SMLALDX: case ARM_INS_SMLSLD: case ARM_INS_SMLSLDX:
		return true;
	default:
		return false;
	}
}

static bool is_apsr_sysreg(int reg)
{
	return reg >= ARM_SYSREG_APSR && reg <= ARM_SYSREG_XPSR_NZCVQ;
}

static unsigned access_bytes(unsigned id)
{
	switch (id) {
	case ARM_INS_LDRB: case ARM_INS_LDRSB: case ARM_INS_LDRBT: case ARM_INS_LDRSBT:
	case ARM_INS_LDREXB: case ARM_INS_STRB: case ARM_INS_STRBT: case ARM_INS_STREXB:
	case ARM_INS_TBB:
		return 1;
	case ARM_INS_LDRH: case ARM_INS_LDRSH: case ARM_INS_LDRHT: case ARM_INS_LDRSHT:
	case ARM_INS_LDREXH: case ARM_INS_STRH: case ARM_INS_STRHT: case ARM_INS_STREXH:
	case ARM_INS_TBH:
		return 2;
	default:
		return 4;
	}
}

/* Adds register `reg`'s slots (one per 32-bit word) to the transfers. */
static void add_xfer(struct insn *d, unsigned reg)
{
	uint64_t s = reg_slots(reg);
	while (s && d->nxfer < XFER_MAX) {
		d->xfer[d->nxfer++] = (uint8_t)__builtin_ctzll(s);
		s &= s - 1;
	}
}

/* The address of a memory operand; PC-relative addresses are resolved here. */
static bool mem_address(struct insn *d, const cs_arm_op *m, uint32_t at, bool table_branch)
{
	d->base = (int8_t)core_reg(m->mem.base);
	d->index = m->mem.index == ARM_REG_INVALID ? -1 : (int8_t)core_reg(m->mem.index);
	d->offset = m->mem.disp;
	d->shift = 0;
	if (d->base < 0 || (m->mem.index != ARM_REG_INVALID && d->index < 0))
		return false;
	if (d->index >= 0) {
		if (m->shift.type != ARM_SFT_INVALID && m->shift.type != ARM_SFT_LSL)
			return false;
		d->shift = (uint8_t)m->shift.value;
	}
	if (d->base == SLOT_PC) { /* Thumb: PC reads as the address + 4, word-aligned for literals */
		d->base = -1;
		d->offset += (int32_t)(table_branch ? at + 4 : (at + 4) & ~3u);
	}
	return true;
}

/* A register-list transfer from `base`: ascending from it, or descending to it. */
static void list_transfer(struct insn *d, const cs_arm *a, int first, unsigned base, bool descending)
{
	d->base = (int8_t)core_reg(base);
	d->index = -1;
	d->xbytes = 4;
	for (int i = first; i < a->op_count; i++)
		if (a->operands[i].type == ARM_OP_REG)
			add_xfer(d, a->operands[i].reg);
	d->offset = descending ? -4 * d->nxfer : 0;
}

static const cs_arm_op *mem_operand(const cs_arm *a)
{
	for (int i = 0; i < a->op_count; i++)
		if (a->operands[i].type == ARM_OP_MEM)
			return &a->operands[i];
	return NULL;
}

/* Loads and stores; false if not one. */
static bool decode_memory(struct insn *d, const cs_insn *in, const cs_arm *a, uint32_t at)
{
	const cs_arm_op *m = mem_operand(a);
	unsigned id = in->id;
	switch (id) {
	case ARM_INS_LDM: case ARM_INS_VLDMIA:
		d->cls = CLASS_LOAD;
		list_transfer(d, a, 1, a->operands[0].reg, false);
		return true;
	case ARM_INS_LDMDB: case ARM_INS_VLDMDB:
		d->cls = CLASS_LOAD;
		list_transfer(d, a, 1, a->operands[0].reg, true);
		return true;
	case ARM_INS_STM: case ARM_INS_VSTMIA:
		d->cls = CLASS_STORE;
		list_transfer(d, a, 1, a->operands[0].reg, false);
		return true;
	case ARM_INS_STMDB: case ARM_INS_VSTMDB:
		d->cls = CLASS_STORE;
		list_transfer(d, a, 1, a->operands[0].reg, true);
		return true;
	case ARM_INS_POP: case ARM_INS_VPOP:
		d->cls = CLASS_LOAD;
		list_transfer(d, a, 0, ARM_REG_SP, false);
		return true;
	case ARM_INS_PUSH: case ARM_INS_VPUSH:
		d->cls = CLASS_STORE;
		list_transfer(d, a, 0, ARM_REG_SP, true);
		return true;
	case ARM_INS_PLD: case ARM_INS_PLDW: case ARM_INS_PLI:
		return false; /* hints: the Cortex-M4 performs no access */
	default:
		break;
	}
	if (!m)
		return false;
	bool load;
	int first = 0, ndata = 1;
	switch (id) {
	case ARM_INS_LDR: case ARM_INS_LDRB: case ARM_INS_LDRH: case ARM_INS_LDRSB:
	case ARM_INS_LDRSH: case ARM_INS_LDRT: case ARM_INS_LDRBT: case ARM_INS_LDRHT:
	case ARM_INS_LDRSBT: case ARM_INS_LDRSHT: case ARM_INS_LDREX: case ARM_INS_LDREXB:
	case ARM_INS_LDREXH: case ARM_INS_VLDR:
		load = true;
		break;
	case ARM_INS_LDRD:
		load = true;
		ndata = 2;
		break;
	case ARM_INS_STR: case ARM_INS_STRB: case ARM_INS_STRH: case ARM_INS_STRT:
	case ARM_INS_STRBT: case ARM_INS_STRHT: case ARM_INS_VSTR:
		load = false;
		break;
	case ARM_INS_STRD:
		load = false;
		ndata = 2;
		break;
	case ARM_INS_STREX: case ARM_INS_STREXB: case ARM_INS_STREXH:
		load = false;
		d->unshadowed = true; /* the status the exclusive monitor gives */
		first = 1; /* operand 0 is the status register */
		d->writes |= reg_slots(a->operands[0].reg);
		break;
	case ARM_INS_TBB: case ARM_INS_TBH:
		load = true;
		ndata = 0;
		break;
	default:
		return false;
	}
	d->cls = load ? CLASS_LOAD : CLASS_STORE;
	if (!mem_address(d, m, at, id == ARM_INS_TBB || id == ARM_INS_TBH))
		return false;
	if (a->post_index)
		d->offset = 0;  /* post-indexed: the access is at the base itself */
	d->xbytes = (uint8_t)access_bytes(id);
	if (ndata == 0)
		d->xfer[d->nxfer++] = SLOT_PC;
	for (int i = first; i < first + ndata; i++)
		add_xfer(d, a->operands[i].reg);
	return true;
}

static bool loads_pc(const struct insn *d)
{
	for (unsigned i = 0; d->cls == CLASS_LOAD && i < d->nxfer; i++)
		if (d->xfer[i] == SLOT_PC)
			return true;
	return false;
}

/* Fills `d` from a decoded instruction; `in_it`: in an IT block whose condition reads the flags
 * `it_flags` (a member's condition is the IT's or its inverse, which reads the same flags). */
static void decode(csh cs, struct insn *d, const cs_insn *in, bool in_it, uint64_t it_flags)
{
	const cs_arm *a = &in->detail->arm;
	uint32_t at = (uint32_t)in->address;
	unsigned id = in->id;
	memset(d, 0, sizeof *d);
	d->key = at | 1;
	d->base = d->index = d->cond_reg = -1;
	bool conditional = in_it && a->cc != ARM_CC_AL && a->cc != ARM_CC_INVALID;
	uint64_t cond = conditional ? it_flags : 0;

	if (decode_memory(d, in, a, at)) {
		/* a conditional load that also loads PC (POPHI {r4, r5, pc}) is a conditional return:
		 * control flow, which the IT instruction reports; what it restores does not depend on
		 * the flags as a selected value does */
		d->reads = loads_pc(d) ? 0 : cond;
		return;
	}
	d->cls = CLASS_DATA;

	cs_regs rr, ww;
	uint8_t nr = 0, nw = 0;
	uint64_t reads = 0, writes = 0;
	if (cs_regs_access(cs, in, rr, &nr, ww, &nw) == CS_ERR_OK) {
		for (unsigned i = 0; i < nr; i++)
			reads |= reg_slots(rr[i]);
		for (unsigned i = 0; i < nw; i++)
			writes |= reg_slots(ww[i]);
	}
	for (int i = 0; i < a->op_count; i++) {
		const cs_arm_op *op = &a->operands[i];
		if (op->type != ARM_OP_REG)
			continue;
		if (op->access & CS_AC_WRITE)
			writes |= reg_slots(op->reg);
		if ((op->access & CS_AC_READ) || !op->access)
			reads |= reg_slots(op->reg);
	}
	if (accumulates_pair(id))
		reads |= reg_slots(a->operands[0].reg) | reg_slots(a->operands[1].reg);
	reads &= ~BIT(SLOT_PC);   /* PC reads as a constant */
	/* the flags an instruction reads: ADC, SBC, RRX read the carry; MRS, SEL, conditions below */
	if (reads_carry(in, a))
		reads = (reads & ~NZCV) | F_C;
	int s = s_bit(in);
	bool flags_written = s >= 0 ? s : a->update_flags || (writes & NZCV);
	writes &= ~NZCV;

	/* zeroing idioms: the result does not depend on the register's value */
	if ((id == ARM_INS_EOR || id == ARM_INS_SUB || id == ARM_INS_BIC || id == ARM_INS_SBC) &&
	    a->op_count >= 2) {
		const cs_arm_op *x = &a->operands[a->op_count - 2], *y = &a->operands[a->op_count - 1];
		if (x->type == ARM_OP_REG && y->type == ARM_OP_REG && x->reg == y->reg &&
		    y->shift.type == ARM_SFT_INVALID)
			reads &= id == ARM_INS_SBC ? F_C : 0;
	}

	switch (id) {
	case ARM_INS_B:
		/* a conditional branch outside IT; inside, the IT instruction decides */
		if (!in_it && a->cc != ARM_CC_AL && a->cc != ARM_CC_INVALID) {
			d->finding = TAINT_BRANCH + 1;
			d->decides = cond_flags(a->cc);
			d->cond = (uint8_t)a->cc;
		}
		return;
	case ARM_INS_BL:
		d->zeroes = BIT(TAINT_LR);
		return;
	case ARM_INS_BX: case ARM_INS_BLX:
		d->finding = TAINT_JUMP + 1;
		d->decides = reads & ~NZCV;
		d->zeroes = id == ARM_INS_BLX ? BIT(TAINT_LR) : 0;
		return;
	case ARM_INS_CBZ: case ARM_INS_CBNZ:
		d->finding = TAINT_BRANCH + 1;
		d->decides = reg_slots(a->operands[0].reg);
		d->cond = id == ARM_INS_CBZ ? ARM_CC_EQ : ARM_CC_NE;
		d->cond_reg = (int8_t)core_reg(a->operands[0].reg);
		return;
	case ARM_INS_IT:
		d->finding = TAINT_BRANCH + 1;
		d->cond = (uint8_t)a->cc;
		/* its firstcond's flags; members' writes: added by decode_at */
		d->decides = d->reads = cond_flags(a->cc);
		return;
	case ARM_INS_UDIV: case ARM_INS_SDIV:
		d->finding = TAINT_DIVISION + 1;
		d->decides = reads;
		/* its operands, whose values price it (timing_div): the outcome the host compares */
		d->src[0] = (uint8_t)core_reg(a->operands[a->op_count - 2].reg);
		d->src[1] = (uint8_t)core_reg(a->operands[a->op_count - 1].reg);
		d->shift = id == ARM_INS_SDIV;
		break;
	case ARM_INS_SEL:
		reads |= F_GE;
		break;
	case ARM_INS_MRS: /* only the APSR carries taint; other special registers are untainted */
		reads = a->op_count == 2 && a->operands[1].type == ARM_OP_SYSREG &&
				is_apsr_sysreg(a->operands[1].reg)
			? NZCV | F_Q | F_GE : 0;
		d->unshadowed = !reads;
		break;
	case ARM_INS_MSR:
		writes = 0;
		flags_written = false;
		if (a->op_count == 2 && a->operands[0].type == ARM_OP_SYSREG &&
		    is_apsr_sysreg(a->operands[0].reg)) {
			/* APSR_nzcvq (plain APSR is that), APSR_g or APSR_nzcvqg: each field it names is
			 * written from the source register */
			int s = a->operands[0].reg;
			bool g_only = s == ARM_SYSREG_APSR_G || s == ARM_SYSREG_IAPSR_G ||
				      s == ARM_SYSREG_EAPSR_G || s == ARM_SYSREG_XPSR_G;
			bool with_g = g_only || s == ARM_SYSREG_APSR_NZCVQG || s == ARM_SYSREG_IAPSR_NZCVQG ||
				      s == ARM_SYSREG_EAPSR_NZCVQG || s == ARM_SYSREG_XPSR_NZCVQG;
			writes |= (g_only ? 0 : NZCV | F_Q) | (with_g ? F_GE : 0);
		}
		break;
	case ARM_INS_VMRS: /* VMRS APSR_nzcv, FPSCR or VMRS Rt, FPSCR */
		reads = BIT(TAINT_FPSCR);
		d->unshadowed = a->operands[0].reg != ARM_REG_APSR_NZCV; /* the rounding mode too */
		flags_written = false;
		writes = a->operands[0].reg == ARM_REG_APSR_NZCV ? NZCV : reg_slots(a->operands[0].reg);
		break;
	case ARM_INS_VMSR:
		reads &= ~BIT(TAINT_FPSCR);
		writes = BIT(TAINT_FPSCR);
		break;
	case ARM_INS_VMOV:
		/* two core registers <-> two singles or a d register: moved pairwise, in operand order */
		if (a->op_count >= 3) {
			struct insn p = {.nxfer = 0};
			uint8_t src[XFER_MAX];
			unsigned nsrc = 0;
			for (int i = 0; i < a->op_count; i++) {
				const cs_arm_op *op = &a->operands[i];
				if (op->access & CS_AC_WRITE) {
					add_xfer(&p, op->reg);
				} else {
					for (uint64_t m = reg_slots(op->reg); m && nsrc < XFER_MAX; m &= m - 1)
						src[nsrc++] = (uint8_t)__builtin_ctzll(m);
				}
			}
			if (p.nxfer == 2 && nsrc == 2) {
				d->cls = CLASS_PAIRS;
				d->nxfer = 2;
				memcpy(d->xfer, p.xfer, 2);
				memcpy(d->src, src, 2);
				d->reads = cond;
				return;
			}
		}
		break;
	default:
		break;
	}
	reads |= cond;
	if (flags_written && !sets_ge(id) && !sets_q(id)) {
		uint64_t set, merge;
		flag_writes(in, a, &set, &merge);
		writes |= set;
		d->merges |= merge;
	}
	if (sets_ge(id))
		writes |= F_GE;
	if (sets_q(id))
		d->merges |= F_Q;
	if (writes & BIT(SLOT_PC)) { /* MOV PC, ADD PC: a computed jump */
		d->finding = TAINT_JUMP + 1;
		d->decides = reads & ~cond;
	}
	d->reads = reads;
	d->writes = writes & ~BIT(SLOT_PC);
}

/* Registers an instruction may write whose value the flags select when it is IT-conditional
 * (the IT block rule); not those of a conditional return. */
static uint64_t destinations(const struct insn *d)
{
	uint64_t m = d->writes | d->merges | d->zeroes;
	if (loads_pc(d))
		return 0;
	if (d->cls == CLASS_LOAD || d->cls == CLASS_PAIRS)
		for (unsigned i = 0; i < d->nxfer; i++)
			m |= BIT(d->xfer[i]);
	return m & ~BIT(SLOT_PC);
}

/* ---- the decoded-instruction cache ---- */

static struct insn *insn_put(struct taint_decoder *dec, const struct insn *d)
{
	if (2 * (dec->insn_used + 1) > dec->insn_mask + 1) {
		struct insn *old = dec->insns;
		uint32_t n = dec->insn_mask + 1;
		dec->insn_mask = 2 * n - 1;
		dec->insns = calloc(2 * (size_t)n, sizeof *dec->insns);
		for (uint32_t i = 0; i < n; i++)
			if (old[i].key)
				*insn_slot(dec, old[i].key & ~1u) = old[i];
		free(old);
	}
	struct insn *s = insn_slot(dec, d->key & ~1u);
	if (!s->key)
		dec->insn_used++;
	*s = *d;
	return s;
}

/* An IT block whose members each cost one cycle when they execute (single-cycle data
 * processing: no load or store, branch, division or multi-cycle FP operation, as the timing
 * model prices them) costs the same whichever way its condition goes, because a skipped
 * conditional instruction also costs one cycle (timing.c): a constant-time select. */
static bool it_is_select(struct taint_decoder *dec, const uint8_t *code, uint32_t size,
			 uint32_t addr, size_t members)
{
	if (!dec->it_timing && !(dec->it_timing = malloc(sizeof *dec->it_timing)))
		return false;
	struct block_timing *bt = dec->it_timing;
	if (!timing_analyze(dec->cs, code, size, addr, NULL, bt) || bt->ninsns != 1 + members)
		return false;
	for (uint32_t i = 1; i < bt->ninsns; i++)
		if (bt->insn[i].cycles != 1 || bt->insn[i].mem)
			return false;
	return true;
}

struct insn *taint_decode_at(struct taint_decoder *dec, const struct taint_core *core,
			     uint32_t addr)
{
	uint8_t code[2 + 4 * 4];
	uint32_t len = core->code(core->core, addr, code, sizeof code);
	cs_insn *in = NULL;
	size_t n = cs_disasm(dec->cs, code, len, addr, 1, &in);
	if (n != 1) {
		cs_free(in, n);
		return NULL;
	}
	if (in[0].id == ARM_INS_IT) {
		size_t members = strlen(in[0].mnemonic) - 1;
		cs_free(in, n);
		n = cs_disasm(dec->cs, code, len, addr, 1 + members, &in);
		if (n != 1 + members) {
			cs_free(in, n);
			return NULL;
		}
	}
	struct insn d, it;
	decode(dec->cs, &it, &in[0], false, 0);
	uint64_t it_flags = cond_flags(in[0].detail->arm.cc);
	for (size_t i = 1; i < n; i++) {
		decode(dec->cs, &d, &in[i], true, it_flags);
		it.merges |= destinations(&d);
		insn_put(dec, &d);
	}
	if (n > 1 && it_is_select(dec, code, (uint32_t)(in[n - 1].address + in[n - 1].size - addr),
				  addr, n - 1))
		it.finding = TAINT_SELECT + 1;
	cs_free(in, n);
	return insn_put(dec, &it);
}

bool taint_decoder_open(struct taint_decoder *dec)
{
	if (cs_open(CS_ARCH_ARM, CS_MODE_THUMB | CS_MODE_MCLASS, &dec->cs) != CS_ERR_OK)
		return false;
	cs_option(dec->cs, CS_OPT_DETAIL, CS_OPT_ON);
	dec->insn_mask = (1u << 12) - 1;
	dec->insns = calloc(dec->insn_mask + 1, sizeof *dec->insns);
	return true;
}

void taint_decoder_close(struct taint_decoder *dec)
{
	cs_close(&dec->cs);
	free(dec->insns);
	free(dec->it_timing);
}
