/* Probes (firmware/PROTOCOL.md, "Probes"): inside each timed operation, the cycles spent in named
 * functions and their calls. A probed image is linked with -Wl,--wrap=NAME per probe, so that
 * every call of NAME from another object file reaches __wrap_NAME: a trampoline (pqs_probe below)
 * that hands the call and the probe's record to the runtime (harness/probe_runtime.S), which
 * times it with the DWT cycle counter and calls __real_NAME, the function itself.
 *
 * Shared by C and assembly: the record's layout is given by offsets, checked in probe.c. */
#ifndef PQSCOPE_PROBE_H
#define PQSCOPE_PROBE_H

/* Probes per image: SAMPLE carries 12 bytes per probe in one frame. */
#define PQS_MAX_PROBES 32

/* Probed calls in progress at once (nested or recursive); one more is a fault. */
#define PQS_PROBE_MAX_DEPTH 64

/* struct pqs_probe, as the runtime sees it. */
#define PQS_PROBE_CYCLES 0
#define PQS_PROBE_CALLS 8
#define PQS_PROBE_ACTIVE 12
#define PQS_PROBE_REAL 16
#define PQS_PROBE_NAME 20
#define PQS_PROBE_BYTES 40

#ifndef __ASSEMBLER__
#include <stdint.h>

struct pqs_probe_counts {
  int64_t cycles; /* the outermost calls' cycles, less the probes' own cost */
  uint32_t calls; /* every call, recursive ones included */
};

struct pqs_probe {
  /* Running counts, kept by the runtime: as pqs_probe_counts. */
  int64_t cycles;
  uint32_t calls;
  uint32_t active;    /* calls in progress: more than one while it recurses */
  void (*real)(void); /* __real_NAME */
  const char *name;
  struct pqs_probe_counts measured; /* the last timed operation's (pqs_probes_end_operation) */
};

/* The image's probes, in PROBE index order: a probed image's table (pqs_probe_table below), or
 * none (no_probes.c's weak default). */
extern struct pqs_probe *const pqs_probes[];
extern const uint8_t pqs_probe_count;

/* Calibration (pqs_probes_calibrate), kept in the runtime: the cycles an empty probed function
 * measures, and the cycles a probed call adds to its caller (the whole trampoline and runtime). */
extern uint32_t pqs_probe_self_cycles;
extern uint32_t pqs_probe_call_cycles;

/* Starts the cycle counter and measures the two costs above on an empty function probed through
 * the same runtime. Before any probed call. */
void pqs_probes_calibrate(void);

/* The fewest cycles a call of fn takes between two hal_cycles() reads, over a few calls. */
uint64_t pqs_fewest_cycles(void (*fn)(void));

/* Around a timed operation, outside its two cycle-counter reads: zero the running counts, then
 * copy them to `measured`. */
void pqs_probes_start_operation(void);
void pqs_probes_end_operation(void);

/* The runtime (probe_runtime.S): the DWT cycle counter on (ARMv7-M architectural registers), an
 * empty function, and the same function reached through a probe trampoline. */
void pqs_probe_counter_start(void);
void pqs_probe_empty(void);
void __wrap_pqs_probe_empty(void);

#else

/* A probe on function \name: its record pqs_probe_\name (zero counts) and its trampoline
 * __wrap_\name, which passes the record in r12 (free at a call, AAPCS) to the runtime. */
.macro pqs_probe name
  .section .rodata.pqs_probe_name.\name, "a"
pqs_probe_name_\name:
  .asciz "\name"
  .section .data.pqs_probe.\name, "aw"
  .balign 8
  .global pqs_probe_\name
pqs_probe_\name:
  .space PQS_PROBE_REAL
  .word __real_\name
  .word pqs_probe_name_\name
  .space PQS_PROBE_BYTES - PQS_PROBE_NAME - 4
  pqs_probe_trampoline \name, pqs_probe_\name
.endm

.macro pqs_probe_trampoline name, record
  .section .text.__wrap_\name, "ax", %progbits
  .syntax unified
  .thumb
  .global __wrap_\name
  .type __wrap_\name, %function
  .thumb_func
__wrap_\name:
  movw r12, #:lower16:\record
  movt r12, #:upper16:\record
  b.w pqs_probe_enter
  .size __wrap_\name, . - __wrap_\name
.endm

/* The image's table (pqs_probes, pqs_probe_count) of the probes named, in that order. */
.macro pqs_probe_table names:vararg
  .section .rodata.pqs_probes, "a"
  .balign 4
  .global pqs_probes
pqs_probes:
  .set pqs_probe_number, 0
  .irp name, \names
  .word pqs_probe_\name
  .set pqs_probe_number, pqs_probe_number + 1
  .endr
  .global pqs_probe_count
pqs_probe_count:
  .byte pqs_probe_number
.endm

#endif
#endif
