/* The UART the firmware polls: the STM32F407's USART2 (RM0090 section 30) or the STM32L4R5's
 * LPUART1 (RM0432 section 51), which differ in their registers' layout only as far as this model
 * goes. A byte written to the transmit register goes to the host at once (TXE and TC always set),
 * a byte from the host is in the receive register until read. Its host side (stdio or a
 * pseudo-terminal) is uart.h. */
#ifndef VBOARD_USART_H
#define VBOARD_USART_H

#include <stdint.h>

#include "device.h"

struct uart_host;
struct pwr;

/* Where a UART's registers and bits are. */
struct usart_layout {
	const char *name;
	uint32_t base;
	uint32_t status, rdr, tdr, cr1, brr, clear; /* offsets; writes to `clear` only clear flags */
	uint32_t size;                              /* of its registers */
	uint32_t cr1_ue;
	uint32_t status_set;     /* status bits always set: TXE and TC (and TEACK, REACK) */
	uint32_t brr_min;        /* the smallest baud rate divider allowed (0: not checked) */
};

extern const struct usart_layout usart2_layout, lpuart1_layout;

struct usart {
	const struct device_core *core;
	struct uart_host *host;
	const struct usart_layout *layout;
	const struct pwr *vddio2; /* its pins' supply (the STM32L4R5's port G), NULL: always on */
	uint32_t regs[0x30 / 4];  /* word index = offset / 4 */
	unsigned rx_idle_polls;   /* status reads in a row that found no input */
};

extern const struct device_window usart2_window, lpuart1_window;

/* Reset state; the UART talks to `host`. */
void usart_init(struct usart *u, const struct device_core *core, struct uart_host *host,
		const struct usart_layout *layout, const struct pwr *vddio2);

#endif
