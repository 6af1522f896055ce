/* The address ranges the emulated chips share (their sizes: chip.h). */
#ifndef VBOARD_MEMMAP_H
#define VBOARD_MEMMAP_H

#define FLASH_BASE 0x08000000u
#define SRAM_BASE 0x20000000u
#define CCM_BASE 0x10000000u
/* The system memory page holding the device's 96-bit unique ID, read-only. */
#define SYSTEM_PAGE_BASE 0x1FFF7000u
#define SYSTEM_PAGE_SIZE 0x1000u

#endif
