/* Unit tests of the taint propagation and findings on raw Thumb-2 encodings (no emulator): a fake
 * core gives the code and the register values that loads and stores use for their addresses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "chip.h"
#include "elf.h"
#include "memmap.h"
#include "taint.h"
#include "timing.h"

#define CODE 0x08000100u
#define BUF (SRAM_BASE + 0x100)
#define S TAINT_SECRET
#define D TAINT_DECLASSIFIED

static uint32_t regs[TAINT_CORE_XPSR + 1];
static uint8_t code[64];
static uint32_t code_len;
static uint32_t code_base = CODE; /* where run() places the code; a tracker caches by address */

static uint32_t fake_reg(void *core, int n)
{
	(void)core;
	return regs[n];
}

static uint32_t fake_code(void *core, uint32_t addr, uint8_t *buf, uint32_t len)
{
	(void)core;
	if (addr - code_base >= code_len)
		return 0;
	uint32_t n = code_len - (addr - code_base) < len ? code_len - (addr - code_base) : len;
	memcpy(buf, code + (addr - code_base), n);
	return n;
}

/* Whether the fake board's flash loads wait by their address (flash wait states behind the ART). */
static bool flash_timed;

static bool fake_flash_load_timed(void *core)
{
	(void)core;
	return flash_timed;
}

/* The values of the words from BUF (the taint tracker sees values only to key leaf summaries). */
static uint32_t memory_words[64];

static bool fake_read_word(void *core, uint32_t addr, uint32_t *value)
{
	(void)core;
	if (addr - BUF > sizeof memory_words - 4)
		return false;
	memcpy(value, (const uint8_t *)memory_words + (addr - BUF), 4);
	return true;
}

static const struct taint_core fake_core = {NULL, fake_reg, fake_code, fake_flash_load_timed, fake_read_word};

/* A fresh tracker recording findings, as inside a call of the scope function. */
static struct taint *fresh(void)
{
	struct taint *t = taint_new(NULL, &chip_stm32f407);
	taint_attach(t, &fake_core);
	taint_record(t, true);
	memset(regs, 0, sizeof regs);
	regs[13] = SRAM_BASE + 0x1000;
	code_base = CODE;
	flash_timed = false;
	return t;
}

/* Runs the instructions of `hw` (little-endian halfwords) at code_base in order, except those
 * whose index is set in `skip` (an IT-block instruction whose condition failed). A tracker
 * decodes each address once: other code with the same tracker goes to another code_base. */
static void run(struct taint *t, const uint16_t *hw, size_t n, uint32_t skip)
{
	for (size_t i = 0; i < n; i++) {
		code[2 * i] = (uint8_t)hw[i];
		code[2 * i + 1] = (uint8_t)(hw[i] >> 8);
	}
	code_len = (uint32_t)(2 * n);
	for (size_t i = 0, k = 0; i < n; k++) {
		bool wide = (hw[i] >> 11) >= 0x1d;
		if (!(skip & (1u << k)))
			CHECK(taint_insn(t, code_base + 2 * (uint32_t)i));
		i += wide ? 2 : 1;
	}
}

#define RUN(t, skip, ...) \
	run(t, (const uint16_t[]){__VA_ARGS__}, sizeof((uint16_t[]){__VA_ARGS__}) / 2, skip)

static bool finding(struct taint *t, uint32_t offset, enum taint_kind kind, bool declassified)
{
	bool d = !declassified;
	return taint_finding(t, code_base + offset, kind, &d) == 1 && d == declassified;
}

static bool no_finding(struct taint *t, uint32_t offset, enum taint_kind kind)
{
	return taint_finding(t, code_base + offset, kind, NULL) == 0;
}

/* The APSR condition flags' four slots. */
static void set_flags(struct taint *t, uint8_t n, uint8_t z, uint8_t c, uint8_t v)
{
	taint_set(t, TAINT_APSR_N, n);
	taint_set(t, TAINT_APSR_Z, z);
	taint_set(t, TAINT_APSR_C, c);
	taint_set(t, TAINT_APSR_V, v);
}

static bool flags_are(struct taint *t, uint8_t n, uint8_t z, uint8_t c, uint8_t v)
{
	return taint_get(t, TAINT_APSR_N) == n && taint_get(t, TAINT_APSR_Z) == z &&
	       taint_get(t, TAINT_APSR_C) == c && taint_get(t, TAINT_APSR_V) == v;
}

static void test_data_processing_and_flags(void)
{
	struct taint *t = fresh();
	taint_set(t, 1, S);
	RUN(t, 0,
	    0x1888,          /* adds r0, r1, r2: r0 and all of NZCV from r1 */
	    0x2301,          /* movs r3, #1: r3 clean, N and Z only: C and V stay secret */
	    0xeb42, 0x0403,  /* adc.w r4, r2, r3: reads the (secret) carry */
	    0x429a,          /* cmp r2, r3: all of NZCV from clean registers */
	    0xeb42, 0x0503); /* adc.w r5, r2, r3: clean carry now */
	CHECK(taint_get(t, 0) == S);
	CHECK(taint_get(t, 3) == 0);
	CHECK(taint_get(t, 4) == S);
	CHECK(taint_get(t, 5) == 0);
	CHECK(flags_are(t, 0, 0, 0, 0));
	taint_free(t);
}

static void test_zeroing_idioms(void)
{
	struct taint *t = fresh();
	taint_set(t, 1, S);
	taint_set(t, 2, S);
	taint_set(t, 5, S);
	taint_set(t, 6, S);
	set_flags(t, S, S, D, S);  /* SBC reads only the carry */
	RUN(t, 0,
	    0x4049,          /* eors r1, r1 */
	    0xeba2, 0x0502,  /* sub.w r5, r2, r2 */
	    0xf04f, 0x0605,  /* mov.w r6, #5 */
	    0xf002, 0x0700,  /* and.w r7, r2, #0: not special-cased, stays tainted */
	    0x4180);         /* sbcs r0, r0: the carry only */
	CHECK(taint_get(t, 1) == 0 && taint_get(t, 5) == 0 && taint_get(t, 6) == 0);
	CHECK(taint_get(t, 7) == S);
	CHECK(taint_get(t, 0) == D);
	taint_free(t);
}

static void test_loads_and_stores_per_byte(void)
{
	struct taint *t = fresh();
	taint_set(t, 0, S);
	regs[1] = BUF;
	RUN(t, 0,
	    0x7048,   /* strb r0, [r1, #1] */
	    0x680a,   /* ldr r2, [r1]: a word with a secret byte */
	    0x780b,   /* ldrb r3, [r1] */
	    0x784c);  /* ldrb r4, [r1, #1] */
	CHECK(taint_memory(t, BUF) == 0 && taint_memory(t, BUF + 1) == S &&
	      taint_memory(t, BUF + 2) == 0);
	CHECK(taint_get(t, 2) == S && taint_get(t, 3) == 0 && taint_get(t, 4) == S);
	CHECK(taint_finding(t, CODE, TAINT_ADDRESS, NULL) == 0);
	taint_free(t);
}

static void test_secret_address(void)
{
	struct taint *t = fresh();
	taint_set(t, 2, S);
	regs[1] = BUF;
	regs[2] = 8;
	RUN(t, 0,
	    0xf851, 0x3022,  /* ldr.w r3, [r1, r2, lsl #2]: a secret index */
	    0x508c);         /* str r4, [r1, r2]: clean value, secret address */
	CHECK(taint_get(t, 3) == S);
	CHECK(finding(t, 0, TAINT_ADDRESS, false) && finding(t, 4, TAINT_ADDRESS, false));
	CHECK(taint_memory(t, BUF + 8) == S && taint_memory(t, BUF + 11) == S &&
	      taint_memory(t, BUF + 12) == 0);
	taint_free(t);
}

static void test_push_pop_per_register(void)
{
	struct taint *t = fresh();
	uint32_t sp = regs[13];
	taint_set(t, 4, S);
	RUN(t, 0, 0xb530);  /* push {r4, r5, lr}: r4 at sp-12, r5 at sp-8, lr at sp-4 */
	CHECK(taint_memory(t, sp - 12) == S && taint_memory(t, sp - 9) == S);
	CHECK(taint_memory(t, sp - 8) == 0 && taint_memory(t, sp - 1) == 0);
	regs[13] = sp - 12;
	code_base += 0x40;
	RUN(t, 0, 0xbdc0);  /* pop {r6, r7, pc}: only r6 is secret, the return is not */
	CHECK(taint_get(t, 6) == S && taint_get(t, 7) == 0);
	CHECK(taint_finding(t, code_base, TAINT_JUMP, NULL) == 0);
	taint_mark(t, sp - 4, 4, S);  /* a secret return address */
	RUN(t, 0, 0xbdc0);
	CHECK(finding(t, 0, TAINT_JUMP, false));
	taint_free(t);
}

static void test_ldrd_strd(void)
{
	struct taint *t = fresh();
	regs[2] = BUF;
	taint_mark(t, BUF + 1, 1, S);
	RUN(t, 0,
	    0xe9d2, 0x0100,  /* ldrd r0, r1, [r2] */
	    0xe9c2, 0x0102); /* strd r0, r1, [r2, #8] */
	CHECK(taint_get(t, 0) == S && taint_get(t, 1) == 0);
	CHECK(taint_memory(t, BUF + 8) == S && taint_memory(t, BUF + 11) == S &&
	      taint_memory(t, BUF + 12) == 0);
	taint_free(t);
}

static void test_division(void)
{
	struct taint *t = fresh();
	taint_set(t, 1, S);
	RUN(t, 0, 0xfbb1, 0xf0f2);  /* udiv r0, r1, r2 */
	CHECK(finding(t, 0, TAINT_DIVISION, false));
	CHECK(taint_get(t, 0) == S);
	taint_free(t);

	t = fresh();
	taint_set(t, 2, D);
	RUN(t, 0, 0xfbb1, 0xf0f2);
	CHECK(finding(t, 0, TAINT_DIVISION, true));
	taint_set(t, 1, S);  /* once secret, the finding is secret */
	RUN(t, 0, 0xfbb1, 0xf0f2);
	bool declassified = true;
	CHECK(taint_finding(t, CODE, TAINT_DIVISION, &declassified) == 2 && !declassified);
	taint_free(t);

	t = fresh();
	RUN(t, 0, 0xfbb1, 0xf0f2);
	CHECK(taint_finding(t, CODE, TAINT_DIVISION, NULL) == 0);
	taint_free(t);
}

