/* Runs the timing model's micro-benchmarks and compares each with the cycles the model prices it
 * at: the Cortex-M4 TRM (ARM DDI 0439, table 3-1, section 3.3.2 and the FPU table; a taken branch's
 * refill P = 1 or 2 by the stage its target is issued in, 3 for loaded targets) and, for instruction alignment, IT folding, literal loads and loads after
 * stores, what compendium.i-0.nl measured on an STM32 Cortex-M4. The third column is a published
 * measurement on silicon of the same sequence, where one exists (0: none): the model departs from
 * it for runs of unaligned 32-bit instructions (README, "How close the virtual board is to
 * silicon": pqm4's Discovery numbers of whole rows say the Discovery does not pay them). One line per sequence, then
 * a summary; on a Discovery board (`pqscope model-check`) the lines say where the model is wrong. */
#include <stdint.h>

#include "board.h"

extern uint32_t bench_data[16];

#define BENCHES(X)                                                                          \
	X(alu, 4, 0)                         /* data processing: 1 each */                          \
	X(mul, 2, 0)                         /* MUL: 1 */                                           \
	X(mla_mls, 2, 0)                     /* MLA, MLS: 1 on the M4 (2 on the M3) */              \
	X(umull_smlal, 2, 0)                 /* UMULL, SMLAL: 1 on the M4 */                        \
	X(dsp_mul, 3, 0)                     /* SMULBB, SMLAD, SMMUL: 1 */                          \
	X(udiv_zero_quotient, 2, 0)          /* UDIV early termination: 2 */                        \
	X(udiv_max_quotient, 12, 0)          /* UDIV 32-bit quotient: 12 */                         \
	X(sdiv_max_quotient, 12, 0)          /* SDIV 0x80000000 / -1: 12 */                         \
	X(ldr_pipelined, 3, 0)               /* LDR; LDR (independent): 2 + 1 */                    \
	X(ldr_dependent, 4, 0)               /* LDR; LDR using the loaded address: 2 + 2 */         \
	X(ldr_str, 3, 0)                     /* LDR; STR: 2 + 1 */                                  \
	X(str_ldr, 4, 0)                     /* STR [Rn,#imm] 1; LDR 2, +1 waiting for the store */ \
	X(str_alu_ldr, 4, 0)                 /* STR 1; ADDS 1; LDR 2: the store is done by then */ \
	X(literal_load, 2, 2)                /* LDR [PC,#imm]: 2, as MOVW+MOVT (compendium) */ \
	X(literal_pair, 3, 0)                /* two literal LDR: 2 + 1, they pipeline with each other */ \
	X(load_then_literal, 4, 0)           /* LDR 2; literal LDR 2: not pipelined with other loads */ \
	X(str_literal, 5, 5)                 /* STR 1; literal LDR 2, +2 (compendium: the pair takes 5) */ \
	X(ldr_after_alu, 4, 0)               /* ADDS r3; LDR [r3]: no forwarding to the address: 1+1+2 */ \
	X(str_reg_ldr, 5, 0)                 /* STR [Rn,Rm] 2; LDR 2, +1 waiting for the store */ \
	X(tbb, 6, 0)                         /* TBB: load 2, add 1, pipeline reload 3 */            \
	X(ldr_base_update, 4, 0)             /* LDR; LDR with base update: not pipelined, 2 + 2 */ \
	X(ldr_three, 4, 0)                   /* three independent LDR: 2 + 1 + 1 */                 \
	X(ldr_three_across_page, 4, 0)       /* the same with a page boundary before the third */ \
	X(ldrd, 3, 0)                        /* LDRD: 3 */                                          \
	X(ldm4, 5, 0)                        /* LDM 4 registers: 1 + N */                           \
	X(stm4, 5, 0)                        /* STM 4 registers: 1 + N */                           \
	X(push_pop4, 11, 0)                  /* PUSH, POP 4 registers: (1 + N) * 2, +1 POP after a store */ \
	X(bl_pop_pc, 10, 0)                  /* BL 1+1, PUSH {lr} 2, POP {pc} 1+N+3 (loaded target), +1 */ \
	X(branch_taken, 2, 2)                /* B taken: 1 + P, P = 1 (target issued in decode) */ \
	X(branch_not_taken, 3, 0)            /* CMP 1, BNE not taken 1, NOP 1 */                    \
	X(it_skip, 3, 0)                     /* CMP 1, ITE folded 0, ADDNE (skipped), ADDEQ: 1 each */ \
	X(it_fold, 2, 2)                     /* MOVS 1, IT folded 0, RSBMI 1 (compendium: 2) */ \
	X(it_after_wide, 3, 3)               /* MOV.W 1, IT 1, RSBMI 1 (compendium: 3) */           \
	X(vadd, 2, 0)                        /* VADD, VMUL: 1 */                                    \
	X(vmla, 3, 0)                        /* VMLA: 3 */                                          \
	X(vfma, 3, 0)                        /* VFMA: 3 */                                          \
	X(vdiv, 14, 0)                       /* VDIV: 14 */                                         \
	X(vsqrt, 14, 0)                      /* VSQRT: 14 */                                        \
	X(vldr_vstr, 4, 0)                   /* VLDR 2, VSTR 2 */                                   \
	X(vldm4, 5, 0)                       /* VLDM 4 singles: 1 + N */                            \
	X(vpush_vpop, 11, 0)                 /* VPUSH, VPOP 4 singles: (1 + N) * 2, +1 after a store */ \
	X(vmov_core, 3, 0)                   /* VMOV Rt,Sn 1; VMOV Sm,Sm1,Rt,Rt2 2 */               \
	X(vcvt_vcmp_vmrs, 3, 0)              /* VCVT, VCMP, VMRS: 1 */                              \
	X(wide_unaligned_two, 2, 2)          /* two 32-bit at halfword addresses: 1 each */         \
	X(wide_unaligned_three, 3, 4)        /* three: 1 each (the compendium's +1 for the run: not priced) */ \
	X(wide_aligned_three, 4, 0)          /* NOP, then three 32-bit at word addresses: 1 each */ \
	X(wide_unaligned_stores_three, 3, 3) /* STR.W: 1 each */                                   \
	X(wide_unaligned_stores_four, 4, 5)  /* four: 1 each (compendium: +1, not priced) */       \
	X(branch_to_unaligned_wide, 4, 4)    /* B 2, +1 landing on a halfword, EOR.W 1 */         \
	X(return_to_unaligned_wide, 12, 0)   /* as bl_pop_pc, +1 landing on a halfword, EOR.W 1 */ \
	X(branch_to_aligned_wide, 3, 3)      /* B 2, EOR.W 1 */                                   \
	X(loop_back, 12, 12)                 /* MOVS; 3 x (ADDS, SUBS, BNE): 10, +1 twice (compendium: taken 2) */ \
	X(loop_back_far, 38, 0)              /* a loop of 18 narrow instructions (36 bytes) run twice: 37, +1 */ \
	X(branch_far, 2, 0)                  /* B 2 over 64 bytes: the target in another flash line */ \
	X(call_return, 4, 4)                 /* BL 2, BX LR 2 (compendium: call and return 4) */ \
	X(copy_words, 15, 0)                 /* memcpy's loop: 4 x (LDR post-indexed, STR) */ \
	X(copy_words_to_halfword, 15, 0)     /* the same storing at halfword addresses (thash) */ \
	X(cbz_taken, 3, 0)                   /* CBZ taken: 1 + P, P = 2 (target issued in execute) */ \
	X(bx_register, 3, 0)                 /* BX r3: 1 + 2, issued in execute */                  \
	X(bx_lr_after_lr_write, 4, 0)        /* MOV LR 1; BX LR 1 + 2: LR written during decode */ \
	X(ldr_three_sram2, 4, 0)             /* ldr_three in SRAM2 */                               \
	X(str_ldr_sram2, 4, 0)               /* str_ldr in SRAM2 */                                 \
	X(gf16_multiply_add, 68, 0)          /* MiRitH's loop 4 times: NOP 1 (alignment), 3 x 17, 16 */ \
	X(gf16_multiply_add_sram2, 68, 0)    /* the same in SRAM2 */                                \
	X(gf16_multiply_add_sram3, 68, 0)    /* the same in SRAM3 (the Discovery's: top of SRAM1) */ \
	X(ldr_unaligned_halfword, 2, 0)      /* LDR at a halfword address: 2 (TRM: +1, not modelled) */ \
	X(ldr_unaligned_byte, 2, 0)          /* LDR at an odd address: 2 (TRM: +2, not modelled) */ \
	X(it_skipped_load, 7, 0)             /* B 2, CMP 1, IT folded, LDRNE skipped: 2 as run, B 2 */ \
	X(it_executed_load, 7, 0)            /* the same with the load executed */

