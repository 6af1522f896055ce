/* The chip's devices that the firmware uses, wired together: RCC, PWR, FLASH interface, the UART's
 * GPIO port and the UART, RNG, and in the Cortex-M4 system space SysTick, SCB and the DWT cycle
 * counter. The STM32F407 (the Discovery's) has GPIOA and USART2 (RM0090); the STM32L4R5 (the
 * Nucleo-L4R5ZI's) has GPIOG and LPUART1 and the DBGMCU identifier (RM0432). The system control
 * space follows the ARMv7-M ARM. Any other register, any access with a disabled
 * peripheral clock and any configuration the timing model does not cover stops the emulator: a
 * silent difference from the real board would make the measurements wrong.
 *
 * The core (machine.c) maps each device's window and routes every access inside it to
 * board_read/board_write, which enforce the windows' access rules (device.h); it reads the
 * devices' state the exception model needs through their own headers. */
#ifndef VBOARD_BOARD_H
#define VBOARD_BOARD_H

#include <stdint.h>

#include "chip.h"
#include "cycle_jitter.h"
#include "dbgmcu.h"
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

#define BOARD_WINDOWS 9

struct board {
	const struct chip *chip;
	struct device_core core;
	struct cycle_jitter jitter;  /* shared by SysTick and the DWT: see cycle_jitter.h */
	struct rcc rcc;
	struct pwr pwr;
	struct flash_interface flash;
	struct gpio gpio;     /* the UART's port */
	struct usart usart;
	struct rng rng;
	struct systick systick;
	struct dwt dwt;
	struct scs scs;
	struct dbgmcu dbgmcu;
	struct board_window {
		const struct device_window *regs;
		void *device;  /* the state its read/write get */
	} window[BOARD_WINDOWS];
	unsigned nwindows;
};

/* `chip`'s devices in their reset state; the UART talks to `uart`. */
struct board *board_new(const struct device_core *core, struct uart_host *uart,
			const struct chip *chip);
void board_free(struct board *b);

/* An access of `size` bytes at `addr` inside a window. Only aligned 32-bit accesses exist; any
 * other access, and any error, goes to core->fail (a failed read returns 0). */
uint32_t board_read(struct board *b, uint32_t addr, unsigned size);
void board_write(struct board *b, uint32_t addr, unsigned size, uint32_t value);

/* Name of the chip's peripheral at `addr` ("TIM2"), or NULL. */
const char *board_peripheral_name(const struct chip *chip, uint32_t addr);

#endif
