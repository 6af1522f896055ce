/* The flash interface registers: FLASH_ACR, which sets the wait states and the accelerator
 * (flash_art.h) that price the core's fetches and loads from flash. The STM32F407's (RM0090 3.9)
 * and the STM32L4R5's (RM0432 3.7) differ in their address, in the clock each wait state allows
 * and in the data cache's size; FLASH_ACR's bits are the same. */
#ifndef VBOARD_FLASH_INTERFACE_H
#define VBOARD_FLASH_INTERFACE_H

#include <stdint.h>

#include "device.h"
#include "flash_art.h"

#define FLASH_INTERFACE_BASE 0x40023c00u
#define FLASH_INTERFACE_L4R5_BASE 0x40022000u

struct rcc;

/* What sets a chip's wait states and caches. */
struct flash_rules {
	uint32_t base;              /* the registers' address */
	uint32_t hz_per_wait_state; /* HCLK one more wait state allows */
	const char *source;         /* where that rule is stated, for messages */
	const char *condition;      /* the supply it holds for */
	uint32_t acr_reset;         /* FLASH_ACR after reset */
	unsigned dcache_lines;      /* of ART_LINE_BYTES */
};

extern const struct flash_rules flash_rules_stm32f407, flash_rules_stm32l4r5;

struct flash_interface {
	const struct device_core *core;
	const struct rcc *rcc;  /* HCLK, which sets the wait states needed */
	const struct flash_rules *rules;
	struct art art;         /* FLASH_ACR and the accelerator's state */
};

extern const struct device_window flash_interface_window, flash_interface_l4r5_window;

void flash_interface_init(struct flash_interface *f, const struct device_core *core,
			  const struct rcc *rcc, const struct flash_rules *rules);
/* The flash needs more wait states the faster HCLK runs; with too few the chip would read wrong
 * instructions. Fails naming `reg_addr`, the register whose write left too few. */
void flash_interface_check_wait_states(const struct flash_interface *f, uint64_t hclk,
				       uint32_t reg_addr);

#endif