static void test_it_block(void)
{
	struct taint *t = fresh();
	set_flags(t, S, S, S, S);
	/* ite eq; moveq r0, #1; movne r1, #2 (skipped): both depend on the flags; single-cycle
	 * members cost the same executed or skipped: a select, not a branch */
	RUN(t, 1u << 2, 0xbf0c, 0x2001, 0x2102);
	CHECK(finding(t, 0, TAINT_SELECT, false) && no_finding(t, 0, TAINT_BRANCH));
	CHECK(taint_get(t, 0) == S && taint_get(t, 1) == S);
	CHECK(taint_finding(t, CODE + 2, TAINT_BRANCH, NULL) == 0);
	taint_free(t);

	/* a conditional load costs 2 cycles executed and 1 skipped: a branch */
	t = fresh();
	set_flags(t, S, S, S, S);
	regs[1] = BUF;
	RUN(t, 0, 0xbf08, 0x6808);  /* it eq; ldreq r0, [r1] */
	CHECK(finding(t, 0, TAINT_BRANCH, false) && no_finding(t, 0, TAINT_SELECT));
	CHECK(taint_get(t, 0) == S);
	taint_free(t);

	/* so does a multi-cycle member among single-cycle ones (udiv: 2..12 cycles) */
	t = fresh();
	set_flags(t, S, S, S, S);
	RUN(t, 0, 0xbf04, 0x2001, 0xfbb1, 0xf0f2);  /* itt eq; moveq r0, #1; udiveq r0, r1, r2 */
	CHECK(finding(t, 0, TAINT_BRANCH, false) && no_finding(t, 0, TAINT_SELECT));
	taint_free(t);

	/* a conditional return restores registers: control flow, not a select */
	t = fresh();
	set_flags(t, S, S, S, S);
	RUN(t, 0, 0xbf88, 0xbd30);  /* it hi; pophi {r4, r5, pc} */
	CHECK(finding(t, 0, TAINT_BRANCH, false));
	CHECK(taint_get(t, 4) == 0 && taint_get(t, 5) == 0);
	CHECK(taint_finding(t, code_base + 2, TAINT_JUMP, NULL) == 0);
	taint_free(t);

	/* inside IT, 16-bit "adds" is "addeq" and leaves the flags alone */
	t = fresh();
	taint_set(t, 1, S);
	RUN(t, 0, 0xbf08, 0x1840);  /* it eq; addeq r0, r0, r1 */
	CHECK(taint_get(t, 0) == S && flags_are(t, 0, 0, 0, 0));
	CHECK(taint_finding(t, CODE, TAINT_BRANCH, NULL) == 0);
	taint_free(t);
}

/* newlib's memset: a constant-time `cmp` on a key byte left secret flags; `lsls r3, r0, #30`
 * on a public pointer sets N, Z and C, not V: a BEQ (Z) is no finding, a BVS (V) is. */
static void test_flags_memset_pattern(void)
{
	static const uint16_t branches[] = {0xd000 /* beq */, 0xd600 /* bvs */};
	for (int k = 0; k < 2; k++) {
		struct taint *t = fresh();
		taint_set(t, 1, S);
		regs[0] = BUF;
		RUN(t, 0,
		    0x2900,          /* cmp r1, #0: N Z C V secret */
		    0x0783,          /* lsls r3, r0, #30: N Z C from r0 */
		    0xb530,          /* push {r4, r5, lr} */
		    branches[k]);
		CHECK(flags_are(t, 0, 0, 0, S));
		CHECK(k == 0 ? no_finding(t, 6, TAINT_BRANCH) : finding(t, 6, TAINT_BRANCH, false));
		taint_free(t);
	}
}

/* ADDS/CMP write all four flags, MOVS #imm only N and Z; a branch reads only the flags of its
 * condition. */
static void test_flags_arithmetic_and_conditions(void)
{
	struct taint *t = fresh();
	taint_set(t, 1, S);
	RUN(t, 0,
	    0x1888,   /* adds r0, r1, r2: N Z C V secret */
	    0xd200,   /* bcs: a secret carry */
	    0x2301,   /* movs r3, #1: N Z public, C V stay secret */
	    0xd200,   /* bcs */
	    0xd000,   /* beq */
	    0x429a,   /* cmp r2, r3: all public */
	    0xd200);  /* bcs */
	CHECK(finding(t, 2, TAINT_BRANCH, false) && finding(t, 6, TAINT_BRANCH, false));
	CHECK(no_finding(t, 8, TAINT_BRANCH) && no_finding(t, 12, TAINT_BRANCH));
	taint_free(t);

	/* each condition against a single secret flag */
	static const struct { uint16_t b; uint8_t reads; } conds[] = {
		{0xd000, 2}, {0xd100, 2}, {0xd200, 4}, {0xd300, 4}, {0xd400, 1}, {0xd500, 1},
		{0xd600, 8}, {0xd700, 8}, {0xd800, 6}, {0xd900, 6}, {0xda00, 9}, {0xdb00, 9},
		{0xdc00, 11}, {0xdd00, 11}, {0xe000, 0} /* b: always */,
	};  /* reads: N 1, Z 2, C 4, V 8 */
	for (size_t i = 0; i < sizeof conds / sizeof conds[0]; i++) {
		for (int f = 0; f < 4; f++) {
			t = fresh();
			set_flags(t, f == 0 ? S : 0, f == 1 ? S : 0, f == 2 ? S : 0,
				  f == 3 ? S : 0);
			RUN(t, 0, conds[i].b);
			CHECK((conds[i].reads >> f & 1) ? finding(t, 0, TAINT_BRANCH, false)
						       : no_finding(t, 0, TAINT_BRANCH));
			taint_free(t);
		}
	}
}

/* Logical instructions with S write N and Z, and C only through a shift or a rotated
 * immediate; shifts write C when their amount can be non-zero. */
static void test_flags_logical_and_shifts(void)
{
	struct taint *t = fresh();
	taint_set(t, 1, S);
	RUN(t, 0,
	    0x4008,   /* ands r0, r1: no shift, C unchanged (public) */
	    0xd200,   /* bcs */
	    0xd000);  /* beq: Z is secret */
	CHECK(flags_are(t, S, S, 0, 0));
	CHECK(no_finding(t, 2, TAINT_BRANCH) && finding(t, 4, TAINT_BRANCH, false));
	taint_free(t);

	t = fresh();
	taint_set(t, 2, S);
	RUN(t, 0, 0xea12, 0x0403);  /* ands.w r4, r2, r3 */
	CHECK(flags_are(t, S, S, 0, 0));
	code_base += 0x40;
	RUN(t, 0, 0xea12, 0x04c3);  /* ands.w r4, r2, r3, lsl #3: the shift's carry */
	CHECK(flags_are(t, S, S, S, 0));
	taint_free(t);

	t = fresh();
	taint_set(t, 2, S);
	RUN(t, 0, 0xf012, 0x04ff);  /* ands r4, r2, #0xff: not rotated, C unchanged */
	CHECK(flags_are(t, S, S, 0, 0));
	code_base += 0x40;
	RUN(t, 0, 0xf412, 0x747f);  /* ands r4, r2, #0x3fc: rotated, writes C */
	CHECK(flags_are(t, S, S, S, 0));
	taint_free(t);

	t = fresh();
	set_flags(t, S, S, S, S);
	RUN(t, 0, 0x4083);          /* lsls r3, r0 by a register: C kept when the amount is 0 */
	CHECK(flags_are(t, 0, 0, S, S));
	code_base += 0x40;
	RUN(t, 0, 0x0803);          /* lsrs r3, r0, #32 */
	CHECK(flags_are(t, 0, 0, 0, S));
	set_flags(t, S, S, S, S);
	code_base += 0x40;
	RUN(t, 0, 0x4343);          /* muls r3, r0, r3: N and Z only */
	CHECK(flags_are(t, 0, 0, S, S));
	code_base += 0x40;
	RUN(t, 0, 0x2001);          /* movs r0, #1 */
	CHECK(flags_are(t, 0, 0, S, S));
	set_flags(t, S, S, S, S);
	code_base += 0x40;
	RUN(t, 0, 0x0003);          /* movs r3, r0 (lsls r3, r0, #0; capstone's MOVS): N and Z */
	CHECK(flags_are(t, 0, 0, S, S));
	code_base += 0x40;
	RUN(t, 0, 0xea5f, 0x0330);  /* rrxs r3, r0: N Z C from r0 and the carry */
	CHECK(flags_are(t, S, S, S, S) && taint_get(t, 3) == S);
	taint_free(t);
}

/* An IT block reads the flags of its condition only, at the IT and in its members' selects. */
static void test_flags_it_condition(void)
{
	struct taint *t = fresh();
	taint_set(t, 1, S);
	RUN(t, 0,
	    0x1888,   /* adds r0, r1, r2: N Z C V secret */
	    0x2301);  /* movs r3, #1: N Z public, C V secret */
	code_base += 0x40;
	RUN(t, 1u << 2, 0xbf0c, 0x2601, 0x2702);  /* ite eq; moveq r6, #1; movne r7, #2 */
	CHECK(no_finding(t, 0, TAINT_BRANCH));
	CHECK(taint_get(t, 6) == 0 && taint_get(t, 7) == 0);
	code_base += 0x40;
	RUN(t, 0, 0xbf28, 0x2701);  /* it cs; movcs r7, #1 */
	CHECK(finding(t, 0, TAINT_SELECT, false) && taint_get(t, 7) == S);
	taint_free(t);

	t = fresh();
	set_flags(t, 0, 0, S, 0);   /* only C */
	RUN(t, 1u << 1, 0xbf14, 0x2001, 0x2102);  /* ite ne; movne r0, #1 (skipped); moveq r1, #2 */
	CHECK(no_finding(t, 0, TAINT_BRANCH) && taint_get(t, 0) == 0 && taint_get(t, 1) == 0);
	taint_free(t);

	/* HI reads C and Z: a secret Z makes the IT a finding and its members selects */
	t = fresh();
	set_flags(t, S, 0, 0, S);
	RUN(t, 0, 0xbf88, 0x2001);  /* it hi; movhi r0, #1 */
	CHECK(no_finding(t, 0, TAINT_SELECT) && taint_get(t, 0) == 0);
	set_flags(t, 0, D, 0, 0);
	code_base += 0x40;
	RUN(t, 0, 0xbf88, 0x2001);
	CHECK(finding(t, 0, TAINT_SELECT, true) && taint_get(t, 0) == D);
	taint_free(t);
}

/* ADC, SBC and RRX read the carry and no other flag; without S they write no flag (capstone
 * says ADC.W and SBC.W without S update the flags: the S bit of the encoding decides). */
static void test_flags_carry_readers(void)
{
	struct taint *t = fresh();
	set_flags(t, S, S, 0, S);
	RUN(t, 0,
	    0xeb42, 0x0403,  /* adc.w r4, r2, r3 */
	    0xeb62, 0x0503,  /* sbc.w r5, r2, r3 */
	    0xea4f, 0x0630); /* rrx r6, r0 */
	CHECK(taint_get(t, 4) == 0 && taint_get(t, 5) == 0 && taint_get(t, 6) == 0);
	CHECK(flags_are(t, S, S, 0, S));
	taint_free(t);

	t = fresh();
	set_flags(t, 0, 0, D, 0);
	RUN(t, 0,
	    0xeb42, 0x0403,  /* adc.w r4, r2, r3 */
	    0x4143);         /* adcs r3, r0: all four flags from r3, r0 and C */
	CHECK(taint_get(t, 4) == D && taint_get(t, 3) == D);
	CHECK(flags_are(t, D, D, D, D));
	taint_free(t);
}

