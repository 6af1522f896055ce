#include "chip.h"

#include <string.h>

/* RM0090 2.3: 1 MiB of flash, SRAM1 and SRAM2 contiguous (112 + 16 KiB), 64 KiB CCM. */
const struct chip chip_stm32f407 = {
	.name = "stm32f407", .part = "STM32F407", .devices = CHIP_DEVICES_STM32F4,
	.flash_size = 1u << 20, .sram_size = 128u << 10, .ccm_size = 64u << 10, .ccm_name = "CCM",
	.ccm_alias = CHIP_OWN_MEMORY, .unique_id_base = 0x1FFF7A10u, .flash_size_kib_at = 0,
};

/* RM0432 2.2 and 2.6: 2 MiB of flash; SRAM1 (192 KiB), SRAM2 (64 KiB) and SRAM3 (384 KiB)
 * contiguous from 0x20000000, SRAM2 also at 0x10000000 (the same memory); the unique ID and the
 * flash size register (in KiB) in the system page (RM0432 58.1, 58.2). */
const struct chip chip_stm32l4r5 = {
	.name = "stm32l4r5", .part = "STM32L4R5", .devices = CHIP_DEVICES_STM32L4P,
	.flash_size = 2u << 20, .sram_size = 640u << 10, .ccm_size = 64u << 10, .ccm_name = "SRAM2",
	.ccm_alias = 192u << 10, .unique_id_base = 0x1FFF7590u, .flash_size_kib_at = 0x1FFF75E0u,
};

const struct chip *chip_named(const char *name)
{
	static const struct chip *const chips[] = {&chip_stm32f407, &chip_stm32l4r5};
	for (size_t i = 0; i < sizeof chips / sizeof chips[0]; i++)
		if (!strcmp(chips[i]->name, name))
			return chips[i];
	return NULL;
}
