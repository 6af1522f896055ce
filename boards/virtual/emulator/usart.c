#include "usart.h"

#include "rcc.h"
#include "uart.h"

#define USART2_BASE 0x40004400u
#define USART_SR 0x00
#define USART_DR 0x04
#define USART_CR1 0x0c
#define SR_RXNE (1u << 5)
#define SR_TC (1u << 6)
#define SR_TXE (1u << 7)
#define CR1_RE (1u << 2)
#define CR1_TE (1u << 3)
#define CR1_UE (1u << 13)
/* SR reads in a row without input after which the firmware is taken to be waiting for a byte:
 * then the emulator blocks on the host instead of spinning. A transmit routine reads SR at most
 * a couple of times per byte (TXE and TC are always set), a receive loop reaches this at once.
 * It depends on the firmware's polling only, so model time stays independent of host timing. */
#define RX_IDLE_POLLS 8

void usart_init(struct usart *u, const struct device_core *core, struct uart_host *host)
{
	*u = (struct usart){.core = core, .host = host};
	u->regs[USART_SR / 4] = SR_TXE | SR_TC;
}

/* Blocks until the host sends input, keeping model time still while the host is silent. False:
 * there is none to wait for, and the run stops or fails. */
static bool wait_for_input(struct usart *u, uint32_t off)
{
	uint32_t cr1 = u->regs[USART_CR1 / 4];
	if ((cr1 & (CR1_UE | CR1_RE)) != (CR1_UE | CR1_RE)) {
		device_fail(u->core, "firmware waits for USART2 input with the receiver disabled "
			    "(CR1=0x%04x) at address 0x%08x", cr1, USART2_BASE + off);
		return false;
	}
	enum uart_wait waited = uart_wait_input(u->host, u->core->interrupted);
	if (waited != UART_WAIT_DATA)
		u->core->stop(u->core->core, waited == UART_WAIT_EOF ? DEVICE_STOP_INPUT_EOF
								      : DEVICE_STOP_INTERRUPTED);
	return waited == UART_WAIT_DATA;
}

static bool read_register(void *device, uint32_t off, uint32_t *value)
{
	struct usart *u = device;
	if (off == USART_SR) {
		if (!uart_rx_ready(u->host) && ++u->rx_idle_polls >= RX_IDLE_POLLS &&
		    !wait_for_input(u, off))
			return true;
		uint32_t sr = u->regs[USART_SR / 4] | SR_TXE | SR_TC;
		*value = uart_rx_ready(u->host) ? sr | SR_RXNE : sr & ~SR_RXNE;
		return true;
	}
	if (off == USART_DR) {
		u->rx_idle_polls = 0;
		*value = uart_rx_ready(u->host) ? uart_rx_pop(u->host) : 0;
		return true;
	}
	if (off >= sizeof u->regs)
		return false;
	*value = u->regs[off / 4];
	return true;
}

static bool write_register(void *device, uint32_t off, uint32_t value)
{
	struct usart *u = device;
	if (off == USART_DR) {
		uint32_t cr1 = u->regs[USART_CR1 / 4];
		if ((cr1 & (CR1_UE | CR1_TE)) != (CR1_UE | CR1_TE)) {
			device_fail(u->core, "USART2 transmit with the transmitter disabled (CR1=0x%04x) "
				    "at address 0x%08x", cr1, USART2_BASE + off);
			return true;
		}
		u->rx_idle_polls = 0;
		uart_put(u->host, (uint8_t)value);
		return true;
	}
	if (off == USART_SR)
		return true; /* rc_w0 flags: TC and RXNE are derived, nothing to clear */
	if (off >= sizeof u->regs)
		return false;
	u->regs[off / 4] = value;
	return true;
}

const struct device_window usart2_window = {"USART2", USART2_BASE, 0x400,
					    {RCC_APB1ENR, 1u << 17, "USART2EN"}, read_register,
					    write_register};