/* MSR APSR_nzcvq writes the four flags and Q, MSR APSR_g the GE bits; MRS APSR reads them all. */
static void test_flags_msr_mrs(void)
{
	struct taint *t = fresh();
	taint_set(t, 0, S);
	RUN(t, 0, 0xf380, 0x8800);  /* msr apsr_nzcvq, r0 */
	CHECK(flags_are(t, S, S, S, S) && taint_get(t, TAINT_APSR_Q) == S &&
	      taint_get(t, TAINT_APSR_GE) == 0);
	taint_free(t);

	t = fresh();
	taint_set(t, 0, S);
	RUN(t, 0, 0xf380, 0x8400);  /* msr apsr_g, r0 */
	CHECK(flags_are(t, 0, 0, 0, 0) && taint_get(t, TAINT_APSR_Q) == 0 &&
	      taint_get(t, TAINT_APSR_GE) == S);
	taint_free(t);

	t = fresh();
	set_flags(t, 0, 0, 0, D);
	RUN(t, 0, 0xf3ef, 0x8100);  /* mrs r1, apsr */
	CHECK(taint_get(t, 1) == D);
	taint_free(t);
}

static void test_vmov_core_fp(void)
{
	struct taint *t = fresh();
	taint_set(t, 0, S);
	taint_set(t, 2, D);
	RUN(t, 0,
	    0xee01, 0x0a90,  /* vmov s3, r0 */
	    0xee11, 0x5a90,  /* vmov r5, s3 */
	    0xec41, 0x0b11,  /* vmov d1, r0, r1: s2 <- r0, s3 <- r1 */
	    0xec53, 0x2b11,  /* vmov r2, r3, d1: r2 <- s2, r3 <- s3 */
	    0xec42, 0x3a13); /* vmov s6, s7, r3, r2: s6 <- r3, s7 <- r2 */
	CHECK(taint_get(t, 5) == S);
	CHECK(taint_get(t, TAINT_S0 + 2) == S && taint_get(t, TAINT_S0 + 3) == 0);
	CHECK(taint_get(t, 2) == S && taint_get(t, 3) == 0);
	CHECK(taint_get(t, TAINT_S0 + 6) == 0 && taint_get(t, TAINT_S0 + 7) == S);
	taint_free(t);
}

static void test_vldr_vstr(void)
{
	struct taint *t = fresh();
	uint32_t sp = regs[13];
	taint_set(t, TAINT_S0 + 3, S);
	regs[1] = BUF;
	RUN(t, 0,
	    0xed81, 0x1b00,  /* vstr d1, [r1]: s2 at BUF, s3 at BUF+4 */
	    0xedd1, 0x2a01,  /* vldr s5, [r1, #4] */
	    0xed2d, 0x1a02); /* vpush {s2-s3} */
	CHECK(taint_memory(t, BUF + 3) == 0 && taint_memory(t, BUF + 4) == S);
	CHECK(taint_get(t, TAINT_S0 + 5) == S);
	CHECK(taint_memory(t, sp - 8) == 0 && taint_memory(t, sp - 4) == S);
	taint_free(t);
}

static void test_fp_compare_and_branches(void)
{
	struct taint *t = fresh();
	taint_set(t, TAINT_S0, S);
	taint_set(t, 0, D);
	RUN(t, 0,
	    0xeeb4, 0x0a60,  /* vcmp.f32 s0, s1 */
	    0xeef1, 0xfa10,  /* vmrs APSR_nzcv, fpscr */
	    0xd100,          /* bne */
	    0xbf00,          /* nop */
	    0xb108);         /* cbz r0 */
	CHECK(taint_get(t, TAINT_FPSCR) == S && flags_are(t, S, S, S, S));
	CHECK(finding(t, 8, TAINT_BRANCH, false));
	CHECK(finding(t, 12, TAINT_BRANCH, true));
	taint_free(t);
}

/* A branch finding counts the executions that went the taken way, read from the flags (B<cc>,
 * IT) or the register (CBZ, CBNZ) as it is about to execute: one way every time means the secret
 * never changed the path. */
static void test_branch_directions(void)
{
	struct taint *t = fresh();
	taint_set(t, 0, S);
	set_flags(t, S, S, S, S);
	const uint32_t z = 1u << 30;
	const uint32_t xpsr[] = {0, 0, z}, r0[] = {0, 5, 0};
	for (unsigned i = 0; i < 3; i++) {
		regs[TAINT_CORE_XPSR] = xpsr[i];
		regs[0] = r0[i];
		regs[2] = BUF;
		RUN(t, 0,
		    0xd100,          /* bne: taken while Z is clear */
		    0xb108,          /* cbz r0: taken while r0 is 0 */
		    0xb908,          /* cbnz r0 */
		    0xbf08,          /* it eq */
		    0x6811);         /* ldreq r1, [r2]: a load, so the IT is a branch, not a select */
	}
	CHECK(taint_finding(t, code_base, TAINT_BRANCH, NULL) == 3 && taint_branch_taken(t, code_base) == 2);
	CHECK(taint_finding(t, code_base + 2, TAINT_BRANCH, NULL) == 3 && taint_branch_taken(t, code_base + 2) == 2);
	CHECK(taint_branch_taken(t, code_base + 4) == 1);
	CHECK(taint_finding(t, code_base + 6, TAINT_BRANCH, NULL) == 3 && taint_branch_taken(t, code_base + 6) == 1);
	taint_free(t);
}

static void test_jumps(void)
{
	struct taint *t = fresh();
	taint_set(t, 0, S);
	taint_set(t, 3, S);
	RUN(t, 0,
	    0x2800,   /* cmp r0, #0 */
	    0xd000,   /* beq */
	    0xbf00,   /* nop */
	    0x4718);  /* bx r3 */
	CHECK(finding(t, 2, TAINT_BRANCH, false));
	CHECK(finding(t, 6, TAINT_JUMP, false));
	CHECK(taint_finding(t, CODE, TAINT_BRANCH, NULL) == 0);
	taint_free(t);

	t = fresh();
	taint_set(t, 2, S);
	RUN(t, 0, 0xe8df, 0xf002);  /* tbb [pc, r2]: a secret index */
	CHECK(finding(t, 0, TAINT_JUMP, false) && finding(t, 0, TAINT_ADDRESS, false));
	taint_free(t);

	t = fresh();
	taint_set(t, 3, S);
	taint_set(t, TAINT_LR, S);
	RUN(t, 0,
	    0xf000, 0xf800,  /* bl: LR holds a return address */
	    0x4798);         /* blx r3 */
	CHECK(taint_get(t, TAINT_LR) == 0);
	CHECK(finding(t, 4, TAINT_JUMP, false));
	taint_free(t);
}

static void test_capstone_gaps(void)
{
	struct taint *t = fresh();
	taint_set(t, 0, S);
	taint_set(t, 5, D);
	RUN(t, 0,
	    0xfbe2, 0x0103,  /* umlal r0, r1, r2, r3: the accumulator r1:r0 is read */
	    0xf305, 0x0407); /* ssat r4, #8, r5: capstone does not list r5 as read */
	CHECK(taint_get(t, 1) == S && taint_get(t, 4) == D);
	taint_free(t);
}

static void test_literal_and_indexed_addresses(void)
{
	struct taint *t = fresh();
	regs[2] = BUF + 16;
	taint_mark(t, BUF + 16, 1, S);
	RUN(t, 0,
	    0x4801,          /* ldr r0, [pc, #4]: flash */
	    0xf852, 0x1b04,  /* ldr.w r1, [r2], #4: post-indexed, at r2 */
	    0xf852, 0x3d04); /* ldr.w r3, [r2, #-4]!: at r2 - 4 (r2 not advanced here) */
	CHECK(taint_get(t, 0) == 0 && taint_get(t, 1) == S && taint_get(t, 3) == 0);
	taint_free(t);
}

static void test_exception_keeps_register_taint(void)
{
	struct taint *t = fresh();
	uint32_t frame = regs[13] - 0x20;
	taint_set(t, 0, S);
	taint_set(t, 12, D);
	taint_set(t, TAINT_LR, S);
	taint_exception_entry(t, frame, false);
	CHECK(taint_get(t, TAINT_LR) == 0);  /* EXC_RETURN */
	CHECK(taint_memory(t, frame) == S && taint_memory(t, frame + 16) == D &&
	      taint_memory(t, frame + 4) == 0);
	taint_set(t, 0, 0);      /* the handler overwrites r0 ... */
	taint_set(t, 3, S);      /* ... and r3, and branches on it: no finding in a handler */
	RUN(t, 0, 0xb10b);       /* cbz r3 */
	CHECK(taint_finding(t, CODE, TAINT_BRANCH, NULL) == 0);
	taint_exception_return(t);
	CHECK(taint_get(t, 0) == S && taint_get(t, 3) == 0 && taint_get(t, 12) == D &&
	      taint_get(t, TAINT_LR) == S);
	RUN(t, 0, 0xb10b);
	CHECK(taint_finding(t, CODE, TAINT_BRANCH, NULL) == 0);
	taint_free(t);

	/* the four flags, Q and GE are saved and restored each on its own; the stacked xPSR's
	 * shadow is their OR */
	t = fresh();
	set_flags(t, 0, S, 0, 0);
	taint_set(t, TAINT_APSR_Q, 0);
	taint_set(t, TAINT_APSR_GE, D);
	taint_exception_entry(t, frame, false);
	CHECK(taint_memory(t, frame + 28) == (S | D) && taint_memory(t, frame + 24) == 0);
	set_flags(t, S, 0, 0, S);  /* the handler's own flags */
	taint_set(t, TAINT_APSR_Q, S);
	taint_set(t, TAINT_APSR_GE, 0);
	taint_exception_return(t);
	CHECK(flags_are(t, 0, S, 0, 0) && taint_get(t, TAINT_APSR_Q) == 0 &&
	      taint_get(t, TAINT_APSR_GE) == D);
	taint_free(t);
}

/* UADD8 and the other parallel additions write all of GE, which SEL reads: a GE made from public
 * constants (as SHA-3 code does before its SELs) is public whatever GE held; Q is sticky. */
