/* Unit tests of the cost model on raw Thumb-2 encodings (no emulator involved). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "timing.h"

static csh cs;
static struct block_timing bt;

/* Prices a block given as little-endian halfwords, at `addr`. */
static uint32_t price_at(uint32_t addr, const uint16_t *halfwords, size_t n)
{
	uint8_t code[64];
	for (size_t i = 0; i < n; i++) {
		code[2 * i] = (uint8_t)halfwords[i];
		code[2 * i + 1] = (uint8_t)(halfwords[i] >> 8);
	}
	if (!timing_analyze(cs, code, (uint32_t)(2 * n), addr, NULL, &bt)) {
		fprintf(stderr, "analysis failed: %s\n", bt.error);
		failures++;
		return 0;
	}
	return bt.cycles;
}

#define PRICE_AT(addr, ...) \
	price_at(addr, (const uint16_t[]){__VA_ARGS__}, sizeof((uint16_t[]){__VA_ARGS__}) / 2)
#define PRICE(...) PRICE_AT(0x08000100, __VA_ARGS__)
#define NOP 0xbf00
#define EOR_W 0xea83, 0x0303 /* eor.w r3, r3, r3 */
#define STR_W 0xf8c1, 0x3100 /* str.w r3, [r1, #256] */

int main(void)
{
	if (!timing_open(&cs)) {
		fprintf(stderr, "cannot open capstone\n");
		return 1;
	}
	CHECK(PRICE(0x6808, 0x681a) == 3);           /* ldr r0,[r1]; ldr r2,[r3]: pipelined */
	CHECK(PRICE(0x6808, 0x6802) == 4);           /* ldr r0,[r1]; ldr r2,[r0]: dependent */
	CHECK(PRICE(0x6008, 0x681a) == 3 + TIMING_STORE_THEN_LOAD); /* str r0,[r1]: 1; ldr waits */
	CHECK(PRICE(0x5088, 0x681a) == 4 + TIMING_STORE_THEN_LOAD); /* str r0,[r1,r2]: 2, then waits */
	CHECK(PRICE(0x6008, 0x3004, 0x681a) == 4);   /* str; adds r0,#4; ldr: the store is done */
	CHECK(PRICE(0xb410, 0x6808) == 4 + TIMING_STORE_THEN_LOAD); /* push {r4}; ldr r0,[r1] */
	CHECK(PRICE(0x6008, 0x6008) == 2);           /* str; str: stores do not wait */
	CHECK(PRICE(0x3104, 0x6808) == 4);           /* adds r1,#4; ldr r0,[r1]: address stall */
	CHECK(PRICE(0x3204, 0x6808) == 3);           /* adds r2,#4; ldr r0,[r1]: no stall */
	CHECK(PRICE(0x6808, 0x6008) == 3);           /* ldr; str */
	CHECK(PRICE(0x681a, 0xf851, 0x0b04) == 4);   /* ldr; ldr r0,[r1],#4: base update, not pipelined */
	/* literal loads: a load's 2; they pipeline only with each other; after a store, 2 more */
	CHECK(PRICE(0x4801) == 2);                   /* ldr r0, [pc, #4] */
	CHECK(PRICE(0x4801, 0x4a01) == 3);           /* ldr r0,[pc,#4]; ldr r2,[pc,#4]: pipelined */
	CHECK(PRICE(0x6808, 0x4a01) == 4);           /* ldr r0,[r1]; ldr r2,[pc,#4]: not pipelined */
	CHECK(PRICE(0x4a01, 0x6808) == 4);           /* ldr r2,[pc,#4]; ldr r0,[r1]: not pipelined */
	CHECK(PRICE(0x6008, 0x4a01) == 3 + TIMING_STORE_THEN_LITERAL); /* str; literal: 5 measured */
	CHECK(PRICE(0xe9df, 0x0102) == 3);           /* ldrd r0, r1, [pc, #8] */
	CHECK(PRICE(0xed9f, 0x0b02) == 2);           /* vldr d0, [pc, #8] */
	CHECK(PRICE(0xe8df, 0xf001) == 3);       /* tbb [pc, r1]: a table, the TRM's 3 (+P) */
	CHECK(PRICE(0xfb01, 0x3002) == 1);           /* mla: 1 on the M4 */
	CHECK(PRICE(0x0008, 0xbf48, 0x4240) == 2);   /* movs; it mi; negmi: the IT folds */
	CHECK(PRICE(0xea4f, 0x0001, 0xbf48, 0x4240) == 3); /* mov.w; it mi; negmi: it does not */
	PRICE(0xbf48, 0x4240);                       /* a block starting with the IT */
	CHECK(bt.cycles == 2 && bt.entry.it);
	CHECK(timing_entry_adjust(&bt.entry, &(struct pipe_state){.after_narrow = true}) == -1);
	CHECK(timing_entry_adjust(&bt.entry, &(struct pipe_state){0}) == 0);
	CHECK(PRICE(0xe9d2, 0x0100) == 3);           /* ldrd */
	CHECK(PRICE(0xbd10) == 3);                   /* pop {r4, pc}: 1+N (+P when taken) */
	CHECK(bt.exit_refill == TIMING_REFILL_UNPREDICTED); /* a loaded target: 3-cycle reload */
	CHECK(PRICE(0xe8d0, 0xf001) == 3);           /* tbb [r0, r1]: load 2 + add 1 (+P) */
	CHECK(bt.exit_refill == TIMING_REFILL_UNPREDICTED);
	CHECK(PRICE(0x2000, 0xe7fe) == 2 && bt.exit_refill == TIMING_REFILL_DECODE); /* movs; b */
	/* the stage a branch's target is issued in (timing.h) */
	CHECK(PRICE(0xd0fe) == 1 && bt.exit_refill == TIMING_REFILL_DECODE);    /* beq */
	CHECK(PRICE(0x4770) == 1 && bt.exit_refill == TIMING_REFILL_DECODE);    /* bx lr */
	CHECK(PRICE(0x46f7) == 1 && bt.exit_refill == TIMING_REFILL_DECODE);    /* mov pc, lr */
	CHECK(PRICE(0x469e, 0x4770) == 2 && bt.exit_refill == TIMING_REFILL_EXECUTE); /* mov lr, r3; bx lr */
	CHECK(PRICE(0x4718) == 1 && bt.exit_refill == TIMING_REFILL_EXECUTE);   /* bx r3 */
	CHECK(PRICE(0x4798) == 1 && bt.exit_refill == TIMING_REFILL_EXECUTE);   /* blx r3 */
	CHECK(PRICE(0xb108) == 1 && bt.exit_refill == TIMING_REFILL_EXECUTE);   /* cbz r0 */
	CHECK(PRICE(0x4487) == 1 && bt.exit_refill == TIMING_REFILL_EXECUTE);   /* add pc, r0 */
	CHECK(PRICE(0xed2d, 0x8b04) == 5);           /* vpush {d8-d9}: 1 + 4 words */
	CHECK(PRICE(0xee30, 0x0a81) == 1 && bt.uses_fp); /* vadd.f32 */
	CHECK(PRICE(0xee00, 0x0a81) == 3);           /* vmla.f32 */

	/* a block entered by falling through: its first instruction against the previous one's state */
	PRICE(0x681a); /* ldr r2, [r3] */
	CHECK(bt.entry.access && bt.entry.pipelines && bt.entry.addr_regs == 1u << 3);
	CHECK(timing_entry_adjust(&bt.entry, &(struct pipe_state){0}) == 0);
	struct pipe_state loaded_r0 = {.after_load = true, .load_dests = 1u << 0};
	struct pipe_state loaded_r3 = {.after_load = true, .load_dests = 1u << 3};
	CHECK(timing_entry_adjust(&bt.entry, &loaded_r0) == -1);
	CHECK(timing_entry_adjust(&bt.entry, &loaded_r3) == 0);  /* its address needs r3 */
	CHECK(timing_entry_adjust(&bt.entry, &(struct pipe_state){.alu_dests = 1u << 3}) == 1);
	PRICE(0x6808, 0x3304); /* ldr r0, [r1]; adds r3, #4: leaves r3 from the ALU */
	CHECK(!bt.exit.after_load && bt.exit.alu_dests == 1u << 3);
	PRICE(0x3304, 0x6808); /* adds; ldr r0, [r1]: leaves a load of r0 */
	CHECK(bt.exit.after_load && bt.exit.load_dests == 1u << 0);
	PRICE(0x681a); /* ldr r2, [r3]: waits after a store, pipelines after a load only */
	CHECK(timing_entry_adjust(&bt.entry, &(struct pipe_state){.after_store = true}) ==
	      TIMING_STORE_THEN_LOAD);
	CHECK(timing_entry_adjust(&bt.entry, &(struct pipe_state){.after_literal = true}) == 0);
	PRICE(0x4a01); /* ldr r2, [pc, #4]: pipelines after a literal load only */
	CHECK(bt.entry.literal && bt.entry.load);
	CHECK(timing_entry_adjust(&bt.entry, &(struct pipe_state){.after_literal = true}) == -1);
	CHECK(timing_entry_adjust(&bt.entry, &(struct pipe_state){.after_load = true}) == 0);
	CHECK(timing_entry_adjust(&bt.entry, &(struct pipe_state){.after_store = true}) ==
	      TIMING_STORE_THEN_LITERAL);
	CHECK(bt.exit.after_literal && !bt.exit.after_load);
	PRICE(0x6008); /* str r0, [r1]: always 1, whatever came before */
	CHECK(timing_entry_adjust(&bt.entry, &(struct pipe_state){.after_load = true}) == 0);
	CHECK(timing_entry_adjust(&bt.entry, &(struct pipe_state){.after_store = true}) == 0);
	CHECK(bt.exit.after_store && !bt.entry.load);

	/* 32-bit instructions at halfword addresses cost 1 each, however many follow each other (the
	 * alignment-run cost is not priced: timing.h); only a branch landing on one costs more */
	CHECK(PRICE(NOP, EOR_W, EOR_W, EOR_W) == 4);
	CHECK(PRICE(NOP, EOR_W, EOR_W, EOR_W, EOR_W, EOR_W) == 6);
	CHECK(PRICE(NOP, STR_W, STR_W, STR_W, STR_W) == 5);
	CHECK(PRICE_AT(0x08000102, EOR_W, EOR_W, EOR_W) == 3);
	/* a taken branch landing on a 32-bit instruction at a halfword address */
	CHECK(PRICE_AT(0x08000102, EOR_W) == 1 && bt.entry_refill == TIMING_UNALIGNED_TARGET);
	CHECK(PRICE_AT(0x08000100, EOR_W) == 1 && bt.entry_refill == 0);
	CHECK(PRICE_AT(0x08000102, NOP, EOR_W) == 2 && bt.entry_refill == 0);

	CHECK(PRICE(0xfbb1, 0xf0f2) == TIMING_DIV_BASE); /* udiv r0, r1, r2 */
	CHECK(bt.ndivs == 1 && bt.divs[0].addr == 0x08000100 && bt.divs[0].rn == 1 &&
	      bt.divs[0].rm == 2 && !bt.divs[0].is_signed && bt.divs[0].cond == ARM_CC_AL);

	PRICE(0xe7fe); /* b . */
	CHECK(bt.halts);
	PRICE(0xbf08, 0x6808); /* it eq; ldreq r0,[r1] */
	CHECK(bt.it_mem && bt.insn[1].in_it && !bt.insn[0].in_it);

	PRICE(0x6808, 0x681a, 0x6008); /* ldr, ldr, str: 2 + 1 + 1 */
	CHECK(timing_suffix(&bt, 1) == 2 && bt.insn[1].before.after_load &&
	      bt.insn[1].before.load_dests == 1u);

	/* seven movs fill line 0x0800010 but its last halfword; ldrd straddles into the next line,
	 * which the core then needs 7 cycles into the block; the last movs stays in it */
	PRICE(0x2000, 0x2000, 0x2000, 0x2000, 0x2000, 0x2000, 0x2000, 0xe9d2, 0x0100, 0x2000);
	CHECK(bt.nfetches == 2 && bt.fetch[0].line == 0x0800010 && bt.fetch[0].offset == 0 &&
	      bt.fetch[1].line == 0x0800011 && bt.fetch[1].offset == 7);

	CHECK(timing_div(3, 100, false) == 2);
	CHECK(timing_div(0xffffffffu, 1, false) == 12);
	CHECK(timing_div(0x80000000u, 0xffffffffu, true) == 12);
	CHECK(timing_div(1, 0, false) == 2);
	CHECK(timing_div(50000, 7, false) > 2 && timing_div(50000, 7, false) < 12);
	for (uint32_t q = 1; q < 0x80000000u; q <<= 1) /* monotonic in the quotient */
		CHECK(timing_div(q, 1, false) <= timing_div(q << 1, 1, false));

	CHECK(timing_cond_holds(ARM_CC_EQ, 1u << 30) && !timing_cond_holds(ARM_CC_NE, 1u << 30));
	CHECK(timing_cond_holds(ARM_CC_GE, 0x90000000u) && !timing_cond_holds(ARM_CC_LT, 0x90000000u));

	cs_close(&cs);
	return check_summary("timing tests");
}
