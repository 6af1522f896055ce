/* What the STM32 boards' implementations of pqscope/hal.h share: the cycle counter (SysTick at the
 * core clock, extended by counting its wraps), fault reports through the harness, and the serial
 * number read from the chip's unique ID. Each board links boards/common/cortex_m4.c. */
#ifndef PQSCOPE_BOARDS_CORTEX_M4_H
#define PQSCOPE_BOARDS_CORTEX_M4_H

#include <stdint.h>

/* Starts SysTick at the core clock with its wrap interrupt: hal_cycles() counts from here. */
void board_cycle_counter_setup(void);

/* The 96-bit unique ID whose three words lie at `base`, +4 and +8, as 24 hex digits, its highest
 * word first (read once, then kept). */
const char *board_serial_from_unique_id(uintptr_t base);

#endif