static void test_ge_and_q(void)
{
	struct taint *t = fresh();
	taint_set(t, TAINT_APSR_GE, S);
	RUN(t, 0,
	    0xfa87, 0xf747,  /* uadd8 r7, r7, r7: GE from public r7 */
	    0xfaa8, 0xf88a); /* sel r8, r8, sl */
	CHECK(taint_get(t, TAINT_APSR_GE) == 0 && taint_get(t, 8) == 0);
	taint_free(t);

	t = fresh();
	taint_set(t, TAINT_APSR_GE, S);
	RUN(t, 0, 0xfaa8, 0xf88a);  /* sel r8, r8, sl with a secret GE */
	CHECK(taint_get(t, 8) == S);
	taint_free(t);

	t = fresh();
	taint_set(t, 1, S);
	taint_set(t, TAINT_APSR_GE, D);
	RUN(t, 0, 0xfa82, 0xf081);  /* qadd r0, r1, r2: Q ORs in the secret, GE is left alone */
	CHECK(taint_get(t, 0) == S && taint_get(t, TAINT_APSR_Q) == S &&
	      taint_get(t, TAINT_APSR_GE) == D);
	taint_free(t);
}

static void test_declassify(void)
{
	struct taint *t = fresh();
	taint_mark(t, BUF, 4, S);
	taint_mark(t, BUF + 2, 4, 0);
	CHECK(taint_memory(t, BUF + 1) == S && taint_memory(t, BUF + 2) == D &&
	      taint_memory(t, BUF + 5) == 0);
	uint32_t ccm_end = CCM_BASE + chip_stm32f407.ccm_size;
	taint_mark(t, ccm_end - 1, 1, S);   /* CCM is shadowed too ... */
	taint_mark(t, FLASH_BASE, 4, S);    /* ... flash never (a warning) */
	CHECK(taint_memory(t, ccm_end - 1) == S && taint_memory(t, FLASH_BASE) == 0);
	taint_free(t);
}

/* The STM32L4R5's SRAM2 is one memory at two addresses (0x10000000 and 0x20030000): a secret
 * stored through one is tainted when read through the other; its SRAM3 is shadowed to its end. */
static void test_the_l4r5s_sram2_alias_shares_its_taint(void)
{
	struct taint *t = taint_new(NULL, &chip_stm32l4r5);
	taint_attach(t, &fake_core);
	taint_record(t, true);
	taint_mark(t, CCM_BASE + 8, 4, S);
	CHECK(taint_memory(t, SRAM_BASE + chip_stm32l4r5.ccm_alias + 8) == S);
	taint_mark(t, SRAM_BASE + chip_stm32l4r5.sram_size - 1, 1, S);
	CHECK(taint_memory(t, SRAM_BASE + chip_stm32l4r5.sram_size - 1) == S);
	CHECK(taint_memory(t, SRAM_BASE + chip_stm32f407.sram_size) == 0);
	taint_free(t);
}

/* The document taint_write writes, into text (NUL-terminated). */
static void written(struct taint *t, char *text, size_t size)
{
	char path[] = "/tmp/vboard-taint-test-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	CHECK(taint_write(t, path) == 0);
	memset(text, 0, size);
	FILE *f = fopen(path, "r");
	CHECK(f && fread(text, 1, size - 1, f) > 0);
	if (f)
		fclose(f);
	unlink(path);
}

/* A secret index into a table in flash: at 0 wait states a "flash" finding like any region's; where
 * flash loads wait by their address (168 MHz, the ART's data cache), a "timed" one, kept apart; an
 * SRAM table is never timed. */
static void test_flash_address_timed(void)
{
	struct taint *t = fresh();
	taint_set(t, 2, S);
	regs[2] = 5;
	regs[1] = FLASH_BASE + 0x200;
	RUN(t, 0, 0x5c8b);  /* ldrb r3, [r1, r2] */
	flash_timed = true;
	RUN(t, 0, 0x5c8b);
	regs[1] = BUF;
	RUN(t, 0, 0x5c8b);
	CHECK(taint_finding(t, CODE, TAINT_ADDRESS, NULL) == 3);

	char text[1024];
	written(t, text, sizeof text);
	CHECK(strstr(text, "{\"kind\": \"address\", \"address\": \"0x08000100\", \"count\": 1, "
			   "\"declassified\": false, \"region\": \"sram\"},\n  "
			   "{\"kind\": \"address\", \"address\": \"0x08000100\", \"count\": 1, "
			   "\"declassified\": false, \"region\": \"flash\"},\n  "
			   "{\"kind\": \"address\", \"address\": \"0x08000100\", \"count\": 1, "
			   "\"declassified\": false, \"region\": \"flash\", \"timed\": true}"));
	taint_free(t);
}

/* Calls, returns and marks through hand-made function symbols. */
#define SCOPE 0x08001000u
#define MARK_SECRET 0x08002000u
#define NORM 0x08003000u
#define PUBLISH 0x08004000u
#define CALLER 0x08000500u
#define RANDOM 0x08005000u
#define MASKED 0x08006000u

static void test_scope_marks_and_returns(void)
{
	struct elf_func funcs[] = {
		{CODE, 0x40, "code"}, {SCOPE, 0x40, "sign"}, {MARK_SECRET, 0x4, "pqs_taint_secret"},
		{NORM, 0x40, "norm"}, {PUBLISH, 0x40, "publish"}, {RANDOM, 0x40, "randombytes"},
	};
	struct elf_image elf = {.funcs = funcs, .nfuncs = 6};
	struct taint *t = taint_new(&elf, &chip_stm32f407);
	code_base = CODE;
	CHECK(taint_scope_function(t, "sign") == 0);
	CHECK(taint_public_return(t, "norm") == 0);
	CHECK(taint_public_argument(t, "publish", 1, 2) == 0);
	CHECK(taint_public_secret_bytes(t, 1, 2) == 0);  /* e.g. a key's public seed */
	CHECK(taint_public_secret_bytes(t, 7, 4) == 0);  /* runs past the region: clipped */
	CHECK(taint_scope_function(t, "missing") == -1);
	taint_attach(t, &fake_core);
	memset(regs, 0, sizeof regs);

	regs[0] = BUF;
	regs[1] = 8;
	regs[14] = CALLER + 4 + 1;
	taint_block(t, MARK_SECRET);  /* pqs_taint_secret(BUF, 8) */
	CHECK(taint_memory(t, BUF) == S && taint_memory(t, BUF + 1) == D &&
	      taint_memory(t, BUF + 2) == D && taint_memory(t, BUF + 3) == S &&
	      taint_memory(t, BUF + 6) == S && taint_memory(t, BUF + 7) == D &&
	      taint_memory(t, BUF + 8) == 0);
	regs[0] = BUF + 16;
	regs[1] = 4;
	regs[14] = CALLER + 6 + 1;
	taint_block(t, RANDOM);       /* randombytes outside the scope: its bytes stay public */
	taint_block(t, CALLER + 6);
	CHECK(taint_memory(t, BUF + 16) == 0);
	taint_set(t, 1, S);
	RUN(t, 0, 0xfbb1, 0xf0f2);  /* udiv outside the scope: no finding */
	CHECK(taint_finding(t, CODE, TAINT_DIVISION, NULL) == 0);

	regs[14] = CALLER + 8 + 1;
	taint_block(t, SCOPE);
	RUN(t, 0, 0xfbb1, 0xf0f2);
	CHECK(finding(t, 0, TAINT_DIVISION, false));

	regs[14] = SCOPE + 0x10 + 1;  /* norm returns a secret r0: public once it returns */
	taint_block(t, NORM);
	taint_set(t, 0, S);
	taint_block(t, SCOPE + 0x10);
	CHECK(taint_get(t, 0) == D);

	regs[0] = BUF + 16;           /* randombytes(BUF + 16, 4) inside: secret once it returns */
	regs[1] = 4;
	regs[14] = SCOPE + 0x18 + 1;
	taint_block(t, RANDOM);
	regs[0] = regs[1] = 0;        /* the callee clobbers its argument registers */
	CHECK(taint_memory(t, BUF + 16) == 0);
	taint_block(t, SCOPE + 0x18);
	CHECK(taint_memory(t, BUF + 15) == 0 && taint_memory(t, BUF + 16) == S &&
	      taint_memory(t, BUF + 19) == S && taint_memory(t, BUF + 20) == 0);

	regs[1] = BUF + 4;            /* publish(x, BUF + 4): 2 bytes declassified at entry */
	regs[14] = SCOPE + 0x20 + 1;
	taint_block(t, PUBLISH);
	CHECK(taint_memory(t, BUF + 3) == S && taint_memory(t, BUF + 4) == D &&
	      taint_memory(t, BUF + 5) == D && taint_memory(t, BUF + 6) == S);
	taint_block(t, SCOPE + 0x20);

	uint64_t before = taint_instructions(t);
	taint_block(t, CALLER + 8);   /* sign returns: everything is clean again */
	CHECK(taint_memory(t, BUF) == 0 && taint_get(t, 1) == 0);
	RUN(t, 0, 0xfbb1, 0xf0f2);
	CHECK(taint_instructions(t) == before);

	char text[1024];
	written(t, text, sizeof text);
	CHECK(!strcmp(text, "{\"format\": \"pqscope-vboard-taint\", \"version\": 1, \"calls\": 1, "
			    "\"instructions\": 1, \"findings\": [\n"
			    "  {\"kind\": \"division\", \"address\": \"0x08000100\", \"count\": 1, "
			    "\"declassified\": false}\n], \"coverage\": [1]}\n"));
	taint_free(t);
}

/* --taint-public-within: a finding inside a call of a masked computation (its callees included)
 * is declassified and kept apart from the same instruction's findings outside it. */
static void test_within(void)
{
	struct elf_func funcs[] = {{CODE, 0x40, "code"}, {SCOPE, 0x40, "sign"}, {MASKED, 0x40, "masked"},
				   {MASKED + 0x100, 0x40, "inner"}};
	struct elf_image elf = {.funcs = funcs, .nfuncs = 4};
	struct taint *t = taint_new(&elf, &chip_stm32f407);
	code_base = CODE;
	CHECK(taint_scope_function(t, "sign") == 0);
	const uint32_t inner_site[1][2] = {{MASKED + 0x0c, MASKED + 0x10}}; /* calls from masked only */
	CHECK(taint_public_within(t, "masked", NULL, 0) == 0);
	CHECK(taint_public_within(t, "inner", inner_site, 1) == 0);
	CHECK(taint_public_within(t, "missing", NULL, 0) == -1);
	taint_attach(t, &fake_core);
	memset(regs, 0, sizeof regs);
	regs[14] = CALLER + 1;
	taint_block(t, SCOPE);
	taint_set(t, 1, S);
	RUN(t, 0, 0xfbb1, 0xf0f2);    /* udiv on a secret outside: a leak */
	regs[14] = SCOPE + 0x10 + 1;
	taint_block(t, MASKED);
	taint_set(t, 1, S);
	RUN(t, 0, 0xfbb1, 0xf0f2);    /* the same instruction inside */
	regs[14] = MASKED + 0x10 + 1;
	taint_block(t, MASKED + 0x100);
	taint_set(t, 1, S);
	RUN(t, 0, 0xfbb1, 0xf0f2);    /* ... once in a nested call: the innermost names it */
	taint_block(t, MASKED + 0x10);
	taint_set(t, 1, S);
	RUN(t, 0, 0xfbb1, 0xf0f2);    /* ... back in the outer one */
	taint_block(t, SCOPE + 0x10); /* masked returns */
	taint_set(t, 1, S);
	RUN(t, 0, 0xfbb1, 0xf0f2);
	regs[14] = SCOPE + 0x30 + 1;  /* inner called from elsewhere than its site: not masked */
	taint_block(t, MASKED + 0x100);
	taint_set(t, 1, S);
	RUN(t, 0, 0xfbb1, 0xf0f2);
	taint_block(t, SCOPE + 0x30);
	bool declassified = true;
	CHECK(taint_finding(t, CODE, TAINT_DIVISION, &declassified) == 6 && !declassified);

	char text[1024];
	written(t, text, sizeof text);
	CHECK(strstr(text, "{\"kind\": \"division\", \"address\": \"0x08000100\", \"count\": 3, "
			   "\"declassified\": false}") &&
	      strstr(text, "{\"kind\": \"division\", \"address\": \"0x08000100\", \"count\": 1, "
			   "\"declassified\": true, \"within\": \"0x08006100\"}") &&
	      strstr(text, "{\"kind\": \"division\", \"address\": \"0x08000100\", \"count\": 2, "
			   "\"declassified\": true, \"within\": \"0x08006000\"}"));
	taint_free(t);
}

