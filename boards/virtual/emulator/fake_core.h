/* The devices' unit tests: the board's registers accessed against a fake core whose clock the
 * test sets (no Unicorn, no firmware); every upcall is recorded. */
#ifndef VBOARD_FAKE_CORE_H
#define VBOARD_FAKE_CORE_H

#include <stdio.h>
#include <string.h>

#include "board.h"
#include "uart.h"

static struct {
	uint64_t now;
	bool abandon;            /* access_time abandons the access, as before a replay */
	char failure[256];       /* the first error, like the real core */
	bool stopped;
	enum device_stop stop;
	int reschedules;
	volatile int interrupted;
} fake;

static bool fake_access_time(void *core, uint64_t *now)
{
	(void)core;
	*now = fake.now;
	return !fake.abandon;
}

static void fake_fail(void *core, const char *message)
{
	(void)core;
	if (!fake.failure[0])
		snprintf(fake.failure, sizeof fake.failure, "%s", message);
}

static void fake_stop(void *core, enum device_stop why)
{
	(void)core;
	fake.stopped = true;
	fake.stop = why;
}

static void fake_reschedule(void *core)
{
	(void)core;
	fake.reschedules++;
}

static struct uart_host uart;

/* A board of `chip` just out of reset, with `input` waiting on its UART. */
static struct board *new_chip_board(const struct chip *chip, const char *input, bool input_ended)
{
	static const struct device_core core = {NULL, fake_access_time, fake_fail, fake_stop,
						fake_reschedule, &fake.interrupted};
	memset(&fake, 0, sizeof fake);
	memset(&uart, 0, sizeof uart);
	uart.in_fd = uart.out_fd = uart.pty_slave_fd = -1;
	uart.rx_len = strlen(input);
	memcpy(uart.rx, input, uart.rx_len);
	uart.eof = input_ended;
	return board_new(&core, &uart, chip);
}

/* The Discovery's board (an STM32F407) just out of reset, with `input` waiting on its UART. */
static inline struct board *new_board(const char *input, bool input_ended)
{
	return new_chip_board(&chip_stm32f407, input, input_ended);
}

static inline uint32_t read_at(struct board *b, uint64_t now, uint32_t addr)
{
	fake.now = now;
	return board_read(b, addr, 4);
}

static inline void write_at(struct board *b, uint64_t now, uint32_t addr, uint32_t value)
{
	fake.now = now;
	board_write(b, addr, 4, value);
}

#endif
