/* The Cortex-M4's system control space at 0xE000E000 (ARMv7-M ARM B3.2): the system control block
 * (SCB) and the FPU's control registers, held here, and the SysTick's and DEMCR, routed to
 * systick.c and dwt.c at the exact model time of the access. There is no NVIC: SysTick's is the
 * only exception (machine.c takes it). */
#ifndef VBOARD_SCS_H
#define VBOARD_SCS_H

#include <stdbool.h>
#include <stdint.h>

#include "device.h"

struct dwt;
struct systick;

struct scs {
	const struct device_core *core;
	struct systick *systick;
	struct dwt *dwt;
	uint32_t vtor, ccr, cpacr, scr, shpr[3], fpccr, fpcar, fpdscr;
};

extern const struct device_window scs_window;

void scs_init(struct scs *s, const struct device_core *core, struct systick *systick,
	      struct dwt *dwt);

/* What the core's exception entry and FPU checks depend on. */
uint32_t scs_vector_table(const struct scs *s);
bool scs_stack_align8(const struct scs *s);
uint32_t scs_cpacr(const struct scs *s);
bool scs_fpu_enabled(const struct scs *s);

#endif