/* A watched function begins its call wherever its code is: at a flash entry (looked up by bit)
 * and at one in SRAM (code copied to RAM), but not at a block inside either. */
static void test_watched_anywhere(void)
{
	const uint32_t ram_sign = SRAM_BASE + 0x2000;
	struct elf_func funcs[] = {{CODE, 0x40, "code"}, {SCOPE, 0x40, "sign"}, {ram_sign, 0x40, "ram_sign"}};
	struct elf_image elf = {.funcs = funcs, .nfuncs = 3};
	const uint32_t entries[] = {SCOPE + 0x10, SCOPE, ram_sign + 0x10, ram_sign};
	for (unsigned i = 0; i < 4; i++) {
		struct taint *t = taint_new(&elf, &chip_stm32f407);
		code_base = CODE;
		CHECK(taint_scope_function(t, i < 2 ? "sign" : "ram_sign") == 0);
		taint_attach(t, &fake_core);
		memset(regs, 0, sizeof regs);
		regs[14] = CALLER + 1;
		taint_block(t, entries[i]);
		taint_set(t, 1, S);
		RUN(t, 0, 0xfbb1, 0xf0f2); /* udiv on a secret: found only inside a checked call */
		bool declassified = true;
		CHECK(taint_finding(t, CODE, TAINT_DIVISION, &declassified) == (i % 2 ? 1u : 0u));
		taint_free(t);
	}
}

/* Coverage: per call of the scope function, the instructions no earlier call ran. */
static void test_coverage_per_call(void)
{
	struct elf_func funcs[] = {{CODE, 0x80, "code"}, {SCOPE, 0x40, "sign"}};
	struct elf_image elf = {.funcs = funcs, .nfuncs = 2};
	struct taint *t = taint_new(&elf, &chip_stm32f407);
	CHECK(taint_scope_function(t, "sign") == 0);
	taint_attach(t, &fake_core);
	memset(regs, 0, sizeof regs);
	for (int call = 0; call < 2; call++) {
		regs[14] = CALLER + 1;
		taint_block(t, SCOPE);
		code_base = CODE;
		RUN(t, 0, 0x2001, 0x2102);          /* movs r0, #1; movs r1, #2: both calls */
		if (call == 1) {
			code_base = CODE + 0x40;
			RUN(t, 0, 0x2001);          /* a path only the second call takes */
		}
		taint_block(t, CALLER);
	}
	char text[1024];
	written(t, text, sizeof text);
	CHECK(strstr(text, "\"calls\": 2,") && strstr(text, "\"coverage\": [2, 1]}"));
	taint_free(t);
}

/* --taint-calls: a line per returned call of the scope function with that call's own findings
 * (each with its outcomes: the division's 2 cycles, a zero divisor), instructions and the
 * instructions it ran first. */
static void test_call_lines(void)
{
	struct elf_func funcs[] = {{CODE, 0x80, "code"}, {SCOPE, 0x40, "sign"}};
	struct elf_image elf = {.funcs = funcs, .nfuncs = 2};
	struct taint *t = taint_new(&elf, &chip_stm32f407);
	char path[] = "/tmp/vboard-taint-calls-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	CHECK(taint_scope_function(t, "sign") == 0);
	CHECK(taint_calls(t, path) == 0);
	taint_attach(t, &fake_core);
	memset(regs, 0, sizeof regs);
	for (int call = 0; call < 2; call++) {
		regs[14] = CALLER + 1;
		taint_block(t, SCOPE);
		code_base = CODE;
		taint_set(t, 1, S);
		RUN(t, 0, 0xfbb1, 0xf0f2);          /* udiv r0, r1, r2 on a secret: in both calls */
		if (call == 1) {
			code_base = CODE + 0x40;
			RUN(t, 0, 0x2001);          /* a path only the second call takes */
		}
		taint_block(t, CALLER);
	}
	taint_free(t);
	char text[1024] = {0};
	FILE *f = fopen(path, "r");
	CHECK(f && fread(text, 1, sizeof text - 1, f) > 0);
	if (f)
		fclose(f);
	unlink(path);
	CHECK(!strcmp(text,
		      "{\"call\": 0, \"sample_id\": 0, \"instructions\": 1, \"findings\": [{\"kind\": "
		      "\"division\", \"address\": \"0x08000100\", \"count\": 1, \"declassified\": false, "
		      "\"outcome_digest\": \"8d1ace904a398d17\", \"outcomes\": [[2, 1]]}], "
		      "\"covered\": [134217984]}\n"
		      "{\"call\": 1, \"sample_id\": 0, \"instructions\": 2, \"findings\": [{\"kind\": "
		      "\"division\", \"address\": \"0x08000100\", \"count\": 1, \"declassified\": false, "
		      "\"outcome_digest\": \"8d1ace904a398d17\", \"outcomes\": [[2, 1]]}], "
		      "\"covered\": [134218048]}\n"));
}

/* The line's outcomes (--taint-calls): per finding, what each execution in the call did, so that
 * the host can see whether another secret changes it. Three calls on different secrets: a branch
 * taken in the first two and not in the third, the address a secret index reaches, a division's
 * cycles, a jump's target; the branch's and the division's outcomes are the same in the first two
 * calls (and so their digests), the address's differ. */
static void test_call_outcomes(void)
{
	struct elf_func funcs[] = {{CODE, 0x80, "code"}, {SCOPE, 0x40, "sign"}};
	struct elf_image elf = {.funcs = funcs, .nfuncs = 2};
	struct taint *t = taint_new(&elf, &chip_stm32f407);
	char path[] = "/tmp/vboard-taint-outcomes-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	CHECK(taint_scope_function(t, "sign") == 0);
	CHECK(taint_calls(t, path) == 0);
	taint_attach(t, &fake_core);
	memset(regs, 0, sizeof regs);
	const uint32_t r0[] = {0, 0, 7}, r2[] = {BUF, BUF + 4, BUF + 4}, dividend[] = {1u << 31, 1u << 31, 3};
	for (int call = 0; call < 3; call++) {
		regs[14] = CALLER + 1;
		taint_block(t, SCOPE);
		code_base = CODE;
		regs[0] = r0[call];
		regs[2] = r2[call];
		regs[3] = dividend[call];
		regs[4] = 3;
		taint_set(t, 0, S);
		taint_set(t, 2, S);
		taint_set(t, 3, S);
		RUN(t, 0,
		    0xb108,          /* cbz r0: taken while r0 is 0 */
		    0x6811,          /* ldr r1, [r2]: a secret address */
		    0xfbb3, 0xf5f4); /* udiv r5, r3, r4: a secret dividend */
		code_base = CODE + 0x40;
		regs[6] = CODE + 0x60 + 1;
		taint_set(t, 6, S);
		RUN(t, 0, 0x4730);          /* bx r6: a secret target, the block that runs next */
		taint_block(t, CODE + 0x60);
		taint_block(t, CALLER);
	}
	taint_free(t);
	char text[4096] = {0};
	FILE *f = fopen(path, "r");
	CHECK(f && fread(text, 1, sizeof text - 1, f) > 0);
	if (f)
		fclose(f);
	unlink(path);
	char *call[3] = {text, NULL, NULL};
	for (int i = 1; i < 3; i++) {
		call[i] = call[i - 1] ? strchr(call[i - 1], '\n') : NULL;
		call[i] = call[i] ? call[i] + 1 : NULL;
	}
	CHECK(call[1] && call[2]);
	if (!call[1] || !call[2])
		return;
	call[1][-1] = call[2][-1] = '\0';
	char cycles[64], fast[64];
	snprintf(cycles, sizeof cycles, "\"outcomes\": [[%u, 1]]}", timing_div(1u << 31, 3, false));
	snprintf(fast, sizeof fast, "\"outcomes\": [[%u, 1]]}", timing_div(3, 3, false));
	CHECK(strstr(call[0], "\"taken\": 1, \"outcome_digest\": \"") && strstr(call[0], "\"outcomes\": [[1, 1]]}"));
	CHECK(strstr(call[2], "\"taken\": 0, \"outcome_digest\": \"") && strstr(call[2], "\"outcomes\": [[0, 1]]}"));
	char address[64];
	snprintf(address, sizeof address, "\"outcomes\": [[%u, 1]]}", BUF);
	CHECK(strstr(call[0], address));
	snprintf(address, sizeof address, "\"outcomes\": [[%u, 1]]}", BUF + 4);
	CHECK(strstr(call[1], address) && strstr(call[2], address));
	CHECK(strstr(call[0], cycles) && strstr(call[1], cycles) && strstr(call[2], fast));
	char target[64];
	snprintf(target, sizeof target, "\"outcomes\": [[%u, 1]]}", CODE + 0x60);
	CHECK(strstr(call[0], target));
	/* the digests: the same outcomes give the same digest, in any call */
	const char *d0 = strstr(call[0], "outcome_digest"), *d1 = strstr(call[1], "outcome_digest");
	CHECK(d0 && d1 && !strncmp(d0, d1, 36));
}

/* Outcomes are kept as runs: a loop's exit branch taken 3 times then not, one run each; an
 * address that changes every time keeps only its first TAINT_OUTCOME_RUNS runs (its count says more
 * ran, its digest covers them all). */
