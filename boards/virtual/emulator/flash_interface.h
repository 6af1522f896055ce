/* The STM32F407's flash interface registers (RM0090 3.9): FLASH_ACR, which sets the wait states and
 * the ART accelerator (flash_art.h) that price the core's fetches and loads from flash. */
#ifndef VBOARD_FLASH_INTERFACE_H
#define VBOARD_FLASH_INTERFACE_H

#include <stdint.h>

#include "device.h"
#include "flash_art.h"

#define FLASH_INTERFACE_BASE 0x40023c00u

struct rcc;

struct flash_interface {
	const struct device_core *core;
	const struct rcc *rcc;  /* HCLK, which sets the wait states needed */
	struct art art;         /* FLASH_ACR and the accelerator's state */
};

extern const struct device_window flash_interface_window;

void flash_interface_init(struct flash_interface *f, const struct device_core *core,
			  const struct rcc *rcc);
/* The flash needs more wait states the faster HCLK runs (RM0090 table 10); with too few the chip
 * would read wrong instructions. Fails naming `reg_addr`, the register whose write left too few. */
void flash_interface_check_wait_states(const struct flash_interface *f, uint64_t hclk,
				       uint32_t reg_addr);

#endif
