/* The Cortex-M4's SysTick timer (ARMv7-M ARM B3.3), counting core cycles. Its registers lie in the
 * system control space, which routes them here with the exact model time of the access (scs.c).
 * It signals its exception upward as a pending flag the core polls (systick_pending), and asks
 * the core to reschedule when its next event moves. */
#ifndef VBOARD_SYSTICK_H
#define VBOARD_SYSTICK_H

#include <stdbool.h>
#include <stdint.h>

#include "cycle_jitter.h"
#include "device.h"

#define SYSTICK_BASE 0xe000e010u
#define SYSTICK_CSR 0x0
#define SYSTICK_RVR 0x4
#define SYSTICK_CVR 0x8

struct systick {
	const struct device_core *core;
	struct cycle_jitter *jitter;  /* makes reads of the current value late */
	uint32_t csr, reload, frozen; /* frozen: the current value while disabled */
	/* while enabled the counter is 0 at time `anchor` and reloads every reload+1 cycles */
	uint64_t anchor, next_tick;
	bool pending;                 /* its exception is pending */
};

void systick_init(struct systick *t, const struct device_core *core, struct cycle_jitter *jitter);
/* CSR, RVR or CVR (`reg`, from SYSTICK_BASE) accessed at `now`, up to which it has advanced. */
uint32_t systick_read(struct systick *t, uint32_t reg, uint64_t now);
void systick_write(struct systick *t, uint32_t reg, uint32_t value, uint64_t now);

/* Processes the wraps up to `now` (sets COUNTFLAG, pends the exception). */
void systick_advance(struct systick *t, uint64_t now);
/* Model time of the next exception request, or UINT64_MAX. */
uint64_t systick_next_event(const struct systick *t);
bool systick_pending(const struct systick *t);
/* The core took the pending exception. */
void systick_taken(struct systick *t);

#endif