#define DECLARE(name, model, silicon) uint32_t bench_##name(void);
BENCHES(DECLARE)
uint32_t bench_empty(void);
uint32_t bench_udiv_mid_quotient(void);

static unsigned passed, failed;

/* "PASS|FAIL <name>: <cycles> cycles, model <lo>[..<hi>][, silicon <published>]" */
static void check(const char *name, uint32_t measured, uint32_t lo, uint32_t hi, uint32_t silicon)
{
	int ok = measured >= lo && measured <= hi;
	put_str(ok ? "PASS " : "FAIL ");
	put_str(name);
	put_str(": ");
	put_u64(measured);
	put_str(" cycles, model ");
	put_u64(lo);
	if (hi != lo) {
		put_str("..");
		put_u64(hi);
	}
	if (silicon) {
		put_str(", silicon ");
		put_u64(silicon);
	}
	put_str("\n");
	if (ok)
		passed++;
	else
		failed++;
}

int main(void)
{
	board_setup();
	bench_data[0] = (uint32_t)&bench_data[0]; /* pointer for the dependent load */
	uint32_t empty = bench_empty();
	put_str("empty measurement: ");
	put_u64(empty);
	put_str(" cycles\n");
#define RUN(name, model, silicon) check(#name, bench_##name() - empty, model, model, silicon);
	BENCHES(RUN)
	/* 50000 / 7: 13-bit quotient, strictly between the extremes */
	check("udiv_mid_quotient", bench_udiv_mid_quotient() - empty, 3, 11, 0);
	put_str(failed ? "TRM: FAILED " : "TRM: all ");
	put_u64(failed ? failed : passed);
	put_str(failed ? " failed\n" : " passed\n");
	return 0;
}
