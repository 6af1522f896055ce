/* The STM32L4R5's debug support registers (RM0432 57.10, DBGMCU at 0xE0042000): the device and
 * revision identifier the firmware may read, and the freeze bits as plain registers. */
#ifndef VBOARD_DBGMCU_H
#define VBOARD_DBGMCU_H

#include <stdint.h>

#include "device.h"

/* DEV_ID 0x470 (STM32L4R5/L4S5), REV_ID 0x1001 (revision Z) */
#define DBGMCU_L4R5_IDCODE 0x10016470u

struct dbgmcu {
	uint32_t regs[0x14 / 4];  /* IDCODE, CR, APB1FZR1, APB1FZR2, APB2FZR */
};

extern const struct device_window dbgmcu_l4r5_window;

void dbgmcu_l4r5_init(struct dbgmcu *d);

#endif
