/* The taint cases that need exact instructions (taint_cases.c calls them inside taint_scope):
 * each expect_<name> label marks the instruction where vboard_taint_check.cmake wants the finding
 * <name> (or none, for the ct_ functions). */
	.syntax unified
	.thumb
	.text

.macro FUNC name
	.global \name
	.type \name, %function
	.thumb_func
	.align 2
\name:
.endm

.macro EXPECT name
	.global expect_\name
expect_\name:
.endm

/* A secret through memory: stored, loaded back, branched on. r0 = secret, r1 = scratch word. */
FUNC leak_memory
	str r0, [r1]
	movs r0, #0
	ldr r2, [r1]
EXPECT memory_branch
	cbz r2, 1f
	adds r0, #1
1:	bx lr
	.size leak_memory, . - leak_memory

/* A secret through the FPU and back to a core register, then branched on. */
FUNC leak_fpu
	vmov s0, r0
	vadd.f32 s1, s0, s0
	vmov r1, s1
	movs r0, #0
	cmp r1, #0
EXPECT fpu_branch
	beq 1f
	adds r0, #1
1:	bx lr
	.size leak_fpu, . - leak_fpu

/* A secret condition for an IT block holding a load (2 cycles executed, 1 skipped): the IT
 * instruction is the finding. r0 = secret, r1 = a public word's address. */
FUNC leak_it
	cmp r0, #5
EXPECT it_block
	ite hi
	ldrhi r0, [r1]
	movls r0, #2
	bx lr
	.size leak_it, . - leak_it

/* A computed jump: a table branch indexed by the secret's low bit (its table is in flash, so the
 * index also makes a secret flash address). r0 = secret. */
FUNC leak_jump
	and r0, r0, #1
EXPECT jump
	tbb [pc, r0]
1:	.byte (2f - 1b) / 2, (3f - 1b) / 2
2:	movs r0, #1
	bx lr
3:	movs r0, #2
	bx lr
	.size leak_jump, . - leak_jump

/* The same condition selecting between constants: single-cycle members cost the same executed
 * or skipped, so the IT is a constant-time select (a "select" note, no branch). */
FUNC select_it
	cmp r0, #5
EXPECT it_select
	ite hi
	movhi r0, #1
	movls r0, #2
	bx lr
	.size select_it, . - select_it

/* A secret kept in r2 and r3 while SysTick exceptions come and go (the handler uses r2 and r3
 * for public values): still secret afterwards. r0 = secret, r1 = iterations. */
FUNC leak_across_ticks
	mov r2, r0
	mov r3, r0
	movs r0, #0
1:	subs r1, #1
	bne 1b
EXPECT ticks_branch
	cbz r3, 2f
	adds r0, r2
2:	bx lr
	.size leak_across_ticks, . - leak_across_ticks

/* The SysTick handler: an IT block on the key, which is no finding (exceptions are not the
 * checked code), then ticks++ with public values left in r2, r3 and the flags, so that the
 * interrupted leak_across_ticks finds its secret r2 and r3 only if their taint was kept. */
FUNC sys_tick_handler
	ldr r3, =key
	ldrb r2, [r3]
	tst r2, #1
	ite ne
	movne r2, #1
	moveq r2, #2
	ldr r3, =ticks
	ldr r2, [r3]
	adds r2, #1
	str r2, [r3]
	movs r2, #0
	movs r3, #0
	bx lr
	.ltorg
	.size sys_tick_handler, . - sys_tick_handler

/* Constant time: a PUSH of a secret and a public register taints only the secret's slot, and a
 * zeroed register is public. r0 = secret, r1 = public (non-zero). */
FUNC ct_push_pop
	push {r0, r1}
	pop {r2, r3}
	cbz r3, 1f
	eors r2, r2
	cbz r2, 1f
	adds r0, #1
1:	bx lr
	.size ct_push_pop, . - ct_push_pop

/* Constant time: newlib memset's start after a compare on a secret whose flags nobody reads.
 * LSLS on the public pointer sets N, Z and C (not V), and BEQ reads only Z. r0 = secret,
 * r1 = public pointer. */
FUNC ct_flags
	cmp r0, #7
	lsls r3, r1, #30
	push {r4, r5, lr}
	beq 1f
	adds r0, #1
1:	pop {r4, r5, pc}
	.size ct_flags, . - ct_flags

/* The same, but BVS reads V, which LSLS left as the secret compare set it. */
FUNC leak_flags_overflow
	cmp r0, #7
	lsls r3, r1, #30
	push {r4, r5, lr}
EXPECT overflow_branch
	bvs 1f
	adds r0, #1
1:	pop {r4, r5, pc}
	.size leak_flags_overflow, . - leak_flags_overflow
