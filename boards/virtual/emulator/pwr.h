/* The STM32F407's power controller (RM0090 5.4): PWR_CR and PWR_CSR as plain registers; the
 * regulator's voltage scaling is always ready. */
#ifndef VBOARD_PWR_H
#define VBOARD_PWR_H

#include <stdint.h>

#include "device.h"

struct pwr {
	uint32_t regs[2];  /* PWR_CR, PWR_CSR */
};

extern const struct device_window pwr_window;

void pwr_init(struct pwr *p);

#endif
