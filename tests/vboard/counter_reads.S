/* Cycle-counter reads in blocks of several shapes. Each read_<name> returns the difference of
 * two CYCCNT reads: the static cost from the first reading instruction to the second. The
 * emulator answers a read in place when the registers tell which of its block's loads and stores
 * made it (and replays it otherwise); the values must follow the timing rules either way. A
 * register that will hold the counter's address is zeroed first, so that only one instruction
 * can have made each access. r0 = &DWT_CYCCNT, r8 = read_data (SRAM). */
	.syntax unified
	.thumb
	.text

.macro BEGIN name
	.global \name
	.type \name, %function
	.thumb_func
	.align 2
\name:
	push {r4-r11, lr}
	ldr r0, =0xe0001004
	ldr r8, =read_data
.endm

/* Each read starts its block: LDR 2, NOP 1, B 1 + P, P = 1 (taken: not to the next instruction). */
BEGIN read_block_start
	b 1f
	nop
1:	ldr r1, [r0]
	nop
	b 2f
	nop
2:	ldr r2, [r0]
	subs r0, r2, r1
	pop {r4-r11, pc}

/* Both reads among other loads and stores of one block: the first pipelined after an LDR (1),
 * then LDR 1, MOV 1, STR [Rn,#imm] 1; the second, after a store, does not pipeline. */
BEGIN read_among_loads
	movs r5, #0
	nop
	ldr r3, [r8]
	ldr r1, [r0]
	ldr r4, [r8, #4]
	mov r5, r0
	str r4, [r8, #8]
	ldr r2, [r5]
	subs r0, r2, r1
	pop {r4-r11, pc}

/* The counter as the second word of an LDRD from DWT_CTRL, timed at the LDRD: LDRD 3, SUB 1. */
BEGIN read_ldrd
	sub r4, r0, #4
	movs r6, #0
	nop
	ldrd r3, r1, [r4], #8
	sub r6, r4, #8
	ldrd r3, r2, [r6]
	subs r0, r2, r1
	pop {r4-r11, pc}

/* The counter as the second word of an LDM from DWT_CTRL: LDM 1 + 2, SUB 1. */
BEGIN read_ldm
	sub r4, r0, #4
	movs r6, #0
	nop
	ldm r4!, {r1, r3}
	sub r6, r4, #8
	ldm r6, {r1, r2}
	subs r0, r2, r3
	pop {r4-r11, pc}

/* An IT block without loads or stores between the reads: LDR 2, CMP, ADDEQ, ADDNE, MOV 1; the
 * ITE folds into the 16-bit CMP: 0. */
BEGIN read_around_it
	movs r3, #0
	movs r5, #0
	nop
	ldr r1, [r0]
	cmp r3, #0
	ite eq
	addeq r4, r4, #1
	addne r4, r4, #2
	mov r5, r0
	ldr r2, [r5]
	subs r0, r2, r1
	pop {r4-r11, pc}

/* A write of 0 to the counter, then a read: STR [Rn,#imm] 1, MOV 1, NOP 1. */
BEGIN write_then_read
	movs r3, #0
	movs r5, #0
	nop
	str r3, [r0]
	mov r5, r0
	nop
	ldr r0, [r5]
	pop {r4-r11, pc}
	.ltorg


	.bss
	.align 3
read_data:
	.space 16
