/* The STM32F407's reset and clock control (RM0090 section 6): the oscillators' ready flags, the
 * system clock switch, HCLK, and the enable bits that clock the other devices. */
#ifndef VBOARD_RCC_H
#define VBOARD_RCC_H

#include <stdbool.h>
#include <stdint.h>

#include "device.h"

#define RCC_BASE 0x40023800u
#define RCC_AHB1ENR 0x30
#define RCC_AHB2ENR 0x34
#define RCC_APB1ENR 0x40

struct flash_interface;

struct rcc {
	const struct device_core *core;
	struct flash_interface *flash; /* runs on HCLK: its wait states are checked at each change */
	uint32_t regs[0x90 / 4];       /* word index = offset / 4 */
	uint32_t sysclk_source;        /* RCC_CFGR.SWS: SW once the source it selects is ready */
	bool hse_absent;               /* the HSE never starts */
	uint64_t hclk;                 /* core clock as the registers set it up */
};

extern const struct device_window rcc_window;

/* Reset state, running on the HSI. */
void rcc_init(struct rcc *r, const struct device_core *core, struct flash_interface *flash);
/* The HSE never starts (a Discovery whose ST-LINK gives no clock): its ready bit stays 0. */
void rcc_remove_hse(struct rcc *r);
bool rcc_clock_on(const struct rcc *r, const struct clock_gate *gate);
uint64_t rcc_hclk(const struct rcc *r);

#endif
