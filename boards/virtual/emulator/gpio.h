/* The STM32F407's GPIOA port (RM0090 8.4) as plain registers: the firmware sets its pins up and
 * drives them, nothing reads them back from outside. */
#ifndef VBOARD_GPIO_H
#define VBOARD_GPIO_H

#include <stdint.h>

#include "device.h"

struct gpio {
	uint32_t regs[0x28 / 4];  /* word index = offset / 4 */
};

extern const struct device_window gpioa_window;

/* GPIOA's reset state: its debug pins in their alternate function. */
void gpioa_init(struct gpio *g);

#endif
