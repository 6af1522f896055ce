/* An IT block's load or store that is the first access to its page (a TLB miss), or a store into
 * memory a write hook watches, then a block that starts with an instruction which must run: each
 * function returns how many times it ran, one per access. The IT condition (EQ) is false where the
 * next block starts, so a stale IT state left by the miss or the hook would skip it. r0 = the
 * first address, r1 = accesses, `stride` apart: 4 KiB (QEMU's largest ARM page) to pages none
 * touched before, 0 for the same watched word each time. */
	.syntax unified
	.thumb
	.text

.macro IT_ACCESS_PAGES name, access, stride
	.global \name
	.type \name, %function
	.thumb_func
	.align 2
\name:
	push {r4, lr}
	movs r4, #0
1:	cmp r0, r0
	it eq
	\access r2, [r0]
	cmp r1, #0 /* Z clear from here on */
	b 2f
2:	adds r4, #1
	add r0, r0, #\stride
	subs r1, r1, #1
	bne 1b
	mov r0, r4
	pop {r4, pc}
.endm

	IT_ACCESS_PAGES it_store_pages, streq, 4096
	IT_ACCESS_PAGES it_load_pages, ldreq, 4096
	IT_ACCESS_PAGES it_store_watched, streq, 0
