/* A GPIO port as plain registers: the firmware sets its pins up and drives them, nothing reads them
 * back from outside. The STM32F407's GPIOA (RM0090 8.4) and the STM32L4R5's GPIOG (RM0432 8.5),
 * which has a bit reset register (GPIOx_BRR) too. */
#ifndef VBOARD_GPIO_H
#define VBOARD_GPIO_H

#include <stdint.h>

#include "device.h"

struct gpio {
	uint32_t regs[0x28 / 4];  /* word index = offset / 4 */
};

extern const struct device_window gpioa_window, gpiog_l4r5_window;

/* GPIOA's reset state: its debug pins in their alternate function. */
void gpioa_init(struct gpio *g);
/* The STM32L4R5's GPIOG's reset state: every pin analog. */
void gpiog_l4r5_init(struct gpio *g);

#endif
