/* The reset and clock control: the oscillators' ready flags, the system clock switch, HCLK, and the
 * enable bits that clock the other devices. The STM32F407's (RM0090 section 6) is rcc.c, the
 * STM32L4R5's (RM0432 section 6) rcc_l4r5.c: the same state, read through each one's layout. */
#ifndef VBOARD_RCC_H
#define VBOARD_RCC_H

#include <stdbool.h>
#include <stdint.h>

#include "device.h"

#define RCC_BASE 0x40023800u
#define RCC_L4R5_BASE 0x40021000u
/* The STM32L4R5's enable registers */
#define RCC_L4R5_AHB2ENR 0x4c
#define RCC_L4R5_APB1ENR1 0x58
#define RCC_L4R5_APB1ENR2 0x5c
#define RCC_L4R5_APB2ENR 0x60
#define RCC_AHB1ENR 0x30
#define RCC_AHB2ENR 0x34
#define RCC_APB1ENR 0x40

struct flash_interface;

struct rcc {
	const struct device_core *core;
	struct flash_interface *flash; /* runs on HCLK: its wait states are checked at each change */
	uint32_t regs[0xa0 / 4];       /* word index = offset / 4 */
	uint32_t sysclk_source;        /* RCC_CFGR.SWS: SW once the source it selects is ready */
	bool hse_absent;               /* the HSE never starts */
	uint64_t hclk;                 /* core clock as the registers set it up */
};

extern const struct device_window rcc_window, rcc_l4r5_window;

/* Reset state, running on the HSI (the STM32F407's) or on the MSI at 4 MHz (the STM32L4R5's). */
void rcc_init(struct rcc *r, const struct device_core *core, struct flash_interface *flash);
void rcc_l4r5_init(struct rcc *r, const struct device_core *core, struct flash_interface *flash);
/* The STM32L4R5's 48 MHz clock (RCC_CCIPR.CLK48SEL) runs: the RNG's kernel clock. */
bool rcc_l4r5_clock48_on(const struct rcc *r);
/* The HSE never starts (a Discovery whose ST-LINK gives no clock): its ready bit stays 0. */
void rcc_remove_hse(struct rcc *r);
bool rcc_clock_on(const struct rcc *r, const struct clock_gate *gate);
uint64_t rcc_hclk(const struct rcc *r);

#endif
