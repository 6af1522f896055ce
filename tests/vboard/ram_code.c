/* Calls a function copied into SRAM: the virtual board runs code from flash only (SRAM and CCM
 * pages without execute rights keep unicorn's stores on its fast path), so it must stop with an
 * error naming the address instead of running it. */
#include <stdint.h>

#include "board.h"

static uint16_t ram_function[2] __attribute__((aligned(4)));

int main(void)
{
	board_setup();
	ram_function[0] = 0x2001; /* movs r0, #1 */
	ram_function[1] = 0x4770; /* bx lr */
	int (*call)(void) = (int (*)(void))((uintptr_t)ram_function | 1u);
	put_str("calling code in SRAM\n");
	__asm__ volatile("dsb\n\tisb" ::: "memory");
	if (call() == 1)
		put_str("UNEXPECTED: the code in SRAM ran\n");
	return 0;
}
