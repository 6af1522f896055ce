/* The Discovery board's memory-mapped peripherals that the firmware uses: RCC, PWR, FLASH
 * interface, GPIOA, USART2, and in the Cortex-M4 system space SysTick, SCB, DWT cycle counter.
 * Everything else is absent, so touching it stops the emulator with an error. */
#ifndef VBOARD_PERIPHERALS_H
#define VBOARD_PERIPHERALS_H

#include <stdbool.h>
#include <stdint.h>

struct machine;

struct periph {
	/* RCC, PWR, FLASH, GPIOA, USART2 register files (word index = offset / 4) */
	uint32_t rcc[0x90 / 4];
	uint32_t pwr[2];
	uint32_t flash_acr;
	uint32_t gpioa[0x28 / 4];
	uint32_t usart[0x1c / 4];
	unsigned rx_idle_polls;   /* SR reads in a row that found no input */

	/* SCB */
	uint32_t vtor, ccr, cpacr, scr, shpr[3], fpccr, fpcar, fpdscr, demcr;

	/* SysTick: the counter is 0 at time st_anchor and reloads every st_reload+1 cycles */
	uint32_t st_csr, st_reload, st_frozen;
	uint64_t st_anchor, st_next_tick;
	bool st_pending;          /* SysTick exception pending */

	/* DWT: CYCCNT = dwt_base + (now - dwt_since) while counting */
	uint32_t dwt_ctrl, dwt_base;
	uint64_t dwt_since;
};

/* Reset values and MMIO mappings. Returns 0, or -1 after printing an error. */
int periph_init(struct machine *m);

/* Name of the STM32F407 peripheral at `addr` ("TIM2"), or NULL. */
const char *periph_name(uint32_t addr);

/* Processes SysTick wraps up to `now` (sets COUNTFLAG, pends the exception). */
void periph_systick_advance(struct periph *p, uint64_t now);

/* Model time of the next SysTick exception request, or UINT64_MAX. */
uint64_t periph_next_tick_event(const struct periph *p);

bool periph_fpu_enabled(const struct periph *p);

#endif
