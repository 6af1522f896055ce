/* Touches TIM2, which the virtual board does not emulate: the emulator must stop with an error
 * naming the address and the PC instead of going on. */
#include "board.h"

int main(void)
{
	board_setup();
	put_str("writing TIM2_CNT\n");
	MMIO32(0x40000024) = 1;
	put_str("UNEXPECTED: execution continued after the TIM2 write\n");
	return 0;
}
