/* What every device of the board shares: the narrow interface through which a device reaches the
 * emulated core, and the description of a device's register window with its access rules.
 *
 * A device owns its state and knows nothing of the core: it reaches it only through
 * `struct device_core` (machine.c implements it, fake_core.h fakes it for the devices' tests),
 * the way a QEMU device signals upward only through its IRQ line; the core reaches a device only
 * through the board's routing of register accesses (board.h) and the device's own header. */
#ifndef VBOARD_DEVICE_H
#define VBOARD_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

enum device_stop {
	DEVICE_STOP_INPUT_EOF,    /* the firmware waits for input after the input ended */
	DEVICE_STOP_INTERRUPTED,  /* *interrupted was set while waiting for input */
};

/* What a device may ask of the core it is attached to. */
struct device_core {
	void *core;
	/* Exact model time of the register access in progress. False: the access is abandoned
	 * (the core will replay it at a known time), so the device changes nothing. */
	bool (*access_time)(void *core, uint64_t *now);
	/* Stops emulation with "vboard: error: <message> (pc=...)"; the first error is kept. */
	void (*fail)(void *core, const char *message);
	void (*stop)(void *core, enum device_stop why);
	/* The next SysTick event (systick_next_event) or the flash timing may have changed. */
	void (*reschedule)(void *core);
	/* Set asynchronously (a signal): a wait for UART input gives up. */
	volatile int *interrupted;
};

void device_fail(const struct device_core *core, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline bool device_access_time(const struct device_core *core, uint64_t *now)
{
	return core->access_time(core->core, now);
}

/* An enable bit of the RCC (RCC_AHB1ENR, RCC_AHB2ENR, RCC_APB1ENR) that clocks a device. */
struct clock_gate {
	uint32_t enr;           /* the enable register's offset in the RCC */
	uint32_t bit;           /* 0: the device is always clocked */
	const char *bit_name;   /* as RM0090 names it ("USART2EN") */
};

/* A device's register window and its access rules. The board allows only aligned 32-bit accesses,
 * and only while `gate` is on; then `read`/`write` get the offset in the window and return false
 * for a register the device does not have (the board reports it). Any other error the device
 * reports itself through device_fail (a failed read yields 0). */
struct device_window {
	const char *name;
	uint32_t base, size;
	struct clock_gate gate;
	bool (*read)(void *device, uint32_t off, uint32_t *value);
	bool (*write)(void *device, uint32_t off, uint32_t value);
};

#endif
