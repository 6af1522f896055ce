/* The Discovery board's devices that the firmware uses, wired together: RCC, PWR, FLASH interface,
 * GPIOA, USART2, RNG, and in the Cortex-M4 system space SysTick, SCB and the DWT cycle counter.
 * Register-level models follow the STM32F4 reference manual RM0090 for the STM32 side and the
 * ARMv7-M ARM for the system control space. Any other register, any access with a disabled
 * peripheral clock and any configuration the timing model does not cover stops the emulator: a
 * silent difference from the real board would make the measurements wrong.
 *
 * The core (machine.c) maps each device's window and routes every access inside it to
 * board_read/board_write, which enforce the windows' access rules (device.h); it reads the
 * devices' state the exception model needs through their own headers. */
#ifndef VBOARD_BOARD_H
#define VBOARD_BOARD_H

#include <stdint.h>

#include "cycle_jitter.h"
#include "device.h"
#include "dwt.h"
#include "flash_interface.h"
#include "gpio.h"
#include "pwr.h"
#include "rcc.h"
#include "rng.h"
#include "scs.h"
#include "systick.h"
#include "usart.h"

struct uart_host;

#define BOARD_WINDOWS 8

struct board {
	struct device_core core;
	struct cycle_jitter jitter;  /* shared by SysTick and the DWT: see cycle_jitter.h */
	struct rcc rcc;
	struct pwr pwr;
	struct flash_interface flash;
	struct gpio gpioa;
	struct usart usart2;
	struct rng rng;
	struct systick systick;
	struct dwt dwt;
	struct scs scs;
	struct board_window {
		const struct device_window *regs;
		void *device;  /* the state its read/write get */
	} window[BOARD_WINDOWS];
};

/* Reset state; USART2 talks to `uart`. */
struct board *board_new(const struct device_core *core, struct uart_host *uart);
void board_free(struct board *b);

/* An access of `size` bytes at `addr` inside a window. Only aligned 32-bit accesses exist; any
 * other access, and any error, goes to core->fail (a failed read returns 0). */
uint32_t board_read(struct board *b, uint32_t addr, unsigned size);
void board_write(struct board *b, uint32_t addr, unsigned size, uint32_t value);

/* Name of the STM32F407 peripheral at `addr` ("TIM2"), or NULL. */
const char *board_peripheral_name(uint32_t addr);

#endif