static void test_outcome_runs(void)
{
	struct elf_func funcs[] = {{CODE, 0x80, "code"}, {SCOPE, 0x40, "sign"}};
	struct elf_image elf = {.funcs = funcs, .nfuncs = 2};
	struct taint *t = taint_new(&elf, &chip_stm32f407);
	char path[] = "/tmp/vboard-taint-runs-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	CHECK(taint_scope_function(t, "sign") == 0);
	CHECK(taint_calls(t, path) == 0);
	taint_attach(t, &fake_core);
	memset(regs, 0, sizeof regs);
	regs[14] = CALLER + 1;
	taint_block(t, SCOPE);
	for (uint32_t visit = 0; visit < TAINT_OUTCOME_RUNS + 4; visit++) {
		code_base = CODE;
		regs[0] = visit < 3 ? 0 : 1;
		regs[2] = BUF + 4 * visit;
		taint_set(t, 0, S);
		taint_set(t, 2, S);
		RUN(t, 0,
		    0xb108,  /* cbz r0 */
		    0x6811); /* ldr r1, [r2] */
	}
	taint_block(t, CALLER);
	taint_free(t);
	char text[4096] = {0};
	FILE *f = fopen(path, "r");
	CHECK(f && fread(text, 1, sizeof text - 1, f) > 0);
	if (f)
		fclose(f);
	unlink(path);
	char runs[64];
	snprintf(runs, sizeof runs, "\"outcomes\": [[1, 3], [0, %u]]}", TAINT_OUTCOME_RUNS + 1);
	CHECK(strstr(text, runs));
	char count[32], last[64];
	snprintf(count, sizeof count, "\"count\": %u,", TAINT_OUTCOME_RUNS + 4);
	snprintf(last, sizeof last, "[%u, 1]]}", BUF + 4 * (TAINT_OUTCOME_RUNS - 1));
	CHECK(strstr(text, count) && strstr(text, last));
}


/* ---- leaf calls: summarised once, replayed while their inputs are the same ---- */

#define LEAF 0x08007000u      /* three leaf functions, 0x100 bytes apart */
#define LEAF_SP (SRAM_BASE + 0x1000)
static struct elf_func leaf_funcs[] = {{SCOPE, 0x40, "sign"}, {LEAF, 0x40, "add"},
				       {LEAF + 0x100, 0x40, "test"}, {LEAF + 0x200, 0x40, "count"}};
static struct elf_image leaf_elf = {.funcs = leaf_funcs, .nfuncs = 4};

/* ldr r2, [r0]; adds r2, r2, r1; str r2, [r0, #4]; bx lr */
static const uint16_t leaf_add[] = {0x6802, 0x1852, 0x6042, 0x4770};

/* A tracker in a call of the scope function "sign", with a secret word at BUF (and the return of
 * `public_return` declassified, if not NULL). */
static struct taint *leaf_tracker_declassifying(const char *public_return)
{
	struct taint *t = taint_new(&leaf_elf, &chip_stm32f407);
	CHECK(taint_scope_function(t, "sign") == 0);
	CHECK(!public_return || taint_public_return(t, public_return) == 0);
	taint_attach(t, &fake_core);
	memset(regs, 0, sizeof regs);
	regs[13] = LEAF_SP;
	regs[14] = CALLER + 1;
	taint_block(t, SCOPE);
	taint_mark(t, BUF, 4, S);
	return t;
}

static struct taint *leaf_tracker(void)
{
	return leaf_tracker_declassifying(NULL);
}

/* A call of the function at `at` with r0 = BUF, r1 = `r1`, running its `n` halfwords `times`
 * over (a loop's body), then returning to SCOPE + 0x10. */
static void leaf_call(struct taint *t, uint32_t at, const uint16_t *hw, size_t n, unsigned times, uint32_t r1)
{
	regs[0] = BUF;
	regs[1] = r1;
	regs[14] = SCOPE + 0x10 + 1;
	taint_block(t, at);
	code_base = at;
	for (unsigned i = 0; i < times; i++)
		run(t, hw, n, 0);
	taint_block(t, SCOPE + 0x10);
}

static void leaf_counts(struct taint *t, uint64_t recorded, uint64_t replayed)
{
	uint64_t r, p, h;
	taint_leaf_counts(t, &r, &p, &h);
	CHECK(r == recorded && p == replayed);
}

/* A call of "add" with r0 = `word`, as leaf_call makes them. */
static void add_call_on(struct taint *t, uint32_t word)
{
	regs[0] = word, regs[1] = 5, regs[14] = SCOPE + 0x10 + 1;
	taint_block(t, LEAF);
	code_base = LEAF;
	run(t, leaf_add, 4, 0);
	taint_block(t, SCOPE + 0x10);
}

/* A second call with the same inputs has the first one's effect, counted as its instructions,
 * without being tracked; a call whose input bytes have another taint is tracked again. */
static void test_leaf_replayed(void)
{
	struct taint *t = leaf_tracker();
	taint_set(t, 5, S); /* a secret the caller keeps in r5: not an input of the leaf */
	leaf_call(t, LEAF, leaf_add, 4, 1, 5);
	CHECK(taint_get(t, 2) == S && taint_memory(t, BUF + 4) == S && taint_memory(t, BUF + 7) == S &&
	      taint_memory(t, BUF + 8) == 0);
	CHECK(taint_get(t, 0) == 0 && taint_get(t, 1) == 0 && taint_get(t, 5) == S); /* no label left */
	uint64_t one_call = taint_instructions(t);
	CHECK(one_call == 4);
	leaf_counts(t, 1, 0);

	taint_set(t, 5, 0);
	taint_set(t, 2, 0);
	leaf_call(t, LEAF, leaf_add, 4, 1, 7); /* r1's value decided nothing: the same inputs */
	leaf_counts(t, 1, 1);
	CHECK(taint_get(t, 2) == S && taint_memory(t, BUF + 4) == S && taint_get(t, 5) == 0);
	CHECK(taint_instructions(t) == 2 * one_call);

	taint_mark(t, BUF, 4, 0); /* the word it reads is declassified: another input */
	leaf_call(t, LEAF, leaf_add, 4, 1, 5);
	leaf_counts(t, 2, 1);
	CHECK(taint_get(t, 2) == D && taint_memory(t, BUF + 4) == D);
	taint_set(t, 1, S); /* the addend secret: another input again */
	leaf_call(t, LEAF, leaf_add, 4, 1, 5);
	leaf_counts(t, 3, 1);
	CHECK(taint_get(t, 2) == (S | D));
	taint_free(t);
}

/* What the summary may not cover: a value read from memory deciding a branch (until its word is
 * known: then it is keyed on it), a finding, a call out of the function; and an argument that
 * decides the path is part of the key by its value. */
static void test_leaf_not_summarised(void)
{
	struct taint *t = leaf_tracker();
	/* ldr r2, [r0, #8]; cmp r2, #0; beq: a public word from memory decides */
	static const uint16_t test[] = {0x6882, 0x2a00, 0xd000};
	leaf_call(t, LEAF + 0x100, test, 3, 1, 0);
	leaf_counts(t, 0, 0);
	leaf_call(t, LEAF + 0x100, test, 3, 1, 0);
	leaf_counts(t, 1, 0);

	/* ldr r2, [r0]; ldr r3, [r2]: a secret address, found at every call */
	static const uint16_t secret_address[] = {0x6802, 0x6813};
	leaf_call(t, LEAF + 0x120, secret_address, 2, 1, 0);
	leaf_call(t, LEAF + 0x120, secret_address, 2, 1, 0);
	leaf_counts(t, 1, 0);
	CHECK(finding(t, 2, TAINT_ADDRESS, false) == false &&
	      taint_finding(t, LEAF + 0x122, TAINT_ADDRESS, NULL) == 2);

	/* subs r1, #1; bne: r1 counts the loop, its value is part of the key */
	static const uint16_t count[] = {0x3901, 0xd1fd};
	leaf_call(t, LEAF + 0x200, count, 2, 3, 3);
	leaf_call(t, LEAF + 0x200, count, 2, 3, 3);
	leaf_counts(t, 2, 1);
	leaf_call(t, LEAF + 0x200, count, 2, 3, 4);
	leaf_counts(t, 3, 1);

	/* the add leaf jumping into other code than a function's entry: not summarised, and never again */
	regs[0] = BUF, regs[14] = SCOPE + 0x10 + 1;
	taint_block(t, LEAF);
	code_base = LEAF;
	RUN(t, 0, 0x6802, 0x1852, 0x6042, 0x4770);
	taint_block(t, LEAF + 0x104);
	taint_block(t, SCOPE + 0x10);
	leaf_call(t, LEAF, leaf_add, 4, 1, 5);
	leaf_counts(t, 3, 1);
	taint_free(t);
}

/* "test" calling "add" at LEAF + 0x104, returning to `ret`, with add's instructions run. */
static void test_calls_add(struct taint *t, uint32_t ret)
{
	regs[0] = BUF, regs[1] = 5, regs[14] = ret + 1;
	taint_block(t, LEAF + 0x100);
	regs[14] = LEAF + 0x104 + 1;
	taint_block(t, LEAF);
	code_base = LEAF;
	run(t, leaf_add, 4, 0);
	taint_block(t, LEAF + 0x104);
	taint_block(t, ret);
}

/* A call of a function that calls a leaf function is summarised with what its callee did
 * (slhdsa-c's SHA-256 compression calls memcpy); one whose callee calls further, or that calls a
 * function the tracker watches, is not. */
static void test_leaf_calling_a_leaf(void)
{
	struct taint *t = leaf_tracker();
	test_calls_add(t, SCOPE + 0x10);
	leaf_counts(t, 1, 0);
	CHECK(taint_memory(t, BUF + 4) == S && taint_get(t, 2) == S);
	taint_mark(t, BUF + 4, 4, 0); /* written before it is read: not an input */
	taint_set(t, 2, 0);
	test_calls_add(t, SCOPE + 0x10);
	leaf_counts(t, 1, 1);
	CHECK(taint_memory(t, BUF + 4) == S && taint_get(t, 2) == S && taint_instructions(t) == 8);

	taint_free(t);

	/* "count" calling "test", which calls "add": not summarised, and never again; "test" called
	 * from it (another return address) is recorded there */
	t = leaf_tracker();
	for (int call = 0; call < 2; call++) {
		regs[14] = SCOPE + 0x20 + 1;
		taint_block(t, LEAF + 0x200);
		test_calls_add(t, LEAF + 0x204);
		taint_block(t, SCOPE + 0x20);
	}
	leaf_counts(t, 1, 0);
	taint_free(t);

	/* "add" declassifies what it returns: "test" calling it is tracked at every call */
	t = leaf_tracker_declassifying("add");
	for (int call = 0; call < 2; call++) {
		test_calls_add(t, SCOPE + 0x10);
		CHECK(taint_get(t, 2) == S);
	}
	leaf_counts(t, 0, 0);
	taint_free(t);
}

/* A recording that called out too deep and is then interrupted fails as at its return: the
 * function's later calls are not recorded again, so the calls they make are. */
