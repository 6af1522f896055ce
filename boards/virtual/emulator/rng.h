/* The STM32F407's random number generator (RM0090 section 24): a number ready at every read once
 * enabled, the same sequence on every start. The real one makes a number every 40 PLL48CLK periods
 * (RM0090 24.3.1): 20 HCLK cycles at 24 MHz, fewer than a read loop takes (libopencm3's
 * rng_get_random_blocking), so no read waits there; at 168 MHz (140 cycles) reads in a row would
 * wait on the real one, not here. Only pqm4's own images use it. The STM32L4R5's (RM0432 section
 * 26) has the same registers, clocked by RCC_AHB2ENR.RNGEN and by its 48 MHz clock: without that
 * clock its numbers never become ready, which this model reports as an error. */
#ifndef VBOARD_RNG_H
#define VBOARD_RNG_H

#include <stdint.h>

#include "device.h"

struct rcc;

struct rng {
	const struct device_core *core;
	const struct rcc *clock48;  /* the STM32L4R5's RCC, whose 48 MHz clock it needs; NULL: none */
	uint32_t cr;
	uint64_t state;  /* xorshift64 */
};

extern const struct device_window rng_window, rng_l4r5_window;

void rng_init(struct rng *r, const struct device_core *core, const struct rcc *clock48);

#endif
