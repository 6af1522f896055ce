/* Just enough of a board for the emulator's test images: board.c the Discovery's (the 24 MHz clock
 * set-up the way libopencm3's rcc_clock_setup_pll() does it, USART2 on PA2/PA3), board_l4r5.c the
 * Nucleo-L4R5ZI's (pqm4's 20 MHz, LPUART1 on PG7/PG8); the DWT cycle counter; print.c's helpers. */
#ifndef VBOARD_TEST_BOARD_H
#define VBOARD_TEST_BOARD_H

#include <stdint.h>

#define MMIO32(addr) (*(volatile uint32_t *)(addr))
#define DWT_CYCCNT MMIO32(0xe0001004)
#define STK_CSR MMIO32(0xe000e010)
#define STK_RVR MMIO32(0xe000e014)
#define STK_CVR MMIO32(0xe000e018)

void board_setup(void);
void put_char(char c);
char get_char(void); /* waits for a byte from the host */
void put_str(const char *s);
void put_u64(uint64_t v);
void put_i32(int32_t v);

#endif