static void test_leaf_refused_before_an_exception(void)
{
	struct taint *t = leaf_tracker();
	for (int call = 0; call < 2; call++) {
		regs[0] = BUF, regs[14] = SCOPE + 0x10 + 1;
		taint_block(t, LEAF + 0x100); /* "test" */
		regs[14] = LEAF + 0x104 + 1;
		taint_block(t, LEAF); /* calls "add" */
		code_base = LEAF;
		run(t, leaf_add, 4, 0);
		regs[14] = LEAF + 0x08 + 1;
		taint_block(t, LEAF + 0x200); /* which calls "count" */
		taint_block(t, LEAF + 0x08);
		taint_block(t, LEAF + 0x104);
		if (call == 0) {
			taint_exception_entry(t, LEAF_SP - 0x20, false);
			taint_exception_return(t);
		}
		taint_block(t, SCOPE + 0x10);
	}
	leaf_counts(t, 1, 0);
	taint_free(t);
}

/* A leaf whose calls replay TAINT_SEAL_STREAK times leaves the code hook; a call it cannot replay, or
 * its code reached otherwise, brings it back. */
static void test_leaf_sealed(void)
{
	struct taint *t = leaf_tracker();
	uint32_t ranges[65][2];
	CHECK(taint_hooked_ranges(t, ranges) == 1 && ranges[0][0] == 0 && ranges[0][1] == UINT32_MAX);
	uint32_t lo, hi;
	for (int call = 0; call <= TAINT_SEAL_STREAK; call++) { /* 8 instructions a call: short is no matter */
		regs[0] = BUF, regs[1] = 5, regs[14] = SCOPE + 0x10 + 1;
		CHECK(!taint_gate(t, LEAF));
		leaf_call(t, LEAF, leaf_add, 4, 2, 5);
	}
	leaf_counts(t, 1, TAINT_SEAL_STREAK);
	CHECK(!taint_changed_code(t, &lo, &hi)); /* the whole code while it was idle before the call */
	regs[0] = BUF, regs[1] = 5, regs[14] = SCOPE + 0x10 + 1;
	CHECK(taint_gate(t, LEAF));  /* sealed: hook everything but the leaf */
	CHECK(taint_changed_code(t, &lo, &hi) && lo == LEAF && hi == LEAF + 0x40); /* its translated code goes */
	CHECK(!taint_gate(t, LEAF)); /* and asked again, as the block runs again: no change */
	CHECK(taint_hooked_ranges(t, ranges) == 2 && ranges[0][1] == LEAF - 1 && ranges[1][0] == LEAF + 0x40 &&
	      ranges[1][1] == UINT32_MAX);
	taint_block(t, LEAF);
	CHECK(!taint_gate(t, LEAF + 0x10)); /* its own code, replayed */
	taint_block(t, SCOPE + 0x10);
	leaf_counts(t, 1, TAINT_SEAL_STREAK + 1);
	CHECK(taint_gate(t, LEAF + 0x10)); /* its code reached without a call: hooked again */
	CHECK(taint_hooked_ranges(t, ranges) == 1);
	taint_free(t);

	t = leaf_tracker();
	for (int call = 0; call <= TAINT_SEAL_STREAK + 1; call++) {
		regs[0] = BUF, regs[1] = 5, regs[14] = SCOPE + 0x10 + 1;
		taint_gate(t, LEAF);
		leaf_call(t, LEAF, leaf_add, 4, 75, 5);
	}
	CHECK(taint_hooked_ranges(t, ranges) == 2);
	taint_mark(t, BUF, 4, 0);
	regs[0] = BUF, regs[1] = 5, regs[14] = SCOPE + 0x10 + 1;
	CHECK(taint_gate(t, LEAF)); /* another input: it must be tracked, so hooked */
	CHECK(taint_hooked_ranges(t, ranges) == 1);
	leaf_call(t, LEAF, leaf_add, 4, 75, 5);
	CHECK(taint_memory(t, BUF + 4) == D);
	taint_free(t);
}

/* The gate's look-up of a leaf's summary at its entry serves the block hook of the same block,
 * not one after its inputs changed: the block hook's own marks come between them. */
static void test_leaf_lookup_follows_inputs(void)
{
	struct taint *t = leaf_tracker();
	leaf_call(t, LEAF, leaf_add, 4, 1, 5);
	regs[0] = BUF, regs[1] = 5, regs[14] = SCOPE + 0x10 + 1;
	taint_gate(t, LEAF);
	leaf_call(t, LEAF, leaf_add, 4, 1, 5); /* the same inputs: the gate's summary, replayed */
	leaf_counts(t, 1, 1);
	regs[0] = BUF, regs[1] = 5, regs[14] = SCOPE + 0x10 + 1;
	taint_gate(t, LEAF);
	taint_mark(t, BUF, 4, 0); /* after the gate looked: the input is declassified */
	leaf_call(t, LEAF, leaf_add, 4, 1, 5);
	leaf_counts(t, 2, 1);
	CHECK(taint_memory(t, BUF + 4) == D);
	taint_free(t);
}

/* A summary keeps its input and output bytes as runs of one taint: its replay gives each output
 * byte the recorded call's taint, and a change in the last byte of an input run (of two side by
 * side, secret then declassified) is another input. */
static void test_leaf_inputs_compared_by_the_byte(void)
{
	struct taint *t = leaf_tracker();
	taint_mark(t, BUF + 2, 2, 0); /* BUF's word: two secret bytes, two declassified */
	leaf_call(t, LEAF, leaf_add, 4, 1, 5);
	uint8_t out = taint_memory(t, BUF + 4);
	CHECK(out & S);
	taint_mark(t, BUF + 4, 4, 0); /* the outputs' taint changed before the replay */
	leaf_call(t, LEAF, leaf_add, 4, 1, 5);
	leaf_counts(t, 1, 1);
	CHECK(taint_memory(t, BUF + 4) == out && taint_memory(t, BUF + 7) == out && taint_memory(t, BUF + 8) == 0);
	taint_mark(t, BUF + 3, 1, S); /* the declassified run's last byte */
	leaf_call(t, LEAF, leaf_add, 4, 1, 5);
	leaf_counts(t, 2, 1);
	taint_mark(t, BUF + 1, 1, 0); /* the secret run's last byte */
	leaf_call(t, LEAF, leaf_add, 4, 1, 5);
	leaf_counts(t, 3, 1);
	taint_free(t);
}

/* Calls with more address patterns than a function keeps summaries: each is recorded once and
 * replayed; the oldest summaries are replaced in turn, so the first pattern is recorded again and
 * its replay still gives the secret its store carries, while the newest replays. */
static void test_leaf_summaries_replaced_in_turn(void)
{
	struct taint *t = leaf_tracker();
	const unsigned patterns = TAINT_LEAF_SUMMARIES + 8;
	for (unsigned i = 0; i < patterns; i++)
		for (int call = 0; call < 3; call++)
			add_call_on(t, BUF + 8 * i);
	leaf_counts(t, patterns, 2 * patterns);
	for (int call = 0; call < 2; call++) {
		taint_mark(t, BUF + 4, 4, 0);
		leaf_call(t, LEAF, leaf_add, 4, 1, 5); /* r0 = BUF: its summary was the first replaced */
		CHECK(taint_memory(t, BUF + 4) == S);
	}
	leaf_counts(t, patterns + 1, 2 * patterns + 1);
	regs[0] = BUF + 8 * (patterns - 1), regs[1] = 5, regs[14] = SCOPE + 0x10 + 1;
	taint_block(t, LEAF);
	taint_block(t, SCOPE + 0x10);
	leaf_counts(t, patterns + 1, 2 * patterns + 2);
	taint_free(t);
}

/* ldr r2, [r0, #8]; ldr r3, [r0, r2]; str r3, [r0, #12]; bx lr: the word at r0 + 8 (a position,
 * as slhdsa-c's sha3_update keeps one in its context) decides the address of the second load. */
static const uint16_t leaf_at_position[] = {0x6882, 0x5883, 0x60c3, 0x4770};

/* A call of "count" reading at `position` from BUF, which BUF + 8 holds. */
static void position_call(struct taint *t, uint32_t position)
{
	memory_words[2] = position;
	regs[0] = BUF, regs[2] = position, regs[14] = SCOPE + 0x10 + 1;
	taint_block(t, LEAF + 0x200);
	code_base = LEAF + 0x200;
	run(t, leaf_at_position, 4, 0);
	taint_block(t, SCOPE + 0x10);
}

/* A call whose path or addresses memory decides is not summarised, but the word it was loaded from
 * is found: the next call is summarised keyed on that word's value, a call with the same value
 * replays, and one with another is tracked again, with the results of tracking. */
static void test_leaf_keyed_on_the_memory_that_decides(void)
{
	struct taint *t = leaf_tracker();
	position_call(t, 16);
	leaf_counts(t, 0, 0);
	position_call(t, 16);
	leaf_counts(t, 1, 0);
	position_call(t, 16);
	leaf_counts(t, 1, 1);
	CHECK(taint_memory(t, BUF + 12) == 0);
	position_call(t, 0); /* reads the secret word at BUF */
	leaf_counts(t, 2, 1);
	CHECK(taint_memory(t, BUF + 12) == S);
	taint_mark(t, BUF + 12, 4, 0);
	position_call(t, 0);
	leaf_counts(t, 2, 2);
	CHECK(taint_memory(t, BUF + 12) == S);
	taint_free(t);
}

/* Calls of a function whose inputs do not repeat: it is left alone after TAINT_LEAF_RECORDINGS, unless
 * one of its calls replayed: then after as many as it keeps summaries (a repeated call, once
 * found, replays again). Either way the calls' results are those of tracking them. */
static void test_leaf_left_alone_once_its_calls_do_not_repeat(void)
{
	struct taint *t = leaf_tracker();
	for (unsigned i = 0; i < TAINT_LEAF_RECORDINGS + 4; i++)
		add_call_on(t, BUF + 8 * i);
	add_call_on(t, BUF); /* r0 = BUF: recorded first, but no longer replayed */
	leaf_counts(t, TAINT_LEAF_RECORDINGS, 0);
	CHECK(taint_memory(t, BUF + 4) == S);
	taint_free(t);

	t = leaf_tracker();
	add_call_on(t, BUF);
	add_call_on(t, BUF);
	leaf_counts(t, 1, 1);
	const unsigned patterns = TAINT_LEAF_SUMMARIES;
	for (unsigned i = 1; i < patterns; i++)
		add_call_on(t, BUF + 8 * i);
	leaf_counts(t, patterns, 1);
	add_call_on(t, BUF); /* r0 = BUF: the first pattern again */
	add_call_on(t, BUF);
	leaf_counts(t, patterns, 3);
	for (unsigned i = patterns; i < patterns + 2; i++) /* new patterns: not recorded any more */
		add_call_on(t, BUF + 8 * i);
	add_call_on(t, BUF); /* ... nor replayed: tracked, with the same result */
	leaf_counts(t, patterns, 3);
	CHECK(taint_memory(t, BUF + 4) == S);
	taint_free(t);
}

