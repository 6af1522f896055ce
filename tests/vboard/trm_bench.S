/* Cortex-M4 TRM micro-benchmarks. Each bench_<name> returns the DWT cycles between two reads
 * of CYCCNT around its sequence; the caller subtracts bench_empty. r0 = &DWT_CYCCNT,
 * r8 = bench_data (SRAM). Nops around the first read keep it from pipelining with the set-up
 * loads before it or with a sequence that starts with a load. */
	.syntax unified
	.thumb
	.text

.macro BEGIN name
	.global bench_\name
	.type bench_\name, %function
	.thumb_func
	.align 2
bench_\name:
	push {r4-r11, lr}
	ldr r0, =0xe0001004
	ldr r8, =bench_data
.endm

.macro START
	nop
	ldr r1, [r0]
	nop
.endm

.macro END
	ldr r2, [r0]
	subs r0, r2, r1
	pop {r4-r11, pc}
	.ltorg
.endm

BEGIN empty
	START
	END

BEGIN alu
	movs r3, #0
	START
	adds r3, r3, #1
	eor r3, r3, r3, lsl #3
	subs r3, r3, #5
	bic r3, r3, #4
	END

BEGIN mul
	movs r4, #3
	movs r5, #5
	START
	mul r3, r4, r5
	mul r3, r3, r5
	END

BEGIN mla_mls
	movs r4, #3
	movs r5, #5
	movs r6, #7
	START
	mla r3, r4, r5, r6
	mls r3, r4, r5, r3
	END

BEGIN umull_smlal
	mvn r5, #0
	mvn r6, #0
	START
	umull r3, r4, r5, r6
	smlal r3, r4, r5, r6
	END

BEGIN dsp_mul
	movs r4, #3
	movs r5, #5
	START
	smulbb r3, r4, r5
	smlad r3, r4, r5, r3
	smmul r3, r4, r5
	END

BEGIN udiv_zero_quotient
	movs r4, #3
	movs r5, #100
	START
	udiv r3, r4, r5
	END

BEGIN udiv_max_quotient
	mvn r4, #0
	movs r5, #1
	START
	udiv r3, r4, r5
	END

BEGIN udiv_mid_quotient
	movw r4, #50000
	movs r5, #7
	START
	udiv r3, r4, r5
	END

BEGIN sdiv_max_quotient
	mov r4, #0x80000000
	mvn r5, #0
	START
	sdiv r3, r4, r5
	END

