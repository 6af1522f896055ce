/* The Cortex-M4's data watchpoint and trace unit (ARMv7-M ARM C1.8), as far as its cycle counter:
 * DWT_CTRL and DWT_CYCCNT, and DEMCR (in the system control space, routed here by scs.c), whose
 * TRCENA enables it. CYCCNT is read at the exact model time of the access. */
#ifndef VBOARD_DWT_H
#define VBOARD_DWT_H

#include <stdint.h>

#include "cycle_jitter.h"
#include "device.h"

struct dwt {
	const struct device_core *core;
	struct cycle_jitter *jitter;  /* makes reads of CYCCNT late */
	uint32_t demcr, ctrl;
	/* CYCCNT = base + (now - since) while counting */
	uint32_t base;
	uint64_t since;
};

extern const struct device_window dwt_window;

void dwt_init(struct dwt *d, const struct device_core *core, struct cycle_jitter *jitter);
uint32_t dwt_demcr(const struct dwt *d);
/* DEMCR written at `now`. */
void dwt_set_demcr(struct dwt *d, uint32_t value, uint64_t now);

#endif
