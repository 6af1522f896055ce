/* The functions test_probe.c probes, compiled apart (probe_targets.c) so that its calls of them
 * cross object files and -Wl,--wrap reaches them. Calls between them go through pointers that the
 * test sets to the probed functions or to the functions themselves (__real_<name>). */
#ifndef PQSCOPE_PROBE_TARGETS_H
#define PQSCOPE_PROBE_TARGETS_H

#include <stdint.h>

void empty_target(void);

/* outer_work: INNER_CALLS rounds of some work of its own and a call of inner_call. */
#define INNER_CALLS 5
extern void (*inner_call)(void);
void inner_work(void);
void outer_work(void);

/* recurse: while recursion_left > 0, decrements it and calls recursion. */
extern uint32_t recursion_left;
extern void (*recursion)(void);
void recurse(void);

/* Six integer arguments (two on the stack) and a double (d0): a 64-bit mix of them all. */
uint64_t mix_arguments(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t e, uint32_t f,
                       double x);

/* Calls compare (an __aeabi_cdcmple) with a in r0:r1 and b in r2:r3; returns the APSR it leaves
 * and stores r0-r3 as they were after it. */
uint32_t flags_after(void (*compare)(void), double a, double b, uint32_t registers[4]);

#endif
