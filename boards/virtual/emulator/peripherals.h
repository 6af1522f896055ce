/* The Discovery board's memory-mapped peripherals that the firmware uses: RCC, PWR, FLASH
 * interface, GPIOA, USART2, RNG, and in the Cortex-M4 system space SysTick, SCB, DWT cycle counter.
 * Everything else is absent, so touching it stops the emulator with an error.
 *
 * The peripherals own their state and know nothing of the emulated core: they reach it only
 * through `struct periph_core` (machine.c implements it, peripherals_test.c fakes it), and the
 * core reaches them only through the functions below. */
#ifndef VBOARD_PERIPHERALS_H
#define VBOARD_PERIPHERALS_H

#include <stdbool.h>
#include <stdint.h>

struct uart_host;

enum periph_stop {
	PERIPH_STOP_INPUT_EOF,    /* the firmware waits for input after the input ended */
	PERIPH_STOP_INTERRUPTED,  /* *interrupted was set while waiting for input */
};

/* What a peripheral may ask of the core it is attached to. */
struct periph_core {
	void *core;
	/* Exact model time of the register access in progress. False: the access is abandoned
	 * (the core will replay it at a known time), so the peripheral changes nothing. */
	bool (*access_time)(void *core, uint64_t *now);
	/* Stops emulation with "vboard: error: <message> (pc=...)"; the first error is kept. */
	void (*fail)(void *core, const char *message);
	void (*stop)(void *core, enum periph_stop why);
	/* The next SysTick event (periph_next_tick_event) may have moved. */
	void (*reschedule)(void *core);
	/* Set asynchronously (a signal): a wait for UART input gives up. */
	volatile int *interrupted;
};

struct periph;

/* Reset state; USART2 talks to `uart`. */
struct periph *periph_new(const struct periph_core *core, struct uart_host *uart);
/* Every read of a cycle counter (SysTick's current value, DWT CYCCNT) returns the count of a
 * pseudo-random 0..`max` cycles later (seeded by `seed`): a board's timing noise, for a stand-in
 * board whose totals are not the model's. */
/* The HSE never starts (a Discovery whose ST-LINK gives no clock): its ready bit stays 0. */
void periph_remove_hse(struct periph *p);
void periph_set_cycle_jitter(struct periph *p, uint32_t max, uint64_t seed);
void periph_free(struct periph *p);

/* A window of registers; the core routes every access inside one to periph_read/periph_write. */
struct periph_window {
	const char *name;
	uint32_t base, size;
};
#define PERIPH_WINDOWS 8
extern const struct periph_window periph_windows[PERIPH_WINDOWS];

/* An access of `size` bytes at `addr` inside a window. Only aligned 32-bit accesses exist; any
 * other access, and any error, goes to core->fail (a failed read returns 0). */
uint32_t periph_read(struct periph *p, uint32_t addr, unsigned size);
void periph_write(struct periph *p, uint32_t addr, unsigned size, uint32_t value);

/* Name of the STM32F407 peripheral at `addr` ("TIM2"), or NULL. */
const char *periph_name(uint32_t addr);

/* Processes SysTick wraps up to `now` (sets COUNTFLAG, pends the exception). */
void periph_systick_advance(struct periph *p, uint64_t now);
/* Model time of the next SysTick exception request, or UINT64_MAX. */
uint64_t periph_next_tick_event(const struct periph *p);
bool periph_systick_pending(const struct periph *p);
/* The core took the pending SysTick exception. */
void periph_systick_taken(struct periph *p);

/* SCB state the core's exception entry and FPU checks depend on. */
uint32_t periph_vector_table(const struct periph *p);
bool periph_stack_align8(const struct periph *p);
uint32_t periph_cpacr(const struct periph *p);
bool periph_fpu_enabled(const struct periph *p);

/* The flash interface (FLASH_ACR and the ART accelerator's state) and the core clock. */
struct art *periph_flash_art(struct periph *p);
uint64_t periph_hclk(const struct periph *p);

#endif
