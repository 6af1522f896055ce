/* The Discovery board's memories as the emulator maps them (STM32F407VG). */
#ifndef VBOARD_MEMMAP_H
#define VBOARD_MEMMAP_H

#define FLASH_BASE 0x08000000u
#define FLASH_SIZE (1u << 20)
#define SRAM_BASE 0x20000000u
#define SRAM_SIZE (128u << 10)
#define CCM_BASE 0x10000000u
#define CCM_SIZE (64u << 10)
/* The system memory page holding the device's 96-bit unique ID (RM0090 39.1), read-only. */
#define SYSTEM_PAGE_BASE 0x1FFF7000u
#define SYSTEM_PAGE_SIZE 0x1000u
#define UNIQUE_ID_BASE 0x1FFF7A10u

#endif
