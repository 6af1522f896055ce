/* UART receive path: echoes every received byte upper-cased, polling RXNE like hal_getc.
 * Runs until the host's input ends (the emulator then exits cleanly). */
#include "board.h"

#define USART2_SR MMIO32(0x40004400)
#define USART2_DR MMIO32(0x40004404)

int main(void)
{
	board_setup();
	put_str("echo ready\n");
	for (;;) {
		while (!(USART2_SR & (1u << 5)))
			;
		char c = (char)USART2_DR;
		put_char(c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c);
	}
}
