/* UART receive path: echoes every received byte upper-cased, polling RXNE like hal_getc.
 * Runs until the host's input ends (the emulator then exits cleanly). */
#include "board.h"

int main(void)
{
	board_setup();
	put_str("echo ready\n");
	for (;;) {
		char c = get_char();
		put_char(c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c);
	}
}