BEGIN ldr_pipelined
	START
	ldr r3, [r8]
	ldr r4, [r8, #4]
	END

BEGIN ldr_dependent
	START
	ldr r3, [r8]
	ldr r4, [r3]
	END

BEGIN ldr_str
	START
	ldr r3, [r8, #4]
	str r3, [r8, #8]
	END

BEGIN str_ldr
	START
	str r3, [r8, #8]
	ldr r4, [r8, #4]
	END

BEGIN str_alu_ldr
	START
	str r3, [r8, #8]
	adds r5, r5, #1
	ldr r4, [r8, #4]
	END

/* Literal loads (TRM 3.3.2: "LDR Rx,[PC,#imm] might add a cycle because of contention with the
 * fetch unit"; compendium.i-0.nl measured that it does after a store, not alone). */
BEGIN literal_load
	START
	ldr r3, =0x12345678
	END

BEGIN literal_pair
	START
	ldr r3, =0x12345678
	ldr r4, =0x9abcdef0
	END

BEGIN load_then_literal
	START
	ldr r3, [r8]
	ldr r4, =0x12345678
	END

BEGIN str_literal
	START
	str r3, [r8, #8]
	ldr r4, =0x12345678
	END

BEGIN ldr_after_alu
	START
	adds r3, r8, #4
	ldr r4, [r3]
	END

BEGIN str_reg_ldr
	movs r5, #8
	START
	str r3, [r8, r5]
	ldr r4, [r8, #4]
	END

BEGIN tbb
	movs r3, #1
	START
	tbb [pc, r3]
1:
	.byte 0
	.byte (2f - 1b) / 2
2:
	END

BEGIN ldr_base_update
	START
	ldr r3, [r8, #4]
	ldr r4, [r8], #8
	END

BEGIN ldr_three
	START
	ldr r3, [r8, #4]
	ldr r4, [r8, #8]
	ldr r5, [r8, #12]
	END

/* The same across a page boundary, where the emulator splits the block: the load after it
 * still pipelines with the one before it. */
BEGIN ldr_three_across_page
	b 1f
	.balign 2048
	.space 2048 - 14    /* START, two loads: the third starts the next page */
1:	START
	ldr.w r3, [r8, #4]
	ldr.w r4, [r8, #8]
	ldr.w r5, [r8, #12]
	END

BEGIN ldrd
	START
	ldrd r3, r4, [r8, #8]
	END

BEGIN ldm4
	START
	ldm r8, {r3-r6}
	END

BEGIN stm4
	START
	stm r8, {r3-r6}
	END

BEGIN push_pop4
	START
	push {r3-r6}
	pop {r3-r6}
	END

BEGIN bl_pop_pc
	START
	bl leaf_push_pop_pc
	END

BEGIN branch_taken
	START
	b 1f
	nop
1:
	END

BEGIN branch_not_taken
	movs r3, #0
	START
	cmp r3, #0
	bne 1f
	nop
1:
	END

BEGIN it_skip
	movs r3, #0
	START
	cmp r3, #0
	ite ne
	addne r4, r4, #1
	addeq r4, r4, #2
	END

/* IT folding (compendium.i-0.nl "Conditional block": the TRM's example, 2 cycles whichever way the
 * condition goes; 3 with a 32-bit instruction before the IT). */
BEGIN it_fold
	movs r4, #3
	START
	movs r3, r4
	it mi
	rsbmi r3, r3, #0
	END

BEGIN it_after_wide
	movs r4, #3
	START
	mov.w r3, r4
	it mi
	rsbmi r3, r3, #0
	END

BEGIN vadd
	vmov.f32 s1, #1.0
	vmov.f32 s2, #2.0
	START
	vadd.f32 s0, s1, s2
	vmul.f32 s3, s1, s2
	END

BEGIN vmla
	vmov.f32 s1, #1.0
	vmov.f32 s2, #2.0
	START
	vmla.f32 s0, s1, s2
	END

BEGIN vfma
	vmov.f32 s1, #1.0
	vmov.f32 s2, #2.0
	START
	vfma.f32 s0, s1, s2
	END

BEGIN vdiv
	vmov.f32 s1, #1.0
	vmov.f32 s2, #3.0
	START
	vdiv.f32 s0, s1, s2
	END

BEGIN vsqrt
	vmov.f32 s1, #2.0
	START
	vsqrt.f32 s0, s1
	END

BEGIN vldr_vstr
	START
	vldr s0, [r8]
	vstr s0, [r8, #8]
	END

BEGIN vldm4
	START
	vldmia r8, {s0-s3}
	END

BEGIN vpush_vpop
	START
	vpush {s16-s19}
	vpop {s16-s19}
	END

BEGIN vmov_core
	START
	vmov r3, s0
	vmov s0, s1, r3, r4
	END

BEGIN vcvt_vcmp_vmrs
	vmov.f32 s1, #2.0
	START
	vcvt.s32.f32 s0, s1
	vcmp.f32 s1, #0
	vmrs APSR_nzcv, fpscr
	END

/* Instruction alignment (TRM table 3-1: P is "up to 1 cycle longer when branching to unaligned
 * 32-bit instructions"; compendium.i-0.nl "Alignment rules", measured on an STM32 Cortex-M4
 * with code in flash). START begins on a word here, so what follows it starts at a halfword. */
BEGIN wide_unaligned_two
	.balign 4
	START
	eor.w r3, r3, r3
	eor.w r3, r3, r3
	END

BEGIN wide_unaligned_three
	.balign 4
	START
	eor.w r3, r3, r3
	eor.w r3, r3, r3
	eor.w r3, r3, r3
	END

BEGIN wide_aligned_three
	.balign 4
	START
	nop
	eor.w r3, r3, r3
	eor.w r3, r3, r3
	eor.w r3, r3, r3
	END

BEGIN wide_unaligned_stores_three
	.balign 4
	START
	str.w r3, [r8]
	str.w r3, [r8, #4]
	str.w r3, [r8, #8]
	END

BEGIN wide_unaligned_stores_four
	.balign 4
	START
	str.w r3, [r8]
	str.w r3, [r8, #4]
	str.w r3, [r8, #8]
	str.w r3, [r8, #12]
	END

BEGIN branch_to_unaligned_wide
	.balign 4
	START
	b 1f
	nop
1:	eor.w r3, r3, r3
	END

BEGIN return_to_unaligned_wide
	.balign 4
	START
	bl leaf_push_pop_pc
	eor.w r3, r3, r3
	END

BEGIN branch_to_aligned_wide
	.balign 4
	START
	b 1f
	nop
	nop
1:	eor.w r3, r3, r3
	END

/* Taken branches in a short loop and to a target two flash lines away, a call and return
 * (compendium.i-0.nl "Branch timing", "Loop unrolling", "Function calls": a taken branch takes 2
 * cycles, a call and return 4); the far ones have no published measurement: on a Discovery board
 * they tell whether P depends on where the target lies. */
BEGIN loop_back
	START
	movs r4, #3
1:	adds r3, #1
	subs r4, #1
	bne 1b
	END

BEGIN loop_back_far
	START
	movs r4, #2
1:	.rept 16
	adds r3, #1
	.endr
	subs r4, #1
	bne 1b
	END

BEGIN branch_far
	START
	b 1f
	.rept 32
	nop
	.endr
1:	END

BEGIN call_return
	START
	bl leaf_bx_lr
	END

/* Branches whose target is issued in execute (Cortex-M3 TRM table 15-3): no published
 * measurement; on a Discovery board they check P = 2. */
BEGIN cbz_taken
	movs r3, #0
	START
	cbz r3, 1f
	nop
1:	END

BEGIN bx_register
	adr r3, 1f
	orr r3, r3, #1
	START
	bx r3
	nop
	.balign 4
1:	END

BEGIN bx_lr_after_lr_write
	adr r4, 1f
	orr r4, r4, #1
	START
	mov lr, r4
	bx lr
	.balign 4
1:	END

/* newlib's memcpy word loop (post-indexed LDR/STR pairs), which SPHINCS+'s thash runs on every
 * call; the second stores at halfword addresses, as thash's copy to offset 22 does. Unaligned
 * word accesses are not priced (TRM: +1 or +2 on silicon). Both start on a word. */
.macro COPY_FOUR_WORDS
	ldr.w r3, [r5], #4
	str.w r3, [r6], #4
	ldr.w r3, [r5], #4
	str.w r3, [r6], #4
	ldr.w r3, [r5], #4
	str.w r3, [r6], #4
	ldr.w r3, [r5], #4
	str.w r3, [r6], #4
.endm

BEGIN copy_words
	mov r5, r8
	add.w r6, r8, #32
	.balign 4
	movs r3, #0
	START
	COPY_FOUR_WORDS
	END

BEGIN copy_words_to_halfword
	mov r5, r8
	add.w r6, r8, #34
	.balign 4
	movs r3, #0
	START
	COPY_FOUR_WORDS
	END

/* The same loads and store-then-load in SRAM2, which pqm4 found slower than SRAM1 on the
 * Discovery (pull request 73); the model prices every SRAM alike. */
BEGIN ldr_three_sram2
	ldr r8, =bench_data_sram2
	START
	ldr r3, [r8, #4]
	ldr r4, [r8, #8]
	ldr r5, [r8, #12]
	END

BEGIN str_ldr_sram2
	ldr r8, =bench_data_sram2
	START
	str r3, [r8, #8]
	ldr r4, [r8, #4]
	END

/* MiRitH's GF(16) multiply-add, the inner loop of mupq's mirith `ref` `_matrix_add_multiple`
 * (blas.h) as GCC 11.3 -O3 compiles it: two byte loads, a lookup in a 16-byte row of the product
 * table, a byte store. It is 79 % of MiRitH ref's cycles, which the model prices 7-22 % below
 * the Nucleo-L4R5ZI's (docs/pages/results/pqm4-l4r5zi.md): four iterations, with the
 * matrices and the table in each SRAM. An iteration: LDRB 2, LDRB pipelined 1, AND, AND 1 each,
 * LDRB 2, five ALU 1 each, STRB by register offset 2, ADD 1, BNE 1 + P (P = 1, 0 when it falls
 * through): 17, 16 for the last. */
.macro GF16_MULTIPLY_ADD data
	ldr r8, =\data
	mov r9, r8                /* the first matrix, updated */
	add.w r10, r8, #16        /* the second */
	add.w r6, r8, #32         /* the table's row of the scalar */
	movs r3, #0
	movs r5, #1
	movs r7, #0
	movs r4, #4
	START
	.balign 4
1:
	ldrb.w ip, [r10, r3]
	ldrb.w lr, [r9, r3]
	and.w ip, ip, #15
	and.w r11, lr, #15
	ldrb.w ip, [r6, ip]
	bic.w lr, lr, #15
	eor.w ip, ip, r11
	add.w r7, r7, #1
	orr.w ip, ip, lr
	cmp r4, r7
	strb.w ip, [r9, r3]
	add r3, r5
	bne 1b
	END
.endm

BEGIN gf16_multiply_add
	GF16_MULTIPLY_ADD bench_data

BEGIN gf16_multiply_add_sram2
	GF16_MULTIPLY_ADD bench_data_sram2

BEGIN gf16_multiply_add_sram3
	GF16_MULTIPLY_ADD bench_data_sram3

/* Costs the TRM states or leaves open that the model does not price (README, "not modelled"):
 * a board run settles them. TRM 3.3.2: "A halfword aligned word load or store adds one extra
 * cycle", "A byte-aligned word load or store adds two"; it says nothing of an IT-conditional load
 * that fails its condition (the model charges it as executed, a skipped ALU instruction 1). */
BEGIN ldr_unaligned_halfword
	START
	ldr r3, [r8, #2]
	END

BEGIN ldr_unaligned_byte
	START
	ldr r3, [r8, #1]
	END

/* The branches keep the counter reads out of the IT block's translation block (the virtual board
 * refuses a counter read beside an IT-conditional access). */
.macro IT_LOAD taken
	movs r3, #\taken
	START
	b 1f
	nop
1:
	cmp r3, #0
	it ne
	ldrne r4, [r8, #4]
	b 2f
	nop
2:
	END
.endm

BEGIN it_skipped_load
	IT_LOAD 0

BEGIN it_executed_load
	IT_LOAD 1

	.type leaf_bx_lr, %function
	.thumb_func
leaf_bx_lr:
	bx lr

	.type leaf_push_pop_pc, %function
	.thumb_func
leaf_push_pop_pc:
	push {lr}
	pop {pc}

	.bss
	.align 3
	.global bench_data
bench_data:
	.space 64

	.section .sram2, "aw", %nobits
	.align 3
bench_data_sram2:
	.space 64

	.section .sram3, "aw", %nobits
	.align 3
bench_data_sram3:
	.space 64