/* "test" called from the scope function as the emulator runs it, each block's gate first: `own`
 * runs of its 3-instruction body, then "add" running `times` over, called from LEAF + 0x104 or,
 * with `tail`, branched to with LR unchanged (pqm4's crypto_hashblocks_sha512 ends so), returning
 * for both; whether the gate before "add" changed the code hook (and, in `test_changed`, the one
 * before "test"). */
static bool gated_test_calls_add(struct taint *t, unsigned own, unsigned times, bool *test_changed, bool tail)
{
	regs[0] = BUF, regs[1] = 5, regs[14] = SCOPE + 0x10 + 1;
	bool changed = taint_gate(t, LEAF + 0x100);
	if (test_changed)
		*test_changed = changed;
	taint_block(t, LEAF + 0x100);
	code_base = LEAF + 0x100;
	for (unsigned i = 0; i < own; i++)
		run(t, leaf_add, 3, 0);
	if (!tail)
		regs[0] = BUF, regs[14] = LEAF + 0x104 + 1;
	changed = taint_gate(t, LEAF);
	taint_block(t, LEAF);
	code_base = LEAF;
	for (unsigned i = 0; i < times; i++)
		run(t, leaf_add, 4, 0);
	if (!tail)
		taint_block(t, LEAF + 0x104);
	taint_block(t, SCOPE + 0x10);
	CHECK(taint_memory(t, BUF + 4) == S);
	return changed;
}

/* A callee out of the code hook on its own, called in a call being recorded: hooked again before
 * it runs (tracked in the recording), out again for the recorded call's replays. */
static void test_leaf_sealed_callee_hooked_inside_a_recording(void)
{
	struct taint *t = leaf_tracker();
	uint32_t ranges[65][2];
	for (int call = 0; call <= TAINT_SEAL_STREAK + 1; call++) {
		regs[0] = BUF, regs[1] = 5, regs[14] = SCOPE + 0x10 + 1;
		taint_gate(t, LEAF);
		leaf_call(t, LEAF, leaf_add, 4, 75, 5);
	}
	CHECK(taint_hooked_ranges(t, ranges) == 2 && ranges[0][1] == LEAF - 1); /* "add" sealed */
	bool test_changed;
	CHECK(gated_test_calls_add(t, 0, 75, &test_changed, false) && !test_changed); /* "add" hooked */
	CHECK(taint_hooked_ranges(t, ranges) == 1);
	leaf_counts(t, 2, TAINT_SEAL_STREAK + 1); /* "test" recorded with "add" in it */
	CHECK(!gated_test_calls_add(t, 0, 75, &test_changed, false) && test_changed); /* replayed: "add" out */
	CHECK(taint_hooked_ranges(t, ranges) == 2 && ranges[0][1] == LEAF - 1);
	leaf_counts(t, 2, TAINT_SEAL_STREAK + 2);
	taint_free(t);
}

/* "test" calling "add" (300 instructions; with `tail`, branched to), recorded once, then replayed
 * once: "add" is on the summary's list and out of the code hook for the replay. */
static struct taint *tracker_replaying_test_with_add_sealed(bool tail)
{
	struct taint *t = leaf_tracker();
	uint32_t ranges[65][2];
	gated_test_calls_add(t, 0, 75, NULL, tail);
	leaf_counts(t, 1, 0);
	bool test_changed;
	CHECK(!gated_test_calls_add(t, 0, 75, &test_changed, tail) && test_changed);
	leaf_counts(t, 1, 1);
	CHECK(taint_hooked_ranges(t, ranges) == 2 && ranges[0][1] == LEAF - 1); /* "add" sealed */
	return t;
}

/* A long callee never called on its own (SPHINCS+-SHA2's compression inside sha256_inc_finalize)
 * is summarised with its caller and leaves the code hook for the caller's replays; the caller
 * leaves it too once its calls replay in a row; a call of the callee on its own that cannot
 * replay brings it back before it runs. */
static void test_leaf_long_callee_sealed_for_its_callers_replays(void)
{
	struct taint *t = tracker_replaying_test_with_add_sealed(false);
	uint32_t ranges[65][2];
	for (int call = 0; call < TAINT_SEAL_STREAK; call++)
		gated_test_calls_add(t, 0, 75, NULL, false);
	leaf_counts(t, 1, 1 + TAINT_SEAL_STREAK);
	CHECK(taint_hooked_ranges(t, ranges) == 3); /* "test" too */
	regs[0] = BUF, regs[1] = 5, regs[14] = SCOPE + 0x10 + 1;
	CHECK(taint_gate(t, LEAF)); /* "add" on its own: no summary of its own */
	CHECK(taint_hooked_ranges(t, ranges) == 2 && ranges[0][1] == LEAF + 0x100 - 1);
	leaf_call(t, LEAF, leaf_add, 4, 75, 5);
	leaf_counts(t, 2, 1 + TAINT_SEAL_STREAK);
	CHECK(taint_memory(t, BUF + 4) == S);
	taint_free(t);
}

/* A long callee tail-called from a recorded call (pqm4's crypto_hashblocks_sha512 branches to its
 * assembly compression) returns with it: it is the call's callee all the same, on its summary's
 * list, and out of the code hook for its replays. */
static void test_leaf_long_tail_callee_sealed_for_its_callers_replays(void)
{
	taint_free(tracker_replaying_test_with_add_sealed(true));
}

/* A long callee that runs a small part of its caller's call (slhdsa-c's SHA-512 compression copies
 * its 640 bytes of round constants with memcpy, whose other calls are short) is summarised with
 * its caller: the caller's calls replay whole, the callee and then the caller leave the code hook. */
static void test_leaf_long_callee_in_a_longer_caller_summarised_with_it(void)
{
	struct taint *t = leaf_tracker();
	uint32_t ranges[65][2];
	for (int call = 0; call < 3; call++)
		leaf_call(t, LEAF, leaf_add, 4, 5, 5); /* "add" alone: 20 instructions */
	for (int call = 0; call <= TAINT_SEAL_STREAK + 1; call++)
		gated_test_calls_add(t, 250, 75, NULL, false); /* "test": 750 instructions of its own, then "add": 300 */
	leaf_counts(t, 2, 2 + TAINT_SEAL_STREAK + 1);
	CHECK(taint_hooked_ranges(t, ranges) == 3 && ranges[0][1] == LEAF - 1 &&
	      ranges[1][1] == LEAF + 0x100 - 1); /* "add" and "test" sealed */
	taint_free(t);
}

/* A callee too short to leave the code hook (under 16 instructions) does not end the recording of
 * its caller, though summarised on its own: the caller is summarised with it, its later calls
 * replay whole, and the caller leaves the code hook. */
static void test_leaf_short_callee_summarised_with_its_caller(void)
{
	struct taint *t = leaf_tracker();
	uint32_t ranges[65][2];
	leaf_call(t, LEAF, leaf_add, 4, 5, 5); /* "add" alone: 20 instructions */
	for (int call = 0; call <= TAINT_SEAL_STREAK + 1; call++)
		gated_test_calls_add(t, 100, 3, NULL, false); /* "test": 300 instructions of its own, then "add": 12 */
	leaf_counts(t, 2, TAINT_SEAL_STREAK + 1); /* "test" recorded once with "add" in it, then replayed */
	CHECK(taint_hooked_ranges(t, ranges) == 2); /* "test" sealed */
	taint_free(t);
}

/* Idle (nothing tainted, no checked call open) no instruction calls taint_insn; a block that can
 * begin the checked call or mark a secret brings the code hook back before it runs, and the
 * call's return leaves it again. */
static void test_idle_leaves_the_code_hook(void)
{
	struct taint *t = taint_new(&leaf_elf, &chip_stm32f407);
	CHECK(taint_scope_function(t, "sign") == 0);
	taint_attach(t, &fake_core);
	memset(regs, 0, sizeof regs);
	regs[13] = LEAF_SP;
	uint32_t ranges[65][2];
	CHECK(taint_gate(t, CALLER));  /* idle: unhooked */
	CHECK(!taint_gate(t, CALLER)); /* and asked again, as the block runs again: no change */
	CHECK(taint_hooked_ranges(t, ranges) == 0);
	taint_block(t, CALLER);
	CHECK(!taint_gate(t, LEAF));   /* a leaf called while idle: nothing to track */
	regs[14] = CALLER + 0x10 + 1;
	CHECK(taint_gate(t, SCOPE));   /* the checked call begins at this block: hooked first */
	CHECK(taint_hooked_ranges(t, ranges) == 1 && ranges[0][0] == 0 && ranges[0][1] == UINT32_MAX);
	CHECK(!taint_gate(t, SCOPE));
	taint_block(t, SCOPE);
	CHECK(!taint_gate(t, SCOPE + 0x10)); /* in the call, nothing tainted yet: still tracked (coverage) */
	taint_block(t, SCOPE + 0x10);
	CHECK(!taint_gate(t, CALLER + 0x10)); /* the return's block: the call ends as it begins */
	taint_block(t, CALLER + 0x10);
	CHECK(taint_gate(t, CALLER + 0x20)); /* returned: idle again */
	CHECK(taint_hooked_ranges(t, ranges) == 0);
	taint_free(t);
}

int main(void)
{
	test_data_processing_and_flags();
	test_zeroing_idioms();
	test_loads_and_stores_per_byte();
	test_secret_address();
	test_push_pop_per_register();
	test_ldrd_strd();
	test_division();
	test_it_block();
	test_flags_memset_pattern();
	test_flags_arithmetic_and_conditions();
	test_flags_logical_and_shifts();
	test_flags_it_condition();
	test_flags_carry_readers();
	test_flags_msr_mrs();
	test_vmov_core_fp();
	test_vldr_vstr();
	test_fp_compare_and_branches();
	test_branch_directions();
	test_jumps();
	test_capstone_gaps();
	test_literal_and_indexed_addresses();
	test_flash_address_timed();
	test_exception_keeps_register_taint();
	test_ge_and_q();
	test_declassify();
	test_the_l4r5s_sram2_alias_shares_its_taint();
	test_scope_marks_and_returns();
	test_within();
	test_watched_anywhere();
	test_coverage_per_call();
	test_call_lines();
	test_call_outcomes();
	test_outcome_runs();
	test_leaf_replayed();
	test_leaf_not_summarised();
	test_leaf_calling_a_leaf();
	test_leaf_refused_before_an_exception();
	test_leaf_sealed();
	test_leaf_lookup_follows_inputs();
	test_leaf_inputs_compared_by_the_byte();
	test_leaf_summaries_replaced_in_turn();
	test_leaf_left_alone_once_its_calls_do_not_repeat();
	test_leaf_keyed_on_the_memory_that_decides();
	test_leaf_sealed_callee_hooked_inside_a_recording();
	test_leaf_short_callee_summarised_with_its_caller();
	test_leaf_long_callee_sealed_for_its_callers_replays();
	test_leaf_long_tail_callee_sealed_for_its_callers_replays();
	test_leaf_long_callee_in_a_longer_caller_summarised_with_it();
	test_idle_leaves_the_code_hook();
	return check_summary("taint tests");
}
