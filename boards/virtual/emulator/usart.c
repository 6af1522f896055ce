#include "usart.h"

#include "pwr.h"
#include "rcc.h"
#include "uart.h"

#define RXNE (1u << 5)
#define TC (1u << 6)
#define TXE (1u << 7)
#define CR1_RE (1u << 2)
#define CR1_TE (1u << 3)
/* Status reads in a row without input after which the firmware is taken to be waiting for a byte:
 * then the emulator blocks on the host instead of spinning. A transmit routine reads the status at
 * most a couple of times per byte (TXE and TC are always set), a receive loop reaches this at once.
 * It depends on the firmware's polling only, so model time stays independent of host timing. */
#define RX_IDLE_POLLS 8

/* RM0090 30.6: SR, DR (both directions), BRR, CR1; SR's flags are cleared by writing 0. */
const struct usart_layout usart2_layout = {
	.name = "USART2", .base = 0x40004400u, .status = 0x00, .rdr = 0x04, .tdr = 0x04, .cr1 = 0x0c,
	.brr = 0x08, .clear = 0x00, .size = 0x1c, .cr1_ue = 1u << 13, .status_set = TXE | TC,
	.brr_min = 0,
};

/* RM0432 51.7: CR1 (UE bit 0), BRR (at least 0x300), ISR (TEACK, REACK: bits 21, 22), ICR, RDR,
 * TDR. */
const struct usart_layout lpuart1_layout = {
	.name = "LPUART1", .base = 0x40008000u, .status = 0x1c, .rdr = 0x24, .tdr = 0x28, .cr1 = 0x00,
	.brr = 0x0c, .clear = 0x20, .size = 0x30, .cr1_ue = 1u << 0,
	.status_set = TXE | TC | 1u << 21 | 1u << 22, .brr_min = 0x300,
};

void usart_init(struct usart *u, const struct device_core *core, struct uart_host *host,
		const struct usart_layout *layout, const struct pwr *vddio2)
{
	*u = (struct usart){.core = core, .host = host, .layout = layout, .vddio2 = vddio2};
	u->regs[layout->status / 4] = layout->status_set;
}

/* The UART can move bytes: enabled with `direction` (CR1_RE, CR1_TE), its divider allowed, its
 * pins supplied. Fails otherwise, naming what is missing. */
static bool usable(struct usart *u, uint32_t direction, uint32_t off)
{
	const struct usart_layout *l = u->layout;
	uint32_t cr1 = u->regs[l->cr1 / 4], brr = u->regs[l->brr / 4];
	uint32_t addr = l->base + off;
	if ((cr1 & (l->cr1_ue | direction)) != (l->cr1_ue | direction)) {
		if (direction == CR1_RE)
			device_fail(u->core, "firmware waits for %s input with the receiver disabled "
				    "(CR1=0x%04x) at address 0x%08x", l->name, cr1, addr);
		else
			device_fail(u->core, "%s transmit with the transmitter disabled (CR1=0x%04x) "
				    "at address 0x%08x", l->name, cr1, addr);
		return false;
	}
	if (brr < l->brr_min) {
		device_fail(u->core, "%s used with BRR=0x%x, below the smallest divider 0x%x "
			    "(RM0432, LPUART_BRR) at address 0x%08x", l->name, brr, l->brr_min, addr);
		return false;
	}
	if (u->vddio2 && !pwr_l4r5_vddio2_valid(u->vddio2)) {
		device_fail(u->core, "%s used while its pins' supply VDDIO2 is off (PWR_CR2.IOSV=0) "
			    "at address 0x%08x", l->name, addr);
		return false;
	}
	return true;
}

/* Blocks until the host sends input, keeping model time still while the host is silent. False:
 * there is none to wait for, and the run stops or fails. */
static bool wait_for_input(struct usart *u, uint32_t off)
{
	if (!usable(u, CR1_RE, off))
		return false;
	enum uart_wait waited = uart_wait_input(u->host, u->core->interrupted);
	if (waited != UART_WAIT_DATA)
		u->core->stop(u->core->core, waited == UART_WAIT_EOF ? DEVICE_STOP_INPUT_EOF
								      : DEVICE_STOP_INTERRUPTED);
	return waited == UART_WAIT_DATA;
}

static bool read_register(void *device, uint32_t off, uint32_t *value)
{
	struct usart *u = device;
	const struct usart_layout *l = u->layout;
	if (off == l->status) {
		if (!uart_rx_ready(u->host) && ++u->rx_idle_polls >= RX_IDLE_POLLS &&
		    !wait_for_input(u, off))
			return true;
		uint32_t sr = u->regs[l->status / 4] | l->status_set;
		*value = uart_rx_ready(u->host) ? sr | RXNE : sr & ~RXNE;
		return true;
	}
	if (off == l->rdr) {
		u->rx_idle_polls = 0;
		*value = uart_rx_ready(u->host) ? uart_rx_pop(u->host) : 0;
		return true;
	}
	if (off >= l->size)
		return false;
	*value = u->regs[off / 4];
	return true;
}

static bool write_register(void *device, uint32_t off, uint32_t value)
{
	struct usart *u = device;
	const struct usart_layout *l = u->layout;
	if (off == l->tdr) {
		if (!usable(u, CR1_TE, off))
			return true;
		u->rx_idle_polls = 0;
		uart_put(u->host, (uint8_t)value);
		return true;
	}
	if (off == l->clear)
		return true; /* TC and RXNE are derived, nothing to clear */
	if (off >= l->size || off == l->status || off == l->rdr)
		return false;
	u->regs[off / 4] = value;
	return true;
}

const struct device_window usart2_window = {"USART2", 0x40004400u, 0x400,
					    {RCC_APB1ENR, 1u << 17, "USART2EN"}, read_register,
					    write_register};
const struct device_window lpuart1_window = {"LPUART1", 0x40008000u, 0x400,
					     {RCC_L4R5_APB1ENR2, 1u << 0, "LPUART1EN"}, read_register,
					     write_register};
