/* The probe runtime (pqscope/probe.h): times each probed call with the DWT cycle counter.
 *
 * A trampoline __wrap_NAME enters pqs_probe_enter with the probe's record in r12 and the caller's
 * return address in lr. The call must reach __real_NAME exactly as the caller made it, whatever its
 * convention: arguments in r0-r3 and on the stack (nothing of ours stays pushed across the call),
 * floating-point ones in s0-s15/d0-d7 (never touched here), results in r0-r3 and, for helpers such
 * as __aeabi_cdcmple, in the APSR flags. Only r12 and lr change, as AAPCS allows at a call.
 *
 * The caller's return address and the call's bookkeeping wait on a shadow stack in RAM. Every
 * entry and every exit runs the same instructions, without branches, so that a probed call costs
 * the same fixed cycles wherever it is made: the calibration (probe.c) measures them once. */
#include <pqscope/probe.h>

  .syntax unified
  .thumb

#define DEMCR 0xE000EDFC
#define DEMCR_TRCENA (1 << 24)
#define DWT_CTRL 0xE0001000
#define DWT_CTRL_CYCCNTENA 1
#define DWT_CYCCNT 0xE0001004

/* A shadow stack frame. */
#define FRAME_RETURN 0 /* the caller's return address */
#define FRAME_RECORD 4 /* the probe's record */
#define FRAME_START 8  /* DWT_CYCCNT when the call began */
#define FRAME_CALLS 12 /* probed_calls when the call began */
#define FRAME_BYTES 16

  /* In the board's bulk-data RAM (uninitialised): only frames in use are read. */
  .section .pqscope_bulk.probe_shadow_stack, "aw", %nobits
  .balign 4
shadow_stack:
  .space PQS_PROBE_MAX_DEPTH * FRAME_BYTES
shadow_stack_end:

  /* The runtime's state, one block for one base address. */
#define STATE_TOP 0    /* the next free frame */
#define STATE_CALLS 4  /* every probed call since boot: nested calls are the difference at exit */
  .section .data.pqs_probe_runtime, "aw"
  .balign 4
state:
  .word shadow_stack
  .word 0
  .global pqs_probe_self_cycles
pqs_probe_self_cycles:
  .word 0
  .global pqs_probe_call_cycles
pqs_probe_call_cycles:
  .word 0

  .section .rodata.pqs_probe_runtime, "a"
overflow_kind:
  .asciz "probe shadow stack overflow"

  .section .text.pqs_probe_enter, "ax", %progbits
  .global pqs_probe_enter
  .type pqs_probe_enter, %function
  .thumb_func
pqs_probe_enter:
  push {r0-r3} /* room for the bookkeeping; popped before the call */
  movw r0, #:lower16:state
  movt r0, #:upper16:state
  ldm r0, {r1, r2} /* the free frame, the calls so far */
  movw r3, #:lower16:shadow_stack_end
  movt r3, #:upper16:shadow_stack_end
  cmp r1, r3
  bhs overflow
  str r2, [r1, #FRAME_CALLS]
  add r3, r1, #FRAME_BYTES
  add r2, r2, #1
  strd r3, r2, [r0, #STATE_TOP] /* this frame is taken, and one call more */
  str lr, [r1, #FRAME_RETURN]
  str r12, [r1, #FRAME_RECORD]
  ldrd r2, r3, [r12, #PQS_PROBE_CALLS]
  add r2, r2, #1 /* calls */
  add r3, r3, #1 /* active */
  strd r2, r3, [r12, #PQS_PROBE_CALLS]
  ldr r12, [r12, #PQS_PROBE_REAL]
  movw r0, #:lower16:DWT_CYCCNT
  movt r0, #:upper16:DWT_CYCCNT
  ldr r0, [r0] /* the start, as late as the bookkeeping allows */
  str r0, [r1, #FRAME_START]
  pop {r0-r3}
  blx r12

  /* The exit: lr is ours to use, r12 too (AAPCS: not a result). */
  movw r12, #:lower16:DWT_CYCCNT
  movt r12, #:upper16:DWT_CYCCNT
  ldr r12, [r12] /* the end, first */
  mrs lr, APSR
  push {r0-r5}
  movw r0, #:lower16:state
  movt r0, #:upper16:state
  ldm r0, {r1, r2, r3, r4} /* top, calls so far, pqs_probe_self_cycles, pqs_probe_call_cycles */
  sub r1, r1, #FRAME_BYTES /* this call's frame */
  str r1, [r0, #STATE_TOP]
  ldr r5, [r1, #FRAME_CALLS]
  sub r2, r2, r5
  sub r2, r2, #1 /* probed calls made during this one */
  umull r2, r5, r2, r4
  adds r2, r2, r3
  adc r5, r5, #0 /* r5:r2 = the probes' own cycles in this call */
  ldr r3, [r1, #FRAME_START]
  sub r12, r12, r3 /* elapsed cycles, modulo 2^32 */
  mov r3, #0
  subs r2, r12, r2
  sbc r3, r3, r5 /* r3:r2 = this call's cycles, signed */
  ldr r0, [r1, #FRAME_RECORD]
  ldr r4, [r0, #PQS_PROBE_ACTIVE]
  sub r4, r4, #1
  str r4, [r0, #PQS_PROBE_ACTIVE]
  /* Only an outermost call adds its cycles (a recursive call's are inside them): a mask, not a
   * branch, so that both cost the same. */
  clz r4, r4
  lsr r4, r4, #5
  rsb r4, r4, #0
  and r2, r2, r4
  and r3, r3, r4
  ldrd r4, r5, [r0, #PQS_PROBE_CYCLES]
  adds r4, r4, r2
  adc r5, r5, r3
  strd r4, r5, [r0, #PQS_PROBE_CYCLES]
  msr APSR_nzcvq, lr
  ldr lr, [r1, #FRAME_RETURN]
  pop {r0-r5}
  bx lr

overflow:
  movw r0, #:lower16:overflow_kind
  movt r0, #:upper16:overflow_kind
  mov r1, lr
  b.w pqs_fault
  .size pqs_probe_enter, . - pqs_probe_enter

  .section .text.pqs_probe_counter_start, "ax", %progbits
  .global pqs_probe_counter_start
  .type pqs_probe_counter_start, %function
  .thumb_func
pqs_probe_counter_start:
  movw r0, #:lower16:DEMCR
  movt r0, #:upper16:DEMCR
  ldr r1, [r0]
  orr r1, r1, #DEMCR_TRCENA
  str r1, [r0]
  movw r0, #:lower16:DWT_CTRL
  movt r0, #:upper16:DWT_CTRL
  ldr r1, [r0]
  orr r1, r1, #DWT_CTRL_CYCCNTENA
  str r1, [r0]
  bx lr
  .size pqs_probe_counter_start, . - pqs_probe_counter_start

  .section .text.pqs_probe_empty, "ax", %progbits
  .global pqs_probe_empty
  .type pqs_probe_empty, %function
  .thumb_func
pqs_probe_empty:
  bx lr
  .size pqs_probe_empty, . - pqs_probe_empty

  /* The calibration's probe, with a record of its own (probe.c), not one of the image's. */
  pqs_probe_trampoline pqs_probe_empty, pqs_probe_calibration
