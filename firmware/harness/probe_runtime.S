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

  .section .data.pqs_probe_runtime, "aw"
  .balign 4
shadow_top: /* the next free frame */
  .word shadow_stack

  .section .bss.pqs_probe_runtime, "aw", %nobits
  .balign 4
probed_calls: /* every probed call since boot: nested calls are the difference at exit */
  .space 4

  .section .rodata.pqs_probe_runtime, "a"
overflow_kind:
  .asciz "probe shadow stack overflow"

  .section .text.pqs_probe_enter, "ax", %progbits
  .global pqs_probe_enter
  .type pqs_probe_enter, %function
  .thumb_func
pqs_probe_enter:
  push {r0-r3} /* room for the bookkeeping; popped before the call */
  movw r0, #:lower16:shadow_top
  movt r0, #:upper16:shadow_top
  ldr r1, [r0]
  movw r2, #:lower16:shadow_stack_end
  movt r2, #:upper16:shadow_stack_end
  cmp r1, r2
  bhs overflow
  add r2, r1, #FRAME_BYTES
  str r2, [r0]
  str lr, [r1, #FRAME_RETURN]
  str r12, [r1, #FRAME_RECORD]
  ldr r2, [r12, #PQS_PROBE_CALLS]
  add r2, r2, #1
  str r2, [r12, #PQS_PROBE_CALLS]
  ldr r2, [r12, #PQS_PROBE_ACTIVE]
  add r2, r2, #1
  str r2, [r12, #PQS_PROBE_ACTIVE]
  movw r0, #:lower16:probed_calls
  movt r0, #:upper16:probed_calls
  ldr r2, [r0]
  str r2, [r1, #FRAME_CALLS]
  add r2, r2, #1
  str r2, [r0]
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
  movw r0, #:lower16:shadow_top
  movt r0, #:upper16:shadow_top
  ldr r1, [r0]
  sub r1, r1, #FRAME_BYTES
  str r1, [r0]
  ldr r2, [r1, #FRAME_START]
  sub r12, r12, r2 /* elapsed cycles, modulo 2^32 */
  movw r0, #:lower16:probed_calls
  movt r0, #:upper16:probed_calls
  ldr r0, [r0]
  ldr r2, [r1, #FRAME_CALLS]
  sub r0, r0, r2
  sub r0, r0, #1 /* probed calls made during this one */
  movw r2, #:lower16:pqs_probe_call_cycles
  movt r2, #:upper16:pqs_probe_call_cycles
  ldr r2, [r2]
  umull r2, r3, r0, r2
  movw r0, #:lower16:pqs_probe_self_cycles
  movt r0, #:upper16:pqs_probe_self_cycles
  ldr r0, [r0]
  adds r2, r2, r0
  adc r3, r3, #0 /* r3:r2 = the probes' own cycles in this call */
  mov r0, #0
  subs r2, r12, r2
  sbc r3, r0, r3 /* r3:r2 = this call's cycles, signed */
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
