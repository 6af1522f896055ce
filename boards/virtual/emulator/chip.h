/* The microcontroller the virtual board emulates, chosen at start (--chip): its memories and the
 * set of devices board.c wires. The Cortex-M4 core, its timing model and the system control space
 * are the same for all of them. */
#ifndef VBOARD_CHIP_H
#define VBOARD_CHIP_H

#include <stdint.h>

#define CHIP_OWN_MEMORY UINT32_MAX

enum chip_devices {
	CHIP_DEVICES_STM32F4,  /* RM0090: RCC, PWR, FLASH, GPIOA, USART2, RNG */
	CHIP_DEVICES_STM32L4P, /* RM0432: RCC, PWR, FLASH, GPIOG, LPUART1, RNG, DBGMCU */
};

struct chip {
	const char *name;        /* as --chip names it */
	const char *part;        /* as its reference manual names it, for messages */
	enum chip_devices devices;
	uint32_t flash_size;     /* a power of two, at FLASH_BASE and aliased at 0 */
	uint32_t sram_size;      /* contiguous from SRAM_BASE */
	uint32_t ccm_size;       /* the region at CCM_BASE, on the data bus only */
	const char *ccm_name;    /* "CCM", "SRAM2" */
	uint32_t ccm_alias;      /* CHIP_OWN_MEMORY, or the offset in SRAM of the memory it is */
	uint32_t unique_id_base; /* the 96-bit unique ID, in the system page */
	uint32_t flash_size_kib_at; /* the flash size register in the system page, 0: not modelled */
};

extern const struct chip chip_stm32f407, chip_stm32l4r5;

/* The chip --chip names, or NULL. */
const struct chip *chip_named(const char *name);

#endif
