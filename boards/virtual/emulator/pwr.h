/* The power controller. The STM32F407's (RM0090 5.4): PWR_CR and PWR_CSR as plain registers, the
 * regulator's voltage scaling always ready. The STM32L4R5's (RM0432 5.4): its control registers
 * as plain ones, the voltage scaling always done (PWR_SR2.VOSF = 0), and PWR_CR2.IOSV, without
 * which port G's pins PG2-PG15 (the LPUART1's) have no supply. */
#ifndef VBOARD_PWR_H
#define VBOARD_PWR_H

#include <stdbool.h>
#include <stdint.h>

#include "device.h"

struct pwr {
	uint32_t regs[0x84 / 4];  /* word index = offset / 4 */
};

extern const struct device_window pwr_window, pwr_l4r5_window;

void pwr_init(struct pwr *p);
void pwr_l4r5_init(struct pwr *p);
/* The STM32L4R5's VDDIO2 supply is valid (PWR_CR2.IOSV). */
bool pwr_l4r5_vddio2_valid(const struct pwr *p);

#endif
