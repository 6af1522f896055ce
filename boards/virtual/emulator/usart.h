/* The STM32F407's USART2 (RM0090 section 30) as the firmware polls it: a byte written to DR goes to
 * the host at once (TXE and TC always set), a byte from the host is in DR until read. Its host side
 * (stdio or a pseudo-terminal) is uart.h. */
#ifndef VBOARD_USART_H
#define VBOARD_USART_H

#include <stdint.h>

#include "device.h"

struct uart_host;

struct usart {
	const struct device_core *core;
	struct uart_host *host;
	uint32_t regs[0x1c / 4];  /* word index = offset / 4 */
	unsigned rx_idle_polls;   /* SR reads in a row that found no input */
};

extern const struct device_window usart2_window;

/* Reset state; the USART talks to `host`. */
void usart_init(struct usart *u, const struct device_core *core, struct uart_host *host);

#endif
